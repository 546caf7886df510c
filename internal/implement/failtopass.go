package implement

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/checks"
	"github.com/roadmap-dev/roadmap/internal/f2p"
	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// Fail-to-pass states of a group, as the trace event's Outcome and the PR
// comment say them.
const (
	f2pHeld       = "held"        // every `fails` command failed before the group and passes after
	f2pFailed     = "failed"      // one passed before the group: its test does not test the change
	f2pNotChecked = "not checked" // the before tree could not be had
)

// groupF2P is one group's fail-to-pass in this Job.
type groupF2P struct {
	status string
	detail string // the evidence or the reason, one line
}

// groupBefore is the commit the group's change starts from: the newest
// group commit on the branch, else where the branch left the base. A WIP
// commit of an earlier Job is part of the group's change, not before it.
func (r *runner) groupBefore(ctx context.Context) (string, error) {
	o := r.o
	passed, err := o.Repo.GroupCommits(ctx, o.Remote+"/"+o.Base)
	if err != nil {
		return "", err
	}
	last := 0
	for n := range passed {
		last = max(last, n)
	}
	if last > 0 {
		return passed[last], nil
	}
	return o.Repo.MergeBase(ctx, o.Remote+"/"+o.Base, "HEAD")
}

// failToPass is the second half of a group's checks, run once the group's
// checks pass at the head: each `fails` command must fail on the tree before
// the group with the group's test files laid over it. A command that passes
// there fails the check with that evidence, which the agent's repair round
// gets like any failed check's log. Whatever keeps the before tree from
// being made is recorded as not checked and fails nothing.
func (r *runner) failToPass(ctx context.Context, g plan.Group) (bool, string, error) {
	cmds := g.FailToPass()
	if len(cmds) == 0 {
		return true, "", nil
	}
	// HEAD has not moved since the group started: the agent never commits.
	before, err := r.groupBefore(ctx)
	var res groupF2P
	var log string
	if err == nil {
		res, log, err = r.runBefore(ctx, g, before, cmds)
	} else {
		err = fmt.Errorf("the commit before the group: %w", err)
	}
	if err != nil {
		if ctx.Err() != nil {
			return false, "", err
		}
		res = groupF2P{status: f2pNotChecked, detail: r.o.Mask(err.Error())}
	}
	if r.f2p == nil {
		r.f2p = map[int]groupF2P{}
	}
	r.f2p[g.Number] = res
	r.j.Event(trace.Event{Type: trace.TypePhase, Phase: trace.PhaseFailToPass, Group: g.Number, Step: groupStep(g),
		Outcome: res.status, Reason: res.detail})
	r.j.Logf("roadmap: group %d: fail-to-pass %s: %s", g.Number, res.status, res.detail)
	return res.status != f2pFailed, log, nil
}

func (r *runner) runBefore(ctx context.Context, g plan.Group, before string, cmds []string) (groupF2P, string, error) {
	o := r.o
	if o.BeforeTree == nil {
		return groupF2P{status: f2pNotChecked, detail: "no isolation boundary for the tree before the group"}, "", nil
	}
	tree, err := o.Repo.WorkTreeTree(ctx)
	if err != nil {
		return groupF2P{}, "", fmt.Errorf("the group's tree: %w", err)
	}
	tmp := o.TempDir
	if tmp == "" {
		tmp = os.TempDir()
	}
	wt, err := o.Repo.AddWorktree(ctx, before, tmp)
	if err != nil {
		return groupF2P{}, "", fmt.Errorf("the tree before the group: %w", err)
	}
	defer wt.Remove(ctx)
	overlay, err := wt.Overlay(ctx, before, tree, f2p.IsTestFile)
	if err != nil {
		return groupF2P{}, "", fmt.Errorf("the group's test files: %w", err)
	}
	runner, ws, closeFn, err := o.BeforeTree(ctx, wt.Dir)
	if err != nil {
		return groupF2P{}, "", fmt.Errorf("the tree before the group: %w", err)
	}
	defer func() {
		if err := closeFn(); err != nil {
			r.j.Logf("roadmap: close the boundary of the tree before group %d: %v", g.Number, err)
		}
	}()
	rep, err := checks.RunFailing(ctx, runner, o.Split, ws, cmds, checks.Options{Mask: o.Mask, Timeout: o.CheckTimeout})
	if err != nil {
		return groupF2P{}, "", fmt.Errorf("before the group: %w", err)
	}
	var parts []string
	for _, c := range rep.Results {
		// No check_run event: a before run that failed is the check holding,
		// and the step summary would show it as the group's failing command.
		if c.Held {
			parts = append(parts, fmt.Sprintf("`%s` failed before the group's change (exit %d)", c.Command, c.ExitCode))
		} else {
			parts = append(parts, fmt.Sprintf("`%s` passed before the group's change: the test does not test it", c.Command))
		}
	}
	if len(overlay) > 0 {
		parts = append(parts, fmt.Sprintf("test files laid over %s: %s", short(before), strings.Join(overlay, ", ")))
	} else {
		parts = append(parts, fmt.Sprintf("no test file of the group to lay over %s", short(before)))
	}
	res := groupF2P{status: f2pHeld, detail: o.Mask(strings.Join(parts, "; "))}
	if rep.Passed {
		return res, "", nil
	}
	res.status = f2pFailed
	log := fmt.Sprintf("fail-to-pass: %s passed before the group's change (the tree at %s with the group's test files): the test does not test it. "+
		"Make the test fail without the change and pass with it.\n%s", rep.FailedCommand, short(before), rep.Log)
	return res, o.Mask(log), nil
}

// failToPassLines are the PR comment's lines on this Job's groups'
// fail-to-pass; "" when no group of the Job had a `fails` command.
func (r *runner) failToPassLines() string {
	if len(r.f2p) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nFail-to-pass of this Job's groups:\n\n")
	groups := make([]int, 0, len(r.f2p))
	for n := range r.f2p {
		groups = append(groups, n)
	}
	sort.Ints(groups)
	for _, n := range groups {
		f := r.f2p[n]
		fmt.Fprintf(&b, "- group %d: **%s**: %s\n", n, f.status, oneLine(f.detail))
	}
	return b.String()
}
