package git

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// A ref the remote moves only when it is where the pusher expects is a lease
// GitHub arbitrates: the push carries the ref's old value, and the server
// updates it under the ref's lock only if it still holds that value (git's
// --force-with-lease with an explicit value: a ref elsewhere is refused as
// "stale info"). A create carries "no such ref" as the old value, so of two
// Jobs creating the same ref exactly one succeeds. The refs live outside
// refs/heads and refs/tags: no push event, no branch in the UI.

// RefNote is what a note ref holds: a commit with the empty tree whose
// message is Text. Its dates are the committer's, which a world may fix:
// a time that matters goes in Text.
type RefNote struct {
	SHA  string
	Text string
}

// emptyTree is git's empty tree object, written into the repository before a
// note commit points at it.
const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// SetRefIf points ref on remote at a new commit holding text, if ref is at
// expect there ("" expects no such ref). It returns the new commit. A remote
// that holds something else refuses with a *PushRejected whose Reason is
// git's ("stale info", "already exists", "fetch first"), and nothing changed.
func (r *Repo) SetRefIf(ctx context.Context, remote, ref, expect, text string) (string, error) {
	if err := checkNoteRef(ref); err != nil {
		return "", err
	}
	if _, err := r.run(ctx, nil, "hash-object", "-t", "tree", "-w", "--stdin"); err != nil {
		// hash-object with empty stdin writes the empty tree.
		return "", fmt.Errorf("write the empty tree: %w", err)
	}
	sha, err := r.output(ctx, "commit-tree", emptyTree, "-m", text)
	if err != nil {
		return "", fmt.Errorf("make the note for %s: %w", ref, err)
	}
	if err := r.pushIf(ctx, remote, ref, expect, sha+":"+ref); err != nil {
		return "", err
	}
	return sha, nil
}

// DeleteRefIf deletes ref on remote if it is at expect there. A ref that
// moved (another Job took it over) is a *PushRejected; a ref already gone is
// not an error.
func (r *Repo) DeleteRefIf(ctx context.Context, remote, ref, expect string) error {
	if err := checkNoteRef(ref); err != nil {
		return err
	}
	if expect == "" {
		return errors.New("delete " + ref + ": the expected value is required")
	}
	return r.pushIf(ctx, remote, ref, expect, ":"+ref)
}

func (r *Repo) pushIf(ctx context.Context, remote, ref, expect, refspec string) error {
	args := []string{"push", "--porcelain", "--no-verify", "--no-recurse-submodules"}
	if expect == "" {
		// A create is a push that does not force: git sends the ref's old
		// value as absent, and the remote refuses under the ref's lock when
		// it exists ("fetch first", or a lock failure for one created under
		// the push). A note commit has no parent, so it never fast-forwards
		// another. (--force-with-lease with an empty or zero value does not
		// refuse an existing ref in every git this runs with.)
		args = append(args, remote, refspec)
	} else {
		// No "+" on the refspec: a forced refspec overrides the lease.
		args = append(args, "--force-with-lease="+ref+":"+expect, remote, refspec)
	}
	out, err := r.runRemote(ctx, args...)
	if rej := parsePorcelainPush(string(out)); rej != nil {
		rej.Branch, rej.Output = ref, string(out)
		var ge *Error
		if errors.As(err, &ge) {
			rej.Output += ge.Stderr
		}
		return rej
	}
	if err != nil {
		var ge *Error
		if errors.As(err, &ge) && strings.Contains(ge.Stderr, "unable to delete") && strings.Contains(ge.Stderr, "remote ref does not exist") {
			return nil
		}
		return fmt.Errorf("push %s to %s: %w", ref, remote, err)
	}
	return nil
}

// ReadRef reads ref on remote: found is false when there is none. The note's
// text is the commit message, as written by anyone who can push: callers
// parse it as untrusted.
func (r *Repo) ReadRef(ctx context.Context, remote, ref string) (note RefNote, found bool, err error) {
	if err := checkNoteRef(ref); err != nil {
		return RefNote{}, false, err
	}
	// ls-remote first: a ref that is not there is no fetch error.
	if _, found, err = r.lsOne(ctx, remote, ref); err != nil || !found {
		return RefNote{}, false, err
	}
	seen := "refs/roadmap-seen/" + strings.TrimPrefix(ref, "refs/")
	if _, err := r.runRemote(ctx, "fetch", "--quiet", "--no-tags", "--no-recurse-submodules", remote, "+"+ref+":"+seen); err != nil {
		// Deleted between the two calls: the lease was released.
		if _, still, lerr := r.lsOne(ctx, remote, ref); lerr == nil && !still {
			return RefNote{}, false, nil
		}
		return RefNote{}, false, fmt.Errorf("fetch %s from %s: %w", ref, remote, err)
	}
	sha, err := r.RevParse(ctx, seen)
	if err != nil {
		return RefNote{}, false, err
	}
	text, err := r.output(ctx, "log", "-1", "--format=%B", sha)
	if err != nil {
		return RefNote{}, false, fmt.Errorf("read %s: %w", ref, err)
	}
	return RefNote{SHA: sha, Text: text}, true, nil
}

func (r *Repo) lsOne(ctx context.Context, remote, ref string) (string, bool, error) {
	out, err := r.runRemote(ctx, "ls-remote", remote, ref)
	if err != nil {
		return "", false, fmt.Errorf("ls-remote %s %s: %w", remote, ref, err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if s, name, ok := strings.Cut(line, "\t"); ok && name == ref {
			return s, true, nil
		}
	}
	return "", false, nil
}

// checkNoteRef keeps note refs out of branches and tags, and out of what git
// would read as options or patterns.
func checkNoteRef(ref string) error {
	if !strings.HasPrefix(ref, "refs/roadmap/") || strings.ContainsAny(ref, " \t\n*?[\\:^~") || strings.Contains(ref, "..") {
		return fmt.Errorf("%q is not a note ref (refs/roadmap/…)", ref)
	}
	return nil
}

// NotePush reports whether a git command's arguments (as a Repo's Hook sees
// them) push a note ref, such as an item's lease, rather than a branch.
func NotePush(args []string) bool {
	return slices.Contains(args, "push") && slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, "refs/roadmap/") })
}
