package report

import (
	"testing"

	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// TestReportLeavesBusy: a Job that found the item's lease held by a live
// Job did nothing, and its report does nothing either, for implement and
// for stage: no request (the record is not even read), no write, no
// dispatch, action none. The holder's report carries the item on.
func TestReportLeavesBusy(t *testing.T) {
	for _, phase := range []string{PhaseImplement, PhaseStage} {
		t.Run(phase, func(t *testing.T) {
			e := newEnv(t)
			n := e.issue(t, endOfJob(t, base(), 1, 9001, record.ResultYielded, "", "", 1))
			before := e.body(t, n)
			o := e.options(n, 9002)
			o.Phase = phase
			o.JobResult, o.Result, o.Failure = "success", string(record.ResultYielded), string(failure.Busy)
			o.Reason = "the implement Job of run 9001 holds the item's lease (its run 9001 is in_progress): this Job leaves the item to it"
			out, err := Run(ctx, o)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if out.Action != ActionNone || out.Class != failure.Busy || out.Stopped {
				t.Errorf("outcome %s/%s stopped=%v, want none/busy, not stopped", out.Action, out.Class, out.Stopped)
			}
			if out.Requests != 0 {
				t.Errorf("report made %d counted requests, want 0", out.Requests)
			}
			if got := e.body(t, n); got != before {
				t.Errorf("the record changed")
			}
			if d := e.fake.Dispatches(); len(d) != 0 {
				t.Errorf("dispatches = %v, want none", d)
			}
		})
	}
}
