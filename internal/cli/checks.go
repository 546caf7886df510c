package cli

import (
	"context"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/actionsio"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/gates"
	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/prcheck"
)

// runChecks is `roadmap checks`: the PR check job (internal/prcheck)
// on the workspace. Exit 0 when the checks pass (or the commit carries no
// plan), 1 when they fail, 2 on bad input, 3 when the job could not finish.
func runChecks(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "checks")
	planDir := fs.String("plan", "", "the OpenSpec change directory, relative to the workspace (default: --issue's stage.plan, else the only change under "+plan.ChangesDir+")")
	workdir := fs.StringP("workdir", "C", "", "the repository checkout (default $GITHUB_WORKSPACE or .)")
	sha := fs.String("sha", "", "the commit the status goes on (default: the pull_request event's head, else git rev-parse HEAD)")
	group := fs.Int("group", 0, "check only group N (default: every group)")
	cfgPath := fs.String("config", "", "configuration file (default WORKDIR/"+config.DefaultPath+")")
	issue := fs.Int("issue", 0, "take the plan from this issue's record (stage.plan)")
	base := fs.String("base", "", "the base branch for fail-to-pass (default: the pull_request event's base, else the configuration's implement.base_branch)")
	noStatus := fs.Bool("no-status", false, "do not set the roadmap/checks commit status")
	asJSON := fs.Bool("json", false, "print the result as JSON on stdout")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		env.Errorf("checks: unexpected argument %q", fs.Arg(0))
		return ExitUsage
	}
	if *group < 0 {
		env.Errorf("checks: --group %d: group numbers start at 1", *group)
		return ExitUsage
	}
	f := env.factory()
	masker := f.Masker()
	opts := prcheck.Options{
		Dir: env.workdir(*workdir), ConfigPath: *cfgPath, Plan: *planDir, SHA: *sha, Group: *group, Issue: *issue, Base: *base, NoStatus: *noStatus,
		Getenv: env.Getenv, Environ: env.environ(), IO: actionsio.New(env.Getenv, env.Stdout), Masker: masker,
		Logf:      func(format string, args ...any) { env.Errorf("checks: "+format, args...) },
		Stderr:    env.Stderr,
		Boundary:  f.Boundary,
		PlanRules: []prcheck.PlanRule{checkGates},
	}
	if !*noStatus || *issue > 0 {
		gh, err := f.GitHub()
		if err != nil {
			env.Errorf("checks: %v (pass --no-status to run without setting the status)", err)
			return ExitUsage
		}
		opts.GitHub = gh
	}
	res, err := prcheck.Run(ctx, opts)
	if res != nil && *asJSON {
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
	return gates.Config{VerifyForms: cfg.Gates.VerifyForms, ExtraVerifyForms: cfg.Gates.ExtraVerifyForms}
}
