package git

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Worktree is a detached worktree of a repository, outside its workspace:
// the checks build the tree before a group's change in one.
type Worktree struct {
	// Dir is the worktree's root.
	Dir  string
	repo *Repo
	tmp  string
}

// AddWorktree checks rev out, detached, in a new directory under tmpRoot.
func (r *Repo) AddWorktree(ctx context.Context, rev, tmpRoot string) (*Worktree, error) {
	tmp, err := os.MkdirTemp(tmpRoot, "roadmap-worktree-")
	if err != nil {
		return nil, fmt.Errorf("make a worktree: %w", err)
	}
	w := &Worktree{Dir: filepath.Join(tmp, "tree"), repo: r, tmp: tmp}
	if _, err := r.run(ctx, nil, "worktree", "add", "--detach", "--quiet", w.Dir, rev); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("make a worktree at %s: %w", rev, err)
	}
	return w, nil
}

// Remove deletes the worktree and prunes it from the repository, best effort
// (bounded: a cancelled context still cleans up).
func (w *Worktree) Remove(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	_, _ = w.repo.run(ctx, nil, "worktree", "remove", "--force", w.Dir)
	_ = os.RemoveAll(w.tmp)
	_, _ = w.repo.run(ctx, nil, "worktree", "prune")
}

// Overlay lays over the worktree target's version of every file that differs
// between before and target and that keep selects (a file target deleted is
// removed), and returns their paths.
func (w *Worktree) Overlay(ctx context.Context, before, target string, keep func(path string) bool) ([]string, error) {
	in := &Repo{Dir: w.Dir, Env: w.repo.Env}
	out, err := in.run(ctx, nil, "diff", "--name-status", "-z", "--no-renames", "--ignore-submodules=all", before, target, "--")
	if err != nil {
		return nil, fmt.Errorf("list the files %s..%s: %w", before, target, err)
	}
	var changed, gone, all []string
	fields := strings.Split(string(out), "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		status, path := fields[i], fields[i+1]
		if !keep(path) {
			continue
		}
		all = append(all, path)
		if strings.HasPrefix(status, "D") {
			gone = append(gone, path)
		} else {
			changed = append(changed, path)
		}
	}
	if len(changed) > 0 {
		// Paths on stdin: a large change's list may not fit on a command line.
		paths := []byte(strings.Join(changed, "\x00") + "\x00")
		if _, err := in.run(ctx, paths, "--literal-pathspecs", "checkout", "--quiet", "--no-recurse-submodules", "--pathspec-from-file=-", "--pathspec-file-nul", target); err != nil {
			return nil, fmt.Errorf("lay %s's files over the worktree: %w", target, err)
		}
	}
	if len(gone) > 0 {
		// Inside an os.Root: target may have made a directory on the path a
		// symlink out of the worktree, and the remove must not follow it.
		root, err := os.OpenRoot(w.Dir)
		if err != nil {
			return nil, fmt.Errorf("open the worktree: %w", err)
		}
		defer root.Close()
		for _, p := range gone {
			if err := root.Remove(filepath.FromSlash(p)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("remove %s from the worktree: %w", p, err)
			}
		}
	}
	return all, nil
}
