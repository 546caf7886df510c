package git

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestApplyAndPushCommit: a commit pushed to a ref of roadmap's own is
// there for another clone to read, a secret in it is refused before the
// push, and its change laid over a branch that moved is uncommitted edits
// (HEAD stays) or, where it conflicts, git's markers in the files named by
// the *Conflict, with nothing left in progress.
func TestApplyAndPushCommit(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	const ref = "refs/roadmap/wip/7"
	r := w.open("job")
	base := mustHead(t, r)
	write(t, r.Dir, "a.txt", "one\ntwo\nthree from the group\n")
	write(t, r.Dir, "new.txt", "added\n")
	sh(t, w.env, r.Dir, "add", ".")
	sh(t, w.env, r.Dir, "commit", "--quiet", "-m", "group")
	kept := mustHead(t, r)
	if err := r.PushCommit(ctx, "origin", "main", ref); err == nil {
		t.Error("PushCommit took a branch name for a commit id")
	}
	if err := r.PushCommit(ctx, "origin", kept, "refs/heads/main"); err == nil {
		t.Error("PushCommit pushed to a branch")
	}
	if err := r.PushCommit(ctx, "origin", kept, ref); err != nil {
		t.Fatal(err)
	}
	next := w.open("next")
	note, found, err := next.ReadRef(ctx, "origin", ref)
	if err != nil || !found || note.SHA != kept {
		t.Fatalf("ReadRef = %+v, %v, %v; want %s", note, found, err, kept)
	}

	// A change that applies: edits over HEAD, no commit.
	if err := next.ApplyCommit(ctx, kept); err != nil {
		t.Fatal(err)
	}
	if head := mustHead(t, next); head != base {
		t.Errorf("HEAD moved to %s, want %s", head, base)
	}
	if st := sh(t, w.env, next.Dir, "status", "--porcelain"); st != "M a.txt\n?? new.txt" {
		t.Errorf("status after a clean apply = %q, want the change unstaged", st)
	}

	// A change that conflicts with the branch as it is now.
	moved := w.open("moved")
	write(t, moved.Dir, "a.txt", "one\ntwo\nthree from a person\n")
	sh(t, w.env, moved.Dir, "commit", "--quiet", "-am", "a person")
	err = moved.ApplyCommit(ctx, kept)
	var c *Conflict
	if !errors.As(err, &c) {
		t.Fatalf("ApplyCommit = %v, want a *Conflict", err)
	}
	if diff := cmp.Diff([]string{"a.txt"}, c.Files); diff != "" {
		t.Errorf("conflict files (-want +got):\n%s", diff)
	}
	if got := sh(t, w.env, moved.Dir, "cat-file", "-p", ":a.txt"); strings.Contains(got, "<<<<<<<") {
		t.Errorf("the index holds the markers: %q", got)
	}
	if data := sh(t, w.env, moved.Dir, "show", "--no-patch", "--format=%H", "HEAD"); data == kept {
		t.Error("the kept commit was committed")
	}
	tree := sh(t, w.env, moved.Dir, "diff")
	if !strings.Contains(tree, "+<<<<<<< HEAD") || !strings.Contains(tree, "+three from the group") {
		t.Errorf("the work tree lacks the markers and the kept change:\n%s", tree)
	}
	if _, err := moved.run(ctx, nil, "rev-parse", "--verify", "--quiet", "CHERRY_PICK_HEAD"); err == nil {
		t.Error("a cherry-pick is left in progress")
	}
	if st := sh(t, w.env, moved.Dir, "ls-files", "--unmerged"); st != "" {
		t.Errorf("unmerged paths left: %q", st)
	}

	// A secret in the commit: nothing is pushed.
	write(t, r.Dir, "b.txt", "token ghs_secret\n")
	sh(t, w.env, r.Dir, "add", ".")
	sh(t, w.env, r.Dir, "commit", "--quiet", "-m", "leak")
	r.SecretScan = func(s string) bool { return strings.Contains(s, "ghs_secret") }
	var sec *SecretInPush
	if err := r.PushCommit(ctx, "origin", mustHead(t, r), ref); !errors.As(err, &sec) {
		t.Fatalf("PushCommit of a secret = %v, want *SecretInPush", err)
	}
	if got := sh(t, w.env, w.remote, "rev-parse", ref); got != kept {
		t.Errorf("%s = %s after a refused push, want %s", ref, got, kept)
	}
}
