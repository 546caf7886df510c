package report

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/ledger"
	"github.com/roadmap-dev/roadmap/internal/record"
)

func TestDayBudget(t *testing.T) {
	day := ledger.Day(t0)

	t.Run("two parallel writers never lose an entry", func(t *testing.T) {
		e := newEnv(t)
		dash := e.fake.CreateIssue(githubfake.Issue{Title: "roadmap dashboard"})
		// A person's remarks and a forged line are on the dashboard too.
		mustComment(t, e, dash, "someone", "The ledger lives here; please do not edit these comments.")
		mustComment(t, e, dash, "someone", ledger.Prefix+`{"day":"`+day+`","issue":1,"job":1,"usd":-50,"tokens_in":0,"tokens_out":0,"model_calls":0}`)

		const perWriter = 12
		entry := func(w, k int) ledger.Entry {
			return ledger.Entry{Day: day, Issue: 100 + w, Job: k + 1, RunID: int64(5000 + w*100 + k),
				USD: float64(1000+w*100+k) / 1e5, TokensIn: int64(2000 + k), TokensOut: int64(300 + w), ModelCalls: 3}
		}
		var want record.Spend
		for w := range 2 {
			for k := range perWriter {
				want = want.Add(entry(w, k).Spend())
			}
		}
		var wg sync.WaitGroup
		errs := make(chan error, 2*perWriter)
		for w := range 2 {
			gh := e.client(t) // a Job of its own: another process for GitHub
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range perWriter {
					if err := ledger.Append(ctx, gh, dash, entry(w, k)); err != nil {
						errs <- err
					}
				}
			}()
		}
		// An entry of another day does not count for this one.
		other := ledger.Entry{Day: "2026-11-28", Issue: 9, Job: 1, USD: 40, TokensIn: 1, TokensOut: 1, ModelCalls: 1}
		if err := ledger.Append(ctx, e.gh, dash, other); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("ledger.Append: %v", err)
		}

		entries, err := ledger.Entries(ctx, e.client(t), dash)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(entries); got != 2*perWriter+1 {
			t.Errorf("ledger entries = %d, want %d (every Job's and the other day's)", got, 2*perWriter+1)
		}
		spent, ok, err := ledger.Check(ctx, e.client(t), dash, day, ledger.Budget{USD: 10}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !spendEqual(spent, want) || !ok {
			t.Errorf("DayCheck = %+v, %v; want %+v, true", spent, ok, want)
		}
	})

	t.Run("a Job does not start past the day's budget", func(t *testing.T) {
		e := newEnv(t)
		dash := e.fake.CreateIssue(githubfake.Issue{Title: "roadmap dashboard"})
		for i, usd := range []float64{0.75, 0.5} {
			if err := ledger.Append(ctx, e.gh, dash, ledger.Entry{Day: day, Issue: 12, Job: i + 1, USD: usd, TokensIn: 1000, TokensOut: 100, ModelCalls: 1}); err != nil {
				t.Fatal(err)
			}
		}
		tests := []struct {
			budget ledger.Budget
			ok     bool
		}{
			{ledger.Budget{}, true},                        // unlimited
			{ledger.Budget{USD: 2}, true},                  // $1.25 of $2
			{ledger.Budget{USD: 1.25}, false},              // reached exactly
			{ledger.Budget{USD: 1}, false},                 // past it
			{ledger.Budget{USD: 5, TokensIn: 2000}, false}, // tokens in reached
			{ledger.Budget{USD: 5, TokensOut: 201}, true},  // 200 of 201
			{ledger.Budget{USD: 5, TokensOut: 150}, false}, // tokens out past
		}
		for _, tc := range tests {
			spent, ok, err := ledger.Check(ctx, e.gh, dash, day, tc.budget, nil)
			if err != nil {
				t.Fatal(err)
			}
			if ok != tc.ok {
				t.Errorf("ledger.Check(%+v) ok = %v with %+v spent, want %v", tc.budget, ok, spent, tc.ok)
			}
		}
		// The next day starts fresh.
		if _, ok, err := ledger.Check(ctx, e.gh, dash, "2026-11-30", ledger.Budget{USD: 1}, nil); err != nil || !ok {
			t.Errorf("ledger.Check(next day) = %v, %v; want true", ok, err)
		}
	})

	t.Run("report books each Job's share once", func(t *testing.T) {
		e := newEnv(t)
		dash := e.fake.CreateIssue(githubfake.Issue{Title: "roadmap dashboard"})
		n := e.issue(t, endOfJob(t, base(), 2, 9002, record.ResultYielded, "", "deadline near", 2))
		o := e.options(n, 9002)
		o.JobResult, o.Result, o.Dashboard, o.DayBudget = "success", "yielded", dash, ledger.Budget{USD: 50}
		for range 2 { // the report job re-run
			if _, err := Run(ctx, o); err != nil {
				t.Fatalf("Run: %v", err)
			}
		}
		entries, err := ledger.Entries(ctx, e.gh, dash)
		if err != nil {
			t.Fatal(err)
		}
		want := []ledger.Entry{{Day: day, Issue: n, Job: 2, RunID: 9002, USD: 0.0071, TokensIn: 3000, TokensOut: 700, ModelCalls: 4}}
		if diff := cmp.Diff(want, entries); diff != "" {
			t.Errorf("ledger (-want +got):\n%s", diff)
		}
		if got := len(e.fake.Comments(dash)); got != 1 {
			t.Errorf("dashboard comments = %d, want 1", got)
		}
	})

	// Without a day budget nothing reads the ledger: report books nothing
	// and spends no request on it.
	t.Run("no ledger without a day budget", func(t *testing.T) {
		e := newEnv(t)
		dash := e.fake.CreateIssue(githubfake.Issue{Title: "roadmap dashboard"})
		n := e.issue(t, endOfJob(t, base(), 2, 9002, record.ResultYielded, "", "deadline near", 2))
		o := e.options(n, 9002)
		o.JobResult, o.Result, o.Dashboard = "success", "yielded", dash
		if _, err := Run(ctx, o); err != nil {
			t.Fatalf("Run: %v", err)
		}
		if got := len(e.fake.Comments(dash)); got != 0 {
			t.Errorf("dashboard comments = %d, want no ledger entry", got)
		}
	})
}

func TestDayBudgetYields(t *testing.T) {
	e := newEnv(t)
	dash := e.fake.CreateIssue(githubfake.Issue{Title: "roadmap dashboard"})
	if err := ledger.Append(ctx, e.gh, dash, ledger.Entry{Day: ledger.Day(t0), Issue: 40, Job: 1, USD: 0.95, TokensIn: 1, TokensOut: 1, ModelCalls: 1}); err != nil {
		t.Fatal(err)
	}
	n := e.issue(t, endOfJob(t, base(), 2, 9002, record.ResultYielded, "", "deadline near", 2))
	o := e.options(n, 9002)
	o.JobResult, o.Result, o.Dashboard, o.DayBudget = "success", "yielded", dash, ledger.Budget{USD: 0.955}
	out, err := Run(ctx, o)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	// $0.95 booked by another item is under $0.955; with this Job's $0.0071,
	// booked before the check, the day is spent.
	if out.Action != ActionYield || len(e.fake.Dispatches()) != 0 || out.Stopped {
		t.Errorf("Action, dispatches, Stopped = %s, %d, %v; want yield, 0, false", out.Action, len(e.fake.Dispatches()), out.Stopped)
	}
	if want := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC); !out.ResumeAfter.Equal(want) {
		t.Errorf("ResumeAfter = %v, want %v", out.ResumeAfter, want)
	}
	if c := e.commentWith(n, MarkerWaiting); !strings.Contains(c, "attempt=3") {
		t.Errorf("waiting comment does not say how to go on:\n%s", c)
	}
}

func mustComment(t *testing.T, e *env, n int, login, body string) {
	t.Helper()
	if _, err := e.fake.AddComment(n, login, body); err != nil {
		t.Fatal(err)
	}
}

// TestDayLedgerTrust: the day ledger is only what roadmap's identity wrote.
// A drive-by comment on the dashboard cannot spend the day's budget (a line
// that says a Job spent $1,000), un-spend it (a newer line for a Job that
// did spend), or take over a Job's entry (its marker, planted first): the
// sum and every Job's start see roadmap's entries only.
func TestDayLedgerTrust(t *testing.T) {
	day := ledger.Day(t0)
	e := newEnv(t)
	dash := e.fake.CreateIssue(githubfake.Issue{Title: "roadmap dashboard"})
	line := func(issue, job int, usd float64) string {
		return ledger.Line(ledger.Entry{Day: day, Issue: issue, Job: job, USD: usd, TokensIn: 10, TokensOut: 10, ModelCalls: 1})
	}
	// Planted before roadmap books issue 12's Job 3: its marker and a line.
	planted := "<!-- roadmap:ledger issue=12 job=3 -->\n" + line(12, 3, 1000)
	mustComment(t, e, dash, "mallory", planted)
	for job, usd := range map[int]float64{2: 0.25, 3: 0.25} {
		if err := ledger.Append(ctx, e.gh, dash, ledger.Entry{Day: day, Issue: 12, Job: job, USD: usd, TokensIn: 10, TokensOut: 10, ModelCalls: 1}); err != nil {
			t.Fatal(err)
		}
	}
	mustComment(t, e, dash, "mallory", line(40, 1, 1000))                                         // spend the day
	mustComment(t, e, dash, "mallory", "<!-- roadmap:ledger issue=12 job=2 -->\n"+line(12, 2, 0)) // un-spend Job 2

	entries, err := ledger.Entries(ctx, e.client(t), dash)
	if err != nil {
		t.Fatal(err)
	}
	want := []ledger.Entry{
		{Day: day, Issue: 12, Job: 2, USD: 0.25, TokensIn: 10, TokensOut: 10, ModelCalls: 1},
		{Day: day, Issue: 12, Job: 3, USD: 0.25, TokensIn: 10, TokensOut: 10, ModelCalls: 1},
	}
	if diff := cmp.Diff(want, entries, cmpopts.SortSlices(func(a, b ledger.Entry) bool { return a.Job < b.Job })); diff != "" {
		t.Errorf("ledger (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		budget ledger.Budget
		ok     bool
	}{
		{ledger.Budget{USD: 1}, true},    // $0.50 of $1: mallory's $1,000 does not count
		{ledger.Budget{USD: 0.5}, false}, // reached: mallory's $0 for Job 2 does not un-spend it
	} {
		spent, ok, err := ledger.Check(ctx, e.client(t), dash, day, tc.budget, nil)
		if err != nil {
			t.Fatal(err)
		}
		if ok != tc.ok || !spendEqual(spent, record.Spend{USD: 0.5, TokensIn: 20, TokensOut: 20, ModelCalls: 2}) {
			t.Errorf("ledger.Check(%+v) = %+v, %v; want $0.50, %v", tc.budget, spent, ok, tc.ok)
		}
	}
	// Job 3's entry is roadmap's own comment; mallory's is as mallory wrote it.
	comments := e.fake.Comments(dash)
	if comments[0].Author != "mallory" || comments[0].Body != planted {
		t.Errorf("mallory's planted ledger comment is now %+v; roadmap wrote into it", comments[0])
	}
	own := 0
	for _, c := range comments {
		if c.Author == github.DefaultIdentity {
			own++
		}
	}
	if own != 2 {
		t.Errorf("%d ledger comments by roadmap, want one per Job (2)", own)
	}
}

// TestDayBudgetWithoutDashboard: with a day budget and no dashboard issue
// (the default: the reusable workflow's dashboard input is 0), report opens
// the ledger issue on its first booking and books each Job there once; an
// issue someone else labelled as the ledger is not read; and a continuation
// that would pass the day's budget waits for the next day, as with a
// dashboard.
func TestDayBudgetWithoutDashboard(t *testing.T) {
	day := ledger.Day(t0)
	e := newEnv(t)
	// Planted: a ledger a drive-by opened, claiming the day is spent.
	planted := e.fake.CreateIssue(githubfake.Issue{Title: ledger.Title, Labels: []string{ledger.Label}, Author: "mallory"})
	mustComment(t, e, planted, "mallory", ledger.Line(ledger.Entry{Day: day, Issue: 40, Job: 1, USD: 1000, ModelCalls: 1}))

	n := e.issue(t, endOfJob(t, base(), 2, 9002, record.ResultYielded, "", "deadline near", 2))
	o := e.options(n, 9002)
	o.JobResult, o.Result, o.DayBudget = "success", "yielded", ledger.Budget{USD: 0.955}
	for range 2 { // the report job re-run
		out, err := Run(ctx, o)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if out.Action != ActionContinue {
			t.Fatalf("Action = %s (%s), want continue: the planted ledger must not count", out.Action, out.Reason)
		}
	}
	where, err := ledger.Find(ctx, e.gh, 0)
	if err != nil || where == 0 || where == planted {
		t.Fatalf("ledger.Find = %d, %v; want the issue roadmap opened, not %d", where, err, planted)
	}
	is, _ := e.fake.Issue(where)
	if is.Title != ledger.Title || !slices.Contains(is.Labels, ledger.Label) || is.State != "open" {
		t.Errorf("the ledger issue: %q, labels %v, %s; want %q labelled %s, open", is.Title, is.Labels, is.State, ledger.Title, ledger.Label)
	}
	entries, err := ledger.Entries(ctx, e.gh, where)
	if err != nil {
		t.Fatal(err)
	}
	want := []ledger.Entry{{Day: day, Issue: n, Job: 2, RunID: 9002, USD: 0.0071, TokensIn: 3000, TokensOut: 700, ModelCalls: 4}}
	if diff := cmp.Diff(want, entries); diff != "" {
		t.Errorf("ledger (-want +got):\n%s", diff)
	}

	// Another item spent $0.95 today: this Job's share passes $0.955.
	if err := ledger.Append(ctx, e.gh, where, ledger.Entry{Day: day, Issue: 41, Job: 1, USD: 0.95, TokensIn: 1, TokensOut: 1, ModelCalls: 1}); err != nil {
		t.Fatal(err)
	}
	m := e.issue(t, endOfJob(t, base(), 2, 9003, record.ResultYielded, "", "deadline near", 2))
	o = e.options(m, 9003)
	o.JobResult, o.Result, o.DayBudget = "success", "yielded", ledger.Budget{USD: 0.955}
	dispatched := len(e.fake.Dispatches())
	out, err := Run(ctx, o)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if out.Action != ActionYield || len(e.fake.Dispatches()) != dispatched {
		t.Errorf("Action, new dispatches = %s, %d; want yield, 0 (%s)", out.Action, len(e.fake.Dispatches())-dispatched, out.Reason)
	}
	if got, _ := ledger.Find(ctx, e.gh, 0); got != where {
		t.Errorf("the second booking found ledger %d, want %d: one ledger issue", got, where)
	}
}
