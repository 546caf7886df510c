package implement

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/instructions"
	"github.com/roadmap-dev/roadmap/internal/plan"
)

// baseTree is the base commit's tree for the instructions' Reader.
type baseTree map[string]string

func (b baseTree) ReadAt(_ context.Context, _, p string) ([]byte, bool, error) {
	s, ok := b[p]
	return []byte(s), ok, nil
}

// TestInstructionsReachEveryAgent (implement's part: stage's and review's
// tests hold the planner, the verifier and the review's prompts): the
// implementer's step carries the instructions for the files its group
// names, the nested AGENTS.md first, and the review is handed those for
// the files the diff changes.
func TestInstructionsReachEveryAgent(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "trim")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]string{
		"proposal.md": "# Trim names\n\nKind: fix\n\n## Why\n\nNames keep spaces.\n",
		"tasks.md": "## 1. Trim\n\n- [ ] 1.1 Trim the name in `api/handler.go`; verify: `go test ./api`\n\n" +
			"## 2. Docs\n\n- [ ] 2.1 Say so in `docs/names.md`; verify: `test -f docs/names.md`\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	change, err := plan.LoadChange(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{workdir: filepath.Dir(dir), instr: instructions.New(baseTree{
		"AGENTS.md": "Run `make check`.\n", "api/AGENTS.md": "Handlers stay small.\n", "docs/AGENTS.md": "Docs in British English.\n",
	}, "base", nil)}
	ctx := context.Background()
	g, _ := change.Tasks.Group(1)

	var text string
	for _, p := range r.stepContext(ctx, change, &plan.Tasks{Groups: []plan.Group{g}}) {
		if p.Name == instructions.Title {
			text = p.Text
		}
	}
	nested, root := strings.Index(text, "Handlers stay small."), strings.Index(text, "Run `make check`.")
	if nested < 0 || root < 0 || nested > root || strings.Contains(text, "British") {
		t.Errorf("group 1's instructions: want api/AGENTS.md, then AGENTS.md, and not docs/AGENTS.md (group 2's):\n%s", text)
	}
	if got := agentPrompt(r.stepContext(ctx, change, change.Tasks)); !strings.Contains(got, "British") {
		t.Errorf("the head repair's instructions (every group's files) lack docs/AGENTS.md:\n%s", got)
	}

	diff := "diff --git a/docs/names.md b/docs/names.md\nnew file mode 100644\n--- /dev/null\n+++ b/docs/names.md\n@@ -0,0 +1 @@\n+Names are trimmed.\n"
	if got := r.reviewInstructions(ctx, diff); !strings.Contains(got, "Docs in British English.") || strings.Contains(got, "Handlers") {
		t.Errorf("the review's instructions for a diff of docs/names.md: want docs/AGENTS.md and not api's:\n%s", got)
	}
}

func agentPrompt(parts []agent.ContextPart) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString("## " + p.Name + "\n\n" + p.Text + "\n\n")
	}
	return b.String()
}
