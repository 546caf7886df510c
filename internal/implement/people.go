package implement

import (
	"context"

	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/next"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// unlabelledEnd ends, before anything is written, a Job a person's act
// took back before it started: its trigger label removed (next.Unlabelled),
// or a reopening that finds no closing holding the item (next.NotHeld). No
// mark, no number, no spend; the issue and the record were read at the
// start anyway.
func (r *runner) unlabelledEnd(ctx context.Context) (Result, bool) {
	last, _ := r.j.Rec.Failure()
	t := next.Trigger{Label: r.o.TriggerLabel, Labels: r.j.Issue.Labels, Reopened: r.o.Reopened, Last: last}
	e, gone := next.Unlabelled(t)
	if !gone {
		e, gone = next.NotHeld(t)
	}
	if !gone {
		return Result{}, false
	}
	r.j.Event(trace.Event{Type: trace.TypePhase, Phase: trace.PhaseYielded, Step: e.Step, Reason: e.Reason, Outcome: string(e.Class)})
	r.j.Command("notice", failure.TypedLine(failure.Result(e.Result), e.Class, e.Reason))
	r.j.Release(ctx)
	res := Result{Result: e.Result, Failure: string(e.Class), Reason: e.Reason, Spend: r.j.Total()}
	r.outputs(res)
	return res, true
}

// people reads what people did to the item's issue and PR at a safe point
// (before a group's work, before a push, before ready) and holds the item
// when one of them is closed, and ends it when the PR is merged
// (next.People). Both reads are conditional GETs of issues the Job read or
// wrote before: free (a 304) while nothing changed, so noticing a person's
// act costs at most one counted request per Job for each of the two. The
// PR read as an issue says whether it was merged (pull_request.merged_at):
// no read of the pull itself.
func (r *runner) people(ctx context.Context, step string) (ending, bool) {
	o := r.o
	v := next.PeopleView{Issue: o.Issue, PR: r.pr.Number}
	for _, g := range r.planGroups {
		if g > r.lastGroup {
			v.Left = append(v.Left, g)
		}
	}
	is, err := o.GitHub.IssueState(ctx, o.Issue)
	if err != nil {
		return r.fail(ctx, step, err), false
	}
	v.IssueState = is.State
	if v.PR != 0 {
		// The PR read as an issue: its state without its head, which every
		// push changes (a read of the pull would be paid after each push).
		// Read when the issue is closed too: a merge closes the issue the
		// PR's body names, and the merge decides.
		pr, err := o.GitHub.IssueState(ctx, v.PR)
		if err != nil {
			return r.fail(ctx, step, err), false
		}
		v.PRState, v.PRMerged = pr.State, pr.Merged
	}
	if e, held := next.People(v); held {
		r.j.Logf("roadmap: %s: %s", step, e.Reason)
		return stepEnding(e), false
	}
	return ending{}, true
}

// held reports whether end is a person's act that holds or ends the item:
// nothing is pushed after it, not even a WIP commit.
func held(end ending) bool {
	return end.class == failure.PRClosed || end.class == failure.IssueClosed || end.class == failure.PRMerged
}

// heldDoing is what the record comment on the issue says of a held item:
// the note a person reads to learn why the work stopped and how to resume.
func heldDoing(end ending) string {
	return "held: " + end.reason
}
