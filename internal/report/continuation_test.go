package report

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/record"

	"github.com/roadmap-dev/roadmap/internal/githubfake"
)

// TestContinuationDispatchedOnce: a re-run of report (the report job killed
// and re-run) dispatches the continuation only when the first run's dispatch
// never landed. The intent mark goes into the record with report's mark,
// before the dispatch; the re-run looks for the run before sending it.
func TestContinuationDispatchedOnce(t *testing.T) {
	const runsList = "/actions/workflows/" + workflow + "/runs"
	tests := []struct {
		name string
		// fault is on the first run's dispatches (kill ends the first run);
		// nil is a first run that dispatched and was killed just after.
		fault     func(kill func()) *githubfake.Rule
		firstErr  bool
		rerunSent bool // the re-run sends the dispatch itself
	}{
		{name: "killed just after the dispatch landed"},
		{name: "killed after GitHub applied the dispatch and lost its answer",
			fault: func(kill func()) *githubfake.Rule {
				return &githubfake.Rule{Method: "POST", Path: "/repos/**/dispatches", Call: 1, ApplyThenFail: true, Status: 502, After: kill}
			}, firstErr: true},
		{name: "the dispatch never landed (every attempt refused)",
			fault: func(func()) *githubfake.Rule {
				return &githubfake.Rule{Method: "POST", Path: "/repos/**/dispatches", Status: 502}
			}, firstErr: true, rerunSent: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			runID := e.run(t, "failure", readLog(t, "exit137-no-evidence.log"))
			n := e.issue(t, base(), "roadmap:implement")
			firstCtx, kill := context.WithCancel(ctx)
			defer kill()
			if tc.fault != nil {
				e.fake.AddFault(*tc.fault(kill))
			}
			o := e.options(n, runID)
			o.JobResult = "failure"
			first, err := Run(firstCtx, o)
			if (err != nil) != tc.firstErr {
				t.Fatalf("first run: err = %v, want an error %v", err, tc.firstErr)
			}
			e.fake.ClearFaults()
			for _, r := range e.fake.Requests() {
				if strings.HasSuffix(r.Path, runsList) && tc.fault == nil {
					t.Errorf("the first run listed the workflow's runs (%s %s): the normal path must not pay for the look", r.Method, r.Path)
				}
			}
			jobs, _ := e.record(t, n).Jobs()
			if len(jobs) != 2 || jobs[1].Dispatching != t0.Unix() {
				t.Fatalf("implement.jobs = %+v, want Job 2's line with the intent mark %d", jobs, t0.Unix())
			}

			if landed := len(e.fake.Dispatches()); landed != map[bool]int{true: 0, false: 1}[tc.rerunSent] {
				t.Fatalf("%d dispatches landed before the re-run", landed)
			}
			o.GitHub = e.client(t) // the re-run is another process
			firstRequests := len(e.fake.Requests())
			again, err := Run(ctx, o)
			if err != nil {
				t.Fatalf("re-run: %v", err)
			}
			d := e.fake.Dispatches()
			if len(d) != 1 {
				t.Fatalf("%d dispatches after the re-run, want 1: %+v", len(d), d)
			}
			if d[0].Inputs["attempt"] != "3" {
				t.Errorf("dispatched attempt %v, want 3", d[0].Inputs["attempt"])
			}
			if again.DispatchedRunID != d[0].RunID || again.NextAttempt != 3 {
				t.Errorf("re-run outcome: run %d, next %d; want the landed run %d, Job 3", again.DispatchedRunID, again.NextAttempt, d[0].RunID)
			}
			if !tc.firstErr && first.DispatchedRunID != d[0].RunID {
				t.Errorf("first run's outcome names run %d, the dispatch is %d", first.DispatchedRunID, d[0].RunID)
			}
			looked := 0
			for _, r := range e.fake.Requests()[firstRequests:] {
				if strings.HasSuffix(r.Path, runsList) {
					looked++
				}
			}
			if looked != 1 {
				t.Errorf("the re-run listed the runs %d times, want once", looked)
			}
		})
	}

	// A typed yield: report has no record write to make, so it makes none
	// for the intent either, and looks at nothing on its first attempt; a
	// re-run (a later attempt of the workflow run) looks before it sends.
	t.Run("a yielded Job, report re-run", func(t *testing.T) {
		e := newEnv(t)
		runID := e.run(t, "success", "roadmap: yielded\n")
		n := e.issue(t, endOfJob(t, base(), 2, runID, record.ResultYielded, "", "the deadline is near", 2), "roadmap:implement")
		o := e.options(n, runID)
		o.JobResult, o.Result, o.Attempt, o.Group = "success", "yielded", 2, 2
		if _, err := Run(ctx, o); err != nil {
			t.Fatal(err)
		}
		for _, r := range e.fake.Requests() {
			if strings.HasSuffix(r.Path, runsList) || r.Method == "PATCH" {
				t.Errorf("the first attempt made %s %s: a typed yield's report writes and looks at nothing", r.Method, r.Path)
			}
		}
		o.GitHub, o.RunAttempt = e.client(t), 2
		if _, err := Run(ctx, o); err != nil {
			t.Fatal(err)
		}
		if d := e.fake.Dispatches(); len(d) != 1 {
			t.Errorf("%d dispatches after the re-run, want 1", len(d))
		}
	})

	// A continuation that has already started (its Job is in the record)
	// needs no look at the runs at all.
	t.Run("the continuation already started", func(t *testing.T) {
		e := newEnv(t)
		runID := e.run(t, "failure", readLog(t, "exit137-no-evidence.log"))
		n := e.issue(t, base(), "roadmap:implement")
		o := e.options(n, runID)
		o.JobResult = "failure"
		if _, err := Run(ctx, o); err != nil {
			t.Fatal(err)
		}
		// Job 3 starts and writes its first mark before report is re-run.
		c := e.recordComment(t, n)
		e.fake.EditComment(c.ID, func(cur string) string {
			return strings.Replace(cur, "implement.attempt: 1\n", "implement.attempt: 3\n", 1)
		})
		o.GitHub = e.client(t)
		if _, err := Run(ctx, o); err != nil {
			t.Fatal(err)
		}
		if d := e.fake.Dispatches(); len(d) != 1 {
			t.Errorf("%d dispatches, want 1", len(d))
		}
		for _, r := range e.fake.Requests() {
			if strings.HasSuffix(r.Path, runsList) {
				t.Errorf("listed the runs though the record shows Job 3 started")
			}
		}
	})
}

// callerRunName is the dispatch branch of the example caller's run-name
// (docs/examples/roadmap-caller.yml), as the fake puts a dispatch's inputs
// in: GitHub's title for a continuation report dispatches.
const callerRunName = "roadmap #{issue} implement Job {attempt}"

// TestContinuationOtherItems: the look at the workflow's dispatched runs
// (a re-run of report, or one that finds its intent mark) tells this item's
// continuation from another item's by the run's title, the caller's
// run-name naming the issue. Another item's run in the window no longer
// stops this item's dispatch; this item's own landed run still does; a
// caller without run-name keeps the rule of before: any newer dispatched
// run is taken for the continuation.
func TestContinuationOtherItems(t *testing.T) {
	// first runs report for issue n and kills its dispatch as fault says;
	// other dispatches another item's continuation as that item's report
	// would, before (at 0) or after (at 1) the first run.
	type setup struct {
		runName string
		// fault is on the first run's dispatches; kill ends the first run.
		fault  func(kill func()) githubfake.Rule
		others [2]bool
	}
	type outcome struct {
		n      int
		second Outcome
		other  []int64 // the other item's runs
	}
	play := func(t *testing.T, s setup) (*env, outcome) {
		t.Helper()
		e := newEnv(t)
		if s.runName != "" {
			e.fake.SetRunName(workflow, s.runName)
		}
		runID := e.run(t, "failure", readLog(t, "exit137-no-evidence.log"))
		n := e.issue(t, base(), "roadmap:implement")
		m := e.issue(t, base(), "roadmap:implement")
		var out outcome
		other := func() {
			res, err := e.client(t).DispatchWorkflow(ctx, workflow, ref, map[string]any{"issue": strconv.Itoa(m), "attempt": "2"})
			if err != nil {
				t.Fatalf("the other item's dispatch: %v", err)
			}
			out.other = append(out.other, res.RunID)
		}
		if s.others[0] {
			other()
		}
		firstCtx, kill := context.WithCancel(ctx)
		defer kill()
		e.fake.AddFault(s.fault(kill))
		o := e.options(n, runID)
		o.JobResult = "failure"
		if _, err := Run(firstCtx, o); err == nil {
			t.Fatal("the first run's dispatch failed, and report said nothing")
		}
		e.fake.ClearFaults()
		if s.others[1] {
			other()
		}
		o.GitHub = e.client(t) // the re-run is another process
		second, err := Run(ctx, o)
		if err != nil {
			t.Fatalf("re-run: %v", err)
		}
		out.n, out.second = n, second
		return e, out
	}
	// mine are issue n's dispatches.
	mine := func(e *env, n int) []githubfake.Dispatch {
		var out []githubfake.Dispatch
		for _, d := range e.fake.Dispatches() {
			if d.Inputs["issue"] == strconv.Itoa(n) {
				out = append(out, d)
			}
		}
		return out
	}
	// never: every dispatch of the first run is refused; lost: GitHub
	// applies the first and loses its answer, and the run is killed then.
	never := func(func()) githubfake.Rule {
		return githubfake.Rule{Method: "POST", Path: "/repos/**/dispatches", Status: 502}
	}
	lost := func(kill func()) githubfake.Rule {
		return githubfake.Rule{Method: "POST", Path: "/repos/**/dispatches", Call: 1, ApplyThenFail: true, Status: 502, After: kill}
	}

	t.Run("another item's continuation in the window does not stop this one", func(t *testing.T) {
		e, out := play(t, setup{runName: callerRunName, fault: never, others: [2]bool{true, true}})
		d := mine(e, out.n)
		if len(d) != 1 {
			t.Fatalf("issue #%d: %d dispatches after the re-run, want 1 (the other item's runs %v are not its continuation)", out.n, len(d), out.other)
		}
		if d[0].Inputs["attempt"] != "3" || out.second.DispatchedRunID != d[0].RunID || out.second.NextAttempt != 3 {
			t.Errorf("re-run: dispatched %v, outcome run %d Job %d; want Job 3 in run %d", d[0].Inputs, out.second.DispatchedRunID, out.second.NextAttempt, d[0].RunID)
		}
	})

	t.Run("this item's own landed run still prevents a second dispatch", func(t *testing.T) {
		e, out := play(t, setup{runName: callerRunName, fault: lost, others: [2]bool{true, true}})
		d := mine(e, out.n)
		if len(d) != 1 {
			t.Fatalf("issue #%d: %d dispatches, want the first run's only", out.n, len(d))
		}
		if out.second.DispatchedRunID != d[0].RunID || out.second.NextAttempt != 3 {
			t.Errorf("re-run's outcome names run %d (Job %d), want this item's run %d, not the other item's %v",
				out.second.DispatchedRunID, out.second.NextAttempt, d[0].RunID, out.other)
		}
	})

	t.Run("a caller without run-name: any newer dispatched run, as before", func(t *testing.T) {
		e, out := play(t, setup{fault: never, others: [2]bool{false, true}})
		if d := mine(e, out.n); len(d) != 0 {
			t.Errorf("issue #%d: %d dispatches; a caller whose runs name no issue takes the other item's run for its own", out.n, len(d))
		}
		if out.second.DispatchedRunID != out.other[0] {
			t.Errorf("re-run's outcome names run %d, want the newer dispatched run %d", out.second.DispatchedRunID, out.other[0])
		}
	})
}

func TestRunIssue(t *testing.T) {
	tests := []struct {
		title string
		want  int // 0: names no issue
	}{
		{"roadmap #12 implement Job 3", 12},
		{"roadmap #12 stage", 12},
		{"roadmap #12", 12},
		{"#7", 7},
		{" roadmap\t#5\n", 5},
		{"roadmap #12 again #12", 12},
		{"roadmap-caller", 0}, // a caller without run-name: the workflow's name
		{"", 0},
		{"review on roadmap/12-webhook-backoff", 0},
		{"roadmap #12 implement #13", 0}, // two issues: none for sure
		{"roadmap #12, Job 3", 0},
		{"roadmap #0", 0},
		{"roadmap #012", 0},
		{"roadmap #-3", 0},
		{"roadmap #1e3", 0},
		{"roadmap #", 0},
		{"roadmap #99999999999", 0},
		{"roadmap #\uff11\uff12", 0}, // fullwidth digits are not a number here
		{strings.Repeat("x", maxTitle) + " #5", 0},
		{strings.Repeat("x", maxTitle-3) + " #12", 0}, // the bound cuts "#12" to "#1"
		{strings.Repeat("x", maxTitle-4) + " #12", 12},
	}
	for _, tc := range tests {
		got, ok := runIssue(tc.title)
		if got != tc.want || ok != (tc.want != 0) {
			t.Errorf("runIssue(%.40q) = %d, %v; want %d", tc.title, got, ok, tc.want)
		}
	}
}

// FuzzRunIssue: a run's title is text whoever dispatched chose. Reading it
// never panics, and an issue it names is a whole "#<n>" token of the title
// that starts within its first maxTitle bytes.
func FuzzRunIssue(f *testing.F) {
	for _, s := range []string{"roadmap #12 implement Job 3", "roadmap-caller", "#1 #2", "#00", "#\xff1", strings.Repeat("#9 ", 500)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := runIssue(s)
		if !ok {
			if n != 0 {
				t.Fatalf("runIssue(%q) = %d, false", s, n)
			}
			return
		}
		if n <= 0 {
			t.Fatalf("runIssue(%q) = %d", s, n)
		}
		tok := "#" + strconv.Itoa(n)
		if !slices.Contains(strings.Fields(s), tok) || !strings.Contains(s[:min(len(s), maxTitle)], tok) {
			t.Fatalf("runIssue(%q) = %d, not a token of the title", s, n)
		}
	})
}
