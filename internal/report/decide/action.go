package decide

import "github.com/roadmap-dev/roadmap/internal/failure"

// Action is what report does about a Job's ending. Each failure class leads
// to exactly one (ActionFor); ready, none and resume are report's own.
type Action string

const (
	// Ready: every group passed; the head's status is set to success.
	Ready Action = "ready"
	// Continue: a continuation Job is dispatched.
	Continue Action = "continue"
	// Yield: the item waits for the next day's budget; nothing is
	// dispatched now.
	Yield Action = "yield"
	// ReturnToStage: the item goes back to stage with the agent's reason.
	ReturnToStage Action = "return_to_stage"
	// Ask: the question goes on the issue and the item waits for a reply.
	Ask Action = "ask"
	// Stop: the item stops (comment, label, failing status).
	Stop Action = "stop"
	// None: nothing to do (the implement job was skipped, or a reply that
	// does not resume the item).
	None Action = "none"
	// Resume: a writer's reply is recorded and a continuation dispatched.
	Resume Action = "resume"
	// Drive: the item is a tracker; its sub-issues are started
	// (report.Drive), the tracker itself gets no Job.
	Drive Action = "drive"
)

// ActionFor is the one action report takes for a class, derived from the
// class's row of the taxonomy. The actions that run inside a Job (retry with
// backoff, wait for a rate limit, rebase, repair rounds, reconcile) are, seen
// from report, a continuation: the Job gave its slot back and the next Job
// resumes from the last mark with the hand-off the runner left. A class the
// table does not have, or an action report does not know, stops: never retry
// blindly.
func ActionFor(c failure.Class) Action {
	row, ok := failure.Lookup(c)
	if !ok {
		return Stop
	}
	switch row.Action {
	case failure.ActionRetry, failure.ActionReconcile, failure.ActionWait, failure.ActionRebase,
		failure.ActionRepair, failure.ActionRetryLessParallel, failure.ActionContinue:
		return Continue
	case failure.ActionYield:
		return Yield
	case failure.ActionReturnToStage:
		return ReturnToStage
	case failure.ActionAsk:
		return Ask
	case failure.ActionLeave, failure.ActionWaitWoken:
		// claim_wait: the item that holds the claim wakes this one when it
		// gives it back (ClaimWaiters); blocked: the item starts again when
		// its last blocker is met. Nothing is dispatched now.
		return None
	case failure.ActionHold, failure.ActionSkip:
		// pr_closed, issue_closed: the Job's last mark put the note on the
		// issue (the record comment says why and how to resume) and the
		// person's reopening starts the next Job; label_removed: the person
		// took the request back. Nothing is dispatched.
		return None
	case failure.ActionDrive:
		return Drive
	case failure.ActionEnd:
		// pr_merged: the item ends where the person's merge finished it;
		// the Job's last mark named the groups left on the issue.
		return None
	}
	return Stop
}
