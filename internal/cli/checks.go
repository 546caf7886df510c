package cli

import (
	"context"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/gates"
	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/prcheck"
)

// checksOptions are `roadmap checks`'s flags, parsed.
type checksOptions struct {
	Plan, Dir, SHA, ConfigPath, Base string
	Group, Issue                     int
	NoStatus, JSON                   bool
}

// runChecks is `roadmap checks`: the PR check job (internal/prcheck)
// on the workspace. Exit 0 when the checks pass (or the commit carries no
// plan), 1 when they fail, 2 on bad input, 3 when the job could not finish.
func runChecks(ctx context.Context, env *Env, args []string) int {
	return checksCmd(ctx, env.factory(), args, checksRun)
}

// checksCmd parses checks' flags into its options, then calls runF.
func checksCmd(ctx context.Context, f *Factory, args []string, runF func(context.Context, *Factory, *checksOptions) int) int {
	env, o := f.env, &checksOptions{}
	fs := newFlags(env, "checks")
	fs.StringVar(&o.Plan, "plan", "", "the OpenSpec change directory, relative to the workspace (default: --issue's stage.plan, else the only change under "+plan.ChangesDir+")")
	fs.StringVarP(&o.Dir, "workdir", "C", "", "the repository checkout (default $GITHUB_WORKSPACE or .)")
	fs.StringVar(&o.SHA, "sha", "", "the commit the status goes on (default: the pull_request event's head, else git rev-parse HEAD)")
	fs.IntVar(&o.Group, "group", 0, "check only group N (default: every group)")
	fs.StringVar(&o.ConfigPath, "config", "", "configuration file (default WORKDIR/"+config.DefaultPath+")")
	fs.IntVar(&o.Issue, "issue", 0, "take the plan from this issue's record (stage.plan)")
	fs.StringVar(&o.Base, "base", "", "the base branch for fail-to-pass (default: the pull_request event's base, else the configuration's implement.base_branch)")
	fs.BoolVar(&o.NoStatus, "no-status", false, "do not set the roadmap/checks commit status")
	fs.BoolVar(&o.JSON, "json", false, "print the result as JSON on stdout")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		env.Errorf("checks: unexpected argument %q", fs.Arg(0))
		return ExitUsage
	}
	if o.Group < 0 {
		env.Errorf("checks: --group %d: group numbers start at 1", o.Group)
		return ExitUsage
	}
	return runF(ctx, f, o)
}

// checksRun runs the PR check job as o says. The configuration is
// prcheck's to read: it trusts the base's, not the Factory's.
func checksRun(ctx context.Context, f *Factory, o *checksOptions) int {
	env, masker := f.env, f.Masker()
	opts := prcheck.Options{
		Dir: env.workdir(o.Dir), ConfigPath: o.ConfigPath, Plan: o.Plan, SHA: o.SHA, Group: o.Group, Issue: o.Issue, Base: o.Base, NoStatus: o.NoStatus,
		Getenv: env.Getenv, Environ: env.environ(), IO: f.IO(), Masker: masker,
		Logf:      func(format string, args ...any) { env.Errorf("checks: "+format, args...) },
		Stderr:    env.Stderr,
		Boundary:  f.Boundary,
		PlanRules: []prcheck.PlanRule{checkGates},
	}
	if !o.NoStatus || o.Issue > 0 {
		gh, err := f.GitHub()
		if err != nil {
			env.Errorf("checks: %v (pass --no-status to run without setting the status)", err)
			return ExitUsage
		}
		opts.GitHub = gh
	}
	res, err := prcheck.Run(ctx, opts)
	if res != nil && o.JSON {
		if code := env.JSON(res); code != ExitOK {
			return code
		}
	}
	switch {
	case err != nil:
		env.Errorf("checks: %s", masker.Mask(err.Error()))
		return exitFor(err)
	case !res.Passed:
		return ExitFindings
	}
	return ExitOK
}

// checkGates are the plan gates that need no model, on a plan not yet
// archived (an archived plan is history: implement passed it). A premise's
// command is not run here ("not run", INFO), and there is no issue to map
// acceptance criteria from. The verify forms are the trusted configuration's.
func checkGates(ctx context.Context, root, changeID string, cfg *config.Config) ([]plan.Finding, error) {
	if strings.HasPrefix(changeID, "archive/") {
		return nil, nil
	}
	return gates.Check(ctx, gates.Input{Root: root, ChangeID: changeID, Config: gateConfig(cfg)})
}

// gateConfig is the plan gates' part of the configuration.
func gateConfig(cfg *config.Config) gates.Config {
	return gates.Config{VerifyForms: cfg.Gates.VerifyForms, ExtraVerifyForms: cfg.Gates.ExtraVerifyForms, MaxGroups: cfg.Implement.MaxGroups}
}
