package strength

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/checks"
)

// Python mutation. roadmap's own mutator (py/mutator.py, on python3's ast
// module, which every python3 has) finds the sites of a changed file, and
// the mutants run through an import hook, never through the tree.
//
// How a mutant reaches the tests without them seeing it: for one command
// run, a hideout at the top of the tree holds roadmap's sitecustomize.py,
// its roadmap.json and, in m/ (a folder anyone may remove a file from),
// mutant.py. The command runs with PYTHONPATH set to the hideout's name,
// relative to the top, so python3 imports that sitecustomize at startup,
// before any test: it reads mutant.py, removes it, and imports the changed
// module from the mutant's code compiled in memory, under the original
// file's name. From then on only the original source is on disk (inspect
// and tracebacks read it), and roadmap checks after the run that mutant.py
// is gone: a command that started no python3 with the hook, or one with -I
// or -E, cannot have run the mutant, and that is an error, not a verdict.
// The hook is in the process the tests run in (sys.meta_path): a test that
// looks for it could fail on every mutant, which the control run after a
// first kill catches, as for Go.
//
// Coverage: the unmutated run of each command gets the same sitecustomize
// in cover mode, which traces the lines of the changed files that run
// (sys.settrace) and appends them to pyCoverFile at the top. coverage.py is
// not needed. A command that ran no Python covers no Python line.
//
// mutmut is not used even where the project's setup installed it: it writes
// its mutants into the tree the tests run in, which the tests can read.

//go:embed py/mutator.py
var pyMutator string

//go:embed py/sitecustomize.py
var pySitecustomize string

// pyCoverFile is where the unmutated runs write which Python lines ran.
const pyCoverFile = ".roadmap-strength-pycover.json"

// DefaultPythonTest is the verify command of a change to Python files when
// the caller names none.
const DefaultPythonTest = "python3 -m pytest -q"

// pythonFile is Python code that is imported, not a test, a conftest or a
// file under a tests folder.
func pythonFile(file string) bool {
	base := path.Base(file)
	if path.Ext(file) != ".py" || strings.HasPrefix(base, "test_") || strings.HasSuffix(base, "_test.py") || base == "conftest.py" {
		return false
	}
	for _, el := range strings.Split(path.Dir(file), "/") {
		if el == "tests" || el == "test" || el == "testdata" || strings.HasPrefix(el, ".") && el != "." {
			return false
		}
	}
	return true
}

// pySitesOf runs the mutator on src with the python3 of roadmap's PATH (it
// parses, it runs none of src) and returns its sites.
func pySitesOf(ctx context.Context, python, name string, src []byte) (fileSites, error) {
	if len(src) > maxFileSize {
		return fileSites{}, fmt.Errorf("%s: %d bytes, more than the %d a mutated file may have", name, len(src), maxFileSize)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "-I", "-S", "-c", pyMutator)
	cmd.Stdin = bytes.NewReader(src)
	cmd.Env = []string{}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return fileSites{}, fmt.Errorf("python mutator on %s: %v: %s", name, err, tailOf(errb.String(), 300))
	}
	var doc struct {
		Code  []int `json:"code"`
		Sites []struct {
			Line       int    `json:"line"`
			Op         string `json:"op"`
			Start, End int
			Repl       string `json:"repl"`
		} `json:"sites"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		return fileSites{}, fmt.Errorf("python mutator on %s: %w", name, err)
	}
	fs := fileSites{best: map[int]site{}, code: map[int]bool{}}
	for _, l := range doc.Code {
		fs.code[l] = true
	}
	for _, s := range doc.Sites {
		if s.Start < 0 || s.End < s.Start || s.End > len(src) {
			continue
		}
		st := site{line: s.Line, op: s.Op, start: s.Start, end: s.End, repl: s.Repl}
		if cur, ok := fs.best[st.line]; !ok || st.better(cur) {
			fs.best[st.line] = st
		}
	}
	return fs, nil
}

// pyHideout is one Python command run's folder at the top of the tree.
type pyHideout struct {
	root *os.Root
	name string
}

const (
	pyMutantDir  = "m"
	pyMutantFile = "m/mutant.py"
)

// newPyHideout makes a hideout with roadmap's sitecustomize and conf, and,
// when mutant is set, m/mutant.py holding it.
func newPyHideout(root *os.Root, conf map[string]any, mutant []byte) (_ *pyHideout, err error) {
	h, err := makeHideout(root)
	if err != nil {
		return nil, err
	}
	p := &pyHideout{root: root, name: h.name}
	defer func() {
		if err != nil {
			err = errors.Join(err, h.remove())
		}
	}()
	c, err := json.Marshal(conf)
	if err != nil {
		return nil, fmt.Errorf("test strength: %w", err)
	}
	if err := h.create("sitecustomize.py", []byte(pySitecustomize)); err != nil {
		return nil, err
	}
	if err := h.create("roadmap.json", c); err != nil {
		return nil, err
	}
	if mutant != nil {
		if err := root.Mkdir(h.path(pyMutantDir), 0o755); err != nil {
			return nil, fmt.Errorf("test strength: %w", err)
		}
		// Not sticky: the tests' uid removes roadmap's mutant.py.
		if err := root.Chmod(h.path(pyMutantDir), 0o777); err != nil {
			return nil, fmt.Errorf("test strength: %w", err)
		}
		if err := h.create(pyMutantFile, mutant); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func (p *pyHideout) remove() error { return (&hideout{root: p.root, name: p.name}).remove() }

// env is the command's extra environment: the hideout first on PYTHONPATH.
func (p *pyHideout) env() []string { return []string{"PYTHONPATH=" + p.name} }

// runPython runs argv on a Python mutant (file, data) through the import
// hook. An error means the hook did not run (the mutant was never
// imported), not that the mutant was killed.
func (r *run) runPython(ctx context.Context, argv []string, file string, data []byte) (res checks.Result, err error) {
	er, ok := r.o.Runner.(envRunner)
	if !ok {
		return checks.Result{}, fmt.Errorf("test strength: the runner %T cannot set PYTHONPATH, which keeps a Python mutant out of the tests' sight", r.o.Runner)
	}
	h, err := newPyHideout(r.root, map[string]any{"mode": "mutant", "file": file}, data)
	if err != nil {
		return checks.Result{}, err
	}
	defer func() { err = errors.Join(err, h.remove()) }()
	res, err = er.RunEnv(ctx, r.dir, argv, h.env())
	if err != nil || res.TimedOut || ctx.Err() != nil {
		return res, err
	}
	if _, serr := r.root.Stat(path.Join(h.name, pyMutantFile)); !errors.Is(serr, fs.ErrNotExist) {
		return checks.Result{}, fmt.Errorf("test strength: %q started no python3 that loaded the mutant of %s (exit %d; python3 -I or -E ignore PYTHONPATH): %s",
			strings.Join(argv, " "), file, res.ExitCode, r.mask(tailOf(res.Output, 600)))
	}
	return res, nil
}

// pyCoverArgs runs a command's unmutated run under the cover hook and reads
// which lines of files ran. It returns the run's result and its coverage,
// keyed by the files' slash paths from the top.
// extra is more environment for the run (JavaScript's hook).
func (r *run) pyCover(ctx context.Context, argv []string, files []string, extra ...string) (checks.Result, Coverage, error) {
	er, ok := r.o.Runner.(envRunner)
	if !ok {
		return checks.Result{}, nil, fmt.Errorf("test strength: the runner %T cannot set PYTHONPATH, which Python coverage needs", r.o.Runner)
	}
	if err := r.root.Remove(pyCoverFile); err != nil && !errors.Is(err, os.ErrNotExist) {
		return checks.Result{}, nil, fmt.Errorf("test strength: remove a stale %s: %w", pyCoverFile, err)
	}
	defer r.root.Remove(pyCoverFile)
	h, err := newPyHideout(r.root, map[string]any{"mode": "cover", "files": files, "out": pyCoverFile}, nil)
	if err != nil {
		return checks.Result{}, nil, err
	}
	defer h.remove()
	res, err := er.RunEnv(ctx, r.dir, argv, append(h.env(), extra...))
	if err != nil {
		return res, nil, err
	}
	cov := Coverage{}
	f, err := r.root.Open(pyCoverFile)
	if errors.Is(err, os.ErrNotExist) {
		return res, cov, nil // no python3 ran: no Python line is covered
	}
	if err != nil {
		return res, nil, fmt.Errorf("test strength: %w", err)
	}
	defer f.Close()
	cov, err = parsePyCover(f, files)
	return res, cov, err
}

// parsePyCover reads the cover hook's JSON lines (one per python3 process),
// bounded like a Go cover profile: the tests can write the file. Lines that
// are not JSON of file → line numbers are skipped; only files are kept.
func parsePyCover(f fs.File, files []string) (Coverage, error) {
	want := map[string]bool{}
	for _, f := range files {
		want[f] = true
	}
	cov := Coverage{}
	br := bufio.NewReaderSize(&limited{f, maxProfileBytes}, 1<<20)
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			for err == bufio.ErrBufferFull {
				_, err = br.ReadSlice('\n')
			}
			line = nil
		}
		var doc map[string][]int
		if len(line) > 0 && json.Unmarshal(line, &doc) == nil {
			for file, lines := range doc {
				if !want[file] {
					continue
				}
				if cov[file] == nil {
					cov[file] = map[int]bool{}
				}
				for _, l := range lines {
					cov[file][l] = true
				}
			}
		}
		if err != nil {
			return cov, nil
		}
	}
}

// limited reads at most n bytes of f.
type limited struct {
	f fs.File
	n int64
}

func (l *limited) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errors.New("larger than the bound")
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.f.Read(p)
	l.n -= int64(n)
	return n, err
}

// python is the python3 the mutator runs with, "" when roadmap's PATH has
// none (Python files are then not measured, and say so).
func (r *run) python() string {
	p, err := r.lookPath("python3")
	if err != nil {
		return ""
	}
	return p
}

func (r *run) lookPath(name string) (string, error) {
	if r.o.LookPath != nil {
		return r.o.LookPath(name)
	}
	return exec.LookPath(name)
}
