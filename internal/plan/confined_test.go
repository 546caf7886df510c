package plan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A symlink the agent commits into the plan (design.md -> /proc/self/environ)
// is not followed when the runner reads the plan: the read is refused with a
// reason, and nothing outside the work tree is read.
func TestLoadChangeRefusesSymlinkOutOfTree(t *testing.T) {
	ws := t.TempDir()
	dir := filepath.Join(ws, "openspec", "changes", "add-x")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte("GITHUB_TOKEN=ghs_canary"), 0o644); err != nil {
		t.Fatal(err)
	}
	tasks := "## 1. X\n\n- [ ] 1.1 Do it; verify: `go test ./...`\n"
	if err := os.WriteFile(filepath.Join(dir, "tasks.md"), []byte(tasks), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/proc/self/environ", filepath.Join(dir, "design.md")); err != nil {
		t.Fatal(err)
	}
	c, err := LoadChangeIn(ws, "openspec/changes/add-x")
	if err != nil {
		t.Fatalf("LoadChangeIn: %v", err)
	}
	data, err := c.ReadFile("design.md")
	if err == nil || !strings.Contains(err.Error(), "leads out of the work tree") {
		t.Errorf("ReadFile(design.md) = %q, %v; want a refusal that says it leads out of the work tree", data, err)
	}
	// proposal.md is read at load (its title): the change does not load, and
	// the error says why.
	if err := os.Symlink(outside, filepath.Join(dir, "proposal.md")); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadChangeIn(ws, "openspec/changes/add-x"); err == nil || !strings.Contains(err.Error(), "leads out of the work tree") {
		t.Errorf("LoadChangeIn with proposal.md -> outside: %v, want a refusal", err)
	}
	os.Remove(filepath.Join(dir, "proposal.md"))
	// tasks.md itself through a symlink out of the tree: the change does not load.
	os.Remove(filepath.Join(dir, "tasks.md"))
	if err := os.Symlink(outside, filepath.Join(dir, "tasks.md")); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadChangeIn(ws, "openspec/changes/add-x"); err == nil {
		t.Error("a tasks.md that leads out of the work tree was read")
	}
}

// Archived finds a change OpenSpec moved to its archive, the newest first,
// and nothing while the change itself is still there.
func TestArchived(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"openspec/changes/archive/2026-11-30-add-x", "openspec/changes/archive/2026-12-01-add-x", "openspec/changes/archive/2026-12-01-add-y"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if got, ok := Archived(root, "openspec/changes/add-x"); !ok || got != "openspec/changes/archive/2026-12-01-add-x" {
		t.Errorf("Archived(add-x) = %q, %v; want the newest archive", got, ok)
	}
	if got, ok := Archived(root, "openspec/changes/add-z"); ok {
		t.Errorf("Archived(add-z) = %q, want none", got)
	}
	if err := os.MkdirAll(filepath.Join(root, "openspec/changes/add-y"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, ok := Archived(root, "openspec/changes/add-y"); ok {
		t.Errorf("Archived(add-y) = %q while the change is still there, want none", got)
	}
}
