package verdict

import (
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/text"
)

// Failure is a concern's finding that ends the loop's step.
type Failure struct {
	// Class is the taxonomy's class: with no Task, its row says how the
	// Job ends.
	Class failure.Class
	// Reason is the evidence, a sentence for the record, the log and the PR
	// comment.
	Reason string
	// Task is the repair task: what the agent reads to repair it (a failing
	// check's log, the surviving mutants, the review's findings). A failure
	// with a task stops the step and the task is handed on.
	Task string
	// Question is what a person is asked (needs_input).
	Question string
	// Repairable says rounds are left: the loop repairs at the head with
	// Task now, not in the next Job.
	Repairable bool
}

// OneLine makes a reason, a piece of evidence or a note one line of at most
// 300 bytes, cut on a rune's start, as every line of the PR comment is.
func OneLine(s string) string { return text.Short(s, 300) }
