//go:build unix

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/dashboard"
	"github.com/roadmap-dev/roadmap/internal/demo"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/items"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// editBody replaces issue n's body, as a person does in the web UI (a tick
// of a task-list box is such an edit): an issues edited event.
func (p *person) editBody(n int, body string) {
	p.do(fmt.Sprintf("edits the body of #%d", n), func(ctx context.Context, _ *github.Client) error {
		return p.send(ctx, http.MethodPatch, fmt.Sprintf("/repos/%s/%s/issues/%d", demo.Owner, demo.Repo, n), map[string]any{"body": body})
	})
}

// app is roadmap's GitHub App identity (the push token's): what roadmap
// writes with it is its own act, not a person's, and not the item's
// requests either.
func (it *item) app() *person {
	const login = "roadmap-e2e[bot]" // the fake's identity of appPushToken (newItem)
	it.mu.Lock()
	if it.persons == nil {
		it.persons = map[string]bool{}
	}
	it.persons[login] = true
	it.mu.Unlock()
	return &person{it: it, login: login, token: appPushToken}
}

// TestE2EDashboardTick: the item is stopped (seeded as a stop's report
// leaves it: Job 1 stopped, the roadmap:stopped label, its line on the
// dashboard with a retry box). alice (write access) ticks the box: an edit
// of the dashboard's body, which GitHub turns into issues edited. The fake
// starts exactly one run of the caller, whose answer job runs report: it
// retries the item (dispatches its next Job, takes the stopped label off)
// and writes the dashboard with the box clear, with GITHUB_TOKEN (no run).
// The dispatched Job is not played (TestE2EYieldAndContinue plays such a
// continuation). Then roadmap's own identity (a GitHub App, whose edits do
// start runs) ticks the box again: the run's every job skips, nothing is
// dispatched and the box stays as it was written. An edit of the item's
// own issue runs no job either.
func TestE2EDashboardTick(t *testing.T) {
	act := requireAct(t)
	it := newItem(t, act, itemOptions{Latency: 20 * time.Millisecond, WatchTimeout: 2 * time.Second})
	if it.dashboard == 0 {
		t.Fatal("the example caller names no dashboard issue")
	}
	ctx := t.Context()
	it.baselinePushes()
	alice := it.person("alice", "write")

	// The item as a stopped Job's report left it, and the dashboard as
	// that report kept it (with the workflow's token: no run).
	at := time.Now().Add(-time.Hour)
	var ch record.Changes
	ch.SetAttempt(1)
	ch.SetResult(record.ResultStopped)
	ch.SetFailure(string(failure.NoProgress))
	ch.SetJobs([]record.JobOutcome{{Job: 1, RunID: 900, Result: record.ResultStopped, Failure: string(failure.NoProgress), At: at.Unix()}})
	it.editRecord(ch)
	roadmap := it.roadmapClient()
	if err := roadmap.AddLabels(ctx, it.w.Issue, "roadmap:stopped"); err != nil {
		t.Fatal(err)
	}
	is, _ := it.w.Fake.Issue(it.w.Issue)
	line := dashboard.LineOf(items.Of(it.w.Issue, is.Title, it.record()), time.Now(), nil)
	if _, err := dashboard.Keep(ctx, dashboard.KeepOptions{GitHub: roadmap, Issue: it.dashboard, Lines: []dashboard.Line{line}, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	it.book("seed: a stopped item on the dashboard")
	it.noMoreRuns("the workflow token's writes of the record, the label and the dashboard")
	dash, _ := it.w.Fake.Issue(it.dashboard)
	clear := fmt.Sprintf("- [ ] retry #%d <!-- roadmap:cmd retry %d -->", it.w.Issue, it.w.Issue)
	ticked := strings.Replace(clear, "[ ]", "[x]", 1)
	if !strings.Contains(dash.Body, clear) {
		t.Fatalf("the dashboard offers no retry box for the stopped item:\n%s", dash.Body)
	}

	// alice ticks it: one run, the caller's answer job, carries it out.
	alice.editBody(it.dashboard, strings.Replace(dash.Body, clear, ticked, 1))
	if q := it.w.Fake.QueuedRuns(); len(q) != 1 {
		t.Fatalf("alice's tick started %d runs, want 1:\n%s", len(q), it.eventNotes(3))
	}
	tick := it.nextRun("tick", it.workflowFile(), "issues", nil)
	if got := tick.Jobs[tick.job("answer")]; got != "success" || len(tick.Jobs) != 1 {
		t.Fatalf("the tick's run: jobs %v, want the answer job alone, succeeding", tick.Jobs)
	}
	if want := fmt.Sprintf("alice's retry box for #%d → retry", it.w.Issue); !strings.Contains(tick.Log, want) {
		t.Errorf("the tick's run does not say %q:\n%s", want, tick.Log)
	}
	disp := it.w.Fake.Dispatches()
	if len(disp) != 1 {
		t.Fatalf("the tick dispatched %d runs, want the item's next Job: %+v", len(disp), disp)
	}
	cont := it.continuation("retried Job", disp[0])
	if cont.inputs["issue"] != fmt.Sprint(it.w.Issue) {
		t.Errorf("the retry dispatched %v, want issue %d", cont.inputs, it.w.Issue)
	}
	if slices.Contains(it.w.Fake.Labels(it.w.Issue), "roadmap:stopped") {
		t.Errorf("labels = %v, want roadmap:stopped taken off by the retry", it.w.Fake.Labels(it.w.Issue))
	}
	dash, _ = it.w.Fake.Issue(it.dashboard)
	if strings.Contains(dash.Body, "- [x]") {
		t.Errorf("the dashboard still shows a ticked box after the run:\n%s", dash.Body)
	}
	// The retried Job is GitHub's next run (the dispatch), and the tick's
	// own writes started none. It is not played here: it is cancelled, as
	// a person may cancel a run, so the edits below are the next runs.
	next, _, err := expectRun(it.w.Fake, it.workflowFile(), "workflow_dispatch")
	if err != nil {
		t.Fatal(err)
	}
	if next.ID != cont.runID {
		t.Errorf("GitHub's next run is %d, want the retry's dispatch %d", next.ID, cont.runID)
	}
	if err := it.w.Fake.FinishRun(next.ID, "cancelled"); err != nil {
		t.Fatal(err)
	}
	it.noMoreRuns("after the tick (its record, label and dashboard writes are the workflow token's)")

	// roadmap's App identity writes the dashboard with the box ticked:
	// GitHub starts the caller (an App's edit does), and its jobs skip.
	app := it.app()
	app.editBody(it.dashboard, strings.Replace(dash.Body, clear, ticked, 1))
	own := it.nextRun("roadmap's own edit", it.workflowFile(), "issues", nil)
	if len(own.Jobs) != 0 {
		t.Errorf("roadmap's own edit of the dashboard ran jobs %v, want none", own.Jobs)
	}
	// alice edits the item's issue: no job is the edit's.
	alice.editBody(it.w.Issue, is.Body+"\n\nOne more note.")
	other := it.nextRun("another issue's edit", it.workflowFile(), "issues", nil)
	if len(other.Jobs) != 0 {
		t.Errorf("an edit of issue #%d ran jobs %v, want none", it.w.Issue, other.Jobs)
	}
	if n := len(it.w.Fake.Dispatches()); n != 1 {
		t.Errorf("%d dispatches, want only the tick's", n)
	}
	it.noMoreRuns("after the edits no job is for")
	it.requests()
}
