package next

import (
	"fmt"

	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// Trigger is what a Job knows of what started it and of the issue as read
// at its start, before it writes anything.
type Trigger struct {
	// Label is the label whose `labeled` event started the Job ("" for a
	// dispatch or a comment: nothing to check).
	Label string
	// Labels are the issue's labels as read at the start.
	Labels []string
	// Reopened: a person's reopening of the issue or of the item's PR
	// started the Job; Last is the record's implement.failure as read at
	// the start (the class the item's last Job ended with).
	Reopened bool
	Last     string
}

// Unlabelled decides whether a Job started by a label runs at all: a person
// who removed the label before the Job started took the request back, and
// the Job does not start (no mark, no number, no spend). Labelling again
// starts a new one.
func Unlabelled(t Trigger) (Ending, bool) {
	if t.Label == "" {
		return Ending{}, false
	}
	for _, l := range t.Labels {
		if l == t.Label {
			return Ending{}, false
		}
	}
	return Ending{Result: record.ResultYielded, Class: failure.LabelRemoved, Step: "start",
		Reason: fmt.Sprintf("the label %s was removed before the Job started; nothing is done until it is added again", t.Label)}, true
}

// NotHeld decides whether a Job started by a person's reopening runs: a
// reopening resumes an item a closing held (pr_closed, issue_closed) and
// nothing else. A plan PR reopened before its approval, or an item that
// ended ready or stopped, or one another Job is working on, is not the
// reopening's to start: the Job does nothing (no mark, no number, no spend)
// and the item goes on as its record says.
func NotHeld(t Trigger) (Ending, bool) {
	if !t.Reopened || t.Last == string(failure.PRClosed) || t.Last == string(failure.IssueClosed) {
		return Ending{}, false
	}
	last := t.Last
	if last == "" {
		last = "none"
	}
	return Ending{Result: record.ResultYielded, Class: failure.NotHeld, Step: "start",
		Reason: fmt.Sprintf("started by a person's reopening, but no closing held the item (its last Job's class: %s): nothing to resume", last)}, true
}

// PeopleView is what the item's issue and PR say of what people did, read
// at a safe point of the Job: its start, before a group's work, before a
// push and before the PR is marked ready.
type PeopleView struct {
	Issue      int
	IssueState string // open or closed ("" is open: not read)
	// PR is the item's pull request (0: none yet) and PRState its state.
	PR      int
	PRState string
	// PRMerged: a person merged the PR (its state is closed too).
	PRMerged bool
	// Left are the plan's groups not yet on the PR (none passed and
	// pushed): what a merge before ready leaves undone.
	Left []int
}

// People decides whether a person's act holds the item: a closed issue or
// a closed PR ends the Job at this safe point (no further push, no ready,
// no spend), its work kept where the last mark left it. Reopening the one
// that was closed resumes the item from that mark. The issue comes first:
// a closed issue takes its PR's work with it. A merged PR comes before
// both: a merge closes the issue its body names, and the item ends there
// (nothing more is pushed to a branch that is merged); the groups left go
// back to the person, who may label the issue again to finish them on a
// new PR.
func People(v PeopleView) (Ending, bool) {
	switch {
	case v.PR != 0 && v.PRMerged:
		left := "no group was left"
		if len(v.Left) > 0 {
			left = "groups " + numbers(v.Left) + " were left: label the issue again to finish them on a new PR"
			if len(v.Left) == 1 {
				left = "group " + numbers(v.Left) + " was left: label the issue again to finish it on a new PR"
			}
		}
		return Ending{Result: record.ResultReturned, Class: failure.PRMerged, Step: "pr merged",
			Reason: fmt.Sprintf("a person merged PR #%d before it was ready: the item ends and nothing more is pushed; %s", v.PR, left)}, true
	case v.IssueState == "closed":
		return Ending{Result: record.ResultYielded, Class: failure.IssueClosed, Step: "issue closed",
			Reason: fmt.Sprintf("a person closed issue #%d: nothing more is pushed or spent; reopening it resumes the item where it stopped", v.Issue)}, true
	case v.PR != 0 && v.PRState == "closed":
		return Ending{Result: record.ResultYielded, Class: failure.PRClosed, Step: "pr closed",
			Reason: fmt.Sprintf("a person closed PR #%d: nothing more is pushed and it is not marked ready; reopening it resumes the item where it stopped", v.PR)}, true
	}
	return Ending{}, false
}

// numbers is "2, 3".
func numbers(ns []int) string {
	s := ""
	for i, n := range ns {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprint(n)
	}
	return s
}
