package cli

import (
	"testing"

	"github.com/roadmap-dev/roadmap/internal/event"
)

// TestTriggerLabel: only the implement label's own `labeled` event makes the
// Job check that the issue still has it (TestLabelRemovedBeforeJob shows the
// check); a dispatch, a continuation or another label has nothing to check.
func TestTriggerLabel(t *testing.T) {
	const impl = "roadmap:implement"
	for _, tc := range []struct {
		name string
		ev   *event.Event
		want string
	}{
		{"labeled with the implement label", &event.Event{Name: "issues", Action: "labeled", Label: impl}, impl},
		{"labeled with another label", &event.Event{Name: "issues", Action: "labeled", Label: "roadmap:stage"}, ""},
		{"unlabeled", &event.Event{Name: "issues", Action: "unlabeled", Label: impl}, ""},
		{"a dispatch", &event.Event{Name: "workflow_dispatch"}, ""},
		{"no event", nil, ""},
	} {
		if got := triggerLabel(tc.ev, impl); got != tc.want {
			t.Errorf("%s: triggerLabel = %q, want %q", tc.name, got, tc.want)
		}
	}
}
