package report

import (
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
		// fault is on the first run's dispatch; nil is a first run that
		// dispatched and was killed just after.
		fault     *githubfake.Rule
		firstErr  bool
		rerunSent bool // the re-run sends the dispatch itself
	}{
		{name: "killed just after the dispatch landed"},
		{name: "the dispatch's answer lost after GitHub applied it",
			fault: &githubfake.Rule{Method: "POST", Path: "/repos/**/dispatches", Call: 1, ApplyThenFail: true, Status: 502}, firstErr: true},
		{name: "the dispatch never landed (killed before it, or refused)",
			fault: &githubfake.Rule{Method: "POST", Path: "/repos/**/dispatches", Call: 1, Status: 502}, firstErr: true, rerunSent: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			runID := e.run(t, "failure", readLog(t, "exit137-no-evidence.log"))
			n := e.issue(t, base(), "roadmap:implement")
			if tc.fault != nil {
				e.fake.AddFault(*tc.fault)
			}
			o := e.options(n, runID)
			o.JobResult = "failure"
			first, err := Run(ctx, o)
			if (err != nil) != tc.firstErr {
				t.Fatalf("first run: err = %v, want an error %v", err, tc.firstErr)
			}
			for _, r := range e.fake.Requests() {
				if strings.HasSuffix(r.Path, runsList) {
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
			for _, r := range e.fake.Requests() {
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
