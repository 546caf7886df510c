package next

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// stageHistory is where an item stands when a stage Job starts: its record
// and the plan rounds committed on its branch.
type stageHistory struct {
	rec StageView
	// pushed is the last plan round on the branch; recorded is
	// stage.round and clean says its findings fail nothing.
	pushed, recorded int
	clean            bool
}

// stageNext is what a stage Job decides, in the order it decides it: the
// start, then (when it goes on) the rounds, with the configured bound of 3.
func stageNext(h stageHistory) StageStep {
	s := StageStart(h.rec)
	if s.Kind != Go {
		return s
	}
	return StageRounds(RoundsView{Amend: s.Amend, State: h.rec.State, Pushed: h.pushed,
		Recorded: h.recorded, RecordedClean: h.clean, Bound: 3})
}

func TestStageNext(t *testing.T) {
	returnedWrong := StageView{State: StateStaged, Result: record.ResultReturned, Failure: string(failure.PlanWrong)}
	tests := []struct {
		name string
		h    stageHistory
		want StageStep
	}{
		{"a new item runs rounds 1 to the bound", stageHistory{},
			StageStep{Kind: Rounds, First: 1, Last: 3}},
		{"stopped by a person: the Job does nothing, even on a staged plan",
			stageHistory{rec: StageView{StoppedBy: "octocat", State: StateStaged, Unisolated: "no boundary"}},
			StageStep{Kind: Yield, Ending: Ending{Result: record.ResultYielded,
				Reason: "the item is stopped by octocat; nothing is done until /roadmap retry"}}},
		{"unisolated: the Job stops",
			stageHistory{rec: StageView{Unisolated: "isolation none: the runner has no boundary"}},
			StageStep{Kind: Stop, Ending: Ending{Result: record.ResultStopped, Class: failure.Unisolated,
				Reason: "isolation none: the runner has no boundary"}}},
		{"already staged: nothing to do", stageHistory{rec: StageView{State: StateStaged}, pushed: 2, recorded: 2, clean: true},
			StageStep{Kind: Nothing, Ending: Ending{Result: record.ResultStaged}}},
		{"staged, implement returned it on another class: still nothing for stage",
			stageHistory{rec: StageView{State: StateStaged, Result: record.ResultReturned, Failure: string(failure.NeedsInput)}},
			StageStep{Kind: Nothing, Ending: Ending{Result: record.ResultStaged}}},
		{"staged, implement stopped on plan_wrong without returning: nothing",
			stageHistory{rec: StageView{State: StateStaged, Result: record.ResultStopped, Failure: string(failure.PlanWrong)}},
			StageStep{Kind: Nothing, Ending: Ending{Result: record.ResultStaged}}},
		{"implement returned the staged plan as wrong: an amendment after the recorded rounds (a lost amendment round planned again), with a bound of its own",
			stageHistory{rec: returnedWrong, pushed: 3, recorded: 2, clean: true},
			StageStep{Kind: Rounds, Amend: true, First: 3, Last: 5}},
		{"resume after 2 rounds with their findings, which still fail",
			stageHistory{rec: StageView{State: StatePlanning}, pushed: 2, recorded: 2},
			StageStep{Kind: Rounds, First: 3, Last: 3, Resume: 2}},
		{"resume after 2 rounds whose findings are clean: staged without a round",
			stageHistory{rec: StageView{State: StatePlanning}, pushed: 2, recorded: 2, clean: true},
			StageStep{Kind: Staged, Resume: 2}},
		{"round 2 pushed, its findings lost with the Job: checked again, then round 3",
			stageHistory{rec: StageView{State: StatePlanning}, pushed: 2, recorded: 1},
			StageStep{Kind: Rounds, First: 3, Last: 3, Recheck: 2}},
		{"round 1 pushed and no findings recorded at all: round 1 checked again",
			stageHistory{pushed: 1},
			StageStep{Kind: Rounds, First: 2, Last: 3, Recheck: 1}},
		{"every round spent and still failing: no round runs, the Job returns the item",
			stageHistory{rec: StageView{State: StatePlanning}, pushed: 3, recorded: 3},
			StageStep{Kind: Rounds, First: 4, Last: 3, Resume: 3}},
		{"a returned item's new request: the rounds after the last get a bound of their own",
			stageHistory{rec: StageView{State: StateReturned}, pushed: 3, recorded: 3},
			StageStep{Kind: Rounds, First: 4, Last: 6, Resume: 3}},
		{"a returned item whose round was lost: checked again, then its own bound",
			stageHistory{rec: StageView{State: StateReturned}, pushed: 3, recorded: 2},
			StageStep{Kind: Rounds, First: 4, Last: 6, Recheck: 3}},
		{"a stopped stage Job's item resumes like a planning one",
			stageHistory{rec: StageView{State: StateStopped}, pushed: 1, recorded: 1},
			StageStep{Kind: Rounds, First: 2, Last: 3, Resume: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, stageNext(tt.h)); diff != "" {
				t.Errorf("next step (-want +got):\n%s", diff)
			}
		})
	}
}

// implementHistory is where an item stands when an implement Job starts:
// its record, the group commits on its branch and what the remote shows.
type implementHistory struct {
	rec    ImplementView
	groups GroupsView
}

// implementNext is what an implement Job decides, in the order it decides
// it: the start, then (when it goes on) the groups.
func implementNext(h implementHistory) ImplementStep {
	s := ImplementStart(h.rec)
	if s.Kind != Go {
		return s
	}
	return ImplementGroups(h.groups)
}

func TestImplementNext(t *testing.T) {
	planned := ImplementView{PlanDir: "openspec/changes/add-retry"}
	three := []int{1, 2, 3}
	tests := []struct {
		name string
		h    implementHistory
		want ImplementStep
	}{
		{"stopped by a person: the Job does nothing",
			implementHistory{rec: ImplementView{StoppedBy: "octocat", Unisolated: "no boundary"}},
			ImplementStep{Kind: Yield, Ending: Ending{Result: record.ResultYielded, Step: "start",
				Reason: "the item is stopped by octocat; nothing is done until /roadmap retry"}}},
		{"unisolated: the Job stops",
			implementHistory{rec: ImplementView{Unisolated: "isolation none", PlanDir: "openspec/changes/x"}},
			ImplementStep{Kind: Stop, Ending: Ending{Result: record.ResultStopped, Class: failure.Unisolated, Step: "isolation",
				Reason: "isolation none"}}},
		{"no plan: the item goes back to stage",
			implementHistory{},
			ImplementStep{Kind: Return, Ending: Ending{Result: record.ResultReturned, Class: failure.PlanWrong, Step: "plan",
				Reason: "the item has no plan: stage.plan is not set and no plan directory was given"}}},
		{"stage.plan dropped by the record's repair: the Job stops, naming the line",
			implementHistory{rec: ImplementView{PlanUnread: "line 3: stage.plan: a path outside openspec/changes/"}},
			ImplementStep{Kind: Stop, Ending: Ending{Result: record.ResultStopped, Class: failure.Unknown, Step: "plan",
				Reason: "stage.plan could not be read, and the record's repair dropped it (line 3: stage.plan: a path outside openspec/changes/): set it to the plan's directory under openspec/changes/"}}},
		{"the first Job: every group, the last one's mark with the checked mark",
			implementHistory{rec: planned, groups: GroupsView{Groups: three, Head: "b0", Remote: "b0", OnRemote: true, Published: "b0"}},
			ImplementStep{Kind: Groups, Todo: []int{1, 2, 3}, Last: 3}},
		{"groups 1 and 2 passed and marked: group 3",
			implementHistory{rec: planned, groups: GroupsView{Groups: three, Passed: map[int]string{1: "c1", 2: "c2"},
				Head: "c2", Remote: "c2", OnRemote: true, Published: "c2", LastGroup: 2}},
			ImplementStep{Kind: Groups, Todo: []int{3}, Last: 3}},
		{"every group passed and marked: to the head",
			implementHistory{rec: planned, groups: GroupsView{Groups: three, Passed: map[int]string{1: "c1", 2: "c2", 3: "c3"},
				Head: "c3", Remote: "c3", OnRemote: true, Published: "c3", LastGroup: 3}},
			ImplementStep{Kind: AtHead}},
		{"stopped in group 2 (implement.stopped): the next Job goes on with it",
			implementHistory{rec: planned, groups: GroupsView{Groups: three, Passed: map[int]string{1: "c1"},
				Head: "c1", Remote: "c1", OnRemote: true, Published: "c1", LastGroup: 1}},
			ImplementStep{Kind: Groups, Todo: []int{2, 3}, Last: 3}},
		{"the plan's order, not the numbers': the last to run is not the highest",
			implementHistory{rec: planned, groups: GroupsView{Groups: []int{1, 3, 2}, Passed: map[int]string{1: "c1"},
				Head: "c1", Remote: "c1", OnRemote: true, Published: "c1", LastGroup: 1}},
			ImplementStep{Kind: Groups, Todo: []int{3, 2}, Last: 2}},
		{"only groups without a commit, wherever they are in the plan",
			implementHistory{rec: planned, groups: GroupsView{Groups: []int{1, 2, 3, 4}, Passed: map[int]string{1: "c1", 3: "c3"},
				Head: "c3", Remote: "c3", OnRemote: true, Published: "c3", LastGroup: 3}},
			ImplementStep{Kind: Groups, Todo: []int{2, 4}, Last: 4}},
		{"group 2 pushed, its mark lost with the Job: the mark, never a second push",
			implementHistory{rec: planned, groups: GroupsView{Groups: three, Passed: map[int]string{1: "c1", 2: "c2"},
				Head: "c2", Remote: "c2", OnRemote: true, Published: "c1", LastGroup: 1}},
			ImplementStep{Kind: Groups, Mark: &Mark{Published: "c2", Group: 2, SHA: "c2"}, Todo: []int{3}, Last: 3}},
		{"the head pushed and published, implement.group behind: the group's mark",
			implementHistory{rec: planned, groups: GroupsView{Groups: three, Passed: map[int]string{1: "c1", 2: "c2", 3: "c3"},
				Head: "c3", Remote: "c3", OnRemote: true, Published: "c3", LastGroup: 2}},
			ImplementStep{Kind: AtHead, Mark: &Mark{Published: "c3", Group: 3, SHA: "c3"}}},
		{"the head pushed without its published mark, the groups marked: only the published mark",
			implementHistory{rec: planned, groups: GroupsView{Groups: three, Passed: map[int]string{1: "c1"},
				Head: "a1", Remote: "a1", OnRemote: true, Published: "c1", LastGroup: 1}},
			ImplementStep{Kind: Groups, Mark: &Mark{Published: "a1"}, Todo: []int{2, 3}, Last: 3}},
		{"group 2 committed but not pushed: no mark, the push is the group's",
			implementHistory{rec: planned, groups: GroupsView{Groups: three, Passed: map[int]string{1: "c1", 2: "c2"},
				Head: "c2", Remote: "c1", OnRemote: true, Published: "c1", LastGroup: 1}},
			ImplementStep{Kind: Groups, Todo: []int{3}, Last: 3}},
		{"the branch not on the remote: no mark, whatever sha the answer carried",
			implementHistory{rec: planned, groups: GroupsView{Groups: three, Passed: map[int]string{1: "c1"}, Head: "c1", Remote: "c1", LastGroup: 0}},
			ImplementStep{Kind: Groups, Todo: []int{2, 3}, Last: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, implementNext(tt.h)); diff != "" {
				t.Errorf("next step (-want +got):\n%s", diff)
			}
		})
	}
}
