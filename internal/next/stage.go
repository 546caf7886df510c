package next

import (
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// StageView is what a stage Job starts from: the record as read once and
// the runner's isolation.
type StageView struct {
	// StoppedBy is item.stopped_by: the person who stopped the item.
	StoppedBy string
	// Unisolated says why the Job's processes cannot run inside the
	// boundary ("" when they can).
	Unisolated string
	// State is stage.state; Result and Failure are implement.result and
	// implement.failure (a return to stage is implement's).
	State   string
	Result  record.Result
	Failure string
}

// StageStep is what a stage Job does next.
type StageStep struct {
	Kind Kind
	// Ending is how a Yield, Stop or Nothing ends the Job.
	Ending Ending
	// Amend: implement returned the staged plan as wrong; the Job amends
	// it on the same branch and PR.
	Amend bool
	// First and Last bound the rounds to run (Rounds).
	First, Last int
	// Resume: rounds 1 to Resume are on the branch with their findings in
	// the record; the Job takes them as they are.
	Resume int
	// Recheck is a round on the branch whose findings were lost with the
	// Job that pushed it: the gates and the verifier check it again (not
	// the planner), and a clean check stages the plan.
	Recheck int
}

// StageStart decides, before the Job touches the branch, whether it runs at
// all: a person's stop yields, a runner without isolation stops, a staged
// plan is left as it is unless implement returned it as wrong (Amend).
func StageStart(v StageView) StageStep {
	if kind, end, ok := held(v.StoppedBy, v.Unisolated, "", ""); ok {
		return StageStep{Kind: kind, Ending: end}
	}
	amend := v.State == StateStaged && v.Result == record.ResultReturned && v.Failure == string(failure.PlanWrong)
	if v.State == StateStaged && !amend {
		return StageStep{Kind: Nothing, Ending: Ending{Result: record.ResultStaged}}
	}
	return StageStep{Kind: Go, Amend: amend}
}

// RoundsView is what the branch and the record say of the rounds, read
// after StageStart said Go.
type RoundsView struct {
	// Amend is StageStart's; State is stage.state.
	Amend bool
	State string
	// Pushed is the last plan round committed on the branch (0: none).
	Pushed int
	// Recorded is stage.round: the last round whose findings the record
	// holds; RecordedClean: those findings fail nothing.
	Recorded      int
	RecordedClean bool
	// Bound is the rounds an item gets (configuration; default 3).
	Bound int
}

// StageRounds decides which rounds the Job runs. A killed Job's rounds are
// on the branch: those with their findings in the record are taken as they
// are, a round whose findings were lost is checked again, and a clean plan
// among them is staged without another round. Rounds are bounded per item;
// an amendment has a bound of its own, and so has a person's new request
// after the item was returned to them.
func StageRounds(v RoundsView) StageStep {
	s := StageStep{Kind: Rounds, Amend: v.Amend, First: 1}
	switch {
	case v.Amend:
		s.First = v.Recorded + 1
	case v.Pushed > 0 && v.Recorded != v.Pushed:
		s.First, s.Recheck = v.Pushed+1, v.Pushed
	case v.Pushed > 0 && v.RecordedClean:
		return StageStep{Kind: Staged, Resume: v.Pushed}
	case v.Pushed > 0:
		s.First, s.Resume = v.Pushed+1, v.Pushed
	}
	s.Last = v.Bound
	if v.Amend || v.State == StateReturned {
		s.Last = s.First + v.Bound - 1
	}
	return s
}
