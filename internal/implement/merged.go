package implement

import (
	"context"
	"errors"
	"fmt"

	"github.com/roadmap-dev/roadmap/internal/checks"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/git"
	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// mergeState is what the merged check last held: the head and the base's
// tip the scoped checks passed on merged, and the plan atHead works on
// (the check runs again there when the base moves before ready).
type mergeState struct {
	head, base string
	change     *plan.Change
}

// mergedStep is the step label of the merged check: the trace, the log,
// implement.stopped.
const mergedStep = "merged check"

// maxBaseMoves bounds how often the base may move under one Job's merged
// checks before ready; past it the Job yields and a continuation checks on
// whatever the base is then.
const maxBaseMoves = 3

// mergedCheck checks what merging the PR would make: the head merged with
// the base's tip as the remote has it now (two green branches with no
// textual conflict can still break the base: one renames a function, the
// other calls the old name). A head that contains the base costs nothing
// more: its scoped checks were the merged checks. Else the merge is made as
// a commit no ref names (git merge-tree), checked out in a scratch worktree,
// and the scoped check commands run there behind the isolation boundary;
// the agent's work tree is not touched. A conflict ends conflict with the
// files; a failure merges the base into the branch and ends checks_failed
// with the log, which atHead repairs as any failure at the head.
func (r *runner) mergedCheck(ctx context.Context, change *plan.Change) (ending, bool) {
	o := r.o
	base, end, ok := r.baseTip(ctx)
	if !ok {
		return end, false
	}
	if r.merge.head == r.head && r.merge.base == base {
		return ending{}, true
	}
	// A continuation at the head the scoped checks passed at, on the base
	// the merged check passed on, runs nothing again.
	checked, _ := r.j.Rec.CheckedSHA()
	if mb, _ := r.j.Rec.MergedBase(); string(checked) == r.head && string(mb) == base {
		r.j.Logf("roadmap: merged check: passed at %s on %s/%s at %s already (implement.merged_base); skipping it", short(r.head), o.Remote, o.Base, short(base))
		r.merge.head, r.merge.base = r.head, base
		return ending{}, true
	}
	contains, err := o.Repo.IsAncestor(ctx, base, r.head)
	if err != nil {
		return r.fail(ctx, mergedStep, err), false
	}
	if contains {
		r.j.Logf("roadmap: merged check: the head %s contains %s/%s at %s; the checks at the head were the merged checks", short(r.head), o.Remote, o.Base, short(base))
		r.merged(base)
		return ending{}, true
	}
	if o.BeforeTree == nil {
		// No boundary for a second tree: the base is merged into the
		// branch, and the scoped checks run at that head, in the Job's
		// own boundary.
		r.j.Logf("roadmap: merged check: %s/%s moved to %s and there is no isolation boundary for a scratch tree; merging it into the branch and checking the head", o.Remote, o.Base, short(base))
		if end, ok := r.mergeBase(ctx); !ok {
			return end, false
		}
		if end, ok := r.scopedChecks(ctx, change); !ok {
			return end, false
		}
		r.merged(base)
		return ending{}, true
	}
	defer r.j.Section("roadmap: merged check: %s merged with %s/%s at %s", short(r.head), o.Remote, o.Base, short(base))()
	r.j.Doing = fmt.Sprintf("checking %s merged with %s", short(r.head), o.Base)
	merge, err := o.Repo.MergedCommit(ctx, r.head, base, fmt.Sprintf("roadmap: merged check of %s with %s/%s", short(r.head), o.Remote, o.Base))
	var c *git.Conflict
	if errors.As(err, &c) {
		return ending{result: record.ResultStopped, class: failure.Conflict, step: mergedStep,
			reason: fmt.Sprintf("the head %s conflicts with %s/%s at %s", short(r.head), o.Remote, o.Base, short(base)), conflict: c.Files}, false
	}
	if err != nil {
		return r.fail(ctx, mergedStep, err), false
	}
	rep, err := r.runMerged(ctx, change, merge)
	if err != nil {
		return r.fail(ctx, mergedStep, err), false
	}
	if !rep.Passed {
		reason := fmt.Sprintf("%s exited %d on the head %s merged with %s/%s at %s (merged check)", rep.FailedCommand, rep.ExitCode, short(r.head), o.Remote, o.Base, short(base))
		r.j.Logf("roadmap: merged check failed: %s; the base is merged into the branch and the head repaired", reason)
		r.ci.Note("the merged check failed: " + reason)
		if end, ok := r.mergeBase(ctx); !ok {
			return end, false
		}
		return ending{result: record.ResultStopped, class: failure.ChecksFailed, step: mergedStep, reason: reason,
			checkLog: "merged check (the head merged with " + o.Remote + "/" + o.Base + " at " + short(base) + "):\n" + rep.Log}, false
	}
	r.j.Logf("roadmap: merged check passed: %s merged with %s/%s at %s", short(r.head), o.Remote, o.Base, short(base))
	r.ci.Note(fmt.Sprintf("the scoped checks passed on %s merged with %s at %s", short(r.head), o.Base, short(base)))
	r.merged(base)
	return ending{}, true
}

// merged notes that the scoped checks hold on the head merged with base;
// implement.merged_base rides on the next mark.
func (r *runner) merged(base string) {
	r.merge.head, r.merge.base = r.head, base
	var ch record.Changes
	ch.SetMergedBase(record.SHA(base))
	r.pending.Merge(ch)
}

// baseTip is the base branch's tip on the remote (git ls-remote, no API
// request), its commit fetched when the repository lacks it. The fetch goes
// to a ref of roadmap's own: the tracking branch the review's diff is taken
// against stays where the branch forked.
func (r *runner) baseTip(ctx context.Context) (string, ending, bool) {
	o := r.o
	sha, found, err := o.Repo.LsRemote(ctx, o.Remote, o.Base)
	if err != nil {
		return "", r.fail(ctx, mergedStep, err), false
	}
	if !found {
		return "", ending{result: record.ResultStopped, class: failure.Unknown, step: mergedStep,
			reason: fmt.Sprintf("the base branch %s is not on %s", o.Base, o.Remote)}, false
	}
	if _, err := o.Repo.RevParse(ctx, sha); err == nil {
		return sha, ending{}, true
	}
	sha, err = o.Repo.FetchTo(ctx, o.Remote, o.Base, "refs/roadmap/merged-base")
	if err != nil {
		return "", r.fail(ctx, mergedStep, err), false
	}
	return sha, ending{}, true
}

// runMerged checks the merge commit out in a scratch worktree and runs the
// scoped check commands there through the boundary opened on it.
func (r *runner) runMerged(ctx context.Context, change *plan.Change, merge string) (checks.Report, error) {
	o := r.o
	wt, err := o.Repo.AddWorktree(ctx, merge, o.TempDir)
	if err != nil {
		return checks.Report{}, err
	}
	defer wt.Remove(ctx)
	runner, ws, closeFn, err := o.BeforeTree(ctx, wt.Dir)
	if err != nil {
		return checks.Report{}, fmt.Errorf("the boundary of the merged tree: %w", err)
	}
	defer func() {
		if err := closeFn(); err != nil {
			r.j.Logf("roadmap: close the boundary of the merged tree: %v", err)
		}
	}()
	start := o.Clock.Now()
	rep, err := checks.Run(ctx, runner, o.Split, ws, headCommands(change, o.CheckCommands), checks.Options{Mask: o.Mask, Timeout: o.CheckTimeout})
	for _, c := range rep.Results {
		r.j.Event(trace.Event{Type: trace.TypeCheckRun, Step: mergedStep, Command: c.Command, ExitCode: c.ExitCode, Duration: c.Duration})
	}
	r.j.Event(trace.Event{Type: trace.TypePhase, Phase: trace.PhaseChecks, Step: mergedStep, Duration: o.Clock.Now().Sub(start)})
	if !rep.Passed && err == nil {
		r.j.Command("error", failure.ChecksFailedLine(rep.FailedCommand, rep.ExitCode)+" ("+mergedStep+")")
	}
	return rep, err
}

// mergeBase brings the base into the branch with a merge commit, pushed at
// once. A merge, not a rebase: the group commits are published (their shas
// in the record, the PR, the review ledger) and a rebase would rewrite them
// and need a force push, which roadmap never does; a merge keeps every
// published commit and pushes fast-forward. The tracking branch moves to
// the base merged, so the review's diff is the PR's own again.
func (r *runner) mergeBase(ctx context.Context) (ending, bool) {
	o := r.o
	if _, err := o.Repo.Fetch(ctx, o.Remote, o.Base); err != nil {
		return r.fail(ctx, mergedStep, err), false
	}
	if err := o.Repo.Merge(ctx, o.Remote+"/"+o.Base); err != nil {
		var c *git.Conflict
		if errors.As(err, &c) {
			_ = o.Repo.AbortMerge(ctx)
			return ending{result: record.ResultStopped, class: failure.Conflict, step: mergedStep,
				reason: fmt.Sprintf("merging %s/%s into the branch conflicts", o.Remote, o.Base), conflict: c.Files}, false
		}
		return r.fail(ctx, mergedStep, err), false
	}
	head, err := o.Repo.Head(ctx)
	if err != nil {
		return r.fail(ctx, mergedStep, err), false
	}
	r.head = head
	if end, ok := r.push(ctx, plan.Group{Title: "merge base"}); !ok {
		return end, false
	}
	var ch record.Changes
	ch.SetSHA(record.SHA(head))
	ch.SetPublishedSHA(record.SHA(head))
	r.pending.Merge(ch)
	r.j.Logf("roadmap: merged %s/%s into the branch in %s", o.Remote, o.Base, short(head))
	return ending{}, true
}

// baseStill is read right before the PR is marked ready: the base's tip
// once more (git ls-remote, no API request). Ready only on the base the
// merged check passed on; a base that moved since is checked again first.
// A check that moves the head (the base merged into it) sends atHead round
// again, so the new head is reviewed and watched before ready.
func (r *runner) baseStill(ctx context.Context) (ending, bool) {
	o := r.o
	for moves := 0; ; moves++ {
		tip, found, err := o.Repo.LsRemote(ctx, o.Remote, o.Base)
		if err != nil {
			return r.fail(ctx, "mark ready", err), false
		}
		if found && tip == r.merge.base && r.merge.head == r.head {
			return ending{}, true
		}
		if moves == maxBaseMoves {
			return ending{result: record.ResultYielded, step: mergedStep,
				reason: fmt.Sprintf("%s/%s moved %d times under the merged check; a continuation checks again", o.Remote, o.Base, moves)}, false
		}
		r.j.Logf("roadmap: %s/%s is at %s, not %s the merged check passed on: checking again before ready", o.Remote, o.Base, short(tip), short(r.merge.base))
		head := r.head
		if end, ok := r.mergedCheck(ctx, r.merge.change); !ok {
			return end, false
		}
		if r.head != head {
			// Yielded, should it leave atHead: the next Job watches the
			// new head.
			return ending{result: record.ResultYielded, step: mergedStep, again: true,
				reason: fmt.Sprintf("the head moved to %s to take in %s/%s; its checks and review run before ready", short(r.head), o.Remote, o.Base)}, false
		}
	}
}
