package prcheck

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/f2p"

	"github.com/roadmap-dev/roadmap/internal/checks"
	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/policy"
)

// failToPass checks the before half of each passing group's `fails`
// commands in a git worktree: the merge base with the base branch (or, for
// a group implement committed, the commit before the group's), with the
// change's test files laid over it. Whatever stops it from being decided is
// recorded as "not checked" with the reason; it never fails a group.
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
	fb, reason := j.f2pBase(ctx)
	for _, i := range todo {
		if reason != "" {
			res[i].FailToPass.Reason = reason
			continue
		}
		if err := j.f2pGroup(ctx, fb, &res[i], groups[i]); err != nil {
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

// f2pBasis is what every group's before tree starts from.
type f2pBasis struct {
	mergeBase string
	groupSHA  map[int]string // implement's group commits in mergeBase..tree
}

// f2pBase finds the merge base of the work tree with the base branch; the
// reason says why fail-to-pass cannot be decided when it cannot.
func (j *job) f2pBase(ctx context.Context) (f2pBasis, string) {
	if j.repo == nil {
		return f2pBasis{}, "the workspace is not a git checkout: " + j.Masker.Mask(j.repoErr.Error())
	}
	base := j.Base
	if base == "" && j.ev.PullRequest != nil {
		base = j.ev.PullRequest.BaseRef
	}
	if base == "" {
		base = j.cfg.Implement.BaseBranch
	}
	var baseSHA string
	for _, ref := range []string{"refs/remotes/origin/" + base, base} {
		if sha, err := j.repo.RevParse(ctx, ref); err == nil {
			baseSHA = sha
			break
		}
	}
	if baseSHA == "" {
		return f2pBasis{}, fmt.Sprintf("the base branch %q is not in the checkout (check out with fetch-depth: 0)", base)
	}
	mb, err := j.repo.MergeBase(ctx, baseSHA, j.tree)
	if err != nil {
		return f2pBasis{}, fmt.Sprintf("no merge base of %s and %s (a shallow checkout? use fetch-depth: 0)", base, short(j.tree))
	}
	if mb == j.tree {
		return f2pBasis{}, fmt.Sprintf("the work tree is the merge base with %s: there is no change to check", base)
	}
	gs, err := j.repo.GroupCommits(ctx, mb)
	if err != nil {
		return f2pBasis{}, j.Masker.Mask(err.Error())
	}
	return f2pBasis{mergeBase: mb, groupSHA: gs}, ""
}

// f2pGroup runs the group's `fails` commands on its before tree and joins
// them to the head's results.
func (j *job) f2pGroup(ctx context.Context, fb f2pBasis, cg *Group, g plan.Group) error {
	before, target := fb.mergeBase, j.tree
	if gc, ok := fb.groupSHA[g.Number]; ok {
		// implement's commit of this group: before it is the newest other
		// group commit among its ancestors, else the merge base.
		target = gc
		for n, sha := range fb.groupSHA {
			if n == g.Number || sha == gc {
				continue
			}
			if ok, err := j.repo.IsAncestor(ctx, sha, gc); err != nil || !ok {
				continue
			}
			if newer, err := j.repo.IsAncestor(ctx, before, sha); err == nil && newer {
				before = sha
			}
		}
	}
	wt, err := j.repo.AddWorktree(ctx, before, j.tempRoot())
	if err != nil {
		return fmt.Errorf("make the before tree: %w", err)
	}
	defer wt.Remove(ctx)
	overlay, err := wt.Overlay(ctx, before, target, f2p.IsTestFile)
	if err != nil {
		return fmt.Errorf("the change's test files: %w", err)
	}
	sub := "."
	if abs, err := filepath.Abs(j.Dir); err == nil {
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
		if rel, err := filepath.Rel(j.repoTop, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			sub = rel
		}
	}
	treeDir := filepath.Join(wt.Dir, sub)
	if _, err := os.Stat(treeDir); err != nil {
		return fmt.Errorf("the workspace %s does not exist at %s", sub, short(before))
	}
	bound, err := j.Boundary(ctx, string(j.cfg.Isolation), treeDir)
	if err != nil {
		return fmt.Errorf("the before tree: %w", err)
	}
	defer bound.Close()
	sb := policy.NewSandbox(bound, j.pol, j.Environ)
	ws, err := sb.Workspace()
	if err != nil {
		return err
	}
	rep, err := checks.RunFailing(ctx, checks.SandboxRunner(sb), policy.Split, ws, g.FailToPass(), j.opts)
	if err != nil {
		return fmt.Errorf("before the change: %w", err)
	}
	var results []checks.CommandResult
	for _, c := range cg.Commands {
		results = append(results, j.results[c.Command].rep.Results...)
	}
	joined := checks.Report{Passed: true, Results: results}.WithFailToPass(rep)
	f := F2P{Status: F2PHeld, Before: before, Overlay: overlay}
	for _, e := range joined.FailToPass {
		f.Commands = append(f.Commands, F2PEntry{Command: e.Command, BeforeExitCode: e.Before.ExitCode, Held: e.Held})
	}
	if !joined.Passed {
		f.Status = F2PFailed
		cg.Passed, cg.failed, cg.Log = false, joined.FailedCommand, joined.Log
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
