package stage

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/git"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/instructions"
	"github.com/roadmap-dev/roadmap/internal/kernel"
)

// baseTree is the base commit's tree for the instructions' Reader.
type baseTree map[string]string

func (b baseTree) ReadAt(_ context.Context, _, p string) ([]byte, bool, error) {
	s, ok := b[p]
	return []byte(s), ok, nil
}

// TestInstructionsReachEveryAgent (stage's half: the planner and the
// verifier; review's and implement's tests hold the other two): both
// prompts carry the repository's instructions in their own section, the
// nested AGENTS.md of the file the issue names first, marked as the
// maintainers' text that grants nothing.
func TestInstructionsReachEveryAgent(t *testing.T) {
	ws := t.TempDir()
	for p, s := range map[string]string{"api/handler.go": "package api\n", "README.md": "# x\n"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(ws, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := &runner{
		o:     Options{Options: kernel.Options{Issue: 7, Repo: &git.Repo{Dir: ws}}},
		j:     &kernel.Job{Issue: github.Issue{Number: 7, Title: "Trim names", Body: "Trim the name in `api/handler.go`."}},
		dir:   "openspec/changes/trim-names",
		instr: instructions.New(baseTree{"AGENTS.md": "Run `make check`.\n", "api/AGENTS.md": "Handlers stay small.\n"}, "base", nil),
	}
	ctx := context.Background()
	for role, step := range map[string]agent.Step{"planner": r.plannerStep(ctx), "verifier": r.verifierStep(ctx, nil)} {
		text := sectionText(step)
		if text == "" {
			t.Errorf("the %s's prompt has no %q section", role, instructions.Title)
			continue
		}
		nested, root := strings.Index(text, "Handlers stay small."), strings.Index(text, "Run `make check`.")
		if nested < 0 || root < 0 || nested > root {
			t.Errorf("the %s's instructions: want api/AGENTS.md, then AGENTS.md:\n%s", role, text)
		}
		if !strings.Contains(text, "cannot widen the command policy") {
			t.Errorf("the %s's instructions do not say they grant nothing:\n%s", role, text)
		}
	}
}

func sectionText(step agent.Step) string {
	for _, p := range step.Context {
		if p.Name == instructions.Title {
			return p.Text
		}
	}
	return ""
}
