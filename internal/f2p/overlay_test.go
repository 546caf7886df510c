package f2p

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// seeingTree records, when it is opened, what the overlay's paths hold in
// the tree, and passes.
type seeingTree struct{}

func (seeingTree) Run(context.Context, []string, io.Writer) (Exit, error) { return Exit{}, nil }
func (seeingTree) Close() error                                           { return nil }

// overlayHistory is a base and a head: the head changes a test file the
// overlay replaces, puts a symlink out of the repository where the overlay
// writes a file, and a symlinked directory beside them.
func overlayHistory(t *testing.T, outside string) (h *history, base, head string) {
	h = newHistory(t)
	h.write("", "side.txt", "base\n")
	h.write("", "pkg/own_test.txt", "base's own test\n")
	base = h.person("the base")
	h.write("", "side.txt", "head\n")
	h.write("", "pkg/own_test.txt", "head's own test\n")
	for link, target := range map[string]string{
		"pkg/leaf_test.txt": filepath.Join(outside, "secret.txt"),
		"linked":            outside,
	} {
		if err := os.Symlink(target, filepath.Join(h.repo.Dir, filepath.FromSlash(link))); err != nil {
			t.Fatal(err)
		}
	}
	head = h.person("the change")
	return h, base, head
}

// TestCompareLaysOverlay: the overlay's files are in both trees before the
// command runs, a file of the same path replaced, a symlink at a file's path
// replaced and not followed, and a symlinked directory on a file's way
// refused; paths that leave the tree or reach its .git are refused before
// any tree is made.
func TestCompareLaysOverlay(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("the runner's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, base, head := overlayHistory(t, outside)
	overlay := []File{
		{Path: "pkg/own_test.txt", Data: []byte("hidden\n")},
		{Path: "pkg/leaf_test.txt", Data: []byte("leaf\n")},
		{Path: "new/deep/b_test.txt", Data: []byte("b\n")},
	}
	// compare runs the comparison with files laid over, and says what the
	// paths in look held in each tree when its command ran.
	compare := func(files []File, look ...string) (map[string]map[string]string, string, error) {
		seen := map[string]map[string]string{}
		var logs strings.Builder
		open := func(_ context.Context, dir string) (Tree, error) {
			side, err := os.ReadFile(filepath.Join(dir, "side.txt"))
			if err != nil {
				return nil, err
			}
			got := map[string]string{}
			for _, rel := range look {
				p := filepath.Join(dir, filepath.FromSlash(rel))
				fi, err := os.Lstat(p)
				if err != nil || !fi.Mode().IsRegular() {
					got[rel] = "not a regular file"
					continue
				}
				b, _ := os.ReadFile(p)
				got[rel] = string(b)
			}
			seen[strings.TrimSpace(string(side))] = got
			return seeingTree{}, nil
		}
		_, err := Options{Repo: h.repo, Base: base, Head: head, Command: []string{"true"}, Open: open, TempDir: t.TempDir(), Overlay: files,
			Log: func(f string, a ...any) { fmt.Fprintf(&logs, f+"\n", a...) }}.Compare(context.Background())
		return seen, logs.String(), err
	}

	t.Run("laid over both trees", func(t *testing.T) {
		seen, logs, err := compare(overlay, "pkg/own_test.txt", "pkg/leaf_test.txt", "new/deep/b_test.txt")
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"pkg/own_test.txt": "hidden\n", "pkg/leaf_test.txt": "leaf\n", "new/deep/b_test.txt": "b\n"}
		if diff := cmp.Diff(map[string]map[string]string{"base": want, "head": want}, seen); diff != "" {
			t.Errorf("what each tree held when the command ran (-want +got):\n%s", diff)
		}
		if b, _ := os.ReadFile(secret); string(b) != "the runner's\n" {
			t.Errorf("the symlink's target outside the tree was written: %q", b)
		}
		for _, side := range []string{"base", "head"} {
			if !strings.Contains(logs, "laid 3 file(s) over the "+side+" tree") {
				t.Errorf("no log line says the overlay was laid over the %s tree:\n%s", side, logs)
			}
		}
	})

	t.Run("no overlay, the trees as committed", func(t *testing.T) {
		seen, _, err := compare(nil, "pkg/own_test.txt", "pkg/leaf_test.txt", "new/deep/b_test.txt")
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]map[string]string{
			"base": {"pkg/own_test.txt": "base's own test\n", "pkg/leaf_test.txt": "not a regular file", "new/deep/b_test.txt": "not a regular file"},
			"head": {"pkg/own_test.txt": "head's own test\n", "pkg/leaf_test.txt": "not a regular file", "new/deep/b_test.txt": "not a regular file"},
		}
		if diff := cmp.Diff(want, seen); diff != "" {
			t.Errorf("what each tree held when the command ran (-want +got):\n%s", diff)
		}
	})

	t.Run("a symlinked directory on the way", func(t *testing.T) {
		_, _, err := compare([]File{{Path: "linked/x_test.txt", Data: []byte("x\n")}})
		if err == nil || !strings.Contains(err.Error(), "the head tree") || !strings.Contains(err.Error(), "symlink") {
			t.Errorf("err = %v, want the head tree refused for its symlink", err)
		}
		if _, err := os.Lstat(filepath.Join(outside, "x_test.txt")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a file was written through the symlink, outside the tree: %v", err)
		}
	})

	for _, c := range []struct {
		name  string
		files []File
		want  string
	}{
		{"leaves the tree", []File{{Path: "../escape_test.go"}}, "not a clean slash path inside the repository"},
		{"leaves it under a directory", []File{{Path: "pkg/../../escape_test.go"}}, "not a clean slash path"},
		{"absolute", []File{{Path: "/tmp/escape_test.go"}}, "not a clean slash path"},
		{"not clean", []File{{Path: "pkg/./a_test.go"}}, "not a clean slash path"},
		{"a backslash", []File{{Path: `pkg\a_test.go`}}, "not a clean slash path"},
		{"empty", []File{{Path: ""}}, "is not a path"},
		{".git", []File{{Path: ".git/hooks/pre-commit"}}, "names a path in .git"},
		{"a .git below", []File{{Path: "pkg/.GIT/config"}}, "names a path in .git"},
		{"twice", []File{{Path: "a_test.go"}, {Path: "a_test.go"}}, "laid over the trees twice"},
		{"too many", make([]File, MaxOverlayFiles+1), "more than"},
	} {
		t.Run("refused: "+c.name, func(t *testing.T) {
			if c.name == "too many" {
				for i := range c.files {
					c.files[i].Path = filepath.Join("many", strings.Repeat("a", i+1)+"_test.go")
				}
			}
			seen, _, err := compare(c.files)
			var bad *InputError
			if !errors.As(err, &bad) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want an InputError saying %q", err, c.want)
			}
			if len(seen) != 0 {
				t.Errorf("a tree was opened: %v", seen)
			}
		})
	}
}
