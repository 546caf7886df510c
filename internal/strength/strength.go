package strength

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/checks"
	"github.com/roadmap-dev/roadmap/internal/git"
)

// Defaults of Options and of the floor callers pass to Run.
const (
	// DefaultMaxMutants bounds the mutants run when Options.MaxMutants is 0.
	DefaultMaxMutants = 30
	// DefaultFloor is the score a change's tests must reach when the caller
	// has no floor of its own: most mutants killed, room for the equivalent
	// mutant that no test can kill.
	DefaultFloor = 0.8
	// budgetFactor times the unmutated run is the default time budget of a
	// mutant: three times each of the two go tests a mutant's go test
	// command is (built with the mutant, then run; hide.go).
	budgetFactor = 6
	// minTimeout and maxTimeout clamp the default time budget of a mutant.
	minTimeout = 10 * time.Second
	maxTimeout = 2 * time.Minute
)

// Options say which change to measure and how its tests run.
type Options struct {
	// Dir is the work tree at the head of the change (its repository's top
	// is used).
	Dir string
	// Base is the commit the change is measured from: the lines `git diff
	// Base` adds to *.go files that are not tests are the candidates (every
	// line of an untracked one).
	Base string
	// Tests are the verify commands run on each mutant, without a shell
	// ("go test ./calc -run TestAdd"). Empty means `go test` of the
	// packages holding changed Go files.
	Tests []string
	// Runner and Split run the commands: behind the isolation boundary in
	// production (checks.SandboxRunner, policy.Split). A `go test` command
	// on a mutant needs a Runner that can set GOFLAGS (RunEnv, as checks'
	// runners can; hide.go says why).
	Runner checks.Runner
	Split  checks.Splitter
	// Timeout bounds one mutant's run (its build check and its tests).
	// 0 means six times the unmutated run, within 10s and 2m.
	Timeout time.Duration
	// MaxMutants bounds how many mutants run; <= 0 means DefaultMaxMutants.
	// The rest are counted as Skipped, never scored.
	MaxMutants int
	// Mask is applied to every text the Report keeps from the tree or a
	// command (diffs, reasons). nil keeps them as they are.
	Mask func(string) string
	// Progress, when set, receives one line per step for a log.
	Progress func(string)
	// GitEnv is the environment of roadmap's own git (git.Open); nil is an
	// empty one.
	GitEnv []string
	// LookPath finds the programs mutation needs on roadmap's own PATH
	// (python3 for the Python mutator, node for the JavaScript one,
	// cargo-mutants); nil is exec.LookPath.
	LookPath func(string) (string, error)
	// Instrumenter is the folder of @stryker-mutator/instrumenter, which
	// makes JavaScript's mutants; "" is $ROADMAP_STRYKER_INSTRUMENTER, else
	// where init's setup installs it ($RUNNER_TEMP/roadmap-strength/…).
	Instrumenter string
}

// Status is how one mutant ended.
type Status string

// The statuses. Only killed, survived and timed_out are measured (scored).
const (
	Killed     Status = "killed"      // a test command failed on the mutant
	Survived   Status = "survived"    // every covering test passed on the mutant
	TimedOut   Status = "timed_out"   // the mutant's run ran out of its time budget
	NotCovered Status = "not_covered" // no test runs the line; no mutant ran
	Error      Status = "error"       // the mutant did not build; not scored
)

// Mutant is one mutation of a changed line and how the tests took it.
type Mutant struct {
	File     string `json:"file"`
	Line     int    `json:"line"`
	Operator string `json:"operator"`
	// Diff is the mutation as a unified diff of File.
	Diff   string `json:"diff"`
	Status Status `json:"status"`
	// Test is the command that killed the mutant.
	Test string `json:"test,omitempty"`
	// Note says why a mutant is an error.
	Note string `json:"note,omitempty"`
}

// Report is a change's test strength. Field names are stable: they are the
// --json document of `roadmap ci test-strength`.
type Report struct {
	Generated  int `json:"generated"`
	Killed     int `json:"killed"`
	Survived   int `json:"survived"`
	NotCovered int `json:"not_covered"`
	TimedOut   int `json:"timed_out"`
	Errors     int `json:"errors"`
	// Skipped counts changed lines of code with nothing to mutate, and the
	// covered mutants past MaxMutants.
	Skipped int `json:"skipped"`
	// Score is killed / (killed+survived+timed_out); 0 when nothing was
	// measured.
	Score float64 `json:"score"`
	// Floor is the score the run had to reach.
	Floor float64 `json:"floor"`
	// Mutants is every mutant, survivors first.
	Mutants []Mutant `json:"mutants"`
	// Unsupported are the changed files in languages mutation does not
	// cover yet ("app.rb"): never scored.
	Unsupported []string `json:"unsupported"`
	// NotMeasured are the changed files of a language roadmap measures
	// with a tool the machine lacks (Rust without cargo-mutants), and why:
	// never scored.
	NotMeasured []NotMeasured `json:"not_measured,omitempty"`
	// Tests are the commands the mutants ran.
	Tests []string `json:"tests"`
	// Timeout is the time budget of one mutant.
	Timeout time.Duration `json:"timeout_ns"`
	// Passed holds only if a mutant was measured, not every measured one
	// timed out, and Score reached Floor. Reason says why not.
	Passed bool   `json:"passed"`
	Reason string `json:"reason,omitempty"`
}

// NotMeasured is a language's changed files that were not measured, and
// why ("cargo-mutants not installed").
type NotMeasured struct {
	Language string   `json:"language"`
	Files    []string `json:"files"`
	Why      string   `json:"why"`
}

// String is "cargo-mutants not installed (Rust: src/lib.rs)".
func (n NotMeasured) String() string {
	return fmt.Sprintf("%s (%s: %s)", n.Why, n.Language, listCut(n.Files, 5))
}

// Measured is how many mutants ran to a verdict that counts in the score.
func (r Report) Measured() int { return r.Killed + r.Survived + r.TimedOut }

// candidate is a mutable changed line and the commands whose coverage
// includes it.
type candidate struct {
	file string // slash path from the top of the repository
	pkg  string // its package's directory, "./calc" or "."; "" for Python
	py   bool   // a Python file (python.go)
	js   bool   // a JavaScript file (javascript.go)
	site site
	cmds []int // indexes into the test commands
}

// Run measures the change's tests by mutation. floor is the score to reach
// (DefaultFloor when the caller has none). An error means the measurement
// could not be made (the unmutated tests fail, git failed, ctx ended); a
// weak test suite is a Report that did not pass.
func Run(ctx context.Context, o Options, floor float64) (Report, error) {
	if err := o.check(); err != nil {
		return Report{}, err
	}
	repo, err := git.Open(ctx, o.Dir, o.GitEnv)
	if err != nil {
		return Report{}, fmt.Errorf("test strength: %w", err)
	}
	root, err := os.OpenRoot(repo.Dir)
	if err != nil {
		return Report{}, fmt.Errorf("test strength: open %s: %w", repo.Dir, err)
	}
	defer root.Close()
	r := &run{o: o, dir: repo.Dir, root: root, rep: Report{Floor: floor}}
	if err := r.collect(ctx, repo); err != nil {
		return Report{}, err
	}
	if err := r.baseline(ctx); err != nil {
		return Report{}, err
	}
	if err := r.mutate(ctx); err != nil {
		return Report{}, err
	}
	r.finish()
	return r.rep, nil
}

func (o Options) check() error {
	switch {
	case o.Dir == "":
		return errors.New("test strength: no work tree")
	case o.Base == "":
		return errors.New("test strength: no base commit")
	case o.Runner == nil || o.Split == nil:
		return errors.New("test strength: no runner for the tests")
	}
	return nil
}

// run is one Run's state.
type run struct {
	o     Options
	dir   string
	root  *os.Root
	rep   Report
	files map[string][]byte // the original bytes of each candidate file
	cands []candidate
	cmds  []testCmd
	pkgs  []string
	// goflags is the GOFLAGS the commands get, once asked (baseGOFLAGS).
	goflags *string
	// pyFiles are the Python files with candidates.
	pyFiles []string
	// jsTool is node and the instrumenter, once looked for.
	jsTool *jsTool
}

// testCmd is one verify command, split, and what its unmutated run covered
// (nil: coverage unknown, so it runs on every mutant).
type testCmd struct {
	line string
	argv []string
	cov  Coverage
	// pyCov is the Python lines its unmutated run covered (python.go).
	pyCov Coverage
	// jsCov is the JavaScript lines its unmutated run covered, by slash
	// path from the top (v8cover.go).
	jsCov Coverage
}

func (r *run) progress(format string, a ...any) {
	if r.o.Progress != nil {
		r.o.Progress(r.mask(fmt.Sprintf(format, a...)))
	}
}

func (r *run) mask(s string) string {
	if r.o.Mask == nil {
		return s
	}
	return r.o.Mask(s)
}

// collect finds the changed lines, sorts the changed files into Go
// candidates and unsupported languages, and picks one site per line.
func (r *run) collect(ctx context.Context, repo *git.Repo) error {
	changed, err := changedLines(ctx, repo, r.o.Base)
	if err != nil {
		return fmt.Errorf("test strength: %w", err)
	}
	r.files = map[string][]byte{}
	pkgSet := map[string]bool{}
	python := r.python()
	var rust []string
	notJS := map[string]map[string][]string{} // language → why → files
	for _, file := range sortedKeys(changed) {
		if path.Ext(file) == ".rs" {
			rust = append(rust, file)
			continue
		}
		if lang := notRunAsIs(file); lang != "" {
			if notJS[lang] == nil {
				notJS[lang] = map[string][]string{}
			}
			notJS[lang][whyTypeScript] = append(notJS[lang][whyTypeScript], file)
			continue
		}
		js := jsExt(file)
		if js && !jsFile(file) {
			continue
		}
		py := path.Ext(file) == ".py" && python != ""
		if lang := language(file); lang != "" && !py && !js {
			r.rep.Unsupported = append(r.rep.Unsupported, file)
			continue
		}
		if py && !pythonFile(file) || !py && !js && !mutableGoFile(file) {
			continue
		}
		src, err := r.read(file)
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted since the diff was read
		}
		if err != nil {
			return fmt.Errorf("test strength: %w", err)
		}
		if !py && !js && generated(src) {
			continue
		}
		var fs fileSites
		switch {
		case py:
			fs, err = pySitesOf(ctx, python, file, src)
		case js:
			if notJS["JavaScript"] == nil {
				notJS["JavaScript"] = map[string][]string{}
			}
			var ok bool
			fs, ok, err = r.collectJS(ctx, file, src, notJS["JavaScript"])
			if err == nil && !ok {
				continue
			}
		default:
			fs, err = sitesOf(file, src)
		}
		if err != nil {
			return fmt.Errorf("test strength: %w", err)
		}
		r.files[file] = src
		lines := changed[file]
		if lines == nil { // untracked: every line is new
			lines = map[int]bool{}
			for l := range fs.code {
				lines[l] = true
			}
		}
		for _, l := range sortedLines(lines) {
			if !fs.code[l] {
				continue
			}
			s, ok := fs.best[l]
			if !ok {
				r.rep.Skipped++
				continue
			}
			if py {
				if len(r.pyFiles) == 0 || r.pyFiles[len(r.pyFiles)-1] != file {
					r.pyFiles = append(r.pyFiles, file)
				}
				r.cands = append(r.cands, candidate{file: file, py: true, site: s})
				continue
			}
			if js {
				r.cands = append(r.cands, candidate{file: file, js: true, site: s})
				continue
			}
			pkg := pkgDir(file)
			pkgSet[pkg] = true
			r.cands = append(r.cands, candidate{file: file, pkg: pkg, site: s})
		}
	}
	r.pkgs = sortedKeys(pkgSet)
	for _, lang := range sortedKeys(notJS) {
		for _, why := range sortedKeys(notJS[lang]) {
			r.rep.NotMeasured = append(r.rep.NotMeasured, NotMeasured{Language: lang, Files: notJS[lang][why], Why: why})
		}
	}
	if len(rust) > 0 {
		r.rep.NotMeasured = append(r.rep.NotMeasured, r.rustNotMeasured(rust))
	}
	return nil
}

// CargoMutants is the program that measures Rust changes.
const CargoMutants = "cargo-mutants"

// rustNotMeasured says why the Rust files were not measured: without
// cargo-mutants on the PATH (init's setup installs it, pinned), nothing
// measures them, and the change claims no score for them. With it, roadmap
// does not run it yet: its mutants are written into a copy of the tree the
// tests run in, which breaks the rule that a test never sees a mutant.
func (r *run) rustNotMeasured(files []string) NotMeasured {
	why := CargoMutants + " not installed"
	if _, err := r.lookPath(CargoMutants); err == nil {
		why = CargoMutants + " is installed, but roadmap does not run it yet (its mutants are written where the tests can read them)"
	}
	return NotMeasured{Language: "Rust", Files: files, Why: why}
}

// changedLines maps each changed file to its added lines; an untracked
// file maps to nil (all of it is new).
func changedLines(ctx context.Context, repo *git.Repo, base string) (map[string]map[int]bool, error) {
	diff, err := repo.Diff(ctx, base)
	if err != nil {
		return nil, err
	}
	out := ParseDiff(diff)
	status, err := repo.Status(ctx)
	if err != nil {
		return nil, err
	}
	for _, c := range status {
		if c.XY == "??" && !strings.HasSuffix(c.Path, "/") {
			out[c.Path] = nil
		}
	}
	return out, nil
}

// read returns a file of the tree, through the root (no symlink leads out),
// at most maxFileSize bytes.
func (r *run) read(file string) ([]byte, error) {
	f, err := r.root.Open(file)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	if len(b) > maxFileSize {
		return nil, fmt.Errorf("read %s: larger than %d bytes", file, maxFileSize)
	}
	return b, nil
}

// mutableGoFile: Go code that is built (not a test, not vendored, not
// testdata).
func mutableGoFile(file string) bool {
	if !strings.HasSuffix(file, ".go") || strings.HasSuffix(file, "_test.go") {
		return false
	}
	for _, el := range strings.Split(path.Dir(file), "/") {
		if el == "testdata" || el == "vendor" || strings.HasPrefix(el, ".") && el != "." || strings.HasPrefix(el, "_") {
			return false
		}
	}
	return true
}

// generated reports whether src carries the "Code generated … DO NOT EDIT."
// line before its package clause.
func generated(src []byte) bool {
	head := string(src[:min(len(src), 4096)])
	before, _, _ := strings.Cut(head, "\npackage ")
	for _, l := range strings.Split(before, "\n") {
		if strings.HasPrefix(l, "// Code generated ") && strings.HasSuffix(strings.TrimRight(l, "\r"), " DO NOT EDIT.") {
			return true
		}
	}
	return false
}

// pkgDir is the package pattern of a file's directory: "./calc" or ".".
func pkgDir(file string) string {
	d := path.Dir(file)
	if d == "." {
		return "."
	}
	return "./" + d
}

// languages names the languages whose changed files are said to have no
// mutation yet, by extension.
var languages = map[string]string{
	".py": "Python", ".js": "JavaScript", ".mjs": "JavaScript", ".cjs": "JavaScript", ".jsx": "JavaScript",
	".ts": "TypeScript", ".tsx": "TypeScript", ".rb": "Ruby", ".rs": "Rust", ".java": "Java",
	".kt": "Kotlin", ".c": "C", ".h": "C", ".cc": "C++", ".cpp": "C++", ".hpp": "C++", ".cs": "C#",
	".php": "PHP", ".swift": "Swift", ".scala": "Scala", ".sh": "shell",
}

// language is the language of a changed file mutation does not cover, or "".
func language(file string) string { return languages[strings.ToLower(path.Ext(file))] }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
