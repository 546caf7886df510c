package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/roadmap-dev/roadmap/internal/blockers"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/job"
	"github.com/roadmap-dev/roadmap/internal/ledger"
	"github.com/roadmap-dev/roadmap/internal/report"
)

// wakeOptions are `roadmap wake`'s flags, parsed.
type wakeOptions struct {
	Workflow, Ref string
	Dashboard     int
	DayUSD        float64
	DryRun, JSON  bool
	// UnblockOnly runs only the unblock (a person closed an issue): the
	// items waiting for the day's budget are the schedule's.
	UnblockOnly bool
}

// wakeOutcome is what `roadmap wake --json` prints: the day-budget wake's
// outcome (absent with --unblock-only) and the unblock's.
type wakeOutcome struct {
	*report.WakeOutcome
	Unblocked report.UnblockOutcome `json:"unblocked"`
	// Trackers are the drives of the trackers roadmap drives (the tracker
	// label): each one's sub-issues and what the drive did.
	Trackers []report.DriveOutcome `json:"trackers"`
}

// runWake is `roadmap wake`, which the roadmap-wake workflow `roadmap init`
// writes runs on a schedule: it lists the items waiting for the day's
// budget (the waiting label; one request), checks the day's budget once and
// dispatches the due items, waiting longest first, as far as the budget
// goes. Then it starts the items waiting for their blockers (the blocked
// label) whose last blocker is met (report.Unblock), and drives the
// trackers roadmap drives (the tracker label; report.DriveTrackers);
// --unblock-only, which the caller runs when a person closes or reopens an
// issue, does only those two. Exit 0 when it did its job (nothing to wake included), 2 on bad
// input, 3 when GitHub failed it.
func runWake(ctx context.Context, env *Env, args []string) int {
	return wakeCmd(ctx, env.factory(), args, wakeRun)
}

// wakeCmd parses wake's flags into its options, then calls runF (gh's
// runF seam: a flag test passes its own and runs nothing).
func wakeCmd(ctx context.Context, f *Factory, args []string, runF func(context.Context, *Factory, *wakeOptions) int) int {
	env, o := f.env, &wakeOptions{}
	fs := newFlags(env, "wake")
	fs.StringVar(&o.Workflow, "workflow", "roadmap.yml", "the caller workflow file to dispatch the items' Jobs on (it has workflow_dispatch)")
	fs.StringVar(&o.Ref, "ref", "", "the ref the Jobs run on (default $GITHUB_REF_NAME, else main)")
	fs.IntVar(&o.Dashboard, "dashboard", 0, "the dashboard issue, which holds the day ledger (0: the ledger issue roadmap opens, label roadmap:ledger)")
	fs.Float64Var(&o.DayUSD, "day-budget-usd", 0, "the day's budget in USD across items (default: configuration budgets.day.usd)")
	fs.StringVar(&f.ConfigPath, "config", "", "configuration file (default $GITHUB_WORKSPACE/"+config.DefaultPath+")")
	fs.BoolVar(&o.DryRun, "dry-run", false, "say what would be dispatched, and dispatch nothing")
	fs.BoolVar(&o.JSON, "json", false, "print the outcome as JSON on stdout")
	fs.BoolVar(&o.UnblockOnly, "unblock-only", false, "only start the items waiting for their blockers whose last blocker is met (the caller runs it when a person closes an issue)")
	repoFlag(fs, env)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		env.Errorf("wake takes no arguments")
		return ExitUsage
	}
	if o.DayUSD < 0 {
		env.Errorf("wake: --day-budget-usd must not be negative")
		return ExitUsage
	}
	if o.Ref == "" {
		o.Ref = firstSet(env.Getenv("GITHUB_REF_NAME"), "main")
	}
	return runF(ctx, f, o)
}

// wakeRun wakes the waiting items as o says.
func wakeRun(ctx context.Context, f *Factory, o *wakeOptions) int {
	env := f.env
	cfg, gh, code := f.configAndGitHub()
	if code != ExitOK {
		return code
	}
	masker := f.Masker()
	var out wakeOutcome
	if !o.UnblockOnly {
		w, err := report.Wake(ctx, report.WakeOptions{GitHub: gh, Workflow: o.Workflow, Ref: o.Ref, Dashboard: o.Dashboard,
			DayBudget: dayBudget(cfg, o.DayUSD), Labels: reportLabels(cfg), Mask: masker.Mask, Log: env.Stderr, DryRun: o.DryRun})
		if err != nil {
			env.Errorf("wake: %s", masker.Mask(err.Error()))
			return exitFor(err)
		}
		out.WakeOutcome = &w
	}
	u, err := report.Unblock(ctx, report.UnblockOptions{GitHub: gh, Workflow: o.Workflow, Ref: o.Ref, Label: cfg.Labels.Blocked,
		Labels: reportLabels(cfg), Blockers: blockers.Options{NotPlannedMet: cfg.Blockers.NotPlannedMet},
		Mask: masker.Mask, Log: env.Stderr, DryRun: o.DryRun})
	out.Unblocked = u
	if err != nil {
		env.Errorf("wake: unblock: %s", masker.Mask(err.Error()))
		return exitFor(err)
	}
	out.Trackers, err = report.DriveTrackers(ctx, driveOptions(cfg, gh, o.Workflow, o.Ref, masker.Mask, env.Stderr, o.DryRun))
	if out.Trackers == nil {
		out.Trackers = []report.DriveOutcome{}
	}
	if err != nil {
		env.Errorf("wake: trackers: %s", masker.Mask(err.Error()))
		return exitFor(err)
	}
	if o.JSON {
		return env.JSON(out)
	}
	if out.WakeOutcome != nil {
		fmt.Fprintf(env.Stdout, "roadmap wake: %d waiting, %d dispatched (%d requests)\n", len(out.Items), out.Dispatched, out.Requests)
	}
	fmt.Fprintf(env.Stdout, "roadmap wake: %d waiting for blockers, %d unblocked and dispatched (%d requests)\n",
		len(u.Items), u.Dispatched, u.Requests)
	for _, d := range out.Trackers {
		state := fmt.Sprintf("%d active of at most %d, %d started now", d.Active, d.MaxActive, d.Started)
		if d.Complete {
			state = "complete"
		}
		fmt.Fprintf(env.Stdout, "roadmap wake: tracker #%d: %s (%d requests)\n", d.Tracker, state, d.Requests)
	}
	return ExitOK
}

// driveOptions are the configuration's options of a tracker's drive.
func driveOptions(cfg *config.Config, gh *github.Client, workflow, ref string, mask func(string) string, log io.Writer, dry bool) report.DriveOptions {
	return report.DriveOptions{GitHub: gh, Workflow: workflow, Ref: ref, Tracker: trackerDrive(cfg),
		Blockers: blockers.Options{NotPlannedMet: cfg.Blockers.NotPlannedMet}, Mask: mask, Log: log, DryRun: dry}
}

// trackerDrive is the configuration's tracker.* and labels.tracker.
func trackerDrive(cfg *config.Config) report.TrackerOptions {
	return report.TrackerOptions{Label: cfg.Labels.Tracker, MaxActive: cfg.Tracker.MaxActive, OnComplete: cfg.Tracker.OnComplete}
}

// dayBudget is the day's budget across items: the configuration's, its
// dollars replaced by a flag above zero.
func dayBudget(cfg *config.Config, usd float64) ledger.Budget {
	b := job.DayBudget(cfg.Budgets.Day)
	if usd > 0 {
		b.USD = usd
	}
	return b
}

// reportLabels are the configuration's labels as report and wake use them.
func reportLabels(cfg *config.Config) report.Labels {
	return report.Labels{Stage: cfg.Labels.Stage, Implement: cfg.Labels.Implement, NeedsInput: cfg.Labels.NeedsInput,
		Stopped: cfg.Labels.Stopped, Stop: cfg.Labels.Stop, Waiting: cfg.Labels.Waiting}
}

// firstSet is the first of vals that is not "".
func firstSet(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
