package report

import (
	"testing"

	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// TestReportLeavesBusy: a Job that found the item's lease held by a live
// Job did nothing, and its report does nothing either, for implement and
// for stage: no request (the record is not even read), no write, no
// dispatch, action none. The holder's report carries the item on. A Job
// a reopening started on an item no closing held (not_held) is left the
// same way: the item goes on as its record says (here: ready stays ready);
// and so is a Job that found an open blocker (blocked: it wrote the label
// and item.blocked_by itself; nothing is dispatched until they are met).
func TestReportLeavesBusy(t *testing.T) {
	for _, tc := range []struct {
		phase  string
		class  failure.Class
		reason string
	}{
		{PhaseImplement, failure.Busy, "the implement Job of run 9001 holds the item's lease (its run 9001 is in_progress): this Job leaves the item to it"},
		{PhaseStage, failure.Busy, "the implement Job of run 9001 holds the item's lease (its run 9001 is in_progress): this Job leaves the item to it"},
		{PhaseImplement, failure.NotHeld, "started by a person's reopening, but no closing held the item (its last Job's class: none): nothing to resume"},
		{PhaseImplement, failure.Blocked, "waiting for #12, acme/lib#4: stage and implement start when they are closed as completed"},
		{PhaseStage, failure.Blocked, "waiting for #12: stage and implement start when they are closed as completed"},
	} {
		t.Run(tc.phase+" "+string(tc.class), func(t *testing.T) {
			e := newEnv(t)
			n := e.issue(t, endOfJob(t, base(), 1, 9001, record.ResultReady, "", "", 1))
			before := e.body(t, n)
			o := e.options(n, 9002)
			o.Phase = tc.phase
			o.JobResult, o.Result, o.Failure = "success", string(record.ResultYielded), string(tc.class)
			o.Reason = tc.reason
			out, err := Run(ctx, o)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if out.Action != ActionNone || out.Class != tc.class || out.Stopped {
				t.Errorf("outcome %s/%s stopped=%v, want none/%s, not stopped", out.Action, out.Class, out.Stopped, tc.class)
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
