package report

import (
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/record"
)

// TestReportRefusesItsOwnIssueAsDashboard: a caller naming the item's own
// issue as the dashboard (the example's placeholder number left in place)
// is an error before anything is written: keeping the dashboard there would
// replace the issue's body.
func TestReportRefusesItsOwnIssueAsDashboard(t *testing.T) {
	const runID = 9003
	e := newEnv(t)
	n := e.issue(t, endOfJob(t, base(), 2, runID, record.ResultReady, "", "", 3), "roadmap:implement")
	before := e.body(t, n)
	o := e.options(n, runID)
	o.JobResult, o.Result, o.Dashboard = "success", "ready", n
	if _, err := Run(ctx, o); err == nil || !strings.Contains(err.Error(), "the item's own issue") {
		t.Errorf("Run with the item's issue as the dashboard: %v; want an error saying so", err)
	}
	if got := e.body(t, n); got != before {
		t.Errorf("the issue's body changed:\n%s", got)
	}
}
