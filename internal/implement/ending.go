package implement

import (
	"context"

	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/kernel"
	"github.com/roadmap-dev/roadmap/internal/next"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/verdict"
)

// ending is how the group loop ends before the final marks.
type ending struct {
	result   record.Result
	class    failure.Class
	reason   string
	step     string // implement.stopped: the step label of a stop
	checkLog string
	conflict []string
	question string
	// repairable: the review's blocking findings, with rounds left; atHead
	// repairs the head with checkLog (the findings) and reviews again.
	repairable bool
	// again: the head moved to take in the base before ready (merged.go);
	// atHead checks, reviews and watches the new head.
	again bool
}

// endingOf is the one mapping from a concern's verdict (the CI triage, the
// checks before ready) to how the loop's step ends. A failure with a repair
// task stops at step with the task as the check log: atHead repairs it
// while rounds remain (checks_failed, or repairable), else the next Job's
// first step is the repair. Any other failure ends as its class's row in
// the taxonomy says (a class with an automatic action never stops the item),
// asking its question when it has one.
func endingOf(step string, f verdict.Failure) ending {
	if f.Task == "" {
		end := verdictEnding(kernel.ClassVerdict(f.Class, f.Reason), step)
		end.question = f.Question
		return end
	}
	return ending{result: record.ResultStopped, class: f.Class, step: step, reason: f.Reason,
		checkLog: f.Task, question: f.Question, repairable: f.Repairable}
}

// fail turns an error into the ending its class leads to.
func (r *runner) fail(ctx context.Context, step string, err error) ending {
	return verdictEnding(kernel.Judge(ctx, err), step)
}

// classEnding maps a class to the result its action leads to: a class with an
// automatic action never stops the item.
func (r *runner) classEnding(class failure.Class, step, reason string) ending {
	return endingOf(step, verdict.Failure{Class: class, Reason: reason})
}

// stepEnding is the ending a decision of next gives.
func stepEnding(e next.Ending) ending {
	return ending{result: e.Result, class: e.Class, step: e.Step, reason: e.Reason}
}

func verdictEnding(v kernel.Verdict, step string) ending {
	return ending{result: v.Result, class: v.Class, step: step, reason: v.Reason}
}
