package stage

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestRepoFilesSkipsHiddenFolders: the planner's list of the tree leaves out
// tools' hidden folders and roadmap's own checkout in a reusable workflow's
// job (.roadmap-run), and keeps .github, whose workflows are the project's.
func TestRepoFilesSkipsHiddenFolders(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{
		"main.go", ".github/workflows/ci.yml", ".gitignore",
		".roadmap-run/roadmap/cmd/roadmap/main.go", ".venv/lib/x.py", "node_modules/a/index.js", "pkg/.hidden/x.go",
	} {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := repoFiles(dir)
	want := []string{".github/workflows/ci.yml", ".gitignore", "main.go"}
	if !slices.Equal(got, want) {
		t.Errorf("repoFiles = %q, want %q", got, want)
	}
}
