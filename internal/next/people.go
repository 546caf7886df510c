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
			Reason: fmt.Sprintf("a person closed PR #%d: nothing more is pushed and it is not marked ready; reopen it and label the issue for implement again to resume the item where it stopped (a reopened PR starts no run)", v.PR)}, true
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
