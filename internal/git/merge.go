package git

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// MergedCommit merges b into a the way `git merge` would, without touching
// the index, the work tree or any ref (git merge-tree --write-tree), and
// returns a commit of the merged tree whose parents are a and b: a revision
// a scratch worktree can check out. A merge that conflicts gives a
// *Conflict (Op "merge") naming the conflicting files; nothing is left in
// progress.
func (r *Repo) MergedCommit(ctx context.Context, a, b, message string) (string, error) {
	out, err := r.run(ctx, nil, "merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", a, b)
	var ge *Error
	if errors.As(err, &ge) && ge.ExitCode == 1 {
		// Exit 1 is a conflict: the tree, then the conflicting paths,
		// each NUL-terminated.
		_, paths, _ := strings.Cut(string(out), "\x00")
		return "", &Conflict{Op: "merge", Onto: a, Files: splitZ(paths), Err: err}
	}
	if err != nil {
		return "", fmt.Errorf("merge %s into %s: %w", b, a, err)
	}
	tree, _, _ := strings.Cut(string(out), "\x00")
	sha, err := r.output(ctx, "commit-tree", "-p", a, "-p", b, "-m", message, tree)
	if err != nil {
		return "", fmt.Errorf("commit the merge of %s into %s: %w", b, a, err)
	}
	return sha, nil
}

// FetchTo fetches branch from remote into ref and returns its sha. ref is
// one of roadmap's own (refs/roadmap/…): the tracking branch stays where it
// was.
func (r *Repo) FetchTo(ctx context.Context, remote, branch, ref string) (string, error) {
	if _, err := r.runRemote(ctx, "fetch", "--quiet", "--no-tags", "--no-recurse-submodules", remote, "+refs/heads/"+branch+":"+ref); err != nil {
		return "", fmt.Errorf("fetch %s from %s: %w", branch, remote, err)
	}
	return r.RevParse(ctx, ref)
}
