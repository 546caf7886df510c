package realset

import (
	"bytes"
	"context"
	"fmt"
	"github.com/roadmap-dev/roadmap/internal/eval/realcase"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/f2p"
	"github.com/roadmap-dev/roadmap/internal/plan"
)

// CheckResult is a case held to what "verified" means, the SWE-bench way:
// at base_version with hidden/ laid over, each F2P test fails (or its
// package does not build) and each P2P test passes; at fix_version every
// F2P and P2P test passes.
type CheckResult struct {
	Passed bool `json:"passed"`
	// Problems say each way the case falls short; empty when it passed.
	Problems []string `json:"problems"`
	// Base and Fix are each test's status in the two runs ("pass", "fail",
	// "skip", "build failed", "absent").
	Base map[string]string `json:"base"`
	Fix  map[string]string `json:"fix"`
}

// Check runs the hidden command on the materialized case in caseDir: on a
// copy of repo/ (less the plan) with hidden/ laid over, and on the module
// at fix_version, each in a scratch directory, and reads each run's
// `go test -json` output (or pytest's summary). Each run is behind an
// isolation boundary of its own (o.Isolate) on its directory: the tests are
// a third party's code. The go command first resolves a Go case's
// dependencies outside it, as roadmap's user (`go list`, which runs none of
// the module's code), since nothing inside downloads. An error is a case
// that cannot be checked at all (not materialized, the module not
// downloadable, no boundary), never a failed check.
func Check(ctx context.Context, caseDir string, o Options) (*CheckResult, error) {
	c, err := realcase.Load(caseDir)
	if err != nil {
		return nil, err
	}
	if !c.HasCode() {
		return nil, fmt.Errorf("source.json names no module and no Debian source: a %s case is metadata only", c.Source.Language)
	}
	if c.Hidden == nil {
		return nil, errNoHidden
	}
	if !realcase.Materialized(caseDir) {
		return nil, fmt.Errorf("repo/ is not materialized: run `roadmap-dev eval fetch` first")
	}
	if o.Isolate == nil {
		return nil, errNoBoundary
	}
	argv, err := c.Hidden.Argv()
	if c.HasDebian() {
		argv, err = c.Hidden.PytestArgv()
	}
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(o.TempDir, "roadmap-eval-check-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)

	baseDir := filepath.Join(tmp, "base")
	if err := copyTree(filepath.Join(caseDir, "repo"), baseDir, plan.ChangesDir+"/"); err != nil {
		return nil, fmt.Errorf("copy repo/: %w", err)
	}
	if err := copyTree(filepath.Join(caseDir, "hidden"), baseDir, ""); err != nil {
		return nil, fmt.Errorf("lay hidden/ over repo/: %w", err)
	}
	fix, err := o.code(ctx, c, true)
	if err != nil {
		return nil, err
	}
	fixDir := filepath.Join(tmp, "fix")
	for name, data := range fix.files {
		if err := writeFile(fixDir, name, data); err != nil {
			return nil, err
		}
	}

	run := func(dir string) (st func(string) string, err error) {
		var deps string
		if !c.HasDebian() {
			deps = o.goDeps(ctx, dir)
		}
		b, err := o.Isolate(ctx, dir)
		if err != nil {
			return nil, fmt.Errorf("isolation: %w", err)
		}
		defer func() {
			if cerr := b.Close(); cerr != nil && err == nil {
				st, err = nil, fmt.Errorf("close the isolation boundary: %w", cerr)
			}
		}()
		if c.HasDebian() {
			r, err := o.pytest(ctx, b, dir, argv)
			return func(t string) string { return pytestStatus(r, t) }, err
		}
		r, err := o.goTest(ctx, b, dir, argv, deps)
		return func(t string) string { return status(r, t) }, err
	}
	base, err := run(baseDir)
	if err != nil {
		return nil, fmt.Errorf("at %s: %w", c.Source.BaseVersion, err)
	}
	after, err := run(fixDir)
	if err != nil {
		return nil, fmt.Errorf("at %s: %w", c.Source.FixVersion, err)
	}
	res := &CheckResult{Problems: []string{}, Base: map[string]string{}, Fix: map[string]string{}}
	for _, t := range c.Hidden.F2P {
		b, f := base(t), after(t)
		res.Base[t], res.Fix[t] = b, f
		if b != "fail" && b != "build failed" {
			res.Problems = append(res.Problems, fmt.Sprintf("f2p %s does not fail at %s with the hidden files (%s): the hidden tests do not show the bug", t, c.Source.BaseVersion, b))
		}
		if f != "pass" {
			res.Problems = append(res.Problems, fmt.Sprintf("f2p %s does not pass at %s (%s)", t, c.Source.FixVersion, f))
		}
	}
	for _, t := range c.Hidden.P2P {
		b, f := base(t), after(t)
		res.Base[t], res.Fix[t] = b, f
		if b != "pass" {
			res.Problems = append(res.Problems, fmt.Sprintf("p2p %s does not pass at %s with the hidden files (%s)", t, c.Source.BaseVersion, b))
		}
		if f != "pass" {
			res.Problems = append(res.Problems, fmt.Sprintf("p2p %s does not pass at %s (%s)", t, c.Source.FixVersion, f))
		}
	}
	res.Passed = len(res.Problems) == 0
	return res, nil
}

// status is how a run left the test named t.
func status(r *f2p.Results, t string) string {
	if got, ok := r.Tests[t]; ok {
		return string(got.Status)
	}
	for pkg := range r.FailedGroups {
		if strings.HasPrefix(t, pkg+".") {
			return "build failed"
		}
	}
	return "absent"
}

// goDeps has the go command, outside the boundary and as roadmap's user,
// resolve what the module in dir needs to build and test its packages:
// `go list -e -deps -test ./...` with -mod=mod downloads the modules into
// the module cache and completes go.mod and go.sum, as `go test` would at
// its start, and runs none of the module's code. Inside the boundary the
// go command then finds everything in the cache, which it reads, and
// downloads nothing. A failure is left for the test run to show: what it
// returns is the end of its stderr, for that run's error.
func (o Options) goDeps(ctx context.Context, dir string) string {
	cmd := exec.CommandContext(ctx, o.goCmd(), "list", "-e", "-deps", "-test", "./...")
	cmd.Dir, cmd.Env = dir, o.environ()
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &limitedBuffer{b: &stderr, n: 64 << 10}
	if err := cmd.Run(); err != nil {
		return fmt.Sprintf("`go list -e -deps -test ./...` before it: %v: %s", err, lastLines(stderr.String(), 5))
	}
	return ""
}

// goTest runs argv (`go test -json …`) in dir behind b and reads its
// events. A non-zero exit is the tests' verdict, not an error; output with
// no event at all is, with deps (goDeps's failure, if any) beside it.
func (o Options) goTest(ctx context.Context, b Boundary, dir string, argv []string, deps string) (*f2p.Results, error) {
	name := argv[0]
	if name == "go" {
		name = o.goCmd()
	}
	cmd := exec.CommandContext(ctx, name, argv[1:]...)
	// The boundary's environment: an allow-list of the caller's, so no
	// credential of the caller's (a GOPROXY with a password in it
	// included), and no download.
	cmd.Dir, cmd.Env = dir, goEnv(b.Env())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &limitedBuffer{b: &stdout, n: 64 << 20}, &limitedBuffer{b: &stderr, n: 64 << 10}
	b.Confine(cmd)
	runErr := cmd.Run()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	res, err := f2p.ParseGoTest(bytes.NewReader(stdout.Bytes()))
	if err != nil {
		return nil, fmt.Errorf("read `%s`: %w", strings.Join(argv, " "), err)
	}
	if len(res.Tests) == 0 && len(res.FailedGroups) == 0 {
		if deps != "" {
			deps = "; " + deps
		}
		return nil, fmt.Errorf("`%s` reported no test (%v): %s%s", strings.Join(argv, " "), runErr, strings.TrimSpace(stderr.String()), deps)
	}
	return res, nil
}

// copyTree copies the regular files of src into dst (over what dst holds),
// leaving out the slash paths under drop ("" drops nothing). A symlink or
// any other kind of file is refused: the materialized trees are plain
// files.
func copyTree(src, dst, drop string) error {
	root, err := os.OpenRoot(src)
	if err != nil {
		return err
	}
	defer root.Close()
	var names []string
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file", p)
		}
		if drop == "" || !strings.HasPrefix(p, drop) {
			names = append(names, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(names)
	for _, p := range names {
		data, err := realcase.ReadLimited(root, p, realcase.MaxFileBytes)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		out := filepath.Join(dst, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(out, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// IsNoHidden reports whether err is Check's for a case with no hidden.json.
func IsNoHidden(err error) bool { return err == errNoHidden }
