package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/report"
)

// runWake is `roadmap wake`, which the roadmap-wake workflow `roadmap init`
// writes runs on a schedule: it lists the items waiting for the day's
// budget (the waiting label; one request), checks the day's budget once and
// dispatches the due items, waiting longest first, as far as the budget
// goes. Exit 0 when it did its job (nothing to wake included), 2 on bad
// input, 3 when GitHub failed it.
func runWake(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "wake")
	workflow := fs.String("workflow", "roadmap.yml", "the caller workflow file to dispatch the items' Jobs on (it has workflow_dispatch)")
	refFlag := fs.String("ref", "", "the ref the Jobs run on (default $GITHUB_REF_NAME, else main)")
	dashboard := fs.Int("dashboard", 0, "the issue holding the day ledger (0: no ledger, every due item is dispatched)")
	dayUSD := fs.Float64("day-budget-usd", 0, "the day's budget in USD across items (default: configuration budgets.day.usd)")
	cfgPath := fs.String("config", "", "configuration file (default $GITHUB_WORKSPACE/"+config.DefaultPath+")")
	dryRun := fs.Bool("dry-run", false, "say what would be dispatched, and dispatch nothing")
	asJSON := fs.Bool("json", false, "print the outcome as JSON on stdout")
	repoFlag(fs, env)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		env.Errorf("wake takes no arguments")
		return ExitUsage
	}
	load := config.LoadExplicit
	if *cfgPath == "" {
		*cfgPath, load = filepath.Join(env.workdir(""), config.DefaultPath), config.Load
	}
	cfg, err := load(*cfgPath)
	if err != nil {
		env.Errorf("wake: %v", err)
		return ExitUsage
	}
	if *refFlag == "" {
		*refFlag = env.Getenv("GITHUB_REF_NAME")
	}
	if *refFlag == "" {
		*refFlag = "main"
	}
	budget := report.DayBudget{USD: cfg.Budgets.Day.USD, TokensIn: cfg.Budgets.Day.TokensIn, TokensOut: cfg.Budgets.Day.TokensOut}
	if *dayUSD < 0 {
		env.Errorf("wake: --day-budget-usd must not be negative")
		return ExitUsage
	}
	if *dayUSD > 0 {
		budget.USD = *dayUSD
	}
	labels := report.Labels{Stage: cfg.Labels.Stage, Implement: cfg.Labels.Implement, NeedsInput: cfg.Labels.NeedsInput,
		Stopped: cfg.Labels.Stopped, Stop: cfg.Labels.Stop, Waiting: cfg.Labels.Waiting}
	masker := env.masker()
	gh, err := env.gitHubClient(masker, time.Time{})
	if err != nil {
		env.Errorf("wake: %v", err)
		return ExitUsage
	}
	out, err := report.Wake(ctx, report.WakeOptions{GitHub: gh, Workflow: *workflow, Ref: *refFlag, Dashboard: *dashboard,
		DayBudget: budget, Labels: labels, Mask: masker.Mask, Log: env.Stderr, DryRun: *dryRun})
	if err != nil {
		env.Errorf("wake: %s", masker.Mask(err.Error()))
		var ie *report.InputError
		if errors.As(err, &ie) {
			return ExitUsage
		}
		return ExitInternal
	}
	if *asJSON {
		return env.JSON(out)
	}
	fmt.Fprintf(env.Stdout, "roadmap wake: %d waiting, %d dispatched (%d requests)\n", len(out.Items), out.Dispatched, out.Requests)
	return ExitOK
}
