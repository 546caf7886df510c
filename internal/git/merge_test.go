package git

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMergedCommit: the merge of two branches as a commit no ref names,
// the work tree and the index untouched; a conflict names its files and
// leaves nothing in progress.
func TestMergedCommit(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	r := w.open("r")
	base := mustHead(t, r)
	sh(t, w.env, r.Dir, "checkout", "--quiet", "-b", "side")
	write(t, r.Dir, "side.txt", "side\n")
	write(t, r.Dir, "a.txt", "one\ntwo\nthree from side\n")
	sh(t, w.env, r.Dir, "commit", "--quiet", "-am", "side", "--allow-empty")
	sh(t, w.env, r.Dir, "add", "side.txt")
	sh(t, w.env, r.Dir, "commit", "--quiet", "-m", "side file")
	side := mustHead(t, r)
	sh(t, w.env, r.Dir, "checkout", "--quiet", "-b", "other", base)
	write(t, r.Dir, "other.txt", "other\n")
	sh(t, w.env, r.Dir, "add", "other.txt")
	sh(t, w.env, r.Dir, "commit", "--quiet", "-m", "other")
	other := mustHead(t, r)

	sha, err := r.MergedCommit(ctx, side, other, "merged check")
	if err != nil {
		t.Fatal(err)
	}
	if got := sh(t, w.env, r.Dir, "log", "-1", "--format=%P", sha); got != side+" "+other {
		t.Errorf("parents of the merged commit = %q, want %s %s", got, side, other)
	}
	if got := sh(t, w.env, r.Dir, "ls-tree", "--name-only", sha); got != "a.txt\nother.txt\nside.txt" {
		t.Errorf("merged tree = %q, want both sides' files", got)
	}
	if head := mustHead(t, r); head != other {
		t.Errorf("HEAD moved to %s, want it at %s", head, other)
	}
	if st := sh(t, w.env, r.Dir, "status", "--porcelain"); st != "" {
		t.Errorf("work tree changed: %q", st)
	}

	write(t, r.Dir, "a.txt", "one\ntwo\nthree from other\n")
	sh(t, w.env, r.Dir, "commit", "--quiet", "-am", "other changes a")
	_, err = r.MergedCommit(ctx, side, mustHead(t, r), "merged check")
	var c *Conflict
	if !errors.As(err, &c) {
		t.Fatalf("conflicting merge = %v, want *Conflict", err)
	}
	if diff := cmp.Diff([]string{"a.txt"}, c.Files); diff != "" {
		t.Errorf("conflict files (-want +got):\n%s", diff)
	}
	if st := sh(t, w.env, r.Dir, "status", "--porcelain"); st != "" {
		t.Errorf("a conflicting merged check left the work tree changed: %q", st)
	}
}
