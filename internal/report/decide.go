package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/record"
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
		return ActionStop
	}
	switch row.Action {
	case failure.ActionRetry, failure.ActionReconcile, failure.ActionWait, failure.ActionRebase,
		failure.ActionRepair, failure.ActionRetryLessParallel, failure.ActionContinue:
		return ActionContinue
	case failure.ActionYield:
		return ActionYield
	case failure.ActionReturnToStage:
		return ActionReturnToStage
	case failure.ActionAsk:
		return ActionAsk
	case failure.ActionLeave, failure.ActionWaitWoken:
		// claim_wait: the item that holds the claim wakes this one when it
		// gives it back (ClaimWaiters); nothing is dispatched now.
		return ActionNone
	}
	return ActionStop
}

// decision is the class and action of a Job's ending, before the caps.
type decision struct {
	class  failure.Class
	action Action
	reason string
	// step is implement.stopped for a stop report decides itself.
	step string
}

// decideTyped maps a typed result and the class the runner wrote to one
// action. "stopped" keeps the runner's class; the class's action decides, so
// a stop the runner wrote on a class with an automatic action is continued
// (bounded by the Jobs cap and no_progress), never left stopped.
func decideTyped(result record.Result, class string) decision {
	c := failure.Class(class)
	switch result {
	case record.ResultReady:
		return decision{action: ActionReady}
	case record.ResultYielded:
		if c == "" {
			// A yield on purpose (deadline near, PR checks still running).
			return decision{action: ActionContinue}
		}
	case record.ResultReturned, record.ResultStopped:
		if c == "" {
			return decision{class: failure.Unknown, action: ActionStop,
				reason: fmt.Sprintf("the Job ended %s without a failure class", result)}
		}
	}
	if !c.Valid() {
		return decision{class: failure.Unknown, action: ActionStop,
			reason: fmt.Sprintf("the Job ended %s with class %q, which the taxonomy does not have", result, class)}
	}
	return decision{class: c, action: ActionFor(c)}
}

// The no-progress rule. A Job "made a new mark" when its line in
// implement.jobs shows a higher group than the line of the Job before it (a
// group mark), or when it ended ready. A Job is a "strike" when it is a
// continuation (Job 2 or later), made no new mark, and ended on a failure: it
// wrote no result, or it wrote stopped or yielded with a class. A yield with
// no class (deadline near, PR checks still running) and a return are not
// strikes. When the Job just reported and the Job before it are both strikes,
// the automatic actions are not converging: the item stops as no_progress
// instead of a third try.

// One class has a sharper rule, from its row of the taxonomy: a second oom
// in a row with no new mark stops as no_progress (the continuation after an
// oom already ran with less room to fail).

// strike reports whether jobs[i] is a strike (jobs sorted by Job).
func strike(jobs []record.JobOutcome, i int) bool {
	j := jobs[i]
	if j.Job < 2 {
		return false
	}
	prevGroup := 0
	if i > 0 {
		prevGroup = jobs[i-1].Group
	}
	if j.Group > prevGroup || j.Result == record.ResultReady || j.Result == record.ResultReturned {
		return false
	}
	if j.Result == "" {
		return true
	}
	return j.Failure != ""
}

// noProgress applies the rule to the record's jobs (with the reported Job's
// line as report will write it) and returns the evidence when it holds.
func noProgress(jobs []record.JobOutcome, job int) (string, bool) {
	sorted := append([]record.JobOutcome(nil), jobs...)
	sort.Slice(sorted, func(a, b int) bool { return sorted[a].Job < sorted[b].Job })
	i := -1
	for k, j := range sorted {
		if j.Job == job {
			i = k
		}
	}
	if i < 1 || sorted[i-1].Job != job-1 {
		return "", false
	}
	prev, cur := sorted[i-1], sorted[i]
	if prev.Failure == string(failure.OOM) && cur.Failure == string(failure.OOM) && cur.Group <= prev.Group &&
		cur.Result != record.ResultReady && cur.Result != record.ResultReturned {
		return fmt.Sprintf("a second oom in a row with no new mark: %s and %s, the last group passed stays %d",
			describeJob(prev), describeJob(cur), cur.Group), true
	}
	if !strike(sorted, i) || !strike(sorted, i-1) {
		return "", false
	}
	return fmt.Sprintf("two continuations in a row made no new mark: %s and %s, the last group passed stays %d",
		describeJob(prev), describeJob(cur), cur.Group), true
}

func describeJob(j record.JobOutcome) string {
	var parts []string
	if j.Result != "" {
		parts = append(parts, string(j.Result))
	} else {
		parts = append(parts, "no result")
	}
	if j.Failure != "" {
		parts = append(parts, j.Failure)
	}
	run := ""
	if j.RunID != 0 {
		run = fmt.Sprintf(", run %d", j.RunID)
	}
	return fmt.Sprintf("Job %d (%s%s)", j.Job, strings.Join(parts, ", "), run)
}

func validWord(s string) bool {
	if s == "" || len(s) > record.MaxWord || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' && c != '-' {
			return false
		}
	}
	return true
}
