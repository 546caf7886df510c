package cli

import (
	"strings"
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

// TestFeedbackTrigger: a person's review that is not an approval, a review
// comment on a line and a /roadmap fix comment start a repair Job
// (TestReviewChangesRequestedRepaired shows the Job); an approval (a plan
// PR's, which starts the groups), other comments and other events do not.
// The events are decoded from webhook payloads, as the runner gives them.
func TestFeedbackTrigger(t *testing.T) {
	for _, tc := range []struct {
		name, event, payload string
		want                 bool
	}{
		{"changes requested", "pull_request_review", `{"action":"submitted","review":{"state":"CHANGES_REQUESTED"}}`, true},
		{"a commented review", "pull_request_review", `{"action":"submitted","review":{"state":"commented"}}`, true},
		{"an approval", "pull_request_review", `{"action":"submitted","review":{"state":"approved"}}`, false},
		{"a review dismissed", "pull_request_review", `{"action":"dismissed","review":{"state":"dismissed"}}`, false},
		{"a line comment", "pull_request_review_comment", `{"action":"created","comment":{"id":7,"body":"rename this"}}`, true},
		{"a line comment edited", "pull_request_review_comment", `{"action":"edited","comment":{"id":7,"body":"rename this"}}`, false},
		{"/roadmap fix", "issue_comment", `{"action":"created","comment":{"id":8,"body":"/roadmap fix the typo"}}`, true},
		{"/roadmap stop", "issue_comment", `{"action":"created","comment":{"id":9,"body":"/roadmap stop"}}`, false},
		{"a label", "issues", `{"action":"labeled","label":{"name":"roadmap:implement"}}`, false},
	} {
		ev := &event.Event{Name: tc.event}
		if err := event.Decode(strings.NewReader(tc.payload), ev); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := feedbackTrigger(ev); got != tc.want {
			t.Errorf("%s: feedbackTrigger = %v, want %v", tc.name, got, tc.want)
		}
	}
	if feedbackTrigger(nil) {
		t.Error("no event: feedbackTrigger = true")
	}
}

// TestReopenedTrigger: a person's reopening of the issue or of a PR (the
// caller routes only the item's own) makes the Job a resumption, which runs
// only on an item a closing held (TestReopenResumesOnlyAHold); closing,
// labelling and a dispatch do not. Decoded from webhook payloads.
func TestReopenedTrigger(t *testing.T) {
	for _, tc := range []struct {
		name, event, payload string
		want                 bool
	}{
		{"the issue reopened", "issues", `{"action":"reopened","issue":{"number":7}}`, true},
		{"the PR reopened", "pull_request", `{"action":"reopened","pull_request":{"number":8,"head":{"ref":"roadmap/7-greet"}}}`, true},
		{"the PR closed", "pull_request", `{"action":"closed","pull_request":{"number":8}}`, false},
		{"a label", "issues", `{"action":"labeled","label":{"name":"roadmap:implement"}}`, false},
		{"a dispatch", "workflow_dispatch", `{"inputs":{"issue":"7"}}`, false},
	} {
		ev := &event.Event{Name: tc.event}
		if err := event.Decode(strings.NewReader(tc.payload), ev); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := reopened(ev); got != tc.want {
			t.Errorf("%s: reopened = %v, want %v", tc.name, got, tc.want)
		}
	}
	if reopened(nil) {
		t.Error("no event: reopened = true")
	}
}
