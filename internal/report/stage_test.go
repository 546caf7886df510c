package report

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/ledger"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// stageBase is a record after stage Job 1 yielded and stage Job 2 wrote its
// first round's mark (3 model calls) before it was killed.
func stageBase(job1, job2 record.Spend) record.Changes {
	var ch record.Changes
	ch.SetStageRound(1)
	ch.SetStagePlan("openspec/changes/webhook-backoff")
	ch.SetSpend(job1.Add(job2))
	ch.SetStageJobs([]record.JobOutcome{
		{Job: 1, RunID: 8001, Result: record.ResultYielded, Failure: string(failure.Transient), Spend: job1},
		{Job: 2, RunID: 8002, Spend: job2},
	})
	return ch
}

// stageRun adds a finished workflow run whose stage job has log.
func (e *env) stageRun(t *testing.T, conclusion, log string) int64 {
	t.Helper()
	id := e.fake.AddRun(githubfake.Run{WorkflowFile: workflow, HeadBranch: ref, Conclusion: conclusion})
	steps := []githubfake.Step{
		{Name: "Set up job", Status: "completed", Conclusion: "success"},
		{Name: "Run roadmap stage", Status: "completed", Conclusion: conclusion},
	}
	if _, err := e.fake.AddJob(id, githubfake.Job{Name: "roadmap / stage", Conclusion: conclusion, Log: log, Steps: steps}); err != nil {
		t.Fatal(err)
	}
	return id
}

func (e *env) stageOptions(n int, runID int64) Options {
	o := e.options(n, runID)
	o.Phase = PhaseStage
	return o
}

// TestReportStage: report after a stage Job. Staged and returned cost no
// request; a Job killed without a result has the spend its log holds past
// its last mark added to the record, once, and a stage continuation is
// dispatched once; a stop gets the comment and the label; the cap of Jobs
// stops a stage that keeps being killed.
func TestReportStage(t *testing.T) {
	job1 := record.Spend{TokensIn: 4000, TokensOut: 900, USD: 0.004, ModelCalls: 5}
	marked := calls(3, 2)
	past := calls(4, 3)

	for _, res := range []string{"staged", "returned"} {
		t.Run(res+" costs no request", func(t *testing.T) {
			e := newEnv(t)
			n := e.issue(t, stageBase(job1, sum(marked)), "roadmap:stage")
			before := len(e.fake.Requests())
			o := e.stageOptions(n, 8002)
			o.JobResult, o.Result = "success", res
			out, err := Run(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			if out.Action != ActionNone || out.Requests != 0 || len(e.fake.Requests()) != before {
				t.Errorf("Action %s, %d requests (fake saw %d); want none and no request", out.Action, out.Requests, len(e.fake.Requests())-before)
			}
		})
	}

	t.Run("killed: the log's spend past the mark is kept, once, and stage continues once", func(t *testing.T) {
		e := newEnv(t)
		n := e.issue(t, stageBase(job1, sum(marked)), "roadmap:stage")
		lines := spendLines(t, 2, 0, append(append([]record.Spend{}, marked...), past...), 1)
		runID := e.stageRun(t, "failure", killedLog(t, lines))
		o := e.stageOptions(n, runID)
		o.JobResult = "failure"
		out, err := Run(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		if out.Job != 2 || out.Class != failure.Killed || out.Action != ActionContinue {
			t.Errorf("Job %d, %s → %s; want stage Job 2, killed → continue", out.Job, out.Class, out.Action)
		}
		if !spendEqual(out.SpendRecovered, sum(past)) {
			t.Errorf("recovered %+v, want the 4 calls past the mark %+v", out.SpendRecovered, sum(past))
		}
		rec := e.record(t, n)
		want := sum([]record.Spend{job1}, marked, past)
		if got, _ := rec.Spend(); !spendEqual(got, want) {
			t.Errorf("implement.spend = %+v, want every call of both Jobs %+v", got, want)
		}
		jobs, _ := rec.StageJobs()
		if len(jobs) != 2 || jobs[1].Spend.ModelCalls != 7 || jobs[1].Failure != string(failure.Killed) || jobs[1].Dispatching == 0 {
			t.Errorf("stage.jobs = %+v, want Job 2 with 7 calls, killed, and the intent mark", jobs)
		}
		wantIn := []map[string]any{{"issue": itoa(n), "phase": PhaseStage, "record-comment": e.recordCommentInput(t, n)}}
		if diff := cmp.Diff(wantIn, e.dispatchInputs()); diff != "" {
			t.Errorf("dispatch inputs (-want +got):\n%s", diff)
		}

		// A re-run of the report job: nothing added, nothing sent again.
		o.RunAttempt = 2
		again, err := Run(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := e.record(t, n).Spend(); !spendEqual(got, want) || !again.SpendRecovered.Zero() {
			t.Errorf("after a re-run implement.spend = %+v (recovered %+v), want %+v", got, again.SpendRecovered, want)
		}
		if len(e.fake.Dispatches()) != 1 {
			t.Errorf("%d dispatches after a re-run, want 1", len(e.fake.Dispatches()))
		}
	})

	t.Run("killed before its first mark: every call of its log is kept", func(t *testing.T) {
		e := newEnv(t)
		var ch record.Changes
		ch.SetSpend(job1)
		ch.SetStageJobs([]record.JobOutcome{{Job: 1, RunID: 8001, Result: record.ResultYielded, Spend: job1}})
		n := e.issue(t, ch, "roadmap:stage")
		runID := e.stageRun(t, "failure", killedLog(t, spendLines(t, 2, 0, past, 1)))
		o := e.stageOptions(n, runID)
		o.JobResult = "failure"
		out, err := Run(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := e.record(t, n).Spend(); out.Job != 2 || !spendEqual(got, job1.Add(sum(past))) {
			t.Errorf("Job %d, implement.spend = %+v; want Job 2 (from its spend lines) and %+v", out.Job, got, job1.Add(sum(past)))
		}
	})

	t.Run("yielded continues as stage", func(t *testing.T) {
		e := newEnv(t)
		n := e.issue(t, stageBase(job1, sum(marked)), "roadmap:stage")
		o := e.stageOptions(n, 8002)
		o.JobResult, o.Result, o.Attempt = "success", "yielded", 2
		out, err := Run(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		jobs, _ := e.record(t, n).StageJobs()
		if out.Action != ActionContinue || len(e.fake.Dispatches()) != 1 || jobs[1].Result != record.ResultYielded {
			t.Errorf("Action %s, %d dispatches, line %+v; want continue, 1, yielded", out.Action, len(e.fake.Dispatches()), jobs[1])
		}
	})

	t.Run("stopped gets the comment and the label", func(t *testing.T) {
		e := newEnv(t)
		n := e.issue(t, stageBase(job1, sum(marked)), "roadmap:stage")
		o := e.stageOptions(n, 8002)
		o.JobResult, o.Result, o.Failure, o.Attempt = "failure", "stopped", string(failure.BudgetExhausted), 2
		o.Reason = "the item's budget is spent"
		out, err := Run(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := e.record(t, n).StageState()
		c := e.commentWith(n, MarkerStop)
		if out.Action != ActionStop || !e.hasLabel(n, "roadmap:stopped") || st != "stopped" || !strings.Contains(c, "budget is spent") {
			t.Errorf("Action %s, labels %v, stage.state %q, comment:\n%s", out.Action, e.fake.Labels(n), st, c)
		}
		if len(e.fake.Dispatches()) != 0 {
			t.Error("a stop dispatched a continuation")
		}
	})

	t.Run("the cap of Jobs stops a stage that keeps being killed", func(t *testing.T) {
		e := newEnv(t)
		n := e.issue(t, stageBase(job1, sum(marked)), "roadmap:stage")
		runID := e.stageRun(t, "failure", killedLog(t, spendLines(t, 2, 0, marked, 1)))
		o := e.stageOptions(n, runID)
		o.JobResult, o.MaxJobs = "failure", 2
		out, err := Run(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		if out.Action != ActionStop || out.Class != failure.BudgetExhausted || len(e.fake.Dispatches()) != 0 {
			t.Errorf("%s → %s with %d dispatches; want budget_exhausted → stop, none", out.Class, out.Action, len(e.fake.Dispatches()))
		}
	})

	t.Run("with a day ledger a stage Job's spend is booked once, apart from implement's Job 2", func(t *testing.T) {
		e := newEnv(t)
		dash := e.fake.CreateIssue(githubfake.Issue{Title: "roadmap dashboard"})
		ch := stageBase(job1, sum(marked))
		ch.SetStageJobs([]record.JobOutcome{
			{Job: 1, RunID: 8001, Result: record.ResultYielded, Spend: job1},
			{Job: 2, RunID: 8002, Result: record.ResultStaged, Spend: sum(marked)},
		})
		n := e.issue(t, ch, "roadmap:stage")
		// Implement's Job 2 of the same item is booked already.
		impl := ledger.Entry{Day: ledger.Day(t0), Issue: n, Job: 2, RunID: 9002, USD: 0.5, TokensIn: 100, TokensOut: 10, ModelCalls: 1}
		if err := ledger.Append(ctx, e.gh, dash, impl); err != nil {
			t.Fatal(err)
		}
		o := e.stageOptions(n, 8002)
		o.JobResult, o.Result, o.Dashboard, o.DayBudget = "success", "staged", dash, ledger.Budget{USD: 100}
		for range 2 { // a re-run of report books the same entry again
			if out, err := Run(ctx, o); err != nil || out.Action != ActionNone {
				t.Fatalf("Run: %s, %v", out.Action, err)
			}
		}
		entries, err := ledger.Entries(ctx, e.gh, dash)
		if err != nil {
			t.Fatal(err)
		}
		want := impl.Spend().Add(sum(marked))
		if got, _, _ := ledger.Check(ctx, e.gh, dash, ledger.Day(t0), ledger.Budget{USD: 100}, nil); len(entries) != 2 || !spendEqual(got, want) {
			t.Errorf("%d ledger entries summing %+v; want implement's and stage Job 2's, %+v", len(entries), got, want)
		}
	})

	t.Run("past the day's budget a stage continuation waits for the next day", func(t *testing.T) {
		e := newEnv(t)
		dash := e.fake.CreateIssue(githubfake.Issue{Title: "roadmap dashboard"})
		if err := ledger.Append(ctx, e.gh, dash, ledger.Entry{Day: ledger.Day(t0), Issue: 40, Job: 1, USD: 0.95, TokensIn: 1, TokensOut: 1, ModelCalls: 1}); err != nil {
			t.Fatal(err)
		}
		n := e.issue(t, stageBase(job1, sum(marked)), "roadmap:stage")
		o := e.stageOptions(n, 8002)
		// $0.95 is under $0.9505; stage Job 2's own share (its line: 3
		// calls, $0.000909), booked before the check, takes the day past it.
		o.JobResult, o.Result, o.Failure, o.Attempt = "success", "yielded", string(failure.Transient), 2
		o.Dashboard, o.DayBudget = dash, ledger.Budget{USD: 0.9505}
		out, err := Run(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		if out.Action != ActionYield || out.Class != failure.DayBudgetExhausted || len(e.fake.Dispatches()) != 0 {
			t.Errorf("%s → %s with %d dispatches; want day_budget_exhausted → yield, none", out.Class, out.Action, len(e.fake.Dispatches()))
		}
		c := e.commentWith(n, MarkerWaiting)
		if !strings.Contains(c, "phase=stage") || !strings.Contains(c, "Stage Job 2") {
			t.Errorf("the waiting comment does not say how to resume stage Job 2's item:\n%s", c)
		}
		if st, _ := e.record(t, n).StageState(); st == "stopped" {
			t.Error("a wait for the day's budget stopped stage")
		}
		// The record says the item waits, with no intent mark of a dispatch
		// that is not sent, and the Job's share is booked.
		jobs, _ := e.record(t, n).StageJobs()
		if len(jobs) != 2 || jobs[1].Dispatching != 0 || jobs[1].Result != record.ResultYielded {
			t.Errorf("stage.jobs = %+v, want Job 2 yielded with no intent mark", jobs)
		}
		if body := e.body(t, n); !strings.Contains(body, "waiting for the next day's budget") {
			t.Errorf("the record comment does not say the item waits for the day's budget:\n%s", body)
		}
		if entries, _ := ledger.Entries(ctx, e.gh, dash); len(entries) != 2 {
			t.Errorf("%d ledger entries, want 2 (the other item's and stage Job 2's)", len(entries))
		}
	})

	t.Run("a stage Job refused by the day's budget waits too", func(t *testing.T) {
		e := newEnv(t)
		n := e.issue(t, stageBase(job1, sum(marked)), "roadmap:stage")
		o := e.stageOptions(n, 8003)
		o.JobResult, o.Result, o.Failure = "success", "yielded", string(failure.DayBudgetExhausted)
		out, err := Run(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		if out.Action != ActionYield || e.hasLabel(n, "roadmap:stopped") || len(e.fake.Dispatches()) != 0 {
			t.Errorf("Action %s, labels %v, %d dispatches; want yield, not stopped, none", out.Action, e.fake.Labels(n), len(e.fake.Dispatches()))
		}
		if c := e.commentWith(n, MarkerWaiting); !strings.Contains(c, "phase=stage") {
			t.Errorf("the waiting comment does not name phase=stage:\n%s", c)
		}
	})

	t.Run("a result that is not a stage result is refused", func(t *testing.T) {
		e := newEnv(t)
		o := e.stageOptions(1, 1)
		o.Result = "ready"
		if _, err := Run(ctx, o); err == nil {
			t.Error("ready accepted as a stage result")
		}
	})
}
