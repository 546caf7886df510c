package f2p

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/git"
	"github.com/roadmap-dev/roadmap/internal/inputerr"
	"github.com/roadmap-dev/roadmap/internal/nofollow"
	"github.com/roadmap-dev/roadmap/internal/policy"
)

// Report is the outcome: the --json document of `roadmap ci fail-to-pass`.
// Field names are stable.
type Report struct {
	// F2P are the tests that did not pass at the base (failed, skipped or
	// absent) and pass at the head.
	F2P []string `json:"f2p"`
	// P2P pass at both.
	P2P []string `json:"p2p"`
	// Broken passed at the base and fail at the head (or are absent from a
	// head run whose package failed as a whole).
	Broken []string `json:"broken"`
	// Failing fail at the head and did not pass at the base: not broken by
	// the change, not fixed by it either.
	Failing []string `json:"failing"`
	// Passed: at least one F2P test and no broken one.
	Passed bool `json:"passed"`
	Base   Run  `json:"base"`
	Head   Run  `json:"head"`
}

// Run is one side's run of the test command.
type Run struct {
	Commit   string `json:"commit"`
	ExitCode int    `json:"exit_code"`
	TimedOut bool   `json:"timed_out,omitempty"`
	Tests    int    `json:"tests"`
	// Results is how the run's tests were read: "go test -json", "junit"
	// or "exit code".
	Results Kind `json:"results"`
	// Note says, for a person, when the run gave nothing to read test by
	// test: no JUnit file, a report with no test case, a runner read by
	// its exit code alone.
	Note string `json:"note,omitempty"`
	// Stderr is the masked tail of the command's stderr, for a person when
	// the run reported no test.
	Stderr string `json:"stderr,omitempty"`
}

// Kind is how a run's test results are read.
type Kind string

const (
	KindGoJSON Kind = "go test -json" // events on stdout
	KindJUnit  Kind = "junit"         // XML files the command writes
	KindExit   Kind = "exit code"     // one pseudo-test: the command
)

// KindOf is the kind of results argv gives: JUnit when a glob names its
// files (given, or DetectJUnit's), `go test -json` when argv is one, else
// its exit code.
func KindOf(argv []string, junitGlob string) Kind {
	if junitGlob != "" || DetectJUnit(argv) != "" {
		return KindJUnit
	}
	if len(argv) >= 2 && argv[0] == "go" && argv[1] == "test" {
		for _, a := range argv[2:] {
			if a == "-json" || a == "--json" || a == "-json=true" || a == "--json=true" {
				return KindGoJSON
			}
		}
	}
	return KindExit
}

// Exit is how a command ended in a Tree.
type Exit struct {
	Code     int
	TimedOut bool
	Stderr   string
}

// Tree is a worktree inside the isolation boundary.
type Tree interface {
	// Run runs argv in the tree, its stdout streamed to stdout. A non-zero
	// exit is an Exit, not an error.
	Run(ctx context.Context, argv []string, stdout io.Writer) (Exit, error)
	Close() error
}

// Opener opens the isolation boundary on the work tree dir.
type Opener func(ctx context.Context, dir string) (Tree, error)

// Options say what to compare and how.
type Options struct {
	Repo       *git.Repo
	Base, Head string // commits (resolved)
	Command    []string
	// JUnit, for KindJUnit, is a glob relative to the repository's top
	// naming the XML files the command writes.
	JUnit string
	Open  Opener
	// TempDir holds the two worktrees ("" is the system's).
	TempDir string
	// Mask is applied to the stderr kept in a Run.
	Mask func(string) string
	// Log receives a line when each run starts and ends (nil: none).
	Log func(format string, args ...any)
	// Overlay are files laid over each tree, the base's and the head's,
	// before the command runs there (CheckOverlay's rules; lay): a file of
	// the same path is replaced. The eval lays a case's hidden tests this
	// way; `roadmap ci fail-to-pass` lays none.
	Overlay []File
}

// InputError is a run that cannot be made as asked: a JUnit glob that leaves
// the tree or names no file. The command line is at fault, not the change.
type InputError = inputerr.Error

func inputErr(format string, a ...any) error { return inputerr.Errorf(format, a...) }

// Limits on the JUnit files of one run.
const (
	MaxJUnitFiles = 1000
	MaxJUnitBytes = 64 << 20 // all files of one run together
)

// Compare runs the tests at the base and at the head and sorts them.
func (o Options) Compare(ctx context.Context) (Report, error) {
	if o.Mask == nil {
		o.Mask = func(s string) string { return s }
	}
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
	if len(o.Command) == 0 {
		return Report{}, errors.New("no test command")
	}
	if o.JUnit == "" {
		if o.JUnit = DetectJUnit(o.Command); o.JUnit != "" {
			o.Log("reading the JUnit XML %s writes at %s", o.Command[0], o.JUnit)
		}
	}
	if o.JUnit != "" {
		if err := checkGlob(o.JUnit); err != nil {
			return Report{}, err
		}
	}
	if err := CheckOverlay(o.Overlay); err != nil {
		return Report{}, err
	}
	base, baseRun, err := o.run(ctx, "base", o.Base)
	if err != nil {
		return Report{}, err
	}
	head, headRun, err := o.run(ctx, "head", o.Head)
	if err != nil {
		return Report{}, err
	}
	rep := Compare(base, head)
	rep.Base, rep.Head = baseRun, headRun
	return rep, nil
}

func (o Options) run(ctx context.Context, side, commit string) (*Results, Run, error) {
	run := Run{Commit: commit}
	wt, err := o.Repo.AddWorktree(ctx, commit, o.TempDir)
	if err != nil {
		return nil, run, fmt.Errorf("the %s tree: %w", side, err)
	}
	defer wt.Remove(ctx)
	if len(o.Overlay) > 0 {
		if err := lay(wt.Dir, o.Overlay); err != nil {
			return nil, run, fmt.Errorf("the %s tree: %w", side, err)
		}
		o.Log("laid %d file(s) over the %s tree", len(o.Overlay), side)
	}
	tree, err := o.Open(ctx, wt.Dir)
	if err != nil {
		return nil, run, fmt.Errorf("the %s tree: %w", side, err)
	}
	defer tree.Close()
	o.Log("running %s at the %s, %s", strings.Join(o.Command, " "), side, commit)
	kind := KindOf(o.Command, o.JUnit)
	run.Results = kind
	var res *Results
	var exit Exit
	switch kind {
	case KindGoJSON:
		pr, pw := io.Pipe()
		done := make(chan error, 1)
		go func() {
			var perr error
			res, perr = ParseGoTest(pr)
			// Drain what is left so the process never blocks on a full pipe.
			_, _ = io.Copy(io.Discard, pr)
			done <- perr
		}()
		exit, err = tree.Run(ctx, o.Command, pw)
		pw.Close()
		if perr := <-done; err == nil && perr != nil {
			err = fmt.Errorf("read go test -json: %w", perr)
		}
	default:
		exit, err = tree.Run(ctx, o.Command, io.Discard)
	}
	if err != nil {
		return nil, run, fmt.Errorf("the %s run: %w", side, err)
	}
	switch kind {
	case KindJUnit:
		var files int
		if res, files, err = readJUnit(wt.Dir, o.JUnit); err != nil {
			return nil, run, fmt.Errorf("the %s run: %w", side, err)
		}
		switch {
		case files == 0 && exit.Code == 0 && !exit.TimedOut:
			return nil, run, inputErr("--junit %q: the test command exited 0 and wrote no JUnit file there", o.JUnit)
		case files == 0:
			// A build that failed before any test ran (a Rust crate whose
			// new test calls code the base lacks) writes no report: no
			// test passed here.
			res.FailedRun = true
			run.Note = fmt.Sprintf("the %s run exited %d and wrote no JUnit file at %s: none of its tests passed", side, exit.Code, o.JUnit)
		case len(res.Tests) == 0:
			run.Note = fmt.Sprintf("the %s run's JUnit files at %s hold no test case", side, o.JUnit)
		}
	case KindExit:
		res = newResults()
		st := Pass
		if exit.Code != 0 || exit.TimedOut {
			st = Fail
		}
		_ = res.set(Test{Name: strings.Join(o.Command, " "), Status: st})
		run.Note = exitNote(o.Command)
	}
	if run.Note != "" {
		o.Log("%s", run.Note)
	}
	run.ExitCode, run.TimedOut, run.Tests = exit.Code, exit.TimedOut, len(res.Tests)
	if exit.Code != 0 || exit.TimedOut {
		run.Stderr = cutTail(o.Mask(exit.Stderr), 2000)
	}
	o.Log("the %s run exited %d with %d tests", side, exit.Code, len(res.Tests))
	return res, run, nil
}

// checkGlob refuses a JUnit glob that could name files outside the tree.
func checkGlob(g string) error {
	if filepath.IsAbs(g) || strings.HasPrefix(g, "/") {
		return inputErr("--junit %q: name the files relative to the repository's top", g)
	}
	for _, el := range strings.Split(filepath.ToSlash(g), "/") {
		if el == ".." {
			return inputErr("--junit %q: a \"..\" element leaves the repository", g)
		}
	}
	if _, err := filepath.Match(g, ""); err != nil {
		return inputErr("--junit %q: %v", g, err)
	}
	return nil
}

// exitNote says plainly that argv gives nothing to read test by test.
func exitNote(argv []string) string {
	cmd := strings.Join(argv, " ")
	if len(argv) >= 2 && argv[0] == "go" && argv[1] == "test" {
		return fmt.Sprintf("%s reports no test by name without -json: each run is judged by its exit code alone, as one test named by the command", cmd)
	}
	return fmt.Sprintf("%s gives no test results to read (no go test -json, no JUnit XML): each run is judged by its exit code alone, as one test named by the command; "+
		"have it write JUnit XML (pytest --junitxml=FILE, jest with the jest-junit reporter, a cargo-nextest profile with junit) and name the files with --junit GLOB", cmd)
}

// readJUnit parses the files the glob names in the tree dir: regular files
// only, each opened inside the tree through no symlink (the test command
// wrote them, and one of its processes may swap a name for a symlink to a
// file of the runner's), within the limits. files is how many it read.
func readJUnit(dir, glob string) (res *Results, files int, err error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, 0, err
	}
	defer root.Close()
	matches, err := fs.Glob(root.FS(), path.Clean(filepath.ToSlash(glob)))
	if err != nil {
		return nil, 0, err
	}
	sort.Strings(matches)
	if len(matches) > MaxJUnitFiles {
		return nil, 0, inputErr("--junit %q names %d files, more than %d", glob, len(matches), MaxJUnitFiles)
	}
	res = newResults()
	left := int64(MaxJUnitBytes)
	read := 0
	for _, rel := range matches {
		f, err := nofollow.OpenFile(root, rel, os.O_RDONLY, 0)
		var link *nofollow.SymlinkError
		if errors.As(err, &link) {
			continue // a symlink, or a file in a symlinked directory: not followed
		}
		if err != nil {
			return nil, 0, fmt.Errorf("read %s: %w", rel, err)
		}
		if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
			f.Close()
			continue // a directory, a FIFO
		}
		before := left
		lr := &countingReader{r: f}
		err = ParseJUnit(lr, left, rel, res)
		f.Close()
		if err != nil {
			return nil, 0, err
		}
		left = before - lr.n
		read++
	}
	return res, read, nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func cutTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && s[i]&0xC0 == 0x80 {
		i++
	}
	return "…" + s[i:]
}

// SandboxTree is a Tree running under the shell policy in sb, whose
// boundary closeFn closes.
func SandboxTree(sb *policy.Sandbox, closeFn func() error) Tree {
	return sandboxTree{sb: sb, close: closeFn}
}

type sandboxTree struct {
	sb    *policy.Sandbox
	close func() error
}

func (t sandboxTree) Run(ctx context.Context, argv []string, stdout io.Writer) (Exit, error) {
	res, err := t.sb.RunStream(ctx, argv, stdout)
	return Exit{Code: res.ExitCode, TimedOut: res.TimedOut, Stderr: res.Output}, err
}

func (t sandboxTree) Close() error { return t.close() }
