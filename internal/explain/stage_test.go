package explain

import (
	"bytes"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/record"
)

// TestExplainStage: before any implement Job, explain says where the plan
// stands, lists the stage Jobs and names who the item waits for.
func TestExplainStage(t *testing.T) {
	spend := record.Spend{TokensIn: 4000, TokensOut: 400, USD: 0.01, ModelCalls: 4}
	build := func(state string, lines []record.JobOutcome, question string) *record.Record {
		var ch record.Changes
		if state != "" {
			ch.SetStageState(state)
		}
		ch.SetStagePlan("openspec/changes/add-greetings")
		ch.SetStageRound(2)
		ch.SetStagePR(7)
		ch.SetStageJobs(lines)
		if question != "" {
			ch.SetQuestion(question)
		}
		rec, _ := record.Parse("")
		if err := rec.Apply(ch); err != nil {
			t.Fatal(err)
		}
		return rec
	}
	blocked := func(rec *record.Record, refs string) *record.Record {
		var ch record.Changes
		ch.SetBlockedBy(refs)
		if err := rec.Apply(ch); err != nil {
			t.Fatal(err)
		}
		return rec
	}
	tests := []struct {
		name     string
		rec      *record.Record
		who      string
		contains string
	}{
		{"staged", build("staged", []record.JobOutcome{{Job: 1, RunID: 5, Result: record.ResultStaged, Spend: spend}}, ""),
			WaitsPerson, "draft PR #7: approve it"},
		{"killed", build("", []record.JobOutcome{{Job: 1, RunID: 5, Result: record.ResultYielded, Spend: spend}, {Job: 2, RunID: 6, Spend: spend}}, ""),
			WaitsReport, "stage Job 2 (run 6) wrote no result"},
		{"killed, classified and continued", build("", []record.JobOutcome{{Job: 1, RunID: 5, Failure: "killed", Dispatching: 9}}, ""),
			WaitsContinuation, "ended killed without a result"},
		{"question", build("returned", []record.JobOutcome{{Job: 1, RunID: 5, Result: record.ResultReturned, Failure: "needs_input"}}, "English only?"),
			WaitsPerson, "answer it on the issue"},
		{"findings", build("returned", []record.JobOutcome{{Job: 1, RunID: 5, Result: record.ResultReturned, Failure: "plan_wrong"}}, ""),
			WaitsPerson, "still has findings after 2 round(s)"},
		{"stopped", build("stopped", []record.JobOutcome{{Job: 1, RunID: 5, Failure: "budget_exhausted"}}, ""),
			WaitsPerson, "stage stopped on budget_exhausted"},
		{"yielded", build("", []record.JobOutcome{{Job: 1, RunID: 5, Result: record.ResultYielded, Failure: "transient"}}, ""),
			WaitsContinuation, "stage continuation resumes after round 2"},
		{"blocked", blocked(build("staged", []record.JobOutcome{{Job: 1, RunID: 5, Result: record.ResultStaged}}, ""), "#12, acme/lib#4"),
			WaitsBlockers, "waiting for #12, acme/lib#4"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := FromRecord(3, "Add greetings", tc.rec)
			if out.Waits.Who != tc.who || !strings.Contains(out.Waits.What, tc.contains) {
				t.Errorf("waits = %+v, want %s: …%s…", out.Waits, tc.who, tc.contains)
			}
			var b bytes.Buffer
			if err := Print(&b, out); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), "STAGE JOB") || !strings.Contains(b.String(), "plan openspec/changes/add-greetings · round 2") {
				t.Errorf("the printout lacks the plan and the stage Jobs:\n%s", b.String())
			}
		})
	}
}
