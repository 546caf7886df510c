package report

import (
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
)

// TestDispatchFailureReconciled: a continuation's dispatch that fails in a
// way that may have landed (a 502, GitHub applying it and then answering
// 502, the connection dropped before or after it applied) is reconciled
// from the workflow's runs and sent again only when its run is not there:
// one continuation, whatever the fault, with its class in the outcome.
// When no attempt lands, report fails with the class and the action still
// in its outcome, the record says the next Job was not dispatched, and a
// re-run of report dispatches it once.
func TestDispatchFailureReconciled(t *testing.T) {
	const dispatches = "/repos/**/dispatches"
	for _, tc := range []struct {
		name  string
		rule  githubfake.Rule
		tries int // dispatches report sends
	}{
		{"502, not applied", githubfake.Rule{Method: "POST", Path: dispatches, Call: 1, Status: 502}, 2},
		{"applied, then 502", githubfake.Rule{Method: "POST", Path: dispatches, Call: 1, ApplyThenFail: true, Status: 502}, 1},
		{"dropped before it applied", githubfake.Rule{Method: "POST", Path: dispatches, Call: 1, Drop: true}, 2},
		{"applied, then dropped", githubfake.Rule{Method: "POST", Path: dispatches, Call: 1, ApplyThenFail: true, Drop: true}, 1},
		{"two 502s in a row", githubfake.Rule{Method: "POST", Path: dispatches, Call: 0, Status: 502}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			runID := e.run(t, "failure", readLog(t, "exit137-no-evidence.log"))
			n := e.issue(t, base(), "roadmap:implement")
			rule := tc.rule
			if rule.Call == 0 {
				// Refuse the first two; the third lands.
				e.fake.AddFault(githubfake.Rule{Method: "POST", Path: dispatches, Call: 1, Status: 502})
				rule.Call = 2
			}
			e.fake.AddFault(rule)
			o := e.options(n, runID)
			o.JobResult = "failure"
			out, err := Run(ctx, o)
			if err != nil {
				t.Fatalf("Run: %v (outcome %+v)", err, out)
			}
			d := e.fake.Dispatches()
			if len(d) != 1 || d[0].Inputs["attempt"] != "3" {
				t.Fatalf("dispatches = %+v, want Job 3's, once", d)
			}
			if out.Class != failure.Killed || out.Action != ActionContinue || out.DispatchedRunID != d[0].RunID || out.NextAttempt != 3 {
				t.Errorf("outcome: %s → %s, run %d, Job %d; want killed → continue, run %d, Job 3", out.Class, out.Action, out.DispatchedRunID, out.NextAttempt, d[0].RunID)
			}
			if out.DispatchFailure != failure.Indeterminate || out.DispatchAttempts != tc.tries {
				t.Errorf("dispatch failure %q after %d dispatches; want indeterminate (it may have landed), %d sent", out.DispatchFailure, out.DispatchAttempts, tc.tries)
			}
			sent := 0
			for _, r := range e.fake.Requests() {
				if r.Method == "POST" && strings.HasSuffix(r.Path, "/dispatches") {
					sent++
				}
			}
			if sent != tc.tries {
				t.Errorf("report sent %d dispatches, want %d: one after each look that found no run", sent, tc.tries)
			}
		})
	}

	t.Run("no attempt lands", func(t *testing.T) {
		e := newEnv(t)
		runID := e.run(t, "failure", readLog(t, "exit137-no-evidence.log"))
		n := e.issue(t, base(), "roadmap:implement")
		e.fake.AddFault(githubfake.Rule{Method: "POST", Path: dispatches, Status: 502})
		o := e.options(n, runID)
		o.JobResult = "failure"
		out, err := Run(ctx, o)
		if err == nil {
			t.Fatal("report succeeded, but no continuation was dispatched")
		}
		if out.Class != failure.Killed || out.Action != ActionContinue || out.DispatchFailure != failure.Indeterminate ||
			out.DispatchAttempts != maxDispatchAttempts || out.Dispatched != nil {
			t.Errorf("outcome %+v; want killed → continue, dispatch failure indeterminate after %d dispatches, none landed", out, maxDispatchAttempts)
		}
		if len(e.fake.Dispatches()) != 0 {
			t.Fatalf("dispatches %+v, want none", e.fake.Dispatches())
		}
		body := e.body(t, n)
		if !strings.Contains(body, "Job 3 was not dispatched (indeterminate)") {
			t.Errorf("the record comment does not say the next Job was not dispatched:\n%s", body)
		}
		jobs, _ := e.record(t, n).Jobs()
		if len(jobs) != 2 || jobs[1].Dispatching == 0 {
			t.Errorf("implement.jobs = %+v, want Job 2's line with the intent mark", jobs)
		}

		// GitHub is back; the report job is re-run.
		e.fake.ClearFaults()
		o.GitHub, o.RunAttempt = e.client(t), 2
		again, err := Run(ctx, o)
		if err != nil {
			t.Fatalf("re-run: %v", err)
		}
		if d := e.fake.Dispatches(); len(d) != 1 || again.DispatchedRunID != d[0].RunID || d[0].Inputs["attempt"] != "3" {
			t.Errorf("dispatches after the re-run %+v (outcome run %d), want Job 3's, once", d, again.DispatchedRunID)
		}
		if strings.Contains(e.body(t, n), "was not dispatched") {
			t.Errorf("the record comment still says the next Job was not dispatched:\n%s", e.body(t, n))
		}
	})

	t.Run("a refusal that cannot have landed is not sent again", func(t *testing.T) {
		e := newEnv(t)
		runID := e.run(t, "failure", readLog(t, "exit137-no-evidence.log"))
		n := e.issue(t, base(), "roadmap:implement")
		e.fake.AddFault(githubfake.Rule{Method: "POST", Path: dispatches, Status: 403})
		o := e.options(n, runID)
		o.JobResult = "failure"
		out, err := Run(ctx, o)
		if err == nil || out.DispatchFailure != failure.Auth || out.DispatchAttempts != 1 || out.Action != ActionContinue {
			t.Errorf("err %v, outcome %+v; want an error, dispatch failure auth after 1 dispatch, action continue", err, out)
		}
		for _, r := range e.fake.Requests() {
			if strings.HasSuffix(r.Path, "/runs") {
				t.Errorf("report looked for the run of a dispatch GitHub refused (%s)", r.Path)
			}
		}
	})
}
