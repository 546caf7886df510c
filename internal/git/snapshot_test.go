package git

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestWorkTreeTreeOverlay: the tree of an uncommitted work tree holds what a
// commit of it would (edits, new files, deletions; not ignored files), and
// the index and HEAD stay as they were, so a group's test files can be laid
// over the tree before it while the group is still being checked.
func TestWorkTreeTreeOverlay(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	r := w.open("work")
	before := mustHead(t, r)
	write(t, r.Dir, "a_test.go", "package a\n")
	write(t, r.Dir, "a.go", "package a\n")
	write(t, r.Dir, ".gitignore", "*.log\n")
	write(t, r.Dir, "tests/t.log", "ignored\n")
	write(t, r.Dir, "tests/case.txt", "case\n")
	sh(t, w.env, r.Dir, "add", "a.go") // a staged file stays staged
	tree, err := r.WorkTreeTree(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := mustHead(t, r); got != before {
		t.Errorf("HEAD moved to %s", got)
	}
	if got, want := sh(t, w.env, r.Dir, "diff", "--cached", "--name-only"), "a.go"; got != want {
		t.Errorf("the index holds %q, want %q: the snapshot must not touch it", got, want)
	}
	if got, want := sh(t, w.env, r.Dir, "ls-tree", "-r", "--name-only", tree), ".gitignore\na.go\na.txt\na_test.go\ntests/case.txt"; got != want {
		t.Errorf("tree holds\n%s\nwant\n%s", got, want)
	}

	wt, err := r.AddWorktree(ctx, before, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer wt.Remove(ctx)
	isTest := func(p string) bool { return filepath.Base(p) == "a_test.go" || filepath.Dir(p) == "tests" }
	got, err := wt.Overlay(ctx, before, tree, isTest)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a_test.go", "tests/case.txt"}, got); diff != "" {
		t.Errorf("overlay (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(wt.Dir, "a.go")); !os.IsNotExist(err) {
		t.Errorf("a.go is in the before tree (err %v): only test files are laid over", err)
	}
	if b, err := os.ReadFile(filepath.Join(wt.Dir, "tests", "case.txt")); err != nil || string(b) != "case\n" {
		t.Errorf("tests/case.txt = %q, %v", b, err)
	}
}
