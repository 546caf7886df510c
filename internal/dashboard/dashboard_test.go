package dashboard

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/roadmap-dev/roadmap/internal/items"
	"github.com/roadmap-dev/roadmap/internal/record"
)

var update = flag.Bool("update", false, "rewrite the golden files")

var now = time.Date(2026, 12, 4, 15, 30, 0, 0, time.UTC)

func at(d time.Duration) int64 { return now.Add(-d).Unix() }

func spend(usd float64) record.Spend {
	return record.Spend{TokensIn: int64(usd * 100000), TokensOut: int64(usd * 20000), USD: usd, ModelCalls: int(usd*100) + 1}
}

// tenItems are records of ten items in every state a person sees, as the
// stage and implement Jobs and report leave them.
func tenItems(t testing.TB) []items.Item {
	t.Helper()
	staged := func(c *record.Changes, ago time.Duration) {
		c.SetStageState("staged")
		c.SetStagePR(100)
		c.SetStageJobs([]record.JobOutcome{{Job: 1, RunID: 500, Result: record.ResultStaged, Spend: spend(0.05), Requests: 4, At: at(ago)}})
	}
	recs := []struct {
		issue int
		title string
		edit  func(c *record.Changes)
	}{
		{1, "Add retry backoff to the webhook worker", func(c *record.Changes) {
			staged(c, 30*time.Hour)
			c.SetResult(record.ResultReady)
			c.SetSpend(spend(0.47))
			c.SetJobs([]record.JobOutcome{
				{Job: 1, RunID: 501, Failure: "killed", Spend: spend(0.12), Requests: 3, At: at(29 * time.Hour)},
				{Job: 2, RunID: 502, Result: record.ResultReady, Spend: spend(0.30), Requests: 13, At: at(28 * time.Hour)}})
		}},
		{2, "Stop on a failing check | with a pipe and <!-- a comment -->", func(c *record.Changes) {
			staged(c, 5*time.Hour)
			c.SetResult(record.ResultStopped)
			c.SetFailure("checks_failed")
			c.SetSpend(spend(0.25))
			c.SetJobs([]record.JobOutcome{{Job: 1, RunID: 511, Result: record.ResultStopped, Failure: "checks_failed", Spend: spend(0.20), Requests: 9, At: at(4 * time.Hour)}})
		}},
		{3, "Another checks failure", func(c *record.Changes) {
			staged(c, 3*time.Hour)
			c.SetResult(record.ResultStopped)
			c.SetFailure("checks_failed")
			c.SetSpend(spend(0.15))
			c.SetJobs([]record.JobOutcome{{Job: 1, RunID: 521, Result: record.ResultStopped, Failure: "checks_failed", Spend: spend(0.10), Requests: 8, At: at(2 * time.Hour)}})
		}},
		{4, "Needs a decision", func(c *record.Changes) {
			staged(c, 6*time.Hour)
			c.SetResult(record.ResultReturned)
			c.SetFailure("needs_input")
			c.SetQuestion("Which format: JSON or YAML?")
			c.SetSpend(spend(0.09))
			c.SetJobs([]record.JobOutcome{{Job: 1, RunID: 531, Result: record.ResultReturned, Failure: "needs_input", Spend: spend(0.04), Requests: 6, At: at(5 * time.Hour)}})
		}},
		{5, "Waits for tomorrow's budget", func(c *record.Changes) {
			staged(c, 7*time.Hour)
			c.SetResult(record.ResultYielded)
			c.SetFailure("day_budget_exhausted")
			c.SetWakeAt(time.Date(2026, 12, 5, 0, 5, 0, 0, time.UTC))
			c.SetSpend(spend(0.05))
			c.SetJobs([]record.JobOutcome{{Job: 1, RunID: 541, Result: record.ResultYielded, Failure: "day_budget_exhausted", Requests: 2, At: at(time.Hour)}})
		}},
		{6, "Implementing now", func(c *record.Changes) {
			staged(c, 2*time.Hour)
			c.SetSpend(spend(0.08))
			c.SetJobs([]record.JobOutcome{{Job: 1, RunID: 551, Group: 1, Spend: spend(0.03), Requests: 3, At: at(20 * time.Minute)}})
		}},
		{7, "Continuing after a kill", func(c *record.Changes) {
			staged(c, 2*time.Hour)
			c.SetSpend(spend(0.11))
			c.SetJobs([]record.JobOutcome{{Job: 1, RunID: 561, Failure: "oom", Spend: spend(0.06), Requests: 4, At: at(40 * time.Minute)}})
		}},
		{8, "Staged, waiting for approval", func(c *record.Changes) {
			staged(c, 50*time.Minute)
			c.SetSpend(spend(0.05))
		}},
		{9, "Planning", func(c *record.Changes) {
			c.SetStageJobs([]record.JobOutcome{{Job: 1, RunID: 581, Spend: spend(0.02), Requests: 2, At: at(10 * time.Minute)}})
			c.SetSpend(spend(0.02))
		}},
		{10, "Stopped a week ago, on the cap", func(c *record.Changes) {
			staged(c, 8*24*time.Hour)
			c.SetResult(record.ResultStopped)
			c.SetFailure("budget_exhausted")
			c.SetSpend(spend(2.00))
			c.SetJobs([]record.JobOutcome{{Job: 1, RunID: 591, Result: record.ResultStopped, Failure: "budget_exhausted", Spend: spend(1.95), Requests: 12, At: at(8 * 24 * time.Hour)}})
		}},
	}
	var out []items.Item
	for _, r := range recs {
		rec, err := record.Parse("")
		if err != nil {
			t.Fatal(err)
		}
		var c record.Changes
		r.edit(&c)
		if err := rec.Apply(c); err != nil {
			t.Fatalf("item %d: %v", r.issue, err)
		}
		out = append(out, items.Of(r.issue, r.title, rec))
	}
	return out
}

func stateOf(t testing.TB, its []items.Item) *State {
	st := &State{Rate: &Rate{Used: 212, Limit: 1000, At: now.Add(-time.Minute)}}
	for _, it := range its {
		st.Upsert(LineOf(it, now, func(s string) string { return s }))
	}
	st.Prune(now)
	return st
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("%s differs (-want +got; -update rewrites it after a deliberate change):\n%s", name, d)
	}
}

// TestDashboard: ten items in mixed states render one dashboard body,
// checked against a golden file; the body's state block reads back as the
// state it was rendered from.
func TestDashboard(t *testing.T) {
	st := stateOf(t, tenItems(t))
	body := Render(st, View{Now: now, DayBudgetUSD: 50, Ticked: []Command{{Verb: CmdRetry, Issue: 3}}})
	golden(t, "ten-items.md", body)

	back, err := Parse(body)
	if err != nil {
		t.Fatalf("the rendered body's state block: %v", err)
	}
	if d := cmp.Diff(st, back); d != "" {
		t.Errorf("the state block does not read back (-rendered +read):\n%s", d)
	}
	for _, want := range []string{
		"| stopped: checks_failed | #2 ", // a stop shows its class
		"- [ ] retry #2 <!-- roadmap:cmd retry 2 -->",
		"- [x] retry #3 <!-- roadmap:cmd retry 3 -->", // a pending tick stays
		"- [ ] wake now #5 <!-- roadmap:cmd wake 5 -->",
		"- [ ] stop #6 <!-- roadmap:cmd stop 6 -->",
		"| checks_failed | 2 | #2, #3 |", // stops by class, 7 days
		"pie title Items by state",
		"xychart-beta",
		"| GitHub requests this hour | 212 of 1000 (21%)",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the body lacks %q", want)
		}
	}
	// The title's pipe and comment opener cannot break the table or open a
	// comment; the stop of #10, past seven days, is not counted.
	if strings.Contains(body, "<!-- a comment") || strings.Contains(body, "budget_exhausted | 1") {
		t.Errorf("the body shows an unsafe title or an old stop:\n%s", body)
	}
	// Spend today: the Jobs whose lines changed today (UTC).
	// Today's Jobs: stage Jobs of #2..#8 at $0.05 each (7 × 0.05 = 0.35), #9's
	// stage Job 0.02, and implement Jobs 0.20 + 0.10 + 0.04 + 0 + 0.03 + 0.06
	// = 0.43: $0.80. The week adds #1's three Jobs yesterday: 0.05+0.12+0.30.
	for _, want := range []string{"| spend today (2026-12-04, UTC) | $0.80 of $50.00 (2%) |", "| spend this week (7 days) | $1.27 of $350.00 |"} {
		if !strings.Contains(body, want) {
			t.Errorf("the body lacks %q", want)
		}
	}
}

// TestUpsertKeepsTitle: a line with no title (the refresh's, derived from
// the comment list, which carries none) keeps the title the item's line
// had; a line with a title replaces it.
func TestUpsertKeepsTitle(t *testing.T) {
	st := &State{}
	st.Upsert(Line{Issue: 7, Title: "Add retry backoff", State: items.Staged})
	st.Upsert(Line{Issue: 7, State: items.Implementing, USD: 0.2})
	if got := st.Items[0]; got.Title != "Add retry backoff" || got.State != items.Implementing || got.USD != 0.2 {
		t.Errorf("after an untitled upsert the line is %+v; want the new state and spend with the old title", got)
	}
	st.Upsert(Line{Issue: 7, Title: "Renamed", State: items.Ready})
	if got := st.Items[0].Title; got != "Renamed" {
		t.Errorf("title = %q, want the new line's %q", got, "Renamed")
	}
	st.Upsert(Line{Issue: 8, State: items.Planning})
	if len(st.Items) != 2 || st.Items[1].Title != "" {
		t.Errorf("a new untitled line: items %+v", st.Items)
	}
}

// TestWaitingBlockersShown: an item whose Job found an open blocker shows
// as waiting_blockers with what it waits for (item.blocked_by), among the
// waiting items; the line reads back from the state block, and a
// blocked_by edited into something else than references is kept to them.
func TestWaitingBlockersShown(t *testing.T) {
	body := "<!-- roadmap:record v1\n" +
		`implement.result: yielded` + "\n" + `implement.failure: blocked` + "\n" +
		`implement.jobs: [{"job":1,"run_id":600,"result":"yielded","failure":"blocked","at":` + fmt.Sprint(at(3*time.Hour)) + `}]` + "\n" +
		`item.blocked_by: "#12, acme/lib#4 | <b>x</b>"` + "\n-->\n"
	rec, err := record.Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	it := items.Of(11, "Waits for the parser", rec)
	if it.State != items.WaitingBlockers || it.BlockedSince != time.Unix(at(3*time.Hour), 0).UTC() {
		t.Fatalf("state %s since %v, want waiting_blockers since 3h ago", it.State, it.BlockedSince)
	}
	if got := it.BlockedSeconds(now); got != 3*3600 {
		t.Errorf("BlockedSeconds = %v, want 3h", got)
	}
	st := stateOf(t, append(tenItems(t)[:2], it))
	out := Render(st, View{Now: now})
	if want := "| waiting_blockers | #11 Waits for the parser | implement Job 1 (run 600) yielded (blocked), 2026-12-04 12:30 UTC; waits for #12, acme/lib#4  bx/b |"; !strings.Contains(out, want) {
		t.Errorf("the body lacks %q:\n%s", want, out)
	}
	if strings.Index(out, "#11 ") > strings.Index(out, "#1 ") {
		t.Errorf("the waiting item is not listed before the ready one:\n%s", out)
	}
	back, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(st, back); d != "" {
		t.Errorf("the state block does not read back (-rendered +read):\n%s", d)
	}
	long := strings.Repeat("#12345, ", 60)
	if got := refsText(long); len(got) > maxBlockedBy || refsText(got) != got || !strings.HasSuffix(got, ", ...") {
		t.Errorf("refsText of %d characters = %q: over the bound, or not the same read back", len(long), got)
	}
}
