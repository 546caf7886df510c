package plan

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLoadChange(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"openspec/changes/add-backoff/proposal.md":         "```\n# not this\n```\n# Add backoff to the delivery worker\n\n## Why\n\nRetries hammer the endpoint.\n",
		"openspec/changes/add-backoff/tasks.md":            "## 1. Backoff\n\n- [ ] 1.1 Test; verify: `go test ./x -run TestB` fails\n- [ ] 1.2 Code; verify: `go test ./x -run TestB`\n",
		"openspec/changes/no-proposal/tasks.md":            "## 1. A\n- [x] 1.1 a\n",
		"openspec/changes/broken/tasks.md":                 "## 1. A\n- [ ] 2.1 a\n",
		"openspec/changes/archive/2026-01-01-old/tasks.md": "## 1. A\n- [x] 1.1 a\n",
	})

	ids, err := ListChanges(root)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"add-backoff", "broken", "no-proposal"}, ids); diff != "" {
		t.Errorf("ListChanges (-want +got):\n%s", diff)
	}

	c, err := LoadChange(ChangeDir(root, "add-backoff"))
	if err != nil {
		t.Fatal(err)
	}
	if c.ID != "add-backoff" || c.Title != "Add backoff to the delivery worker" {
		t.Errorf("got id %q title %q, want add-backoff and the proposal's title", c.ID, c.Title)
	}
	if got := len(c.Tasks.Groups[0].Tasks); got != 2 {
		t.Errorf("got %d tasks, want 2", got)
	}

	c, err = LoadChange(ChangeDir(root, "no-proposal"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Title != "" {
		t.Errorf("title without a proposal = %q, want empty", c.Title)
	}

	_, err = LoadChange(ChangeDir(root, "broken"))
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("LoadChange(broken) = %v, want a *ParseError", err)
	}
	wantFile := filepath.Join(ChangeDir(root, "broken"), "tasks.md")
	if pe.File != wantFile || pe.Line != 2 || !strings.Contains(err.Error(), wantFile+":2:") {
		t.Errorf("error %q, want it at %s:2", err, wantFile)
	}

	if _, err := LoadChange(ChangeDir(root, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LoadChange(missing) = %v, want not-exist", err)
	}
	if _, err := LoadChange(filepath.Join(root, "openspec", "changes", "Bad_Name")); err == nil || !strings.Contains(err.Error(), "kebab-case") {
		t.Errorf("LoadChange(Bad_Name) = %v, want a kebab-case error", err)
	}
}

func TestListChangesNone(t *testing.T) {
	ids, err := ListChanges(t.TempDir())
	if err != nil || ids != nil {
		t.Errorf("ListChanges of a repo without openspec = %v, %v; want nil, nil", ids, err)
	}
}
