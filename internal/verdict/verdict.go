package verdict

import (
	"strings"
	"unicode/utf8"

	"github.com/roadmap-dev/roadmap/internal/failure"
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
func OneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if n := 300; len(s) > n {
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "…"
	}
	return s
}
