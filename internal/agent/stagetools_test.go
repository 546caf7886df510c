package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/agent"
)

// runStageCalls runs calls with a stage toolbox and returns the replies and
// result classes; the last call must end the step.
func runStageCalls(t *testing.T, dir string, tools []string, calls ...scriptCall) ([]string, []string) {
	t.Helper()
	var turns []turn
	for _, c := range calls {
		turns = append(turns, turn{ToolCalls: []scriptCall{c}})
	}
	model := &scriptedModel{name: "m", turns: turns}
	obs := &recorder{}
	out, err := agent.Run(context.Background(), agent.Config{
		Models: []agent.Tier{{Name: "m", Model: model}}, Sandbox: newSandbox(t, dir, os.Environ()),
		Observer: obs, Tools: tools, PlanDir: "openspec/changes/x", ToolOutputCap: 2000,
	}, agent.Step{Task: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != agent.StatusFinished {
		t.Fatalf("status = %s (%s)", out.Status, out.Reason)
	}
	return toolReplies(model), obs.classes()
}

func TestPlannerTools(t *testing.T) {
	dir := gitRepo(t, map[string]string{"a.go": "package a\n\n// A is a.\nfunc A() int { return 1 }\n", "go.mod": "module example.com/a\n\ngo 1.22\n"})
	replies, classes := runStageCalls(t, dir, agent.PlannerTools(),
		call("write_plan_file", map[string]string{"path": "tasks.md", "content": "## 1. A\n"}),
		call("write_plan_file", map[string]string{"path": "specs/widgets/spec.md", "content": "## ADDED Requirements\n"}),
		call("write_plan_file", map[string]string{"path": "../../../a.go", "content": "package evil\n"}),
		call("write_plan_file", map[string]string{"path": "notes.txt", "content": "x"}),
		call("write_file", map[string]string{"path": "a.go", "content": "package evil\n"}),
		call("run_test", map[string]string{"command": "git status"}),
		call("run_test", map[string]string{"command": "go vet ./..."}),
		call("git_log", map[string]any{"max": 5}),
		call("go_doc", map[string]string{"target": "-u"}),
		call("finish", map[string]string{"summary": "planned"}))
	want := []string{"ok", "ok", "error", "error", "malformed", "refused", "ok", "ok", "error", "ok"}
	if strings.Join(classes, " ") != strings.Join(want, " ") {
		t.Errorf("classes %v, want %v\nreplies:\n%s", classes, want, strings.Join(replies, "\n---\n"))
	}
	if data, err := os.ReadFile(filepath.Join(dir, "openspec/changes/x/tasks.md")); err != nil || string(data) != "## 1. A\n" {
		t.Errorf("tasks.md = %q, %v", data, err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "a.go")); !strings.Contains(string(data), "func A") {
		t.Errorf("a.go was changed by the planner:\n%s", data)
	}
	if !strings.Contains(replies[7], "roadmap test: scenario") {
		t.Errorf("git_log reply %q does not show the history", replies[7])
	}
}

func TestVerifierTools(t *testing.T) {
	dir := gitRepo(t, map[string]string{"a.go": "package a\n"})
	replies, classes := runStageCalls(t, dir, agent.VerifierTools(),
		call("write_plan_file", map[string]string{"path": "tasks.md", "content": "x"}),
		call("git_blame", map[string]any{"path": "a.go"}),
		call("verdict", map[string]string{"objections": "a.go:1: the package is empty"}))
	if strings.Join(classes, " ") != "malformed ok ok" {
		t.Errorf("classes %v, want the plan writer unknown to the verifier\n%s", classes, strings.Join(replies, "\n---\n"))
	}
	if _, err := os.Stat(filepath.Join(dir, "openspec")); err == nil {
		t.Error("the verifier wrote a plan file")
	}
}

func TestPlanPath(t *testing.T) {
	for p, ok := range map[string]bool{
		"proposal.md": true, "tasks.md": true, "design.md": true, "specs/a-b/spec.md": true, "specs/a/b/spec.md": true,
		"": false, "/tasks.md": false, "../tasks.md": false, "./tasks.md": false, "specs/A/spec.md": false,
		"specs/spec.md": false, "specs/a/other.md": false, "README.md": false, "specs/../tasks.md": false, "tasks.md\x00": false,
	} {
		if _, err := agent.PlanPath(p); (err == nil) != ok {
			t.Errorf("PlanPath(%q) error %v, want ok=%v", p, err, ok)
		}
	}
}

// TestVerdictAcceptance: the verdict's acceptance map must be a JSON array
// (a malformed one goes back to the model, which corrects it) and reaches
// the Outcome as sent; a verdict without one has none.
func TestVerdictAcceptance(t *testing.T) {
	dir := gitRepo(t, map[string]string{"a.go": "package a\n"})
	ac := `[{"criterion": 1, "group": 0, "reason": "no group sends email"}]`
	model := &scriptedModel{name: "m", turns: []turn{
		{ToolCalls: []scriptCall{call("verdict", map[string]string{"objections": "none", "acceptance": "criterion 1: group 0"})}},
		{ToolCalls: []scriptCall{call("verdict", map[string]string{"objections": "none", "acceptance": ac})}},
	}}
	obs := &recorder{}
	out, err := agent.Run(context.Background(), agent.Config{
		Models: []agent.Tier{{Name: "m", Model: model}}, Sandbox: newSandbox(t, dir, os.Environ()),
		Observer: obs, Tools: agent.VerifierTools(), ToolOutputCap: 2000,
	}, agent.Step{Task: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != agent.StatusFinished || out.Acceptance != ac || out.Summary != "none" {
		t.Fatalf("outcome %+v; want finished with the acceptance map as sent", out)
	}
	if got := strings.Join(obs.classes(), " "); got != "error ok" {
		t.Errorf("classes %q, want the malformed map refused, then the array recorded", got)
	}
	_, classes := runStageCalls(t, dir, agent.VerifierTools(), call("verdict", map[string]string{"objections": "none"}))
	if strings.Join(classes, " ") != "ok" {
		t.Errorf("a verdict without an acceptance map: %v", classes)
	}
}
