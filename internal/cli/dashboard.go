package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/dashboard"
	"github.com/roadmap-dev/roadmap/internal/items"
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

// runDashboardRefresh is `roadmap dashboard refresh [--dashboard N]
// [--since D] [--config F] [--json] [-R OWNER/REPO]`, which the wake
// workflow runs hourly: every item's line rebuilt from its record (one list
// request per 100 comments updated since D), then one update of the
// dashboard issue (a conditional read, and a write only when the body
// changed) with the configured day budget and alert rules. Items whose
// records did not change in the window keep their lines. Exit 0, 2 on bad
// input (no dashboard issue included), 3 when GitHub fails it.
func runDashboardRefresh(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "dashboard refresh")
	dash := fs.Int("dashboard", 0, "the dashboard issue `N` (default: the open issue labelled "+dashboard.Label+")")
	sinceFlag := fs.String("since", defaultRefreshWindow, "read the records updated since `D`: a date (YYYY-MM-DD, UTC), a duration back from now (8d, 24h), or all")
	cfgPath := fs.String("config", "", "configuration file (default $GITHUB_WORKSPACE/"+config.DefaultPath+")")
	asJSON := fs.Bool("json", false, "print what the refresh did as one JSON object")
	repoFlag(fs, env)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		env.Errorf("dashboard refresh takes no arguments")
		return ExitUsage
	}
	if *dash < 0 {
		env.Errorf("--dashboard must be an issue number")
		return ExitUsage
	}
	now := time.Now().UTC()
	since, err := parseSince(*sinceFlag, now)
	if err != nil {
		env.Errorf("--since: %v", err)
		return ExitUsage
	}
	load := config.LoadExplicit
	if *cfgPath == "" {
		*cfgPath, load = filepath.Join(env.workdir(""), config.DefaultPath), config.Load
	}
	cfg, err := load(*cfgPath)
	if err != nil {
		env.Errorf("%v", err)
		return ExitUsage
	}
	masker := env.masker()
	gh, err := env.gitHubClient(masker, time.Time{})
	if err != nil {
		env.Errorf("%v", err)
		return ExitUsage
	}
	if *dash == 0 {
		open, err := gh.LabelledIssues(ctx, dashboard.Label)
		if err != nil {
			env.Errorf("%s", masker.Mask(err.Error()))
			return ExitInternal
		}
		if len(open) == 0 {
			env.Errorf("no open issue is labelled %s: run roadmap init, or name one with --dashboard", dashboard.Label)
			return ExitUsage
		}
		// The oldest, as init finds it: the one the workflows name.
		*dash = open[0].Number
	}
	recs, err := gh.Records(ctx, since)
	if err != nil {
		env.Errorf("%s", masker.Mask(err.Error()))
		return ExitInternal
	}
	out := dashboardOutput{Dashboard: *dash}
	var lines []dashboard.Line
	for _, ir := range recs {
		if ir.Issue == *dash {
			continue
		}
		if ir.Record == nil {
			out.Skipped = append(out.Skipped, masker.Mask(ir.Problem))
			continue
		}
		// No title: the comment list carries none, and the line keeps the
		// one report wrote (State.Upsert).
		lines = append(lines, dashboard.LineOf(items.Of(ir.Issue, "", ir.Record), now, nil))
	}
	for _, p := range out.Skipped {
		env.Errorf("left out (its line is kept): %s", p)
	}
	out.Items = len(lines)
	kept, err := dashboard.Keep(ctx, dashboard.KeepOptions{GitHub: gh, Issue: *dash, Lines: lines, Refreshed: true, Now: now,
		DayBudgetUSD: cfg.Budgets.Day.USD, Rules: alertRules(cfg.Alerts)})
	out.Kept = kept
	out.Requests = gh.Requests().Counted()
	if err != nil {
		env.Errorf("%s", masker.Mask(err.Error()))
		if *asJSON {
			env.JSON(out)
		}
		return ExitInternal
	}
	if *asJSON {
		return env.JSON(out)
	}
	wrote := "unchanged, not written"
	if out.Wrote {
		wrote = "written"
	}
	fmt.Fprintf(env.Stdout, "roadmap dashboard refresh: issue #%d, %d item(s) from their records, %s (%d requests)\n", *dash, out.Items, wrote, out.Requests)
	if len(out.Fired) > 0 {
		fmt.Fprintf(env.Stdout, "  alerts fired: %s\n", strings.Join(out.Fired, ", "))
	}
	if len(out.Resolved) > 0 {
		fmt.Fprintf(env.Stdout, "  alerts resolved: %s\n", strings.Join(out.Resolved, ", "))
	}
	if out.Problem != "" {
		fmt.Fprintf(env.Stdout, "  the state block read was not used, rebuilt: %s\n", masker.Mask(out.Problem))
	}
	return ExitOK
}

// alertRules are the dashboard's alert rules from the configuration's
// alerts section. config imports nothing of roadmap's (internal/deptest),
// so the verbs that keep the dashboard turn one into the other here.
func alertRules(a config.Alerts) dashboard.Rules {
	return dashboard.Rules{Owners: a.Owners, StopsPerDay: a.StopsPerDay, DayBudgetShare: a.DayBudgetShare}
}
