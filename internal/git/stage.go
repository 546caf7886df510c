package git

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// TrailerStageRound marks the commit of a plan round stage pushed: a killed
// stage Job finds the rounds it already paid for.
const TrailerStageRound = "Roadmap-Stage-Round"

// CommitPlanRound commits the work tree as plan round n, with a
// `Roadmap-Stage-Round: n` trailer, and returns its sha. It commits even
// when the round changed nothing: the trailer records the round.
func (r *Repo) CommitPlanRound(ctx context.Context, n int, m Message) (string, error) {
	if n <= 0 {
		return "", fmt.Errorf("commit plan round %d: rounds start at 1", n)
	}
	sha, err := r.commit(ctx, m, true, TrailerStageRound+": "+strconv.Itoa(n))
	if err != nil {
		return "", fmt.Errorf("commit plan round %d: %w", n, err)
	}
	return sha, nil
}

// PlanRounds reads the `Roadmap-Stage-Round` trailers in base..HEAD and
// returns the highest round and its commit (0 and "" when none).
func (r *Repo) PlanRounds(ctx context.Context, base string) (int, string, error) {
	out, err := r.run(ctx, nil, "log", "--format=%H%x00%(trailers:key="+TrailerStageRound+",valueonly,separator=%x2C)%x00",
		"--end-of-options", base+"..HEAD")
	if err != nil {
		return 0, "", fmt.Errorf("read plan rounds since %s: %w", base, err)
	}
	best, at := 0, ""
	fields := strings.Split(string(out), "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		for _, v := range strings.Split(fields[i+1], ",") {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err == nil && n > best {
				best, at = n, strings.TrimSpace(fields[i])
			}
		}
	}
	return best, at, nil
}

// DiscardOutside restores every change in the work tree outside the
// directory keep (slash-separated, relative to the root): tracked files go
// back to HEAD, untracked ones are removed. It returns the paths it
// discarded. Stage uses it after the planner: only the plan's files may
// change.
func (r *Repo) DiscardOutside(ctx context.Context, keep string) ([]string, error) {
	prefix := strings.TrimSuffix(keep, "/") + "/"
	return r.discard(ctx, "outside "+keep, func(p string) bool { return !strings.HasPrefix(p, prefix) })
}

// DiscardInside undoes every change under dir (slash-separated, relative to
// the root) in the index and the work tree, as DiscardOutside does outside
// it, and returns the paths it discarded. Implement uses it after an agent
// step: the approved plan is not the agent's to change.
func (r *Repo) DiscardInside(ctx context.Context, dir string) ([]string, error) {
	prefix := strings.TrimSuffix(dir, "/") + "/"
	return r.discard(ctx, "inside "+dir, func(p string) bool { return strings.HasPrefix(p, prefix) })
}

// discard restores the changed paths match selects to HEAD and removes the
// untracked ones; where says which in errors.
func (r *Repo) discard(ctx context.Context, where string, match func(path string) bool) ([]string, error) {
	changes, err := r.Status(ctx)
	if err != nil {
		return nil, err
	}
	var tracked, untracked, all []string
	for _, c := range changes {
		if !match(c.Path) {
			continue
		}
		all = append(all, c.Path)
		if c.XY == "??" {
			untracked = append(untracked, c.Path)
		} else {
			tracked = append(tracked, c.Path)
		}
	}
	if len(tracked) > 0 {
		args := append([]string{"restore", "--no-recurse-submodules", "--source=HEAD", "--staged", "--worktree", "--"}, tracked...)
		if _, err := r.run(ctx, nil, args...); err != nil {
			return all, fmt.Errorf("restore changes %s: %w", where, err)
		}
	}
	if len(untracked) > 0 {
		// -f twice: an untracked repository nested among the paths is
		// removed too, as any other file there (one -f skips it, and the
		// commit that follows would refuse it).
		args := append([]string{"clean", "-f", "-f", "-q", "--"}, untracked...)
		if _, err := r.run(ctx, nil, args...); err != nil {
			return all, fmt.Errorf("remove files %s: %w", where, err)
		}
	}
	return all, nil
}

// PathExists reports whether path (slash-separated, relative to the root)
// exists in the tree of rev.
func (r *Repo) PathExists(ctx context.Context, rev, path string) (bool, error) {
	_, err := r.run(ctx, nil, "cat-file", "-e", "--end-of-options", rev+":"+path)
	if err == nil {
		return true, nil
	}
	var ge *Error
	if errors.As(err, &ge) && (ge.ExitCode == 1 || ge.ExitCode == 128) {
		return false, nil
	}
	return false, fmt.Errorf("look up %s at %s: %w", path, rev, err)
}

// maxConfigBlob bounds ReadAt: it reads configuration, not data.
const maxConfigBlob = 1 << 20

// ReadAt returns the content of path (slash-separated, relative to the
// root) in the tree of rev; found is false when rev has no such file. It
// reads the object database, never the work tree: what a commit holds, not
// what a model may have put on disk since.
//
// The object's size is asked first (the same one git process PathExists
// would be), so a blob over the bound is refused unread.
func (r *Repo) ReadAt(ctx context.Context, rev, path string) (data []byte, found bool, err error) {
	sz, err := r.run(ctx, nil, "cat-file", "-s", "--end-of-options", rev+":"+path)
	if err != nil {
		var ge *Error
		if errors.As(err, &ge) && (ge.ExitCode == 1 || ge.ExitCode == 128) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("look up %s at %s: %w", path, rev, err)
	}
	if n, perr := strconv.ParseInt(strings.TrimSpace(string(sz)), 10, 64); perr != nil || n > maxConfigBlob {
		return nil, false, fmt.Errorf("read %s at %s: %s bytes, more than %d", path, rev, strings.TrimSpace(string(sz)), maxConfigBlob)
	}
	out, err := r.run(ctx, nil, "cat-file", "blob", "--end-of-options", rev+":"+path)
	if err != nil {
		return nil, false, fmt.Errorf("read %s at %s: %w", path, rev, err)
	}
	if len(out) > maxConfigBlob {
		return nil, false, fmt.Errorf("read %s at %s: %d bytes, more than %d", path, rev, len(out), maxConfigBlob)
	}
	return out, true, nil
}
