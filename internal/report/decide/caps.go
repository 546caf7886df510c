package decide

import (
	"fmt"
	"sort"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// Continuation caps an implement Job's continuation: no progress in two
// continuations in a row stops the item, and so does a continuation past
// the Jobs cap. jobs are the record's lines with Job job's as report will
// write it.
func Continuation(d Decision, jobs []record.JobOutcome, job, maxJobs int, e Ending) Decision {
	if d.Action != Continue {
		return d
	}
	if ev, ok := NoProgress(jobs, job); ok {
		return Decision{Class: failure.NoProgress, Action: Stop, Reason: ev, Step: "continuation"}
	}
	if next := job + 1; next > maxJobs {
		return Decision{Class: failure.BudgetExhausted, Action: Stop, Step: "continuation",
			Reason: fmt.Sprintf("the item has run %d Jobs, the cap of Jobs per item (max jobs %d); %s would need Job %d",
				job, maxJobs, e, next)}
	}
	return d
}

// Stage bounds a stage Job's decision: stage has no head to mark ready and
// no stage to return to, so what its class would do elsewhere is a
// person's call (a stop); a continuation past the Jobs cap stops too.
func Stage(d Decision, job, maxJobs int, e Ending) Decision {
	if d.Action != Continue && d.Action != Stop && d.Action != Ask && d.Action != Yield {
		return Decision{Class: d.Class, Action: Stop,
			Reason: fmt.Sprintf("%s (the class's action, %s, is not one a stage Job has)", d.Reason, d.Action)}
	}
	if d.Action == Continue && job+1 > maxJobs {
		return Decision{Class: failure.BudgetExhausted, Action: Stop, Step: "stage continuation",
			Reason: fmt.Sprintf("the item has run %d stage Jobs, the cap of Jobs per item (max jobs %d); %s would need stage Job %d",
				job, maxJobs, e, job+1)}
	}
	return d
}

// The results of a stage Job (internal/stage) that report has nothing to
// do for: ends a person or implement takes on from.
const (
	StageStaged   = "staged"
	StageReturned = "returned"
)

// StageSettled says whether a stage Job's ending needs nothing from report,
// and why: it staged the plan, or returned the item with findings. A return
// with a question (needs_input) does: the question goes on the issue.
func StageSettled(result, class string) (string, bool) {
	switch {
	case result == StageStaged:
		return "the stage Job staged the plan: implement takes it from its draft PR", true
	case result == StageReturned && class != string(failure.NeedsInput):
		return "the stage Job returned the item to a person with its findings", true
	}
	return "", false
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
//
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

// NoProgress applies the rule to the record's jobs (with the reported Job's
// line as report will write it) and returns the evidence when it holds.
func NoProgress(jobs []record.JobOutcome, job int) (string, bool) {
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
