//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// roadmap's own folder in the workspace (the pinned checkout, the setup
// action's copy) is the runner's: a command inside the boundary can neither
// plant a repository in it nor change a file the job's later steps run. A
// repository a command made anywhere below the top (an uninitialised
// submodule's folder, a new folder, a legitimate submodule's .git swapped
// for another) is gone when the boundary closes, and Planted names it; a
// submodule's .git that was there before and is untouched stays.
func TestBoundaryRemovesPlantedRepositories(t *testing.T) {
	needRoot(t)
	ws := workTree(t)
	for name, body := range map[string]string{
		RunDir + "/roadmap/actions/implement/action.yml": "name: implement\n",
		RunDir + "/setup/action.yml":                     "name: setup\n",
		"kept/.git":                                      "gitdir: ../.git/modules/kept\n",
		"swapped/.git":                                   "gitdir: ../.git/modules/swapped\n",
		"vendor/lib/.keep":                               "",
	} {
		p := filepath.Join(ws, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := Open(t.Context(), Options{Workspace: ws, Environ: []string{"PATH=" + os.Getenv("PATH")}})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = b.Close()
		}
	})
	out, err := sh(t, b, `
for p in .roadmap-run/roadmap/.git .roadmap-run/.git .roadmap-run/setup/.git; do
  mkdir "$p" 2>/dev/null && echo "made $p"
done
echo planted >> .roadmap-run/roadmap/actions/implement/action.yml 2>/dev/null && echo "changed the action"
mv .roadmap-run gone 2>/dev/null && echo "moved the run folder"
git init -q vendor/lib && git -C vendor/lib config core.fsmonitor "sh -c 'id -u > /tmp/ran'" && echo "planted vendor/lib"
mkdir -p deep/a/b && git init -q deep/a/b && echo "planted deep"
echo "gitdir: /tmp/elsewhere" > kept/.git 2>/dev/null && echo "rewrote kept"
mv swapped/.git swapped/old && git init -q swapped && echo "swapped"
echo done`)
	if err != nil || !strings.Contains(out, "done") {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, bad := range []string{"made", "changed the action", "moved the run folder", "rewrote kept"} {
		if strings.Contains(out, bad) {
			t.Errorf("a command inside the boundary reached roadmap's own folder (%s):\n%s", bad, out)
		}
	}
	for _, want := range []string{"planted vendor/lib", "planted deep", "swapped"} {
		if !strings.Contains(out, want) {
			t.Fatalf("the plant %q did not happen, so the test shows nothing:\n%s", want, out)
		}
	}
	closed = true
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{"vendor/lib/.git", "deep/a/b/.git", "swapped/.git", RunDir + "/roadmap/.git"} {
		if _, err := os.Lstat(filepath.Join(ws, gone)); err == nil {
			t.Errorf("%s survived the boundary", gone)
		}
	}
	if _, err := os.Lstat(filepath.Join(ws, "kept", ".git")); err != nil {
		t.Errorf("a submodule's .git that no command touched was removed: %v", err)
	}
	if got, want := b.Planted(), []string{"deep/a/b/.git", "swapped/.git", "vendor/lib/.git"}; !slices.Equal(got, want) {
		t.Errorf("Planted() = %q, want %q", got, want)
	}
}

// A linked worktree (fail-to-pass's tree, a parallel group's) has a .git
// file at its top: the search goes on past it to every other entry.
func TestNestedGitsPastWorktreeFile(t *testing.T) {
	ws := t.TempDir()
	for name, body := range map[string]string{
		".git":              "gitdir: /elsewhere/.git/worktrees/x\n",
		"a/.git/config":     "[core]\n",
		"vendor/lib/.git/x": "",
		"zz/.git":           "gitdir: ../y\n",
	} {
		p := filepath.Join(ws, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := nestedGits(ws)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for p := range got {
		names = append(names, p)
	}
	slices.Sort(names)
	if want := []string{"a/.git", "vendor/lib/.git", "zz/.git"}; !slices.Equal(names, want) {
		t.Errorf("nestedGits = %q, want %q", names, want)
	}
}
