package strength

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/checks"
)

// coverFile is the cover profile's name in the work tree: the boundary lets
// tests write there and nowhere else roadmap reads.
const coverFile = ".roadmap-strength-cover.out"

// outputTail is how much of a failing command's output an error keeps.
const outputTail = 2000

// baseline runs every test command once on the unmutated tree, with a
// cover profile for `go test` commands. Every one must pass: a mutant of a
// tree whose tests fail measures nothing.
func (r *run) baseline(ctx context.Context) error {
	tests := r.o.Tests
	if len(tests) == 0 && len(r.pkgs) > 0 {
		tests = []string{"go test " + strings.Join(r.pkgs, " ")}
	}
	if len(r.o.Tests) == 0 && len(r.pyFiles) > 0 {
		tests = append(tests, DefaultPythonTest)
	}
	if len(r.o.Tests) == 0 && r.hasJS() {
		tests = append(tests, DefaultJavaScriptTest)
	}
	var total time.Duration
	seen := map[string]bool{}
	for _, line := range tests {
		line = strings.TrimSpace(line)
		if line == "" || seen[line] {
			continue
		}
		seen[line] = true
		argv, err := r.o.Split(line)
		if err != nil || len(argv) == 0 {
			return fmt.Errorf("test strength: test command %q: cannot be split: %v", line, err)
		}
		tc := testCmd{line: line, argv: argv}
		if len(r.cands) > 0 {
			d, err := r.baselineOne(ctx, &tc)
			if err != nil {
				return err
			}
			total += d
		}
		r.cmds = append(r.cmds, tc)
		r.rep.Tests = append(r.rep.Tests, r.mask(line))
	}
	r.rep.Timeout = r.o.Timeout
	if r.rep.Timeout <= 0 {
		r.rep.Timeout = min(max(budgetFactor*total, minTimeout), maxTimeout)
	}
	return nil
}

// baselineOne runs one command on the unmutated tree and records its
// coverage, returning how long it took.
func (r *run) baselineOne(ctx context.Context, tc *testCmd) (time.Duration, error) {
	argv := tc.argv
	goTest := isGoTest(argv)
	if goTest {
		if err := r.root.Remove(coverFile); err != nil && !errors.Is(err, os.ErrNotExist) {
			return 0, fmt.Errorf("test strength: remove a stale %s: %w", coverFile, err)
		}
		argv = coverArgv(argv, r.pkgs)
		defer r.root.Remove(coverFile)
	}
	r.progress("unmutated run: %s", strings.Join(argv, " "))
	var res checks.Result
	var err error
	var extra []string
	var jsc *jsCoverRun
	if r.hasJS() {
		if jsc, err = r.startJSCover(); err != nil {
			return 0, err
		}
		defer jsc.remove()
		extra = jsc.env()
	}
	switch er, ok := r.o.Runner.(envRunner); {
	case len(r.pyFiles) > 0:
		res, tc.pyCov, err = r.pyCover(ctx, argv, r.pyFiles, extra...)
	case extra != nil && !ok:
		err = fmt.Errorf("the runner %T cannot set NODE_OPTIONS, which JavaScript coverage needs", r.o.Runner)
	case extra != nil:
		res, err = er.RunEnv(ctx, r.dir, argv, extra)
	default:
		res, err = r.o.Runner.Run(ctx, r.dir, argv)
	}
	if err != nil {
		return 0, fmt.Errorf("test strength: unmutated run of %q: %w", tc.line, err)
	}
	if res.ExitCode != 0 || res.TimedOut {
		how := fmt.Sprintf("exit %d", res.ExitCode)
		if res.TimedOut {
			how = "timed out"
		}
		return 0, &BaselineError{Command: r.mask(tc.line), How: how, Log: r.mask(tailOf(res.Output, outputTail))}
	}
	if goTest {
		f, err := r.root.Open(coverFile)
		if err != nil {
			return 0, fmt.Errorf("test strength: %q wrote no cover profile: %w", tc.line, err)
		}
		cov, err := ParseCoverProfile(f)
		f.Close()
		if err != nil {
			return 0, fmt.Errorf("test strength: %q: %w", tc.line, err)
		}
		tc.cov = cov
	}
	if jsc != nil {
		if tc.jsCov, err = jsc.read(r); err != nil {
			return 0, err
		}
	}
	return res.Duration, nil
}

// BaselineError is a verify command that fails on the unmutated tree: no
// mutant can be measured against tests that are already red. Callers tell
// it apart from a broken measurement (a check failure, not an internal one).
type BaselineError struct {
	Command string // the command, masked
	How     string // "exit 1", "timed out"
	Log     string // the masked tail of its output
}

func (e *BaselineError) Error() string {
	return fmt.Sprintf("test strength: the tests fail on the unmutated tree, so no mutant can be measured: %s: %s\n%s", e.Command, e.How, e.Log)
}

// isGoTest reports whether argv is `go test …`.
func isGoTest(argv []string) bool { return len(argv) >= 2 && argv[0] == "go" && argv[1] == "test" }

// coverArgv is a `go test` command with a cover profile of pkgs added
// right after "test" (before any -args), and its own cover flags dropped.
func coverArgv(argv, pkgs []string) []string {
	out := []string{"go", "test", "-coverprofile=" + coverFile, "-coverpkg=" + strings.Join(pkgs, ",")}
	rest := argv[2:]
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "-args" || a == "--args" {
			out = append(out, rest[i:]...)
			break
		}
		name, _, glued := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && (name == "coverprofile" || name == "coverpkg") {
			if !glued {
				i++ // its value is the next word
			}
			continue
		}
		out = append(out, a)
	}
	return out
}

// covers returns the commands whose unmutated run covered the candidate:
// those with coverage that includes its line, and those of unknown coverage.
func (r *run) covers(c candidate, keys []string) []int {
	var out []int
	for i, tc := range r.cmds {
		if c.py {
			// A command that ran no python3 covers no Python line.
			if tc.pyCov.Covered(c.file, c.site.line) {
				out = append(out, i)
			}
			continue
		}
		if c.js {
			// A command that ran no node covers no JavaScript line.
			if tc.jsCov.Covered(c.file, c.site.line) {
				out = append(out, i)
			}
			continue
		}
		if tc.cov == nil {
			out = append(out, i)
			continue
		}
		for _, k := range keys {
			if tc.cov.Covered(k, c.site.line) {
				out = append(out, i)
				break
			}
		}
	}
	return out
}

// profileKeys are the names a cover profile may give file: its import path
// (module path of the nearest go.mod and the path below it), and its
// absolute path.
func (r *run) profileKeys(file string, mods map[string]string) []string {
	keys := []string{path.Join(r.dir, file)}
	for d := path.Dir(file); ; d = path.Dir(d) {
		mod, ok := mods[d]
		if !ok {
			mod = r.modulePath(d)
			mods[d] = mod
		}
		if mod != "" {
			rel := strings.TrimPrefix(file, d+"/")
			if d == "." {
				rel = file
			}
			keys = append(keys, mod+"/"+rel)
			break
		}
		if d == "." {
			break
		}
	}
	return keys
}

// modulePath reads the module line of dir/go.mod, "" when there is none.
func (r *run) modulePath(dir string) string {
	f, err := r.root.Open(path.Join(dir, "go.mod"))
	if err != nil {
		return ""
	}
	defer f.Close()
	return ModulePath(f)
}

// ModulePath returns the module path a go.mod declares, "" when it declares
// none. It reads at most 1000 lines of at most 4096 bytes: the file is the
// model's.
func ModulePath(r io.Reader) string {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 4096)
	for n := 0; sc.Scan() && n < 1000; n++ {
		l := strings.TrimSpace(sc.Text())
		m, ok := strings.CutPrefix(l, "module")
		if !ok || !(strings.HasPrefix(m, " ") || strings.HasPrefix(m, "\t")) {
			continue
		}
		m, _, _ = strings.Cut(m, "//")
		m = strings.TrimSpace(m)
		if u, err := strconv.Unquote(m); err == nil {
			m = u
		}
		if m == "" || strings.ContainsAny(m, " \t\"`") {
			return ""
		}
		return m
	}
	return ""
}

// mutate runs the covered candidates, up to MaxMutants, one at a time.
// After a command's first kill it runs that command once more on the
// unmutated code, the way it ran on the mutant (control).
func (r *run) mutate(ctx context.Context) error {
	limit := r.o.MaxMutants
	if limit <= 0 {
		limit = DefaultMaxMutants
	}
	mods := map[string]string{}
	built := map[string]string{} // package → why its unmutated build failed ("" built)
	controlled := map[int]bool{} // commands whose control run passed
	ran := 0
	for _, c := range r.cands {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("test strength: %w", err)
		}
		c.cmds = r.covers(c, r.profileKeys(c.file, mods))
		m := Mutant{File: c.file, Line: c.site.line, Operator: c.site.op,
			Diff: r.mask(c.site.unifiedDiff(c.file, r.files[c.file]))}
		switch {
		case len(c.cmds) == 0:
			m.Status = NotCovered
		case ran >= limit:
			r.rep.Skipped++
			continue
		default:
			ran++
			if c.py || c.js {
				// The mutator parsed the mutant: there is no build.
				built[c.pkg] = ""
			}
			why, ok := built[c.pkg]
			if !ok {
				why = r.buildCheck(ctx, c.pkg, r.rep.Timeout, nil)
				built[c.pkg] = why
			}
			if why != "" {
				m.Status, m.Note = Error, r.mask("the unmutated package does not build on its own: "+why)
				break
			}
			killer, err := r.runMutant(ctx, c, &m)
			if err != nil {
				return err
			}
			if m.Status == Killed && !controlled[killer] {
				if err := r.control(ctx, c, killer); err != nil {
					return err
				}
				controlled[killer] = true
			}
		}
		r.progress("mutant %s:%d %s: %s", m.File, m.Line, m.Operator, m.Status)
		r.rep.Mutants = append(r.rep.Mutants, m)
	}
	return nil
}

// buildCheck builds the package pkg (`go build -o /dev/null`), with the
// mutant when mut is set, and returns "" when it built, else why not.
func (r *run) buildCheck(ctx context.Context, pkg string, budget time.Duration, mut *mutantFile) string {
	bctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	argv := []string{"go", "build", "-o", os.DevNull, pkg}
	var res checks.Result
	var err error
	if mut == nil {
		res, err = r.o.Runner.Run(bctx, r.dir, argv)
	} else {
		res, err = r.runOn(bctx, argv, *mut)
	}
	switch {
	case err != nil:
		return err.Error()
	case res.TimedOut || bctx.Err() != nil:
		return "the build ran out of time"
	case res.ExitCode != 0:
		return fmt.Sprintf("exit %d: %s", res.ExitCode, strings.TrimSpace(tailOf(res.Output, 300)))
	}
	return ""
}

// mutantFile is what a command is run on: file (a slash path from the top)
// with data in place of its bytes.
type mutantFile struct {
	file string
	data []byte
}

// runOn runs argv on mut, each command the way it can be shown it without
// the tests seeing it (reachOf, hide.go).
func (r *run) runOn(ctx context.Context, argv []string, mut mutantFile) (res checks.Result, err error) {
	if path.Ext(mut.file) == ".py" {
		return r.runPython(ctx, argv, mut.file, mut.data)
	}
	if jsExt(mut.file) {
		return r.runJS(ctx, argv, mut.file, mut.data)
	}
	switch reachOf(argv) {
	case hidden:
		return r.runHidden(ctx, argv, mut.file, mut.data)
	case overlaid:
		h, err := newHideout(r.root, mut.file, mut.data, false, "")
		if err != nil {
			return checks.Result{}, err
		}
		defer func() { err = errors.Join(err, h.remove()) }()
		return r.o.Runner.Run(ctx, r.dir, withFlags(argv, h.overlayFlag()))
	}
	return r.runInPlace(ctx, argv, mut)
}

// runInPlace writes mut into the tree, runs argv and restores the file's
// original bytes whatever happens (an error, ctx's end, a panic): the way
// of a command that cannot use an overlay, which can see the mutant.
func (r *run) runInPlace(ctx context.Context, argv []string, mut mutantFile) (res checks.Result, err error) {
	orig := r.files[mut.file]
	// The restore is set before the write: a write that fails half way
	// leaves a file that must be restored too.
	defer func() {
		if rerr := r.write(mut.file, orig); rerr != nil {
			err = errors.Join(err, fmt.Errorf("test strength: RESTORE FAILED, %s holds a mutant: %w", mut.file, rerr))
		}
	}()
	if err := r.write(mut.file, mut.data); err != nil {
		return checks.Result{}, err
	}
	return r.o.Runner.Run(ctx, r.dir, argv)
}

// runMutant checks that c's mutant builds and runs its covering commands
// until one fails, returning the index of the one that killed it (-1 when
// none did). The tree is left as it was, whatever happens.
func (r *run) runMutant(ctx context.Context, c candidate, m *Mutant) (int, error) {
	mut := mutantFile{file: c.file, data: c.site.apply(r.files[c.file])}
	mctx, cancel := context.WithTimeout(ctx, r.rep.Timeout)
	defer cancel()
	if c.py || c.js {
		// The mutator parsed the mutant: there is no build.
	} else if why := r.buildCheck(mctx, c.pkg, r.rep.Timeout, &mut); why != "" {
		if ctx.Err() != nil {
			return -1, fmt.Errorf("test strength: %w", ctx.Err())
		}
		m.Status, m.Note = Error, r.mask("the mutant does not build: "+why)
		return -1, nil
	}
	m.Status = Survived
	for _, i := range c.cmds {
		tc := r.cmds[i]
		res, err := r.runOn(mctx, tc.argv, mut)
		if ctx.Err() != nil {
			return -1, fmt.Errorf("test strength: %w", ctx.Err())
		}
		if res.TimedOut || errors.Is(mctx.Err(), context.DeadlineExceeded) {
			m.Status = TimedOut
			return -1, nil
		}
		if errors.Is(err, errNotServed) {
			m.Status, m.Note = Error, r.mask(fmt.Sprintf("%q loaded no mutant: no node it started with roadmap's hook loaded %s "+
				"(jest's module registry, a worker thread, or a command that replaces NODE_OPTIONS)", tc.line, c.file))
			return -1, nil
		}
		if err != nil {
			return -1, fmt.Errorf("test strength: run %q on a mutant of %s:%d: %w", tc.line, c.file, c.site.line, err)
		}
		if res.ExitCode == 0 {
			continue
		}
		if buildFailed(res.Output) {
			m.Status, m.Note = Error, "the tests did not build with the mutant (go vet or the test files)"
			return -1, nil
		}
		m.Status, m.Test = Killed, r.mask(tc.line)
		return i, nil
	}
	return -1, nil
}

// control runs command i once on the unmutated code exactly as it ran on
// c's mutant (built apart, without a cover profile, in the wrapper): it
// must pass. A test that fails there tells a mutant's run from the plain
// one (no cover profile, the wrapper above it, a run after the first) and
// would kill every mutant without looking at what the code does, so its
// kills cannot count: that is a BaselineError.
func (r *run) control(ctx context.Context, c candidate, i int) error {
	tc := r.cmds[i]
	cctx, cancel := context.WithTimeout(ctx, r.rep.Timeout)
	defer cancel()
	r.progress("control run, unmutated, as the mutants run: %s", tc.line)
	res, err := r.runOn(cctx, tc.argv, mutantFile{file: c.file, data: r.files[c.file]})
	if ctx.Err() != nil {
		return fmt.Errorf("test strength: %w", ctx.Err())
	}
	timedOut := res.TimedOut || errors.Is(cctx.Err(), context.DeadlineExceeded)
	if err != nil && !timedOut {
		return fmt.Errorf("test strength: control run of %q: %w", tc.line, err)
	}
	if timedOut || res.ExitCode != 0 {
		how := fmt.Sprintf("exit %d", res.ExitCode)
		if timedOut {
			how = "timed out"
		}
		how += " on the unmutated code run as the mutants are, after it killed one: it tells a mutant's run apart, so its kills cannot count"
		return &BaselineError{Command: r.mask(tc.line), How: how, Log: r.mask(tailOf(res.Output, outputTail))}
	}
	return nil
}

// buildFailed reports whether go test said a package did not build.
func buildFailed(out string) bool {
	return strings.Contains(out, "[build failed]") || strings.Contains(out, "[setup failed]")
}

// write replaces file's content through the root, keeping its mode and
// owner (the file exists: it is rewritten in place).
func (r *run) write(file string, data []byte) error {
	f, err := r.root.OpenFile(file, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return fmt.Errorf("test strength: write %s: %w", file, err)
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("test strength: write %s: %w", file, werr)
	}
	return nil
}

// finish counts, sorts survivors first, scores and judges.
func (r *run) finish() {
	rep := &r.rep
	var survivors, rest []Mutant
	for _, m := range rep.Mutants {
		switch m.Status {
		case Killed:
			rep.Killed++
		case Survived:
			rep.Survived++
		case TimedOut:
			rep.TimedOut++
		case NotCovered:
			rep.NotCovered++
		case Error:
			rep.Errors++
		}
		if m.Status == Survived {
			survivors = append(survivors, m)
		} else {
			rest = append(rest, m)
		}
	}
	rep.Mutants = append(survivors, rest...)
	if rep.Mutants == nil {
		rep.Mutants = []Mutant{}
	}
	if rep.Unsupported == nil {
		rep.Unsupported = []string{}
	}
	if rep.Tests == nil {
		rep.Tests = []string{}
	}
	rep.Generated = len(rep.Mutants)
	if n := rep.Measured(); n > 0 {
		rep.Score = float64(rep.Killed) / float64(n)
	}
	rep.Passed, rep.Reason = judge(*rep)
}

// judge is Passed and, when not, why.
func judge(rep Report) (bool, string) {
	switch {
	case rep.Measured() == 0:
		why := "0 mutants ran: nothing measured the tests"
		switch {
		case rep.Generated > 0 && rep.NotCovered == rep.Generated:
			why += fmt.Sprintf(" (no test covers any of the %d mutable changed lines)", rep.NotCovered)
		case rep.Errors > 0:
			why += fmt.Sprintf(" (%d mutants did not build)", rep.Errors)
		case rep.Generated == 0:
			why += " (no changed line of code to mutate)"
		}
		return false, why
	case rep.TimedOut == rep.Measured():
		return false, fmt.Sprintf("every mutant that ran (%d) timed out: nothing shows the tests catch a change", rep.TimedOut)
	case rep.Score < rep.Floor:
		return false, fmt.Sprintf("score %.2f is below the floor %.2f: %d mutants survived", rep.Score, rep.Floor, rep.Survived)
	}
	return true, ""
}

// tailOf is the last n bytes of s, cut at a line start when one is near.
func tailOf(s string, n int) string {
	if len(s) <= n {
		return s
	}
	t := s[len(s)-n:]
	if i := bytes.IndexByte([]byte(t), '\n'); i >= 0 && i < 200 {
		t = t[i+1:]
	}
	return "[…]\n" + t
}
