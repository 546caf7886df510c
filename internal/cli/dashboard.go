package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/dashboard"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/inputerr"
	"github.com/roadmap-dev/roadmap/internal/items"
	"github.com/roadmap-dev/roadmap/internal/recordstore"
)

// dashboardOutput is `roadmap dashboard refresh --json`: what the update
// did (dashboard.Kept), the dashboard issue, the lines it brought in, and
// the counted GitHub requests of the whole command (the list included;
// Kept's own count is the update's alone).
type dashboardOutput struct {
	dashboard.Kept
	Dashboard int `json:"dashboard"`
	// Items is how many items' lines the refresh derived from their records.
	Items    int `json:"items"`
	Requests int `json:"requests"`
	// Skipped names record comments that do not parse (their lines kept).
	Skipped []string `json:"skipped,omitempty"`
}

// defaultRefreshWindow is --since when not given: a week of spend and
// stops (what the dashboard shows) and a day more, so an item whose record
// changed just before the week began still has its line rebuilt.
const defaultRefreshWindow = "8d"

// refreshOptions are `roadmap dashboard refresh`'s flags, parsed.
type refreshOptions struct {
	Dashboard int
	Since     time.Time
	Now       time.Time
	JSON      bool
}

// runDashboardRefresh is `roadmap dashboard refresh [--dashboard N]
// [--since D] [--config F] [--json] [-R OWNER/REPO]`, which the wake
// workflow runs hourly: every item's line rebuilt from its record (one list
// request per 100 comments updated since D), then one update of the
// dashboard issue (a conditional read, and a write only when the body
// changed) with the configured day budget and alert rules. Items whose
// records did not change in the window keep their lines. Exit 0, 2 on bad
// input (no dashboard issue included), 3 when GitHub fails it.
func runDashboardRefresh(ctx context.Context, env *Env, args []string) int {
	return refreshCmd(ctx, env.factory(), args, refreshRun)
}

// refreshCmd parses dashboard refresh's flags into its options, then calls runF.
func refreshCmd(ctx context.Context, f *Factory, args []string, runF func(context.Context, *Factory, *refreshOptions) int) int {
	env, o := f.env, &refreshOptions{}
	fs := newFlags(env, "dashboard refresh")
	fs.IntVar(&o.Dashboard, "dashboard", 0, "the dashboard issue `N` (default: the open issue labelled "+dashboard.Label+")")
	sinceFlag := fs.String("since", defaultRefreshWindow, "read the records updated since `D`: a date (YYYY-MM-DD, UTC), a duration back from now (8d, 24h), or all")
	fs.StringVar(&f.ConfigPath, "config", "", "configuration file (default $GITHUB_WORKSPACE/"+config.DefaultPath+")")
	fs.BoolVar(&o.JSON, "json", false, "print what the refresh did as one JSON object")
	repoFlag(fs, env)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		env.Errorf("dashboard refresh takes no arguments")
		return ExitUsage
	}
	if o.Dashboard < 0 {
		env.Errorf("--dashboard must be an issue number")
		return ExitUsage
	}
	o.Now = f.Now().UTC()
	var err error
	if o.Since, err = parseSince(*sinceFlag, o.Now); err != nil {
		env.Errorf("--since: %v", err)
		return ExitUsage
	}
	return runF(ctx, f, o)
}

// refreshRun rebuilds the items' lines from their records and keeps the
// dashboard issue.
func refreshRun(ctx context.Context, f *Factory, o *refreshOptions) int {
	env := f.env
	cfg, gh, code := f.configAndGitHub()
	if code != ExitOK {
		return code
	}
	masker := f.Masker()
	var err error
	if o.Dashboard, err = dashboardIssue(ctx, f, gh, o.Dashboard); err != nil {
		return exitFor(err)
	}
	recs, err := recordstore.Records(ctx, gh, o.Since)
	if err != nil {
		env.Errorf("%s", masker.Mask(err.Error()))
		return ExitInternal
	}
	out, lines := refreshLines(f, o, recs)
	kept, err := dashboard.Keep(ctx, dashboard.KeepOptions{GitHub: gh, Issue: o.Dashboard, Lines: lines, Refreshed: true, Now: o.Now,
		DayBudgetUSD: cfg.Budgets.Day.USD, Rules: alertRules(cfg.Alerts)})
	out.Kept = kept
	out.Requests = gh.Requests().Counted()
	if err != nil {
		env.Errorf("%s", masker.Mask(err.Error()))
		if o.JSON {
			env.JSON(out)
		}
		return ExitInternal
	}
	if o.JSON {
		return env.JSON(out)
	}
	printRefresh(env, out, masker.Mask)
	return ExitOK
}

// refreshLines are the items' lines from their records, the dashboard's own
// left out; a record that does not parse is named in Skipped (its line
// kept).
func refreshLines(f *Factory, o *refreshOptions, recs []recordstore.ItemRecord) (dashboardOutput, []dashboard.Line) {
	out := dashboardOutput{Dashboard: o.Dashboard}
	var lines []dashboard.Line
	for _, ir := range recs {
		if ir.Issue == o.Dashboard {
			continue
		}
		if ir.Record == nil {
			out.Skipped = append(out.Skipped, f.Masker().Mask(ir.Problem))
			continue
		}
		// No title: the comment list carries none, and the line keeps the
		// one report wrote (State.Upsert).
		lines = append(lines, dashboard.LineOf(items.Of(ir.Issue, "", ir.Record), o.Now, nil))
	}
	for _, p := range out.Skipped {
		f.env.Errorf("left out (its line is kept): %s", p)
	}
	out.Items = len(lines)
	return out, lines
}

// printRefresh is what the refresh did, for a person.
func printRefresh(env *Env, out dashboardOutput, mask func(string) string) {
	wrote := "unchanged, not written"
	if out.Wrote {
		wrote = "written"
	}
	fmt.Fprintf(env.Stdout, "roadmap dashboard refresh: issue #%d, %d item(s) from their records, %s (%d requests)\n", out.Dashboard, out.Items, wrote, out.Requests)
	if len(out.Fired) > 0 {
		fmt.Fprintf(env.Stdout, "  alerts fired: %s\n", strings.Join(out.Fired, ", "))
	}
	if len(out.Resolved) > 0 {
		fmt.Fprintf(env.Stdout, "  alerts resolved: %s\n", strings.Join(out.Resolved, ", "))
	}
	if out.Problem != "" {
		fmt.Fprintf(env.Stdout, "  the state block read was not used, rebuilt: %s\n", mask(out.Problem))
	}
}

// dashboardIssue is the dashboard issue n, else the oldest open issue
// labelled roadmap:dashboard (the one init made and the workflows name).
// An error is already said; it is an *inputerr.Error when there is none.
func dashboardIssue(ctx context.Context, f *Factory, gh *github.Client, n int) (int, error) {
	if n != 0 {
		return n, nil
	}
	open, err := gh.LabelledIssues(ctx, dashboard.Label)
	if err != nil {
		f.env.Errorf("%s", f.Masker().Mask(err.Error()))
		return 0, err
	}
	if len(open) == 0 {
		err := inputerr.Errorf("no open issue is labelled %s: run roadmap init, or name one with --dashboard", dashboard.Label)
		f.env.Errorf("%v", err)
		return 0, err
	}
	return open[0].Number, nil
}

// alertRules are the dashboard's alert rules from the configuration's
// alerts section. config imports nothing of roadmap's (internal/deptest),
// so the verbs that keep the dashboard turn one into the other here.
func alertRules(a config.Alerts) dashboard.Rules {
	return dashboard.Rules{Owners: a.Owners, StopsPerDay: a.StopsPerDay, DayBudgetShare: a.DayBudgetShare}
}
