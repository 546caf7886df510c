package implement

import (
	"testing"

	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/verdict"
)

// TestEndingOf: the one mapping from a concern's failure to the loop's
// ending. A failure with a repair task stops with the task as the check
// log (checks_failed would yield by its row: the task must reach the
// repair, not a continuation that knows nothing of it); any other ends as
// its class's row says.
func TestEndingOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    verdict.Failure
		want ending
	}{
		{"a PR check the change failed", verdict.Failure{Class: failure.ChecksFailed, Reason: "PR check test failed", Task: "the log"},
			ending{result: record.ResultStopped, class: failure.ChecksFailed, step: "watch", reason: "PR check test failed", checkLog: "the log"}},
		{"the review's findings with rounds left", verdict.Failure{Class: failure.ReviewBlocked, Reason: "2 blocking", Task: "repair", Repairable: true},
			ending{result: record.ResultStopped, class: failure.ReviewBlocked, step: "watch", reason: "2 blocking", checkLog: "repair", repairable: true}},
		{"a flaky check past its re-runs yields as its class says", verdict.Failure{Class: failure.Transient, Reason: "503"},
			ending{result: record.ResultYielded, class: failure.Transient, step: "watch", reason: "503"}},
		{"no CI asks a person", verdict.Failure{Class: failure.NeedsInput, Reason: "no CI ran", Question: "push token?"},
			ending{result: record.ResultReturned, class: failure.NeedsInput, step: "watch", reason: "no CI ran", question: "push token?"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := endingOf("watch", tc.f); !equalEnding(got, tc.want) {
				t.Errorf("endingOf = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func equalEnding(a, b ending) bool {
	return a.result == b.result && a.class == b.class && a.step == b.step && a.reason == b.reason && a.checkLog == b.checkLog &&
		a.question == b.question && a.repairable == b.repairable && a.again == b.again && len(a.conflict) == len(b.conflict)
}
