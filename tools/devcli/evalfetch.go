package devcli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/eval/realcase"
	"github.com/roadmap-dev/roadmap/tools/realset"
)

// fetchCase is one case of `roadmap-dev eval fetch --json`.
type fetchCase struct {
	Set    string `json:"set"`
	Name   string `json:"name"`
	Module string `json:"module,omitempty"`
	// DebianSource is a Python case's Debian source package (its versions
	// are then Debian versions).
	DebianSource string `json:"debian_source,omitempty"`
	BaseVersion  string `json:"base_version,omitempty"`
	FixVersion   string `json:"fix_version,omitempty"`
	// Status is materialized, skipped (no module: metadata only) or error.
	Status      string `json:"status"`
	Reason      string `json:"reason,omitempty"`
	RepoFiles   int    `json:"repo_files"`
	HiddenFiles int    `json:"hidden_files"`
	// Check is the case's check with --check (nil without, or when the case
	// has no hidden tests or could not be materialized).
	Check *realset.CheckResult `json:"check,omitempty"`
}

// fetchReport is what `roadmap-dev eval fetch --json` prints.
type fetchReport struct {
	Cases  []fetchCase `json:"cases"`
	Passed bool        `json:"passed"`
}

// goldenDirs is a repeatable --golden: a string flag (as --golden is on
// every eval verb) that adds a set each time it is given.
type goldenDirs struct {
	dirs []string
	set  bool
}

func (g *goldenDirs) String() string { return strings.Join(g.dirs, ",") }
func (g *goldenDirs) Type() string   { return "string" }
func (g *goldenDirs) Set(v string) error {
	if v == "" {
		return errors.New("an empty golden set")
	}
	if !g.set {
		g.dirs, g.set = nil, true
	}
	g.dirs = append(g.dirs, v)
	return nil
}

// runEvalFetch is `roadmap-dev eval fetch [--golden DIR]… [--check] [--config
// FILE] [--json]`: each case of the real-world sets that names a module
// gets its code from the Go module proxy (repo/ at base_version, hidden/ at
// fix_version, each zip held to its sum), and with --check each is verified
// the SWE-bench way, its tests (a third party's code) run behind the
// isolation boundary the configuration's `isolation` sets, as a Job's
// model-written commands are (job.OpenBoundary). Exit 0 when every case
// was materialized (and checked), 1 when a case failed its check or, with
// --check, no boundary can be set up (nothing is fetched then), 2 for a bad
// command line or a case that could not be read or materialized
// (docs/eval.md).
func runEvalFetch(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "eval fetch")
	sets := &goldenDirs{dirs: []string{filepath.Join("testdata", "golden", "real", "stage"), filepath.Join("testdata", "golden", "real", "implement")}}
	fs.Var(sets, "golden", "the golden set: a directory per case (repeatable)")
	check := fs.Bool("check", false, "then run each case's hidden tests: F2P must fail at base_version and pass at fix_version, P2P pass at both")
	cfgPath := fs.String("config", "", "the configuration file (default "+config.DefaultPath+" when it exists): its isolation, the boundary --check runs each case's tests behind")
	asJSON := fs.Bool("json", false, "print each case's module, versions, status and check as JSON")
	usage := "usage: roadmap-dev eval fetch [--golden DIR]… [--check] [--config FILE] [--json]"
	fs.Usage = func() { env.Errorf("%s", usage) }
	if code, ok := parseFlags(env, fs, args); !ok {
		return code
	}
	if fs.NArg() != 0 {
		fs.Usage()
		return ExitUsage
	}
	// The go command runs with the caller's environment: its GOPROXY,
	// GOMODCACHE, GOFLAGS and checksum settings.
	environ := make([]string, 0, len(env.Vars))
	for k, v := range env.Vars {
		environ = append(environ, k+"="+v)
	}
	sort.Strings(environ)
	o := realset.Options{Env: environ, TempDir: env.Getenv("RUNNER_TEMP")}
	if *check {
		isolate, code := fetchBoundary(ctx, env, *cfgPath, o.TempDir)
		if isolate == nil {
			return code
		}
		o.Isolate = isolate
	}

	rep := fetchReport{Cases: []fetchCase{}, Passed: true}
	code := ExitOK
	worse := func(c int) {
		if c > code {
			code = c
		}
	}
	for _, set := range sets.dirs {
		entries, err := os.ReadDir(set)
		if err != nil {
			env.Errorf("read the golden set: %v", err)
			return ExitUsage
		}
		for _, e := range entries {
			if err := ctx.Err(); err != nil {
				env.Errorf("%v", err)
				return ExitInternal
			}
			if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			fc := fetchOne(ctx, o, set, e.Name(), *check)
			label := filepath.Base(set) + "/" + fc.Name
			switch {
			case fc.Status == "error":
				env.Errorf("%-50s error: %s", label, fc.Reason)
				worse(ExitUsage)
			case fc.Status == "skipped":
				env.Errorf("%-50s skipped: %s", label, fc.Reason)
			case fc.Check != nil && !fc.Check.Passed:
				env.Errorf("%-50s check FAILED: %s", label, strings.Join(fc.Check.Problems, "; "))
				worse(ExitFindings)
			default:
				line := fmt.Sprintf("%-50s materialized %s %s → %s (%d files, %d hidden)", label, fc.Module+fc.DebianSource, fc.BaseVersion, fc.FixVersion, fc.RepoFiles, fc.HiddenFiles)
				if fc.Check != nil {
					line += "; check passed"
				} else if fc.Reason != "" {
					line += "; " + fc.Reason
				}
				env.Errorf("%s", line)
			}
			rep.Cases = append(rep.Cases, fc)
		}
	}
	rep.Passed = code == ExitOK
	if *asJSON {
		if c := env.JSON(rep); c != ExitOK {
			return c
		}
	} else {
		n := 0
		for _, c := range rep.Cases {
			if c.Status == "materialized" {
				n++
			}
		}
		fmt.Fprintf(env.Stdout, "%d of %d cases materialized\n", n, len(rep.Cases))
	}
	if code != ExitOK {
		env.Errorf("a case could not be materialized or failed its check (above)")
	}
	return code
}

// fetchBoundary is how `eval fetch --check` opens the isolation boundary on
// a tree whose tests it runs: as the configuration at cfgPath says
// (env.boundary, job.OpenBoundary), `auto` when it sets no `isolation`. It
// opens one on a scratch folder first and says on stderr what it is; where
// none can be set up it says why and returns nil with ExitFindings, as `ci
// fail-to-pass` fails closed (nothing runs unisolated unless the
// configuration says `isolation: none`).
func fetchBoundary(ctx context.Context, env *Env, cfgPath, tempDir string) (func(context.Context, string) (realset.Boundary, error), int) {
	load := config.LoadExplicit
	if cfgPath == "" {
		cfgPath, load = config.DefaultPath, config.Load
	}
	cfg, err := load(cfgPath)
	if err != nil {
		env.Errorf("%v", err)
		return nil, ExitUsage
	}
	open := func(ctx context.Context, dir string) (realset.Boundary, error) {
		b, err := env.boundary(ctx, cfg, dir)
		if err != nil {
			return nil, err // never a nil *sandbox.Boundary in the interface
		}
		return b, nil
	}
	scratch, err := os.MkdirTemp(tempDir, "roadmap-eval-isolation-")
	if err != nil {
		env.Errorf("%v", err)
		return nil, ExitInternal
	}
	defer os.RemoveAll(scratch)
	b, err := env.boundary(ctx, cfg, scratch)
	if why, ok := unavailable(err); ok {
		// Fail closed: the cases' tests are a third party's code.
		env.Errorf("--check runs each case's tests, a third party's code: %s", why)
		return nil, ExitFindings
	}
	if err != nil {
		env.Errorf("%v", err)
		return nil, ExitUsage
	}
	env.Errorf("each case's tests run behind the isolation boundary: %s", b.Describe())
	if err := b.Close(); err != nil {
		env.Errorf("close the isolation boundary: %v", err)
		return nil, ExitInternal
	}
	return open, ExitOK
}

// fetchOne materializes one case and, with check, checks it.
func fetchOne(ctx context.Context, o realset.Options, set, name string, check bool) fetchCase {
	dir := filepath.Join(set, name)
	fc := fetchCase{Set: set, Name: name}
	c, err := realcase.Load(dir)
	if err != nil {
		fc.Status, fc.Reason = "error", err.Error()
		return fc
	}
	if !c.HasCode() {
		fc.Status, fc.Reason = "skipped", fmt.Sprintf("no module or Debian source in source.json: metadata only (language %s)", c.Source.Language)
		return fc
	}
	fc.Module, fc.DebianSource, fc.BaseVersion, fc.FixVersion = c.Source.Module, c.Source.DebianSource, c.Source.BaseVersion, c.Source.FixVersion
	res, err := realset.Materialize(ctx, dir, o)
	if err != nil {
		fc.Status, fc.Reason = "error", err.Error()
		return fc
	}
	fc.Status, fc.RepoFiles, fc.HiddenFiles = "materialized", res.RepoFiles, res.HiddenFiles
	if !check {
		return fc
	}
	chk, err := realset.Check(ctx, dir, o)
	switch {
	case realset.IsNoHidden(err):
		fc.Reason = "no hidden.json: nothing to check"
	case err != nil:
		fc.Status, fc.Reason = "error", "check: "+err.Error()
	default:
		fc.Check = chk
	}
	return fc
}
