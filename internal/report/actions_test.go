package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/report/decide"
)

func TestOneActionPerClass(t *testing.T) {
	// The action each class leads to is decide's (TestActionFor holds it
	// to DESIGN §4); here each class goes through Run against the fake.
	want := map[failure.Class]Action{}
	for _, row := range failure.Table() {
		want[row.Class] = decide.ActionFor(row.Class)
	}

	// Each class, ended as the runner ends it (the row's result), through
	// Run against the fake.
	for _, row := range failure.Table() {
		t.Run(string(row.Class), func(t *testing.T) {
			e := newEnv(t)
			ch := endOfJob(t, base(), 2, 9002, record.Result(row.Result), string(row.Class), "the runner's reason for "+string(row.Class), 2)
			if row.Class == failure.NeedsInput {
				ch.SetQuestion("Per-endpoint or global retry cap?")
			}
			if row.Result == failure.ResultStopped {
				ch.SetStopped("group 2")
			}
			n := e.issue(t, ch, "roadmap:implement")
			o := e.options(n, 9002)
			o.JobResult, o.Result, o.Failure = "success", string(row.Result), string(row.Class)
			out, err := Run(ctx, o)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if out.Class != row.Class || out.Action != want[row.Class] {
				t.Errorf("Class, Action = %s, %s; want %s, %s", out.Class, out.Action, row.Class, want[row.Class])
			}
			stopped := e.hasLabel(n, "roadmap:stopped") || e.commentWith(n, MarkerStop) != "" || len(e.statuses(headSHA)) > 0
			if row.Automatic && (out.Stopped || stopped) {
				t.Errorf("%s has an automatic action but the item stopped (labels %v)", row.Class, e.fake.Labels(n))
			}
			if row.Stop != out.Stopped || row.Stop != stopped {
				t.Errorf("Stopped = %v (label/comment/status %v), want %v", out.Stopped, stopped, row.Stop)
			}
			var wantDispatch []map[string]any
			if want[row.Class] == ActionContinue {
				wantDispatch = []map[string]any{{"issue": itoa(n), "attempt": "3", "record-comment": e.recordCommentInput(t, n)}}
			}
			if want[row.Class] == ActionReturnToStage {
				// The plan amendment: stage, dispatched.
				wantDispatch = []map[string]any{{"issue": itoa(n), "phase": "stage", "record-comment": e.recordCommentInput(t, n)}}
			}
			if diff := cmp.Diff(wantDispatch, e.dispatchInputs()); diff != "" {
				t.Errorf("dispatches (-want +got):\n%s", diff)
			}
			if want[row.Class] == ActionContinue {
				// The dispatch is in the fake's request log, with its inputs.
				found := false
				for _, r := range e.fake.Requests() {
					if r.Endpoint == "POST /repos/{owner}/{repo}/actions/workflows/{workflow}/dispatches" &&
						strings.Contains(r.Path, workflow) && strings.Contains(r.Body, `"attempt":"3"`) {
						found = true
					}
				}
				if !found {
					t.Error("no dispatch with attempt 3 in the fake's request log")
				}
			}
			if want[row.Class] == ActionYield && (out.ResumeAfter.IsZero() || e.commentWith(n, MarkerWaiting) == "") {
				t.Errorf("a yield for the day budget left no resume time (%v) or waiting comment", out.ResumeAfter)
			}
		})
	}

	t.Run("the Jobs cap stops a continuation with a clear reason", func(t *testing.T) {
		e := newEnv(t)
		n := e.issue(t, endOfJob(t, base(), 2, 9002, record.ResultYielded, "transient", "GET check-runs: 502", 2))
		o := e.options(n, 9002)
		o.JobResult, o.Result, o.Failure, o.MaxJobs = "success", "yielded", "transient", 2
		out, err := Run(ctx, o)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if out.Class != failure.BudgetExhausted || !out.Stopped || len(e.fake.Dispatches()) != 0 {
			t.Errorf("Class, Stopped, dispatches = %s, %v, %d; want budget_exhausted, true, 0", out.Class, out.Stopped, len(e.fake.Dispatches()))
		}
		if !strings.Contains(out.Reason, "cap of Jobs per item (max jobs 2)") {
			t.Errorf("Reason = %q, want it to name the cap", out.Reason)
		}
		if got, _ := e.record(t, n).Stopped(); got != "continuation" {
			t.Errorf("implement.stopped = %q, want continuation", got)
		}
	})

	t.Run("no progress in two continuations in a row stops the item", func(t *testing.T) {
		line := func(job int, runID int64, res record.Result, class string, group int) record.JobOutcome {
			return record.JobOutcome{Job: job, RunID: runID, Result: res, Failure: class, Group: group,
				Spend: record.Spend{TokensIn: 100, TokensOut: 10, USD: 0.0001, ModelCalls: 1}}
		}
		tests := []struct {
			name string
			jobs []record.JobOutcome // before the reported Job 3 (run 9003)
			cur  record.JobOutcome
			stop bool
		}{
			{"killed twice in group 2", []record.JobOutcome{line(1, 9001, "yielded", "", 1), line(2, 9002, "", "killed", 1)},
				line(3, 9003, "", "killed", 1), true},
			{"oom then transient without a mark", []record.JobOutcome{line(1, 9001, "yielded", "", 1), line(2, 9002, "", "oom", 1)},
				line(3, 9003, "yielded", "transient", 1), true},
			{"the second continuation passed a group", []record.JobOutcome{line(1, 9001, "yielded", "", 1), line(2, 9002, "", "killed", 1)},
				line(3, 9003, "", "killed", 2), false},
			{"the first continuation passed a group", []record.JobOutcome{line(1, 9001, "yielded", "", 1), line(2, 9002, "", "killed", 2)},
				line(3, 9003, "", "killed", 2), false},
			{"a yield on purpose is not a strike", []record.JobOutcome{line(1, 9001, "yielded", "", 1), line(2, 9002, "yielded", "", 1)},
				line(3, 9003, "", "killed", 1), false},
			{"a second oom in a row without a mark", []record.JobOutcome{line(1, 9001, "", "oom", 0)},
				line(2, 9002, "", "oom", 0), true},
			{"the first Job is not a continuation", []record.JobOutcome{line(1, 9001, "", "killed", 0)},
				line(2, 9002, "", "killed", 0), false},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				e := newEnv(t)
				var ch record.Changes
				jobs := append(append([]record.JobOutcome(nil), tc.jobs...), tc.cur)
				var total record.Spend
				for _, j := range jobs {
					total = total.Add(j.Spend)
				}
				ch.SetJobs(jobs)
				ch.SetSpend(total)
				ch.SetAttempt(tc.cur.Job)
				if tc.cur.Group > 0 {
					ch.SetGroup(tc.cur.Group)
				}
				if tc.cur.Result != "" {
					ch.SetResult(tc.cur.Result)
				}
				n := e.issue(t, ch)
				o := e.options(n, tc.cur.RunID)
				o.JobResult, o.Result, o.Failure, o.Attempt = "success", string(tc.cur.Result), tc.cur.Failure, tc.cur.Job
				if tc.cur.Result == "" {
					// Killed: the log says how.
					o.JobResult, o.Failure = "cancelled", ""
					logName := "cancelled.log"
					if tc.cur.Failure == "oom" {
						o.JobResult, logName = "failure", "oom.log"
					}
					e.run(t, o.JobResult, readLog(t, logName))
					o.RunID = e.fake.Runs()[len(e.fake.Runs())-1].ID
					e.retagRun(t, n, tc.cur.Job, o.RunID)
				}
				out, err := Run(ctx, o)
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
				if tc.stop {
					if out.Class != failure.NoProgress || !out.Stopped || len(e.fake.Dispatches()) != 0 {
						t.Errorf("Class, Stopped, dispatches = %s, %v, %d; want no_progress, true, 0", out.Class, out.Stopped, len(e.fake.Dispatches()))
					}
					prev := fmt.Sprintf("Job %d", tc.cur.Job-1)
					for _, w := range []string{prev, fmt.Sprintf("Job %d", tc.cur.Job), "no new mark", tc.cur.Failure} {
						if !strings.Contains(out.Reason, w) {
							t.Errorf("Reason = %q, want evidence naming %q", out.Reason, w)
						}
					}
					if !strings.Contains(e.commentWith(n, MarkerStop), "no_progress") {
						t.Error("the stop comment does not name no_progress")
					}
				} else if out.Stopped || len(e.fake.Dispatches()) != 1 {
					t.Errorf("Stopped, dispatches = %v, %d; want a continuation (%s)", out.Stopped, len(e.fake.Dispatches()), out.Reason)
				}
			})
		}
	})
}

// retagRun sets the run id of Job job's line in issue n's record.
func (e *env) retagRun(t *testing.T, n, job int, runID int64) {
	t.Helper()
	rec := e.record(t, n)
	jobs, _ := rec.Jobs()
	for i := range jobs {
		if jobs[i].Job == job {
			jobs[i].RunID = runID
		}
	}
	var ch record.Changes
	ch.SetJobs(jobs)
	c := e.recordComment(t, n)
	body, err := record.Update(c.Body, ch)
	if err != nil {
		t.Fatal(err)
	}
	// A maintainer edits the record comment.
	if err := e.fake.EditComment(c.ID, func(string) string { return body }); err != nil {
		t.Fatal(err)
	}
}
