package report

import (
	"context"

	"github.com/roadmap-dev/roadmap/internal/dashboard"
	"github.com/roadmap-dev/roadmap/internal/items"
	"github.com/roadmap-dev/roadmap/internal/redact"
)

// settledStates are the states report shows on the dashboard as soon as its item
// reaches them: each waits on a person (a question, a stop, a review) or on
// the day's budget. An item in flight (planning, implementing, waiting on
// its checks) and a newly staged plan are shown by the next settled report
// or the scheduled refresh: keeping the dashboard after every continuation
// would cost two requests each, and a whole item is held to 30
// (DESIGN §9). `roadmap console` follows an item in flight.
var settledStates = map[items.State]bool{items.NeedsInput: true, items.WaitingBudget: true, items.Stopped: true, items.Ready: true}

// keepDashboard puts the item's line on the dashboard when its state is
// settled: one conditional read and, when the body changes, one write. A
// failure is logged and kept in the outcome, never report's failure: the
// item's own action is done, and the next report or the refresh brings the
// dashboard up to date.
func (r *reporter) keepDashboard(ctx context.Context) {
	if r.o.Dashboard <= 0 || r.rec == nil {
		return
	}
	title := ""
	if r.issue != nil {
		title = r.issue.Title
	}
	it := items.Of(r.o.Issue, title, r.rec)
	if !settledStates[it.State] {
		r.logf("report: issue #%d is %s: the dashboard shows it at its next settled state or the scheduled refresh", r.o.Issue, it.State)
		return
	}
	clean := func(s string) string {
		return redact.NeutraliseIn(r.o.Mask(s), r.o.GitHub.ServerHost(), r.o.GitHub.FullName())
	}
	kept, err := dashboard.Keep(ctx, dashboard.KeepOptions{GitHub: r.o.GitHub, Issue: r.o.Dashboard,
		Lines: []dashboard.Line{dashboard.LineOf(it, r.o.Clock.Now(), clean)}, Now: r.o.Clock.Now(),
		DayBudgetUSD: r.o.DayBudget.USD, Rules: r.o.Alerts})
	r.out.Dashboard = &kept
	if err != nil {
		r.out.DashboardError = r.o.Mask(err.Error())
		r.logf("report: issue #%d: the dashboard (issue #%d) was not kept: %s", r.o.Issue, r.o.Dashboard, r.out.DashboardError)
		return
	}
	what := "unchanged, not written"
	if kept.Wrote {
		what = "written"
	}
	r.logf("report: issue #%d is %s on the dashboard (issue #%d): %s, %d request(s)", r.o.Issue, it.State, r.o.Dashboard, what, kept.Requests)
}
