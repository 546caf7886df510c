package prcheck

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/f2p"

	"github.com/roadmap-dev/roadmap/internal/checks"
	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/policy"
)

// failToPass checks the before half of each passing group's `fails`
// commands on the tree before the group, as internal/f2p chooses and makes
// it for implement too (f2p.BeforeGroup): so the PR check and implement
// judge a group alike. Whatever stops it from being decided is recorded as
// "not checked" with the reason; it never fails a group.
func (j *job) failToPass(ctx context.Context, res []Group, groups []plan.Group) error {
	var todo []int
	for i, g := range groups {
		if len(g.FailToPass()) == 0 {
			continue
		}
		if !res[i].Passed {
			res[i].FailToPass.Reason = "the group's checks fail at the head"
			continue
		}
		todo = append(todo, i)
	}
	if len(todo) == 0 {
		return nil
	}
	base, reason := j.f2pBase(ctx)
	for _, i := range todo {
		if reason != "" {
			res[i].FailToPass.Reason = reason
			continue
		}
		if err := j.f2pGroup(ctx, base, &res[i], groups[i]); err != nil {
			if ctx.Err() != nil {
				return err
			}
			res[i].FailToPass.Reason = j.Masker.Mask(err.Error())
		}
		if f := res[i].FailToPass; f.Status == F2PNotChecked {
			j.Logf("group %d: fail-to-pass not checked: %s", groups[i].Number, f.Reason)
		} else {
			j.Logf("group %d: fail-to-pass %s", groups[i].Number, f.Status)
		}
	}
	return nil
}

// f2pBase resolves the base branch to a commit and checks that the work
// tree holds a change on top of it; the reason says why fail-to-pass cannot
// be decided when it cannot.
func (j *job) f2pBase(ctx context.Context) (string, string) {
	if j.repo == nil {
		return "", "the workspace is not a git checkout: " + j.Masker.Mask(j.repoErr.Error())
	}
	base := j.baseBranch(j.cfg)
	baseSHA := BaseCommit(ctx, j.repo, base)
	if baseSHA == "" {
		return "", fmt.Sprintf("the base branch %q is not in the checkout (check out with fetch-depth: 0)", base)
	}
	mb, err := j.repo.MergeBase(ctx, baseSHA, j.tree)
	if err != nil {
		return "", fmt.Sprintf("no merge base of %s and %s (a shallow checkout? use fetch-depth: 0)", base, short(j.tree))
	}
	if mb == j.tree {
		return "", fmt.Sprintf("the work tree is the merge base with %s: there is no change to check", base)
	}
	return baseSHA, ""
}

// f2pGroup runs the group's `fails` commands on the tree before the group,
// in the workdir's place in it, and judges them with the head's results.
func (j *job) f2pGroup(ctx context.Context, base string, cg *Group, g plan.Group) error {
	span, err := f2p.BeforeGroup(ctx, j.repo, base, j.tree, g.Number)
	if err != nil {
		return fmt.Errorf("the commit before the group: %w", err)
	}
	sub := ""
	if abs, err := filepath.Abs(j.Dir); err == nil {
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
		if rel, err := filepath.Rel(j.repoTop, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			sub = filepath.ToSlash(rel)
		}
	}
	var after []f2p.Outcome
	for _, c := range cg.Commands {
		for _, r := range j.results[c.Command].rep.Results {
			after = append(after, f2p.Outcome{Command: r.Command, ExitCode: r.ExitCode, TimedOut: r.TimedOut})
		}
	}
	run := func(ctx context.Context, dir string, cmds []string) ([]f2p.Outcome, error) {
		bound, err := j.Boundary(ctx, j.cfg, dir)
		if err != nil {
			return nil, fmt.Errorf("the before tree: %w", err)
		}
		defer bound.Close()
		sb := policy.NewSandbox(bound, j.pol, j.Environ)
		ws, err := sb.Workspace()
		if err != nil {
			return nil, err
		}
		rep, err := checks.RunFailing(ctx, checks.SandboxRunner(sb), policy.Split, ws, cmds, j.opts)
		if err != nil {
			return nil, fmt.Errorf("before the change: %w", err)
		}
		return f2p.ReportOutcomes(rep), nil
	}
	out, err := f2p.GroupCheck{Repo: j.repo, Span: span, Sub: sub, TempDir: j.tempRoot(), Fails: g.FailToPass(), Run: run, After: after}.Check(ctx)
	if err != nil {
		return err
	}
	f := F2P{Status: F2PHeld, Before: out.Before, Overlay: out.Overlay}
	for _, v := range out.Verdicts {
		f.Commands = append(f.Commands, F2PEntry{Command: v.Command, BeforeExitCode: v.Before.ExitCode, Held: v.Held})
	}
	if !out.Held {
		f.Status = F2PFailed
		cg.Passed, cg.failed, cg.Log = false, out.Failed, out.Log
		cg.why = "passed before the group's change (fail-to-pass)"
	}
	cg.FailToPass = f
	return nil
}

func (j *job) tempRoot() string {
	if t := j.Getenv("RUNNER_TEMP"); t != "" {
		return t
	}
	return os.TempDir()
}

// baseBranch is the branch the change targets: --base, else the event's
// pull request's base, else cfg's base branch.
func (j *job) baseBranch(cfg *config.Config) string {
	if j.Base != "" {
		return j.Base
	}
	if j.ev != nil && j.ev.PullRequest != nil && j.ev.PullRequest.BaseRef != "" {
		return j.ev.PullRequest.BaseRef
	}
	return cfg.Implement.BaseBranch
}
