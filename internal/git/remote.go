package git

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// PushRejected is a push the remote refused: non-fast-forward (the branch
// moved on the remote; fetch and rebase or merge, never force), the ref
// moved while the push was in flight (Raced), or another rejection such as
// a pre-receive hook or a protected branch. Output is git's stdout and
// stderr, unmasked.
type PushRejected struct {
	Branch         string
	NonFastForward bool
	// Raced: the remote took the push and then could not move the branch,
	// because another push moved it after git read it ("[remote rejected]
	// (failed to update ref)", "cannot lock ref … is at X but expected Y"):
	// a non-fast-forward the client could not see coming.
	Raced  bool
	Reason string // git's reason: "non-fast-forward", "fetch first", "failed to update ref", "pre-receive hook declined", …
	Output string
}

func (e *PushRejected) Error() string {
	return fmt.Sprintf("push %s rejected: %s", e.Branch, e.Reason)
}

// Moved reports whether the push was refused because the branch moved on
// the remote: fetch, rebase and push again.
func (e *PushRejected) Moved() bool { return e.NonFastForward || e.Raced }

// FailureClass is conflict for a branch that moved under the push (the
// taxonomy's rebase-and-push-again row); any other refusal is left to the
// classifier (a hook or a protected branch is a person's to lift).
func (e *PushRejected) FailureClass() string {
	if e.Moved() {
		return "conflict"
	}
	return ""
}

// raceReasons are the porcelain reasons of a ref the remote could not move
// because it moved under the push.
var raceReasons = []string{"failed to update ref", "failed to lock", "cannot lock ref", "incorrect old value provided"}

// Push pushes the local branch to the same name on remote, never forcing.
// A refusal is a *PushRejected; anything else (network, authentication) is an
// *Error. With SecretScan set, what the push would publish is read first,
// and a commit that holds a secret is a *SecretInPush: git is not asked to
// push at all.
func (r *Repo) Push(ctx context.Context, remote, branch string) error {
	ref := "refs/heads/" + branch
	if r.SecretScan != nil {
		if err := r.scanOutgoing(ctx, remote, branch, ref); err != nil {
			return err
		}
	}
	out, err := r.runRemote(ctx, "push", "--porcelain", "--no-verify", "--no-recurse-submodules", remote, ref+":"+ref)
	if rej := parsePorcelainPush(string(out)); rej != nil {
		rej.Branch = branch
		rej.Output = string(out)
		var ge *Error
		if errors.As(err, &ge) {
			rej.Output += ge.Stderr
		}
		return rej
	}
	if err != nil {
		return fmt.Errorf("push %s to %s: %w", branch, remote, err)
	}
	return nil
}

// parsePorcelainPush finds the first rejected ref in `git push --porcelain`
// output: "!\t<src>:<dst>\t[rejected] (non-fast-forward)".
func parsePorcelainPush(out string) *PushRejected {
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "!\t") {
			continue
		}
		parts := strings.SplitN(line, "\t", 3)
		summary := ""
		if len(parts) == 3 {
			summary = parts[2]
		}
		reason := summary
		if i := strings.Index(summary, "("); i >= 0 && strings.HasSuffix(summary, ")") {
			reason = summary[i+1 : len(summary)-1]
		}
		raced := slices.ContainsFunc(raceReasons, func(r string) bool { return strings.Contains(reason, r) })
		return &PushRejected{
			Reason:         reason,
			NonFastForward: reason == "non-fast-forward" || reason == "fetch first",
			Raced:          raced,
		}
	}
	return nil
}

// LsRemote asks remote for the tip of branch, without fetching. found is false
// when the remote has no such branch. This is the ground truth published_sha
// is reconciled with.
func (r *Repo) LsRemote(ctx context.Context, remote, branch string) (sha string, found bool, err error) {
	ref := "refs/heads/" + branch
	out, err := r.runRemote(ctx, "ls-remote", "--refs", remote, ref)
	if err != nil {
		return "", false, fmt.Errorf("ls-remote %s %s: %w", remote, branch, err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		s, name, ok := strings.Cut(line, "\t")
		if ok && name == ref {
			return s, true, nil
		}
	}
	return "", false, nil
}

// Fetch fetches branch from remote (a configured remote's name) into
// refs/remotes/<remote>/<branch> and returns its sha.
func (r *Repo) Fetch(ctx context.Context, remote, branch string) (string, error) {
	tracking := "refs/remotes/" + remote + "/" + branch
	if _, err := r.runRemote(ctx, "fetch", "--quiet", "--no-tags", "--no-recurse-submodules", remote, "+refs/heads/"+branch+":"+tracking); err != nil {
		return "", fmt.Errorf("fetch %s from %s: %w", branch, remote, err)
	}
	return r.RevParse(ctx, tracking)
}

// Conflict is a rebase or merge that stopped on conflicting files. The
// operation is left in progress: resolve and Continue, or Abort.
type Conflict struct {
	Op    string // "rebase" or "merge"
	Onto  string
	Files []string
	Err   error
}

func (e *Conflict) Error() string {
	if e.Onto == "" {
		return fmt.Sprintf("%s: conflict in %s", e.Op, strings.Join(e.Files, ", "))
	}
	return fmt.Sprintf("%s onto %s: conflict in %s", e.Op, e.Onto, strings.Join(e.Files, ", "))
}

func (e *Conflict) Unwrap() error { return e.Err }

// Rebase rebases the current branch onto upstream (e.g. origin/roadmap/5-x).
// Conflicts give a *Conflict with the rebase left in progress.
func (r *Repo) Rebase(ctx context.Context, upstream string) error {
	_, err := r.run(ctx, nil, "rebase", "--quiet", "--no-autostash", upstream)
	return r.conflictOr(ctx, "rebase", upstream, err)
}

// Merge merges upstream into the current branch with git's default message.
// Conflicts give a *Conflict with the merge left in progress.
func (r *Repo) Merge(ctx context.Context, upstream string) error {
	_, err := r.run(ctx, nil, "merge", "--quiet", "--no-edit", upstream)
	return r.conflictOr(ctx, "merge", upstream, err)
}

// ContinueRebase stages every change (the resolution) and continues the
// rebase in progress. A repository nested in the work tree refuses it
// (*NestedRepository) as it refuses a commit; gitlink changes that come with
// the commits being rebased are git's, not the work tree's, and go through.
func (r *Repo) ContinueRebase(ctx context.Context) error {
	if err := r.stageResolution(ctx); err != nil {
		return fmt.Errorf("continue rebase: %w", err)
	}
	_, err := r.run(ctx, nil, "rebase", "--continue")
	return r.conflictOr(ctx, "rebase", "", err)
}

// ContinueMerge stages every change (the resolution) and commits the merge in
// progress, refusing a nested repository as ContinueRebase does.
func (r *Repo) ContinueMerge(ctx context.Context) error {
	if err := r.stageResolution(ctx); err != nil {
		return fmt.Errorf("continue merge: %w", err)
	}
	_, err := r.run(ctx, nil, "commit", "--quiet", "--no-verify", "--no-edit")
	return r.conflictOr(ctx, "merge", "", err)
}

// AbortRebase gives up the rebase in progress and restores the branch.
func (r *Repo) AbortRebase(ctx context.Context) error {
	if _, err := r.run(ctx, nil, "rebase", "--abort"); err != nil {
		return fmt.Errorf("abort rebase: %w", err)
	}
	return nil
}

// AbortMerge gives up the merge in progress and restores the branch.
func (r *Repo) AbortMerge(ctx context.Context) error {
	if _, err := r.run(ctx, nil, "merge", "--abort"); err != nil {
		return fmt.Errorf("abort merge: %w", err)
	}
	return nil
}

// ConflictFiles returns the unmerged paths of the operation in progress,
// sorted. They are read from the index: a diff against the work tree would
// ask an unmerged gitlink's repository whether it is dirty.
func (r *Repo) ConflictFiles(ctx context.Context) ([]string, error) {
	out, err := r.run(ctx, nil, "ls-files", "--unmerged", "-z")
	if err != nil {
		return nil, fmt.Errorf("conflict files: %w", err)
	}
	var paths []string
	for _, e := range strings.Split(string(out), "\x00") {
		if _, path, ok := strings.Cut(e, "\t"); ok { // "<mode> <object> <stage>\t<path>"
			paths = append(paths, path)
		}
	}
	files := splitZ(strings.Join(paths, "\x00"))
	slices.Sort(files)
	return files, nil
}

// stageResolution stages a conflict's resolution: no nested repository, and
// the gitlinks of the index left as they are (addAll).
func (r *Repo) stageResolution(ctx context.Context) error {
	links, err := r.indexGitlinks(ctx)
	if err != nil {
		return err
	}
	if err := r.refuseNested(ctx, links); err != nil {
		return err
	}
	return r.addAll(ctx, links)
}

func (r *Repo) conflictOr(ctx context.Context, op, onto string, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() == nil {
		if files, ferr := r.ConflictFiles(ctx); ferr == nil && len(files) > 0 {
			return &Conflict{Op: op, Onto: onto, Files: files, Err: err}
		}
	}
	if onto == "" {
		return fmt.Errorf("%s: %w", op, err)
	}
	return fmt.Errorf("%s onto %s: %w", op, onto, err)
}

// CherryPick applies commit onto the current branch as a new commit with its
// message (trailers included); an empty one (a group that changed nothing
// but its tick) is kept. Conflicts give a *Conflict with the cherry-pick
// left in progress (AbortCherryPick).
func (r *Repo) CherryPick(ctx context.Context, commit string) error {
	_, err := r.run(ctx, nil, "cherry-pick", "--allow-empty", "--keep-redundant-commits", "--no-rerere-autoupdate", "--end-of-options", commit)
	return r.conflictOr(ctx, "cherry-pick", commit, err)
}

// AbortCherryPick gives up the cherry-pick in progress and restores the branch.
func (r *Repo) AbortCherryPick(ctx context.Context) error {
	if _, err := r.run(ctx, nil, "cherry-pick", "--abort"); err != nil {
		return fmt.Errorf("abort cherry-pick: %w", err)
	}
	return nil
}

// ResetHard moves the current branch, the index and the work tree to rev.
// Only for a commit of this Job's own that was never pushed; rev is a
// commit id, never a name from outside.
func (r *Repo) ResetHard(ctx context.Context, rev string) error {
	if _, err := r.run(ctx, nil, "reset", "--quiet", "--hard", rev); err != nil {
		return fmt.Errorf("reset to %s: %w", rev, err)
	}
	return nil
}
