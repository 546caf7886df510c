package git

import (
	"context"
	"errors"
	"fmt"
	"regexp"
)

// A conflict stop keeps the group's commit the push could not publish in a
// ref of roadmap's own (implement's refs/roadmap/wip/<issue>): no branch, so
// no push event, no PR and no one building on it. The next Job fetches it
// (ReadRef), lays its change over the branch as it is then (ApplyCommit) and
// deletes the ref once the group lands (DeleteRefIf).

// fullSHA is a commit id as git prints it: a name from outside never
// reaches a push or a cherry-pick as a commit.
var fullSHA = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)

// PushCommit points ref on remote, one of roadmap's own (refs/roadmap/…),
// at commit, whatever the ref held: the push is forced, as the ref belongs
// to the item whose lease the caller holds. commit is a commit id. With
// SecretScan set, what the push would publish is read first, as Push reads
// a branch's, and a commit holding a secret is a *SecretInPush.
func (r *Repo) PushCommit(ctx context.Context, remote, commit, ref string) error {
	if err := checkNoteRef(ref); err != nil {
		return err
	}
	if !fullSHA.MatchString(commit) {
		return fmt.Errorf("push %s: %q is not a commit id", ref, commit)
	}
	if r.SecretScan != nil {
		if err := r.scanOutgoing(ctx, remote, ref, commit); err != nil {
			return err
		}
	}
	out, err := r.runRemote(ctx, "push", "--porcelain", "--no-verify", "--no-recurse-submodules", remote, "+"+commit+":"+ref)
	if rej := parsePorcelainPush(string(out)); rej != nil {
		rej.Branch, rej.Output = ref, string(out)
		var ge *Error
		if errors.As(err, &ge) {
			rej.Output += ge.Stderr
		}
		return rej
	}
	if err != nil {
		return fmt.Errorf("push %s to %s: %w", ref, remote, err)
	}
	return nil
}

// ApplyCommit lays commit's change over the work tree as edits no commit
// holds yet (git cherry-pick --no-commit, then the index reset to HEAD):
// HEAD does not move, and the next commit takes the change as it takes any
// edit. A change that conflicts leaves git's conflict markers in the files
// and gives a *Conflict (Op "cherry-pick") naming them; nothing is left in
// progress either way. commit is a commit id.
func (r *Repo) ApplyCommit(ctx context.Context, commit string) error {
	if !fullSHA.MatchString(commit) {
		return fmt.Errorf("apply %q: not a commit id", commit)
	}
	_, err := r.run(ctx, nil, "cherry-pick", "--no-commit", "--no-rerere-autoupdate", "--end-of-options", commit)
	err = r.conflictOr(ctx, "cherry-pick", commit, err)
	var c *Conflict
	if err != nil && !errors.As(err, &c) {
		return err
	}
	// --no-commit leaves no cherry-pick in progress in the git this runs
	// with; --quit makes sure of it in any other and touches nothing else.
	if _, qerr := r.run(ctx, nil, "cherry-pick", "--quit"); qerr != nil {
		return fmt.Errorf("apply %s: %w", short(commit), qerr)
	}
	if _, rerr := r.run(ctx, nil, "reset", "--quiet"); rerr != nil {
		return fmt.Errorf("apply %s: unstage: %w", short(commit), rerr)
	}
	return err
}
