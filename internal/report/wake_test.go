package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/ledger"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// TestWake: an item that yields for the day's budget waits with the label
// and item.wake_at; the next day roadmap wake checks the budget once and
// dispatches the due items, waiting longest first, as far as it goes.
func TestWake(t *testing.T) {
	e := newEnv(t)
	dash := e.fake.CreateIssue(githubfake.Issue{Title: "roadmap dashboard"})
	budget := ledger.Budget{USD: 1}
	if err := ledger.Append(ctx, e.gh, dash, ledger.Entry{Day: ledger.Day(t0), Issue: 40, Job: 1, USD: 0.999, TokensIn: 1, TokensOut: 1, ModelCalls: 1}); err != nil {
		t.Fatal(err)
	}

	// Day 1: three items yield for the day's budget, one after the other.
	yield := func(runID int64) int {
		t.Helper()
		n := e.issue(t, endOfJob(t, base(), 2, runID, record.ResultYielded, "", "deadline near", 2), "roadmap:implement")
		o := e.options(n, runID)
		o.JobResult, o.Result, o.Dashboard, o.DayBudget = "success", "yielded", dash, budget
		out, err := Run(ctx, o)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if out.Action != ActionYield {
			t.Fatalf("Action = %s, want yield", out.Action)
		}
		if !e.hasLabel(n, "roadmap:waiting") {
			t.Errorf("labels = %v, want roadmap:waiting", e.fake.Labels(n))
		}
		if at, ok := e.record(t, n).WakeAt(); !ok || !at.Equal(time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)) {
			t.Errorf("item.wake_at = %v (%v), want the next 00:00 UTC", at, ok)
		}
		return n
	}
	// Issue numbers and run ids: the later yield has the higher run id but
	// the lower issue number, so "oldest first" is by the wait, not the number.
	second := yield(9200)
	first := yield(9100)
	third := yield(9300)
	stopped := yield(9050)
	var ch record.Changes
	ch.SetStoppedBy("alice")
	e.patchRecord(t, stopped, ch)
	if len(e.fake.Dispatches()) != 0 {
		t.Fatalf("a yield dispatched: %v", e.fake.Dispatches())
	}

	wake := func() (WakeOutcome, string) {
		t.Helper()
		var log bytes.Buffer
		out, err := Wake(ctx, WakeOptions{GitHub: e.client(t), Workflow: workflow, Ref: ref, Dashboard: dash, DayBudget: budget,
			Clock: e.clock, Mask: e.mask.Mask, Log: &log})
		if err != nil {
			t.Fatalf("Wake: %v", err)
		}
		return out, log.String()
	}

	// Still day 1: nothing is due.
	out, log := wake()
	if out.Dispatched != 0 || len(e.fake.Dispatches()) != 0 {
		t.Fatalf("before wake_at: %d dispatched\n%s", out.Dispatched, log)
	}

	// Day 2: the ledger has a day-2 entry of $0.40; each waiting item's last
	// Job spent $0.0071, and $0.60 is left: every due one fits.
	e.clock.Advance(14 * time.Hour)
	if err := ledger.Append(ctx, e.gh, dash, ledger.Entry{Day: ledger.Day(e.clock.Now()), Issue: 41, Job: 1, USD: 0.40, TokensIn: 1, TokensOut: 1, ModelCalls: 1}); err != nil {
		t.Fatal(err)
	}
	e.fake.ResetLog()
	out, log = wake()
	var got []string
	for _, d := range e.fake.Dispatches() {
		got = append(got, d.Inputs["issue"].(string)+"/"+d.Inputs["attempt"].(string))
	}
	want := []string{itoa(first) + "/3", itoa(second) + "/3", itoa(third) + "/3"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("dispatched (issue/attempt), waiting longest first (-want +got):\n%s\n%s", diff, log)
	}
	for _, n := range []int{first, second, third} {
		if e.hasLabel(n, "roadmap:waiting") {
			t.Errorf("issue %d keeps roadmap:waiting after its dispatch", n)
		}
	}
	if !e.hasLabel(stopped, "roadmap:waiting") || !strings.Contains(log, "stopped by alice") {
		t.Errorf("the stopped item: labels %v; want it left waiting, and the log saying why\n%s", e.fake.Labels(stopped), log)
	}
	lists := e.fake.CountByEndpoint()["GET /repos/{owner}/{repo}/issues"]
	if lists != 1 {
		t.Errorf("the waiting items were listed with %d requests, want 1", lists)
	}
	t.Logf("wake: %d requests for 4 waiting items, 3 dispatched", out.Requests)

	// A second wake finds nothing left to dispatch.
	before := len(e.fake.Dispatches())
	if out, _ = wake(); out.Dispatched != 0 || len(e.fake.Dispatches()) != before {
		t.Errorf("a second wake dispatched again: %d", out.Dispatched)
	}
}

// TestWakeWithinBudget: with less left than the waiting items' last Jobs
// cost, the oldest goes first and the rest wait; with none left, none goes.
func TestWakeWithinBudget(t *testing.T) {
	e := newEnv(t)
	dash := e.fake.CreateIssue(githubfake.Issue{Title: "roadmap dashboard"})
	var items []int
	for i := range 3 {
		ch := endOfJob(t, base(), 2, int64(9100+i), record.ResultYielded, "", "day", 2)
		ch.SetWakeAt(t0.Add(-time.Hour))
		n := e.issue(t, ch, "roadmap:waiting")
		items = append(items, n)
	}
	for _, tc := range []struct {
		spent float64
		want  int
	}{
		{0.99, 1},  // $0.01 left: the oldest goes (its last Job cost $0.0071), the next one would pass it
		{1.00, 0},  // none left
		{0.975, 3}, // $0.025 left: all three fit
	} {
		for _, n := range items {
			if err := e.gh.AddLabels(ctx, n, "roadmap:waiting"); err != nil {
				t.Fatal(err)
			}
		}
		before := len(e.fake.Dispatches())
		day := ledger.Day(t0)
		if err := ledger.Append(ctx, e.gh, dash, ledger.Entry{Day: day, Issue: 50, Job: 1, USD: tc.spent, TokensIn: 1, TokensOut: 1, ModelCalls: 1}); err != nil {
			t.Fatal(err)
		}
		out, err := Wake(ctx, WakeOptions{GitHub: e.client(t), Workflow: workflow, Ref: ref, Dashboard: dash, DayBudget: ledger.Budget{USD: 1},
			Clock: e.clock, Mask: e.mask.Mask})
		if err != nil {
			t.Fatal(err)
		}
		if out.Dispatched != tc.want || len(e.fake.Dispatches())-before != tc.want {
			t.Errorf("spent $%.3f of $1: dispatched %d, want %d (%+v)", tc.spent, out.Dispatched, tc.want, out.Items)
		}
		if d := e.fake.Dispatches(); tc.want == 1 && d[len(d)-1].Inputs["issue"] != itoa(items[0]) {
			t.Errorf("dispatched %v, want the oldest, issue %d", d[len(d)-1].Inputs, items[0])
		}
	}
}

// patchRecord applies ch to issue n's record comment, as a person with
// write access could edit it.
func (e *env) patchRecord(t *testing.T, n int, ch record.Changes) {
	t.Helper()
	c := e.recordComment(t, n)
	err := e.fake.EditComment(c.ID, func(cur string) string {
		out, err := record.Update(cur, ch)
		if err != nil {
			t.Fatalf("update the record: %v", err)
		}
		return out
	})
	if err != nil {
		t.Fatal(err)
	}
}
