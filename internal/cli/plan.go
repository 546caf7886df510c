package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"

	"github.com/roadmap-dev/roadmap/internal/actionsio"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/gates"
	"github.com/roadmap-dev/roadmap/internal/plan"
)

// planValidateResult is the --json document of `roadmap plan validate`.
// Field names are stable.
type planValidateResult struct {
	Passed  bool                `json:"passed"`
	Changes []planValidateEntry `json:"changes"`
}

type planValidateEntry struct {
	Change string `json:"change"`
	Dir    string `json:"dir"`
	// OpenSpecValid is the verdict of `openspec validate --strict`; Passed
	// adds roadmap's own rules.
	OpenSpecValid bool           `json:"openspec_valid"`
	Passed        bool           `json:"passed"`
	Findings      []plan.Finding `json:"findings"`
}

// runPlanValidate is `roadmap plan validate DIR [--json] [--openspec]
// [--body-file FILE] [--config FILE]`: every OpenSpec rule of `openspec validate
// --strict`, roadmap's stricter plan rules and the plan gates
// (internal/gates), on the change in DIR (openspec/changes/<id>) or on every
// change of the repository at DIR. Each finding names its owner (openspec or
// roadmap); with --openspec only OpenSpec's rules run, so the verdict is the
// OpenSpec CLI's. The acceptance-map gate runs only with --body-file, the issue
// body as a file; premise commands are not run here (no isolation boundary).
// The verify forms come from the configuration (gates.*), the repository's
// own by default. Flags may come before or after DIR. Exit 0 when nothing
// fails, 1 with an ERROR or WARNING finding (INFO never fails), 2 when DIR
// holds no change or the issue file cannot be read.
func runPlanValidate(ctx context.Context, env *Env, args []string) int {
	return planValidateCmd(ctx, env.factory(), args, planValidateRun)
}

// planValidateOptions are `roadmap plan validate`'s flags and DIR, parsed.
type planValidateOptions struct {
	Dir, BodyFile, ConfigPath string
	OpenSpecOnly, JSON        bool
}

// planValidateCmd parses plan validate's flags into its options, then calls runF.
func planValidateCmd(ctx context.Context, f *Factory, args []string, runF func(context.Context, *Factory, *planValidateOptions) int) int {
	env, o := f.env, &planValidateOptions{}
	fs := newFlags(env, "plan validate")
	fs.BoolVar(&o.JSON, "json", false, "print the findings as JSON")
	fs.BoolVar(&o.OpenSpecOnly, "openspec", false, "check only what openspec validate --strict checks: no roadmap rules, no plan gates")
	fs.StringVar(&o.BodyFile, "body-file", "", "the issue body, as a `FILE`, for the acceptance-map gate")
	fs.StringVar(&o.ConfigPath, "config", "", "configuration file, for the gates' settings (default: the repository's "+config.DefaultPath+", if any)")
	fs.Usage = func() {
		env.Errorf("usage: roadmap plan validate DIR [--json] [--openspec] [--body-file FILE] [--config FILE]  (DIR: a repository root or openspec/changes/<id>)")
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return ExitUsage
	}
	if o.OpenSpecOnly && o.BodyFile != "" {
		env.Errorf("plan validate: --body-file feeds a roadmap gate, and --openspec runs OpenSpec's rules only; give one of them")
		return ExitUsage
	}
	o.Dir = filepath.Clean(fs.Arg(0))
	return runF(ctx, f, o)
}

// planValidateRun checks every change o.Dir holds and prints the findings.
func planValidateRun(ctx context.Context, f *Factory, o *planValidateOptions) int {
	env := f.env
	var issue *gates.Issue
	if o.BodyFile != "" {
		body, err := readIssueFile(o.BodyFile)
		if err != nil {
			env.Errorf("plan validate: %v", err)
			return ExitUsage
		}
		issue = &gates.Issue{Body: body}
	}
	root, ids, err := planChanges(o.Dir)
	if err != nil {
		env.Errorf("plan validate: %v", err)
		return ExitUsage
	}
	// The configuration is the repository's under DIR, not the workspace's.
	f.ConfigPath, f.Workdir = o.ConfigPath, firstSet(root, ".")
	cfg, err := f.Config()
	if err != nil {
		env.Errorf("plan validate: %v", err)
		return ExitUsage
	}
	// Findings name files relative to the repository root; printed, they are
	// joined to the root as given, so they open from where the command ran
	// and annotate the right file in Actions.
	pv := planValidator{env: env, io: f.IO(), root: root, prefix: filepath.ToSlash(root), openspecOnly: o.OpenSpecOnly, issue: issue, cfg: cfg}
	res := planValidateResult{Passed: true}
	for _, id := range ids {
		e, code := pv.change(ctx, id)
		if code != ExitOK {
			return code
		}
		res.Passed = res.Passed && e.Passed
		res.Changes = append(res.Changes, e)
	}
	return planValidateOutput(env, res, o.JSON)
}

// planValidateOutput prints the findings, or the result as JSON, and names
// the exit.
func planValidateOutput(env *Env, res planValidateResult, asJSON bool) int {
	if asJSON {
		if code := env.JSON(res); code != ExitOK {
			return code
		}
	} else {
		for _, c := range res.Changes {
			for _, f := range c.Findings {
				if _, err := env.Stdout.Write([]byte(f.String() + "\n")); err != nil {
					return ExitInternal
				}
			}
		}
	}
	if !res.Passed {
		return ExitFindings
	}
	return ExitOK
}

// planValidator validates the changes of one root.
type planValidator struct {
	env          *Env
	io           *actionsio.IO
	root, prefix string
	openspecOnly bool
	issue        *gates.Issue
	cfg          *config.Config
}

// change validates the change id: OpenSpec's rules, then (unless
// --openspec) roadmap's and the plan gates; its findings are annotated.
func (pv planValidator) change(ctx context.Context, id string) (planValidateEntry, int) {
	env := pv.env
	validate := plan.Validate
	if pv.openspecOnly {
		validate = plan.ValidateOpenSpec
	}
	rep, err := validate(pv.root, id)
	if errors.Is(err, plan.ErrNoChange) {
		env.Errorf("plan validate: %v", err)
		return planValidateEntry{}, ExitUsage
	}
	if err != nil {
		env.Errorf("plan validate: %v", err)
		return planValidateEntry{}, ExitInternal
	}
	if !pv.openspecOnly {
		found, err := gates.Check(ctx, gates.Input{Root: pv.root, ChangeID: id, Issue: pv.issue, Config: gateConfig(pv.cfg)})
		if err != nil {
			env.Errorf("plan validate: %v", err)
			return planValidateEntry{}, ExitInternal
		}
		rep.Findings = append(rep.Findings, found...)
	}
	sort.SliceStable(rep.Findings, func(i, j int) bool {
		a, b := rep.Findings[i], rep.Findings[j]
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Line < b.Line
	})
	e := planValidateEntry{Change: id, Dir: path.Join(pv.prefix, rep.Dir), OpenSpecValid: rep.OpenSpecValid(), Passed: rep.Clean(), Findings: []plan.Finding{}}
	for _, f := range rep.Findings {
		f.File = path.Join(pv.prefix, f.File)
		e.Findings = append(e.Findings, f)
		switch f.Level {
		case plan.LevelError:
			pv.io.Error(f.File, f.Line, f.Rule+": "+f.Message)
		case plan.LevelWarning:
			pv.io.Warning(f.File, f.Line, f.Rule+": "+f.Message)
		}
	}
	if !e.Passed && e.OpenSpecValid {
		env.Errorf("plan validate: %s: openspec validate --strict accepts it; only roadmap's rules fail it (--openspec checks OpenSpec's alone)", id)
	}
	return e, ExitOK
}

// planChanges resolves DIR to a repository root and the changes to validate:
// DIR itself when it is openspec/changes/<id>, else every change under
// DIR/openspec/changes.
func planChanges(dir string) (root string, ids []string, err error) {
	st, err := os.Stat(dir)
	if err != nil {
		return "", nil, err
	}
	if !st.IsDir() {
		return "", nil, errors.New(dir + " is not a directory")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", nil, err
	}
	if parent := filepath.Dir(abs); filepath.Base(parent) == "changes" && filepath.Base(filepath.Dir(parent)) == "openspec" {
		root = filepath.Join(dir, "..", "..", "..")
		return filepath.Clean(root), []string{filepath.Base(abs)}, nil
	}
	ids, err = plan.ListChanges(dir)
	if err != nil {
		return "", nil, err
	}
	if len(ids) == 0 {
		return "", nil, errors.New(dir + " holds no OpenSpec change (no " + plan.ChangesDir + "/<id>/)")
	}
	return dir, ids, nil
}

// readIssueFile reads an issue body from a file, bounded: GitHub caps a body
// at 65,536 characters, so a larger file is not an issue body.
func readIssueFile(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", fmt.Errorf("read issue: %w", err)
	}
	defer f.Close()
	const limit = 4 * 65536 // characters, up to four bytes each
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return "", fmt.Errorf("read issue %s: %w", name, err)
	}
	if len(data) > limit {
		return "", fmt.Errorf("read issue %s: larger than an issue body can be", name)
	}
	return string(data), nil
}
