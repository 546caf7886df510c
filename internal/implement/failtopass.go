package implement

import (
	"context"
	"fmt"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/checks"
	"github.com/roadmap-dev/roadmap/internal/f2p"
	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/ready"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// failToPass is the second half of a group's checks, run once the group's
// checks pass at the head: each `fails` command must fail on the tree before
// the group with the group's test files laid over it. The tree before the
// group and the judgement are internal/f2p's, the PR check's too, so both
// judge a group alike. A command that passes there fails the check with
// that evidence, which the agent's repair round gets like any failed check's
// log. Whatever keeps the before tree from being made is recorded as not
// checked and fails nothing.
func (r *runner) failToPass(ctx context.Context, g plan.Group) (bool, string, error) {
	cmds := g.FailToPass()
	if len(cmds) == 0 {
		return true, "", nil
	}
	res, log, err := r.runBefore(ctx, g, cmds)
	if err != nil {
		if ctx.Err() != nil {
			return false, "", err
		}
		res = ready.F2P{Status: ready.F2PNotChecked, Detail: r.o.Mask(err.Error())}
	}
	ok := r.ready.SetF2P(g.Number, res)
	r.j.Event(trace.Event{Type: trace.TypePhase, Phase: trace.PhaseFailToPass, Group: g.Number, Step: groupStep(g),
		Outcome: res.Status, Reason: res.Detail})
	r.j.Logf("roadmap: group %d: fail-to-pass %s: %s", g.Number, res.Status, res.Detail)
	return ok, log, nil
}

func (r *runner) runBefore(ctx context.Context, g plan.Group, cmds []string) (ready.F2P, string, error) {
	o := r.o
	// HEAD has not moved since the group started (the agent never commits):
	// the group has no commit yet, and its change is the work tree.
	span, err := f2p.BeforeGroup(ctx, o.Repo, o.Remote+"/"+o.Base, "HEAD", g.Number)
	if err != nil {
		return ready.F2P{}, "", fmt.Errorf("the commit before the group: %w", err)
	}
	if o.BeforeTree == nil {
		return ready.F2P{Status: ready.F2PNotChecked, Detail: "no isolation boundary for the tree before the group"}, "", nil
	}
	tree, err := o.Repo.WorkTreeTree(ctx)
	if err != nil {
		return ready.F2P{}, "", fmt.Errorf("the group's tree: %w", err)
	}
	// The after half: the group's checks, the `fails` commands among them,
	// passed at the head before failToPass was called.
	after := make([]f2p.Outcome, 0, len(cmds))
	for _, c := range cmds {
		after = append(after, f2p.Outcome{Command: c})
	}
	run := func(ctx context.Context, dir string, cmds []string) ([]f2p.Outcome, error) {
		runner, ws, closeFn, err := o.BeforeTree(ctx, dir)
		if err != nil {
			return nil, fmt.Errorf("the tree before the group: %w", err)
		}
		defer func() {
			if err := closeFn(); err != nil {
				r.j.Logf("roadmap: close the boundary of the tree before group %d: %v", g.Number, err)
			}
		}()
		rep, err := checks.RunFailing(ctx, runner, o.Split, ws, cmds, checks.Options{Mask: o.Mask, Timeout: o.CheckTimeout})
		if err != nil {
			return nil, fmt.Errorf("before the group: %w", err)
		}
		return f2p.ReportOutcomes(rep), nil
	}
	out, err := f2p.GroupCheck{Repo: o.Repo, Span: span, Target: tree, TempDir: o.TempDir, Fails: cmds, Run: run, After: after}.Check(ctx)
	if err != nil {
		return ready.F2P{}, "", err
	}
	var parts []string
	for _, v := range out.Verdicts {
		// No check_run event: a before run that failed is the check holding,
		// and the step summary would show it as the group's failing command.
		if v.Held {
			parts = append(parts, fmt.Sprintf("`%s` failed before the group's change (exit %d)", v.Command, v.Before.ExitCode))
		} else {
			parts = append(parts, fmt.Sprintf("`%s` passed before the group's change: the test does not test it", v.Command))
		}
	}
	if len(out.Overlay) > 0 {
		parts = append(parts, fmt.Sprintf("test files laid over %s: %s", short(out.Before), strings.Join(out.Overlay, ", ")))
	} else {
		parts = append(parts, fmt.Sprintf("no test file of the group to lay over %s", short(out.Before)))
	}
	res := ready.F2P{Status: ready.F2PHeld, Detail: o.Mask(strings.Join(parts, "; "))}
	if out.Held {
		return res, "", nil
	}
	res.Status = ready.F2PFailed
	log := fmt.Sprintf("fail-to-pass: %s passed before the group's change (the tree at %s with the group's test files): the test does not test it. "+
		"Make the test fail without the change and pass with it.\n%s", out.Failed, short(out.Before), out.Log)
	return res, o.Mask(log), nil
}
