package next

import (
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// ImplementView is what an implement Job starts from: the record as read
// once, the runner's isolation and the plan it was given.
type ImplementView struct {
	// StoppedBy is item.stopped_by: the person who stopped the item.
	StoppedBy string
	// Unisolated says why the Job's processes cannot run inside the
	// boundary ("" when they can).
	Unisolated string
	// PlanDir is the plan's directory: --plan, else stage.plan.
	PlanDir string
	// PlanUnread, when set, is why stage.plan is missing: a person's edit
	// left a line the record's repair could not read and dropped.
	PlanUnread string
}

// ImplementStep is what an implement Job does next.
type ImplementStep struct {
	Kind Kind
	// Ending is how a Yield, Stop or Return ends the Job.
	Ending Ending
	// Mark is the mark reconcile writes before any work (nil: none).
	Mark *Mark
	// Todo are the groups still to run, in the plan's order; Last is the
	// last of them (its mark rides with the checked mark).
	Todo []int
	Last int
}

// Mark is a push that happened without its mark: the record is told, the
// branch is not pushed again.
type Mark struct {
	// Published is the head the remote holds (implement.published_sha).
	Published string
	// Group and SHA are the last group committed on the branch past
	// implement.group, and its commit (Group 0: the groups are marked).
	Group int
	SHA   string
}

// ImplementStart decides whether the Job runs: a person's stop yields, a
// runner without isolation stops, an item with no plan goes back to stage.
// The Job checks out the branch before it carries out a Return (the result
// names the head).
func ImplementStart(v ImplementView) ImplementStep {
	if kind, end, ok := held(v.StoppedBy, v.Unisolated, "start", "isolation"); ok {
		return ImplementStep{Kind: kind, Ending: end}
	}
	if v.PlanDir == "" && v.PlanUnread != "" {
		// A hand edit the repair dropped: the person who made it decides
		// where the plan is, not stage.
		return ImplementStep{Kind: Stop, Ending: Ending{Result: record.ResultStopped, Class: failure.Unknown, Step: "plan",
			Reason: "stage.plan could not be read, and the record's repair dropped it (" + v.PlanUnread + "): set it to the plan's directory under openspec/changes/"}}
	}
	if v.PlanDir == "" {
		return ImplementStep{Kind: Return, Ending: Ending{Result: record.ResultReturned, Class: failure.PlanWrong, Step: "plan",
			Reason: "the item has no plan: stage.plan is not set and no plan directory was given"}}
	}
	return ImplementStep{Kind: Go}
}

// GroupsView is what git, the remote and the record say of the groups,
// read once the plan loaded and the Job holds its claims.
type GroupsView struct {
	// Groups are the plan's group numbers, in its order.
	Groups []int
	// Passed are the group commits on the branch past the base: a group's
	// number to its commit.
	Passed map[int]string
	// Head is the branch's head; Remote is what the remote's branch points
	// at, OnRemote whether it has the branch.
	Head     string
	Remote   string
	OnRemote bool
	// Published is implement.published_sha, LastGroup implement.group.
	Published string
	LastGroup int
}

// ImplementGroups decides which groups the Job runs. The record first
// agrees with git: a head on the remote without its mark gets the mark,
// never a second push. Then every group without a commit on the branch
// runs, in the plan's order; with none left the Job goes to the head.
func ImplementGroups(v GroupsView) ImplementStep {
	s := ImplementStep{Kind: AtHead}
	last := 0
	for g := range v.Passed {
		last = max(last, g)
	}
	if v.OnRemote && v.Remote == v.Head && (v.Published != v.Head || last > v.LastGroup) {
		s.Mark = &Mark{Published: v.Head}
		if last > v.LastGroup {
			s.Mark.Group, s.Mark.SHA = last, v.Passed[last]
		}
	}
	for _, g := range v.Groups {
		if _, done := v.Passed[g]; !done {
			s.Kind, s.Last = Groups, g
			s.Todo = append(s.Todo, g)
		}
	}
	return s
}
