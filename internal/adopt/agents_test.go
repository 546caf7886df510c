package adopt

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/github"
)

// settled is a repository init has set up before: its labels and the
// dashboard are in place, so a run only looks (init's GitHub seam; the
// requests themselves are internal/cli's init tests').
type settled struct{}

func (settled) Repository(context.Context) (github.Repository, error) {
	return github.Repository{DefaultBranch: "main"}, nil
}
func (settled) WorkflowPermissions(context.Context) (github.WorkflowPermissions, error) {
	return github.WorkflowPermissions{Default: "read", CanApprove: true}, nil
}
func (settled) LabelNames(context.Context) ([]string, error) {
	var names []string
	for _, l := range labels() {
		names = append(names, l.name)
	}
	return names, nil
}
func (settled) CreateLabel(context.Context, string, string, string) error { return nil }
func (settled) LabelledIssues(context.Context, string) ([]github.Issue, error) {
	return []github.Issue{{Number: 1}}, nil
}
func (settled) CreateIssue(context.Context, string, string, []string) (github.Issue, error) {
	return github.Issue{}, nil
}

// TestInitOffersAgentsStub: a repository with no instructions file is
// offered an AGENTS.md in the to-do; with --agents-md init writes a short
// stub naming the checks it found; a repository with any instructions file
// (CLAUDE.md here) is offered none and gets none.
func TestInitOffersAgentsStub(t *testing.T) {
	run := func(t *testing.T, stub bool, files map[string]string) (Result, string) {
		t.Helper()
		dir := t.TempDir()
		files["go.mod"] = "module example.com/x\n\ngo 1.22\n"
		for p, s := range files {
			if err := os.WriteFile(filepath.Join(dir, p), []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		res, err := Run(context.Background(), Options{Dir: dir, GitHub: settled{}, Repository: "acme/x", Server: "https://github.com",
			Pin: Pin{Ref: "v1"}, Out: io.Discard, AgentsStub: stub})
		if err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(filepath.Join(dir, AgentsPath))
		return res, string(data)
	}
	offered := func(res Result) bool {
		return slices.ContainsFunc(res.ToDo, func(s string) bool { return strings.Contains(s, "--agents-md") })
	}

	res, got := run(t, false, map[string]string{})
	if got != "" || !offered(res) {
		t.Errorf("without --agents-md: AGENTS.md %q, offered %v; want none written and the offer in the to-do:\n%s", got, offered(res), strings.Join(res.ToDo, "\n"))
	}
	res, got = run(t, true, map[string]string{})
	if !strings.Contains(got, "`go test ./...`") || len(got) > 1000 || offered(res) {
		t.Errorf("with --agents-md: want a short stub naming the checks, and no offer left:\n%s", got)
	}
	if !slices.ContainsFunc(res.ToDo, func(s string) bool { return strings.HasPrefix(s, "Fill in AGENTS.md") }) {
		t.Errorf("the to-do does not ask to fill the stub in:\n%s", strings.Join(res.ToDo, "\n"))
	}
	res, got = run(t, true, map[string]string{"CLAUDE.md": "Use table tests.\n"})
	if got != "" || offered(res) {
		t.Errorf("with CLAUDE.md: AGENTS.md %q, offered %v; want neither", got, offered(res))
	}
}
