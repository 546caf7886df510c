package report

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/record"
)

func TestReportTypedResult(t *testing.T) {
	const runID = 9002

	t.Run("ready sets the status to success on the PR head and clears stale labels", func(t *testing.T) {
		e := newEnv(t)
		pr := e.fake.CreatePullRequest("roadmap/7-webhook-backoff", "main", "Webhook backoff", "", false)
		const prHead = "aaaabbbbccccddddeeeeffff0000111122223333"
		if err := e.fake.SetPRHead(pr, prHead); err != nil {
			t.Fatal(err)
		}
		ch := endOfJob(t, base(), 2, runID, record.ResultReady, "", "", 3)
		ch.SetStagePR(pr)
		n := e.issue(t, ch, "roadmap:implement", "roadmap:stopped", "roadmap:needs-input")
		before := e.body(t, n)
		o := e.options(n, runID)
		o.JobResult, o.Result = "success", "ready"
		out, err := Run(ctx, o)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if out.Action != ActionReady || out.Stopped {
			t.Errorf("Action, Stopped = %s, %v; want ready, false", out.Action, out.Stopped)
		}
		if got, want := e.statuses(prHead), []string{"success"}; !cmp.Equal(got, want) {
			t.Errorf("roadmap/implement on the PR head = %v, want %v", got, want)
		}
		if got, want := e.fake.Labels(n), []string{"roadmap:implement"}; !cmp.Equal(got, want) {
			t.Errorf("labels = %v, want %v", got, want)
		}
		if got := e.body(t, n); got != before {
			t.Errorf("the record changed on ready; the runner's final mark was complete:\n%s", cmp.Diff(before, got))
		}
		if d := e.fake.Dispatches(); len(d) != 0 {
			t.Errorf("dispatches = %v, want none", d)
		}
	})

	t.Run("ready with a head_sha output sets the status there", func(t *testing.T) {
		e := newEnv(t)
		n := e.issue(t, endOfJob(t, base(), 2, runID, record.ResultReady, "", "", 3))
		o := e.options(n, runID)
		o.JobResult, o.Result, o.HeadSHA = "success", "ready", "1111222233334444555566667777888899990000"
		if _, err := Run(ctx, o); err != nil {
			t.Fatalf("Run: %v", err)
		}
		if got, want := e.statuses(o.HeadSHA), []string{"success"}; !cmp.Equal(got, want) {
			t.Errorf("statuses on head_sha = %v, want %v", got, want)
		}
	})

	// yielded and returned are not stops, whatever class they carry.
	notStops := []struct {
		name   string
		result record.Result
		class  string
		reason string
		action Action
	}{
		{"yielded on purpose", record.ResultYielded, "", "PR checks still running after 1h0m0s", ActionContinue},
		{"yielded on a rate limit", record.ResultYielded, "rate_limited", "GitHub rate limit: waiting 12m3s would pass the deadline", ActionContinue},
		{"yielded on a transient error", record.ResultYielded, "transient", "GET check-runs: 502", ActionContinue},
		{"yielded killed by a signal", record.ResultYielded, "killed", "the runner asked the Job to stop (signal)", ActionContinue},
		{"returned: the plan is wrong", record.ResultReturned, "plan_wrong", "task 2.1 verifies TestBackoffSchedule but no group creates backoff.go", ActionReturnToStage},
		{"returned: a decision is needed", record.ResultReturned, "needs_input", "a decision is needed", ActionAsk},
	}
	for _, tc := range notStops {
		t.Run(tc.name+" is not a stop", func(t *testing.T) {
			e := newEnv(t)
			ch := endOfJob(t, base(), 2, runID, tc.result, tc.class, tc.reason, 1)
			if tc.class == "needs_input" {
				ch.SetQuestion("Does the cap apply per endpoint or globally?")
			}
			n := e.issue(t, ch, "roadmap:implement")
			o := e.options(n, runID)
			o.JobResult, o.Result, o.Failure = "success", string(tc.result), tc.class
			out, err := Run(ctx, o)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if out.Action != tc.action || out.Stopped {
				t.Errorf("Action, Stopped = %s, %v; want %s, false", out.Action, out.Stopped, tc.action)
			}
			if e.hasLabel(n, "roadmap:stopped") || e.commentWith(n, MarkerStop) != "" {
				t.Errorf("a %s Job left a stop label or comment", tc.result)
			}
			if got := e.statuses(headSHA); len(got) != 0 {
				t.Errorf("statuses = %v, want none", got)
			}
			rec := e.record(t, n)
			if _, ok := rec.Stopped(); ok {
				t.Error("implement.stopped was written for a Job that did not stop")
			}
			if got, _ := rec.Result(); got != tc.result {
				t.Errorf("implement.result = %q, want %q (the runner's)", got, tc.result)
			}
			switch tc.action {
			case ActionContinue:
				want := []map[string]any{{"issue": itoa(n), "attempt": "3", "record-comment": e.recordCommentInput(t, n)}}
				if diff := cmp.Diff(want, e.dispatchInputs()); diff != "" {
					t.Errorf("dispatch inputs (-want +got):\n%s", diff)
				}
				if out.Dispatched == nil || out.Dispatched.RunID == 0 || out.NextAttempt != 3 {
					t.Errorf("Dispatched, NextAttempt = %+v, %d; want a run, 3", out.Dispatched, out.NextAttempt)
				}
			case ActionReturnToStage:
				c := e.commentWith(n, MarkerReturned)
				if !strings.Contains(c, tc.reason) {
					t.Errorf("return comment lacks the agent's reason %q:\n%s", tc.reason, c)
				}
				// A label added with the workflow's token starts no run:
				// stage is dispatched (phase stage), and no stage label is
				// added beside it (with an App token it would start a second run).
				if e.hasLabel(n, "roadmap:stage") || e.hasLabel(n, "roadmap:implement") {
					t.Errorf("labels = %v, want neither roadmap:stage nor roadmap:implement", e.fake.Labels(n))
				}
				want := []map[string]any{{"issue": itoa(n), "phase": "stage", "record-comment": e.recordCommentInput(t, n)}}
				if diff := cmp.Diff(want, e.dispatchInputs()); diff != "" {
					t.Errorf("return to stage: dispatch inputs (-want +got):\n%s", diff)
				}
			case ActionAsk:
				if !e.hasLabel(n, "roadmap:needs-input") {
					t.Errorf("labels = %v, want roadmap:needs-input", e.fake.Labels(n))
				}
			}
			if tc.action != ActionContinue && tc.action != ActionReturnToStage && len(e.fake.Dispatches()) != 0 {
				t.Errorf("dispatches = %v, want none", e.fake.Dispatches())
			}
		})
	}

	t.Run("stopped keeps the runner's class and stops", func(t *testing.T) {
		e := newEnv(t)
		ch := endOfJob(t, base(), 2, runID, record.ResultStopped, "auth", "PATCH issues/7: 403 Resource not accessible by integration", 1)
		ch.SetStopped("group 2")
		n := e.issue(t, ch, "roadmap:implement")
		o := e.options(n, runID)
		o.JobResult, o.Result, o.Failure = "failure", "stopped", "auth"
		out, err := Run(ctx, o)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if out.Class != failure.Auth || out.Action != ActionStop || !out.Stopped {
			t.Errorf("Class, Action, Stopped = %s, %s, %v; want auth, stop, true", out.Class, out.Action, out.Stopped)
		}
		rec := e.record(t, n)
		if got, _ := rec.Failure(); got != "auth" {
			t.Errorf("implement.failure = %q, want auth", got)
		}
		if got, _ := rec.Stopped(); got != "group 2" {
			t.Errorf("implement.stopped = %q, want the runner's group 2", got)
		}
		if !e.hasLabel(n, "roadmap:stopped") {
			t.Errorf("labels = %v, want roadmap:stopped", e.fake.Labels(n))
		}
		if got, want := e.statuses(headSHA), []string{"failure"}; !cmp.Equal(got, want) {
			t.Errorf("roadmap/implement on published_sha = %v, want %v", got, want)
		}
		c := e.commentWith(n, MarkerStop)
		for _, want := range []string{"`auth`", "group 2", "Resource not accessible by integration",
			"| Step | Result | Attempts |", "go test ./internal/webhook", "| Job | Run | Result |"} {
			if !strings.Contains(c, want) {
				t.Errorf("stop comment lacks %q:\n%s", want, c)
			}
		}
		if len(e.fake.Dispatches()) != 0 {
			t.Errorf("a stop dispatched %v", e.fake.Dispatches())
		}
	})

	t.Run("stopped with a head GitHub never received sets the status on the published head", func(t *testing.T) {
		// A push refused by the remote leaves the Job's head_sha local
		// only; GitHub answers 422 for a status on it (the fault suite's
		// rejected push found this).
		e := newEnv(t)
		ch := endOfJob(t, base(), 2, runID, record.ResultStopped, "unknown", "push refused by the repository policy", 1)
		ch.SetStopped("group 2")
		n := e.issue(t, ch, "roadmap:implement")
		o := e.options(n, runID)
		o.JobResult, o.Result, o.Failure = "failure", "stopped", "unknown"
		o.HeadSHA = "0123456789abcdef0123456789abcdef01234567"
		out, err := Run(ctx, o)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if out.Action != ActionStop || !out.Stopped {
			t.Errorf("Action, Stopped = %s, %v; want stop, true", out.Action, out.Stopped)
		}
		if got, want := e.statuses(headSHA), []string{"failure"}; !cmp.Equal(got, want) {
			t.Errorf("roadmap/implement on published_sha = %v, want %v", got, want)
		}
		if e.commentWith(n, MarkerStop) == "" {
			t.Error("no stop comment")
		}
	})

	t.Run("stopped on a class with an automatic action is continued, keeping the class", func(t *testing.T) {
		e := newEnv(t)
		ch := endOfJob(t, base(), 2, runID, record.ResultStopped, "checks_failed", "checks still fail after 3 rounds", 2)
		ch.SetStopped("group 2")
		n := e.issue(t, ch, "roadmap:implement")
		o := e.options(n, runID)
		o.JobResult, o.Result, o.Failure = "failure", "stopped", "checks_failed"
		out, err := Run(ctx, o)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if out.Class != failure.ChecksFailed || out.Action != ActionContinue || out.Stopped {
			t.Errorf("Class, Action, Stopped = %s, %s, %v; want checks_failed, continue, false", out.Class, out.Action, out.Stopped)
		}
		if got, _ := e.record(t, n).Failure(); got != "checks_failed" {
			t.Errorf("implement.failure = %q, want checks_failed", got)
		}
		if e.hasLabel(n, "roadmap:stopped") {
			t.Error("the item got the stop label")
		}
	})

	t.Run("outputs lost: the record's line for the run is read, not the log", func(t *testing.T) {
		e := newEnv(t)
		runID := e.run(t, "cancelled", readLog(t, "cancelled.log"))
		n := e.issue(t, endOfJob(t, base(), 2, runID, record.ResultYielded, "", "deadline near", 2), "roadmap:implement")
		o := e.options(n, runID)
		o.JobResult = "cancelled" // killed after its final mark: no outputs
		out, err := Run(ctx, o)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if out.Result != "yielded" || out.Action != ActionContinue {
			t.Errorf("Result, Action = %q, %s; want yielded, continue", out.Result, out.Action)
		}
		if got := e.fake.CountByEndpoint()["GET /repos/{owner}/{repo}/actions/runs/{run_id}/jobs"]; got != 0 {
			t.Errorf("listed the run's jobs %d times; the typed result was in the record", got)
		}
	})

	t.Run("final mark lost: report writes the typed result from the outputs", func(t *testing.T) {
		e := newEnv(t)
		n := e.issue(t, base(), "roadmap:implement") // the record as of Job 1
		o := e.options(n, runID)
		o.JobResult, o.Result, o.Failure, o.Attempt, o.Group = "success", "yielded", "rate_limited", 2, 2
		o.Spend = `{"tokens_in":8200,"tokens_out":2000,"usd":0.0194,"model_calls":10}`
		if _, err := Run(ctx, o); err != nil {
			t.Fatalf("Run: %v", err)
		}
		rec := e.record(t, n)
		res, _ := rec.Result()
		fail, _ := rec.Failure()
		spend, _ := rec.Spend()
		jobs, _ := rec.Jobs()
		if res != record.ResultYielded || fail != "rate_limited" {
			t.Errorf("implement.result, failure = %q, %q; want yielded, rate_limited", res, fail)
		}
		if want := (record.Spend{TokensIn: 8200, TokensOut: 2000, USD: 0.0194, ModelCalls: 10}); spend != want {
			t.Errorf("implement.spend = %+v, want the output's %+v", spend, want)
		}
		want := record.JobOutcome{Job: 2, RunID: runID, Result: record.ResultYielded, Failure: "rate_limited", Group: 2,
			Spend: record.Spend{TokensIn: 3000, TokensOut: 700, USD: 0.0071, ModelCalls: 4}, Dispatching: t0.Unix(), At: t0.Unix()}
		if len(jobs) != 2 || !cmp.Equal(jobs[1], want) {
			t.Errorf("implement.jobs = %+v, want Job 2's line %+v", jobs, want)
		}
	})

	t.Run("a skipped implement job is nothing to report", func(t *testing.T) {
		e := newEnv(t)
		n := e.issue(t, base())
		before := e.body(t, n)
		o := e.options(n, 0)
		o.JobResult = "skipped"
		out, err := Run(ctx, o)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if out.Action != ActionNone || e.body(t, n) != before || len(e.fake.Dispatches()) != 0 {
			t.Errorf("Action = %s, body changed %v, dispatches %d; want none, false, 0",
				out.Action, e.body(t, n) != before, len(e.fake.Dispatches()))
		}
	})
}

func itoa(n int) string { return strconv.Itoa(n) }
