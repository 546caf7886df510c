package next

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// peopleRow is one history of a person's act as a safe point reads it.
type peopleRow struct {
	name string
	v    PeopleView
	want Ending
	held bool
}

func checkPeople(t *testing.T, rows []peopleRow) {
	t.Helper()
	for _, tt := range rows {
		t.Run(tt.name, func(t *testing.T) {
			got, held := People(tt.v)
			if held != tt.held {
				t.Errorf("held = %v, want %v", held, tt.held)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ending (-want +got):\n%s", diff)
			}
		})
	}
}

var prClosed = Ending{Result: record.ResultYielded, Class: failure.PRClosed, Step: "pr closed",
	Reason: "a person closed PR #8: nothing more is pushed and it is not marked ready; reopening it resumes the item where it stopped"}

var issueClosed = Ending{Result: record.ResultYielded, Class: failure.IssueClosed, Step: "issue closed",
	Reason: "a person closed issue #7: nothing more is pushed or spent; reopening it resumes the item where it stopped"}

func TestPersonClosesPR(t *testing.T) {
	checkPeople(t, []peopleRow{
		{"the PR closed: held, no push and no ready", PeopleView{Issue: 7, IssueState: "open", PR: 8, PRState: "closed"}, prClosed, true},
		{"the PR open: the Job goes on", PeopleView{Issue: 7, IssueState: "open", PR: 8, PRState: "open"}, Ending{}, false},
		{"no PR yet: nothing to close", PeopleView{Issue: 7, IssueState: "open"}, Ending{}, false},
	})
}

func TestPersonClosesIssue(t *testing.T) {
	checkPeople(t, []peopleRow{
		{"the issue closed: held, the spend stops", PeopleView{Issue: 7, IssueState: "closed"}, issueClosed, true},
		{"the issue and its PR closed: the issue's hold, which takes the PR's work with it",
			PeopleView{Issue: 7, IssueState: "closed", PR: 8, PRState: "closed"}, issueClosed, true},
		{"the issue as not read (a state the Job has not seen): open", PeopleView{Issue: 7, PR: 8, PRState: "open"}, Ending{}, false},
	})
}

// TestPersonReopensResumes: a held item whose PR or issue is open again goes
// on where its last mark left it: the safe point lets the Job through, and
// the groups left are the ones without a commit on the branch.
func TestPersonReopensResumes(t *testing.T) {
	for _, v := range []PeopleView{
		{Issue: 7, IssueState: "open", PR: 8, PRState: "open"}, // the PR reopened
		{Issue: 7, IssueState: "open"},                         // the issue reopened before any PR
	} {
		if e, held := People(v); held {
			t.Errorf("People(%+v) holds (%s) after the reopening, want the Job to go on", v, e.Class)
		}
	}
	// The Job that held after group 1's mark left groups 2 and 3.
	step := implementNext(implementHistory{rec: ImplementView{PlanDir: "openspec/changes/add-retry"},
		groups: GroupsView{Groups: []int{1, 2, 3}, Passed: map[int]string{1: "c1"},
			Head: "c1", Remote: "c1", OnRemote: true, Published: "c1", LastGroup: 1}})
	if diff := cmp.Diff(ImplementStep{Kind: Groups, Todo: []int{2, 3}, Last: 3}, step); diff != "" {
		t.Errorf("after the reopening (-want +got):\n%s", diff)
	}
}

// triggerRow is a Trigger and what a start decision (Unlabelled, NotHeld)
// makes of it.
type triggerRow struct {
	name string
	t    Trigger
	want Ending
	gone bool
}

func checkTrigger(t *testing.T, decide func(Trigger) (Ending, bool), rows []triggerRow) {
	t.Helper()
	for _, tt := range rows {
		t.Run(tt.name, func(t *testing.T) {
			got, gone := decide(tt.t)
			if gone != tt.gone {
				t.Errorf("gone = %v, want %v", gone, tt.gone)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ending (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLabelRemovedBeforeJob(t *testing.T) {
	removed := Ending{Result: record.ResultYielded, Class: failure.LabelRemoved, Step: "start",
		Reason: "the label roadmap:implement was removed before the Job started; nothing is done until it is added again"}
	checkTrigger(t, Unlabelled, []triggerRow{
		{"started by the label, which is gone: the Job does not start",
			Trigger{Label: "roadmap:implement", Labels: []string{"bug"}}, removed, true},
		{"started by the label, still there: the Job starts",
			Trigger{Label: "roadmap:implement", Labels: []string{"bug", "roadmap:implement"}}, Ending{}, false},
		{"a dispatch (a continuation): no label to check",
			Trigger{Labels: nil}, Ending{}, false},
	})
}

// TestReopenResumesOnlyAHold: a Job started by a person's reopening of
// the issue or the PR resumes an item a closing held, and does nothing to
// any other: a plan PR reopened before its approval starts no groups.
func TestReopenResumesOnlyAHold(t *testing.T) {
	notHeld := func(last string) Ending {
		return Ending{Result: record.ResultYielded, Class: failure.NotHeld, Step: "start",
			Reason: "started by a person's reopening, but no closing held the item (its last Job's class: " + last + "): nothing to resume"}
	}
	checkTrigger(t, NotHeld, []triggerRow{
		{"the PR's closing held the item: the reopening resumes it", Trigger{Reopened: true, Last: "pr_closed"}, Ending{}, false},
		{"the issue's closing held the item: the reopening resumes it", Trigger{Reopened: true, Last: "issue_closed"}, Ending{}, false},
		{"a plan PR reopened before its approval (no implement Job yet)", Trigger{Reopened: true}, notHeld("none"), true},
		{"an item that stopped: a retry is a person's command, not a reopening", Trigger{Reopened: true, Last: "checks_failed"}, notHeld("checks_failed"), true},
		{"not a reopening: a continuation's dispatch", Trigger{Last: "killed"}, Ending{}, false},
	})
}

func TestPersonMergesPR(t *testing.T) {
	merged := func(left string) Ending {
		return Ending{Result: record.ResultReturned, Class: failure.PRMerged, Step: "pr merged",
			Reason: "a person merged PR #8 before it was ready: the item ends and nothing more is pushed; " + left}
	}
	checkPeople(t, []peopleRow{
		{"merged after group 1: the item ends, groups 2 and 3 named",
			PeopleView{Issue: 7, IssueState: "open", PR: 8, PRState: "closed", PRMerged: true, Left: []int{2, 3}},
			merged("groups 2, 3 were left: label the issue again to finish them on a new PR"), true},
		{"merged with the issue closed by it: the merge decides, not the issue's hold",
			PeopleView{Issue: 7, IssueState: "closed", PR: 8, PRState: "closed", PRMerged: true, Left: []int{3}},
			merged("group 3 was left: label the issue again to finish it on a new PR"), true},
		{"merged before ready with every group on it: nothing left",
			PeopleView{Issue: 7, IssueState: "open", PR: 8, PRState: "closed", PRMerged: true},
			merged("no group was left"), true},
		{"closed without a merge: the hold, not the end",
			PeopleView{Issue: 7, IssueState: "open", PR: 8, PRState: "closed", Left: []int{2}}, prClosed, true},
	})
}
