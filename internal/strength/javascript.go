package strength

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/checks"
)

// JavaScript mutation. The mutants are StrykerJS's: roadmap's script
// (js/mutator.mjs) runs StrykerJS's own instrumenter, pinned, on one file's
// bytes and prints its mutants, one per line; it runs none of the file.
// StrykerJS itself is not run: it builds every mutant into a copy of the
// tree the tests run in (mutation switching, the active mutant in an
// environment variable), where a test can read them. roadmap runs them its
// own way, as for Python.
//
// How a mutant reaches the tests without them seeing it: for one command
// run, a hideout at the top of the tree holds roadmap's hook.cjs and
// hook.mjs. The command runs with NODE_OPTIONS="--require <hideout>/hook.cjs"
// and ROADMAP_STRENGTH_JS holding the mutation (the byte range of the file,
// its replacement, the file's sha256): every node the command starts loads
// the hook before any test. The hook takes both variables out of
// process.env, gives them back to the process's children (child_process),
// and serves the file's mutated source from memory under its own name:
// CommonJS through Module.prototype._compile, ES modules through a
// module.register load hook. Nothing is written in place of the file; no
// mutant is on disk at all. A node that loads the mutated file writes its
// pid into the hideout's seen/; a run after which seen/ is empty never ran
// the mutant (jest's module registry, a worker thread, a command that
// starts no node with the hook), and that mutant is an error, not a
// verdict.
//
// Coverage: the unmutated run of each command has the same hook (its
// control mode), and NODE_V8_COVERAGE names the hideout's cov/, where every
// node writes V8's block coverage at exit. A changed line is covered when
// the innermost range over its first character ran (v8cover.go).

//go:embed js/mutator.mjs
var jsMutator string

//go:embed js/hook.cjs
var jsHookCJS string

//go:embed js/hook.mjs
var jsHookMJS string

// StrykerVersion is the release of @stryker-mutator/instrumenter that
// makes the mutants: the one internal/adopt's setup installs and
// tools/npm/package.json pins for the tests.
const StrykerVersion = "9.6.1"

// EnvInstrumenter names the folder of @stryker-mutator/instrumenter when it
// is not where init's setup installs it (DefaultInstrumenterDir).
const EnvInstrumenter = "ROADMAP_STRYKER_INSTRUMENTER"

// DefaultInstrumenterDir is where init's setup installs the instrumenter,
// under the runner's RUNNER_TEMP.
const DefaultInstrumenterDir = "roadmap-strength/node_modules/@stryker-mutator/instrumenter"

// DefaultJavaScriptTest is the verify command of a change to JavaScript
// files when the caller names none.
const DefaultJavaScriptTest = "npm test"

// jsStateVar carries a run's mutation to every node the command starts.
const jsStateVar = "ROADMAP_STRENGTH_JS"

const (
	jsHook    = "hook.cjs"
	jsHookESM = "hook.mjs"
	jsSeenDir = "seen"
	jsCovDir  = "cov"
)

// errNotServed is a mutant run in which no node loaded the mutated file.
var errNotServed = errors.New("no node process loaded the mutated file")

// jsExt reports whether file is JavaScript node runs as it is.
func jsExt(file string) bool {
	switch path.Ext(file) {
	case ".js", ".mjs", ".cjs":
		return true
	}
	return false
}

// jsFile is JavaScript that is loaded, not a test (*.test.js, *.spec.js,
// *_test.js, *-test.js, test.js, test-*.js, or under a test, tests,
// __tests__ or testdata folder), not a dependency, not minified.
func jsFile(file string) bool {
	if !jsExt(file) {
		return false
	}
	base := path.Base(file)
	stem := strings.TrimSuffix(base, path.Ext(base))
	if stem == "test" || strings.HasPrefix(stem, "test-") || strings.HasPrefix(stem, "test_") || strings.HasSuffix(stem, ".min") {
		return false
	}
	for _, suf := range []string{".test", ".spec", "_test", "-test"} {
		if strings.HasSuffix(stem, suf) {
			return false
		}
	}
	for _, el := range strings.Split(path.Dir(file), "/") {
		switch {
		case el == "test" || el == "tests" || el == "__tests__" || el == "testdata" || el == "node_modules",
			strings.HasPrefix(el, ".") && el != ".":
			return false
		}
	}
	return true
}

// notRunAsIs names the changed files node cannot run as they are: the
// project's own loader or build (tsc, ts-node, tsx, babel) reads them, and
// roadmap has no way to give it a mutant the tests cannot see.
func notRunAsIs(file string) string {
	switch strings.ToLower(path.Ext(file)) {
	case ".ts", ".tsx", ".mts", ".cts":
		return "TypeScript"
	case ".jsx":
		return "JSX"
	}
	return ""
}

// whyTypeScript is why TypeScript and JSX files are not measured.
const whyTypeScript = "not run by node as written: the project's own loader or build (tsc, ts-node, tsx, babel) reads the file, " +
	"and roadmap cannot hand it a mutant the tests cannot see"

// jsTool is node and the instrumenter's folder, or why JavaScript files are
// not measured.
type jsTool struct {
	node, dir, why string
}

// js finds node on roadmap's PATH and the instrumenter, once.
func (r *run) js() jsTool {
	if r.jsTool != nil {
		return *r.jsTool
	}
	t := jsTool{}
	if node, err := r.lookPath("node"); err != nil {
		t.why = "node not installed"
	} else if dir := instrumenterDir(r.o.Instrumenter); dir == "" {
		t.why = "StrykerJS instrumenter not installed"
	} else {
		t.node, t.dir = node, dir
	}
	r.jsTool = &t
	return t
}

// instrumenterDir is the instrumenter's folder: dir, else $ROADMAP_STRYKER_INSTRUMENTER,
// else DefaultInstrumenterDir under $RUNNER_TEMP; "" when the folder has no
// package.json.
func instrumenterDir(dir string) string {
	if dir == "" {
		dir = os.Getenv(EnvInstrumenter)
	}
	if dir == "" && os.Getenv("RUNNER_TEMP") != "" {
		dir = filepath.Join(os.Getenv("RUNNER_TEMP"), filepath.FromSlash(DefaultInstrumenterDir))
	}
	if dir == "" {
		return ""
	}
	if _, err := os.Stat(filepath.Join(dir, "package.json")); err != nil {
		return ""
	}
	return dir
}

// jsUnparsed is the output of the mutator that says the file does not parse.
type jsUnparsed struct{ msg string }

func (e *jsUnparsed) Error() string { return e.msg }

// jsSitesOf runs the mutator on src (it parses, it runs none of src) in a
// folder of its own, so Babel finds no configuration of the project, and
// returns its sites.
func jsSitesOf(ctx context.Context, t jsTool, name string, src []byte) (fileSites, error) {
	if len(src) > maxFileSize {
		return fileSites{}, fmt.Errorf("%s: %d bytes, more than the %d a mutated file may have", name, len(src), maxFileSize)
	}
	tmp, err := os.MkdirTemp("", "roadmap-jsmutator-")
	if err != nil {
		return fileSites{}, fmt.Errorf("javascript mutator: %w", err)
	}
	defer os.RemoveAll(tmp)
	for file, body := range map[string]string{"mutator.mjs": jsMutator, "package.json": `{"private": true}`, "babel.config.json": "{}"} {
		if err := os.WriteFile(filepath.Join(tmp, file), []byte(body), 0o600); err != nil {
			return fileSites{}, fmt.Errorf("javascript mutator: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, t.node, filepath.Join(tmp, "mutator.mjs"), t.dir, path.Ext(name))
	cmd.Dir = tmp
	cmd.Stdin = bytes.NewReader(src)
	cmd.Env = []string{}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 2 {
			return fileSites{}, &jsUnparsed{strings.TrimSpace(tailOf(errb.String(), 300))}
		}
		return fileSites{}, fmt.Errorf("javascript mutator on %s: %v: %s", name, err, tailOf(errb.String(), 300))
	}
	fs, err := parseJSSites(out.Bytes(), src)
	if err != nil {
		return fileSites{}, fmt.Errorf("javascript mutator on %s: %w", name, err)
	}
	return fs, nil
}

// parseJSSites reads the mutator's JSON. It is roadmap's script, but it
// reads the model's file: a site outside src, on no line of it, or with no
// operator is dropped, and a line keeps its first site.
func parseJSSites(out, src []byte) (fileSites, error) {
	var doc struct {
		Code  []int `json:"code"`
		Sites []struct {
			Line       int    `json:"line"`
			Op         string `json:"op"`
			Start, End int
			Repl       string `json:"repl"`
		} `json:"sites"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return fileSites{}, err
	}
	lines := bytes.Count(src, []byte("\n")) + 1
	fs := fileSites{best: map[int]site{}, code: map[int]bool{}}
	for _, l := range doc.Code {
		if l >= 1 && l <= lines {
			fs.code[l] = true
		}
	}
	for _, s := range doc.Sites {
		if s.Start < 0 || s.End < s.Start || s.End > len(src) || s.Line < 1 || s.Line > lines || s.Op == "" {
			continue
		}
		if _, ok := fs.best[s.Line]; !ok {
			fs.best[s.Line] = site{line: s.Line, op: s.Op, start: s.Start, end: s.End, repl: s.Repl}
		}
	}
	return fs, nil
}

// jsHideout is one JavaScript command run's folder at the top of the tree.
type jsHideout struct {
	*hideout
	state []byte // ROADMAP_STRENGTH_JS
}

// newJSHideout makes a hideout with roadmap's hooks and seen/ (or cov/ for
// a cover run), writable by the tests' uid, for state.
func newJSHideout(root *os.Root, state map[string]any, dirs ...string) (_ *jsHideout, err error) {
	h, err := makeHideout(root)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, h.remove())
		}
	}()
	st, err := json.Marshal(state)
	if err != nil {
		return nil, fmt.Errorf("test strength: %w", err)
	}
	if err := h.create(jsHook, []byte(jsHookCJS)); err != nil {
		return nil, err
	}
	if err := h.create(jsHookESM, []byte(jsHookMJS)); err != nil {
		return nil, err
	}
	for _, d := range dirs {
		if err := root.Mkdir(h.path(d), 0o755); err != nil {
			return nil, fmt.Errorf("test strength: %w", err)
		}
		// Not sticky: the tests' uid writes here.
		if err := root.Chmod(h.path(d), 0o777); err != nil {
			return nil, fmt.Errorf("test strength: %w", err)
		}
	}
	return &jsHideout{hideout: h, state: st}, nil
}

// env is the command's extra environment: the hook, relative to the top
// (where every command starts; the hook makes it absolute for children),
// and the state.
func (h *jsHideout) env() []string {
	return []string{"NODE_OPTIONS=--require ./" + h.path(jsHook), jsStateVar + "=" + string(h.state)}
}

// jsMutation is the state of a mutant run of file: orig's bytes [start,
// end) replaced by the bytes that differ in data. The control run's data is
// orig, an empty replacement.
func jsMutation(file string, orig, data []byte) map[string]any {
	start := 0
	for start < len(orig) && start < len(data) && orig[start] == data[start] {
		start++
	}
	end, dend := len(orig), len(data)
	for end > start && dend > start && orig[end-1] == data[dend-1] {
		end--
		dend--
	}
	sum := sha256.Sum256(orig)
	return map[string]any{"mode": "mutant", "file": file, "start": start, "end": end,
		"repl": base64.StdEncoding.EncodeToString(data[start:dend]), "sum": hex.EncodeToString(sum[:])}
}

// runJS runs argv on a JavaScript mutant (file, data) through the hook.
// errNotServed means no node loaded the mutant; another error that the
// hook could not be set up.
func (r *run) runJS(ctx context.Context, argv []string, file string, data []byte) (res checks.Result, err error) {
	er, ok := r.o.Runner.(envRunner)
	if !ok {
		return checks.Result{}, fmt.Errorf("test strength: the runner %T cannot set NODE_OPTIONS, which keeps a JavaScript mutant out of the tests' sight", r.o.Runner)
	}
	h, err := newJSHideout(r.root, jsMutation(file, r.files[file], data), jsSeenDir)
	if err != nil {
		return checks.Result{}, err
	}
	defer func() { err = errors.Join(err, h.remove()) }()
	res, err = er.RunEnv(ctx, r.dir, argv, h.env())
	if err != nil || res.TimedOut || ctx.Err() != nil {
		return res, err
	}
	seen, err := fs.ReadDir(r.root.FS(), h.path(jsSeenDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return checks.Result{}, fmt.Errorf("test strength: %w", err)
	}
	if len(seen) == 0 {
		return res, errNotServed
	}
	return res, nil
}

// jsCoverRun is a cover run's hideout.
type jsCoverRun struct{ h *jsHideout }

// startJSCover makes the hideout of a command's unmutated run: the hook in
// cover mode and NODE_V8_COVERAGE in its cov/.
func (r *run) startJSCover() (*jsCoverRun, error) {
	h, err := newJSHideout(r.root, map[string]any{"mode": "cover"}, jsCovDir)
	if err != nil {
		return nil, err
	}
	return &jsCoverRun{h: h}, nil
}

func (c *jsCoverRun) env() []string {
	return append(c.h.env(), "NODE_V8_COVERAGE="+c.h.path(jsCovDir))
}

func (c *jsCoverRun) remove() error { return c.h.remove() }

// read is the coverage of the JavaScript candidates' lines, from every
// coverage file node wrote.
func (c *jsCoverRun) read(r *run) (Coverage, error) {
	want := map[string]map[int]bool{}
	for _, cand := range r.cands {
		if cand.js {
			if want[cand.file] == nil {
				want[cand.file] = map[int]bool{}
			}
			want[cand.file][cand.site.line] = true
		}
	}
	srcs := map[string][]byte{}
	for f := range want {
		srcs[f] = r.files[f]
	}
	return readV8Coverage(r.root, c.h.path(jsCovDir), c.h.name+"/"+jsHook, srcs, want)
}

// hasJS reports whether a JavaScript file has candidates (the default
// command, the hook in the unmutated run).
func (r *run) hasJS() bool {
	for _, c := range r.cands {
		if c.js {
			return true
		}
	}
	return false
}

// collectJS reads one changed JavaScript file's sites, or says why it is not
// measured (in notMeasured, by why). ok is false when the file has no sites
// to use.
func (r *run) collectJS(ctx context.Context, file string, src []byte, notMeasured map[string][]string) (fileSites, bool, error) {
	t := r.js()
	if t.why != "" {
		notMeasured[t.why] = append(notMeasured[t.why], file)
		return fileSites{}, false, nil
	}
	fs, err := jsSitesOf(ctx, t, file, src)
	var bad *jsUnparsed
	if errors.As(err, &bad) {
		r.progress("%s: StrykerJS cannot parse it: %s", file, bad.msg)
		why := "StrykerJS's parser cannot read it"
		notMeasured[why] = append(notMeasured[why], file)
		return fileSites{}, false, nil
	}
	if err != nil {
		return fileSites{}, false, err
	}
	return fs, true, nil
}
