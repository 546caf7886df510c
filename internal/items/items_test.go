package items

import (
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/record"
)

func rec(t *testing.T, edit func(c *record.Changes)) *record.Record {
	t.Helper()
	r, err := record.Parse("")
	if err != nil {
		t.Fatal(err)
	}
	var c record.Changes
	edit(&c)
	if err := r.Apply(c); err != nil {
		t.Fatalf("apply: %v", err)
	}
	return r
}

func TestItemState(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	staged := record.JobOutcome{Job: 1, RunID: 10, Result: record.ResultStaged, At: t0.Unix()}
	for _, tc := range []struct {
		name      string
		edit      func(c *record.Changes)
		state     State
		class     string
		stagedAt  bool
		readyAt   bool
		lastJobID int
	}{
		{name: "no record yet", edit: func(c *record.Changes) {}, state: Unknown},
		{name: "stage running", edit: func(c *record.Changes) {
			c.SetStageJobs([]record.JobOutcome{{Job: 1, RunID: 10}})
		}, state: Planning},
		{name: "staged", edit: func(c *record.Changes) {
			c.SetStageState("staged")
			c.SetStageJobs([]record.JobOutcome{staged})
		}, state: Staged, stagedAt: true},
		{name: "stage returned with a question", edit: func(c *record.Changes) {
			c.SetStageState("returned")
			c.SetStageJobs([]record.JobOutcome{{Job: 1, RunID: 10, Result: record.ResultReturned, Failure: "needs_input"}})
		}, state: NeedsInput, class: "needs_input"},
		{name: "implement Job running", edit: func(c *record.Changes) {
			c.SetStageState("staged")
			c.SetStageJobs([]record.JobOutcome{staged})
			c.SetJobs([]record.JobOutcome{{Job: 1, RunID: 11}})
		}, state: Implementing, stagedAt: true},
		{name: "killed, continuing", edit: func(c *record.Changes) {
			c.SetJobs([]record.JobOutcome{{Job: 1, RunID: 11, Failure: "killed"}})
		}, state: Implementing, class: "killed"},
		{name: "killed and stopped by report", edit: func(c *record.Changes) {
			c.SetResult(record.ResultStopped)
			c.SetFailure("oom")
			c.SetJobs([]record.JobOutcome{{Job: 1, RunID: 11, Failure: "oom"}})
		}, state: Stopped, class: "oom"},
		{name: "stopped on checks", edit: func(c *record.Changes) {
			c.SetResult(record.ResultStopped)
			c.SetFailure("checks_failed")
			c.SetJobs([]record.JobOutcome{{Job: 1, RunID: 11, Result: record.ResultStopped, Failure: "checks_failed"}})
		}, state: Stopped, class: "checks_failed"},
		{name: "yielded for the day's budget", edit: func(c *record.Changes) {
			c.SetResult(record.ResultYielded)
			c.SetFailure("day_budget_exhausted")
			c.SetJobs([]record.JobOutcome{{Job: 1, RunID: 11, Result: record.ResultYielded, Failure: "day_budget_exhausted"}})
		}, state: WaitingBudget, class: "day_budget_exhausted"},
		{name: "waiting for another item's claim", edit: func(c *record.Changes) {
			c.SetResult(record.ResultYielded)
			c.SetFailure("claim_wait")
			c.SetWaitingFor(12)
			c.SetJobs([]record.JobOutcome{{Job: 1, RunID: 11, Result: record.ResultYielded, Failure: "claim_wait"}})
		}, state: WaitingClaim, class: "claim_wait"},
		{name: "implement found an open blocker", edit: func(c *record.Changes) {
			c.SetResult(record.ResultYielded)
			c.SetFailure(BlockedClass)
			c.SetJobs([]record.JobOutcome{{Job: 1, RunID: 11, Result: record.ResultYielded, Failure: BlockedClass}})
		}, state: WaitingBlockers, class: BlockedClass},
		{name: "stage found an open blocker", edit: func(c *record.Changes) {
			c.SetStageJobs([]record.JobOutcome{{Job: 1, RunID: 10, Result: record.ResultYielded, Failure: BlockedClass}})
		}, state: WaitingBlockers, class: BlockedClass},
		{name: "returned for a person", edit: func(c *record.Changes) {
			c.SetResult(record.ResultReturned)
			c.SetFailure("needs_input")
			c.SetJobs([]record.JobOutcome{{Job: 1, RunID: 11, Result: record.ResultReturned, Failure: "needs_input"}})
		}, state: NeedsInput, class: "needs_input"},
		{name: "returned to stage", edit: func(c *record.Changes) {
			c.SetResult(record.ResultReturned)
			c.SetFailure("plan_wrong")
			c.SetJobs([]record.JobOutcome{{Job: 1, RunID: 11, Result: record.ResultReturned, Failure: "plan_wrong"}})
		}, state: Planning, class: "plan_wrong"},
		{name: "yielded on a rate limit", edit: func(c *record.Changes) {
			c.SetResult(record.ResultYielded)
			c.SetFailure("rate_limited")
			c.SetJobs([]record.JobOutcome{{Job: 1, RunID: 11, Result: record.ResultYielded, Failure: "rate_limited"}})
		}, state: Implementing, class: "rate_limited"},
		{name: "ready", edit: func(c *record.Changes) {
			c.SetStageState("staged")
			c.SetStageJobs([]record.JobOutcome{staged})
			c.SetResult(record.ResultReady)
			c.SetJobs([]record.JobOutcome{{Job: 1, RunID: 11, Failure: "killed"}, {Job: 2, RunID: 12, Result: record.ResultReady, At: t0.Add(time.Hour).Unix()}})
		}, state: Ready, stagedAt: true, readyAt: true, lastJobID: 2},
		{name: "a person stopped it", edit: func(c *record.Changes) {
			c.SetResult(record.ResultYielded)
			c.SetStoppedBy("octo")
			c.SetJobs([]record.JobOutcome{{Job: 1, RunID: 11, Result: record.ResultYielded}})
		}, state: Stopped},
	} {
		t.Run(tc.name, func(t *testing.T) {
			it := Of(7, "t", rec(t, tc.edit))
			if it.State != tc.state || it.Class != tc.class {
				t.Errorf("state, class = %s, %q; want %s, %q", it.State, it.Class, tc.state, tc.class)
			}
			if !it.StagedAt.IsZero() != tc.stagedAt || !it.ReadyAt.IsZero() != tc.readyAt {
				t.Errorf("staged at %v, ready at %v; want set: %v, %v", it.StagedAt, it.ReadyAt, tc.stagedAt, tc.readyAt)
			}
			if tc.readyAt && it.ReadyAt.Sub(it.StagedAt) != time.Hour {
				t.Errorf("stage to ready = %v, want 1h", it.ReadyAt.Sub(it.StagedAt))
			}
			stops := 0
			for _, j := range it.Jobs {
				if j.Stop() {
					stops++
				}
			}
			if want := map[bool]int{true: 1}[tc.state == Stopped && tc.class != ""]; stops != want {
				t.Errorf("Jobs that stopped = %d, want %d (a stop on a class is one Job's)", stops, want)
			}
			if tc.lastJobID > 0 {
				if l, _ := it.Last(); l.Job != tc.lastJobID || l.Phase != "implement" {
					t.Errorf("last Job = %+v, want implement Job %d", l, tc.lastJobID)
				}
			}
		})
	}
}

// TestBlockedBy: item.blocked_by is read as the Job writes it (a JSON
// string) or plain; an item found blocked before any Job line waits too;
// the time blocked runs from the blocked Job's line to the next Job's.
func TestBlockedBy(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct{ raw, want string }{{`"#12, acme/lib#4"`, "#12, acme/lib#4"}, {`none`, "none"}} {
		r, err := record.Parse("<!-- roadmap:record v1\nitem.blocked_by: " + tc.raw + "\n-->\n")
		if err != nil {
			t.Fatal(err)
		}
		if it := Of(7, "", r); it.State != WaitingBlockers || it.BlockedBy != tc.want {
			t.Errorf("%s: state %s, blocked by %q; want waiting_blockers, %q", tc.raw, it.State, it.BlockedBy, tc.want)
		}
	}
	it := Of(7, "", rec(t, func(c *record.Changes) {
		c.SetStageJobs([]record.JobOutcome{{Job: 1, RunID: 10, Result: record.ResultYielded, Failure: BlockedClass, At: t0.Unix()},
			{Job: 2, RunID: 12, Result: record.ResultStaged, At: t0.Add(5 * time.Hour).Unix()}})
		c.SetStageState("staged")
	}))
	if it.State != Staged || it.BlockedBy != "" {
		t.Errorf("after the blocker: state %s, blocked by %q; want staged, none", it.State, it.BlockedBy)
	}
	if got := it.BlockedSeconds(t0.Add(24 * time.Hour)); got != 5*3600 {
		t.Errorf("BlockedSeconds = %v, want 5h (the blocked Job to the next)", got)
	}
}
