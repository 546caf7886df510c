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
