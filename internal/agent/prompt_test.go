package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/agent"
)

// TestPromptSections: the hand-off from an earlier stop (check log and
// conflict files) and a person's answer are their own sections of the first
// prompt, after the task and before context, and the log is cut to its tail.
func TestPromptSections(t *testing.T) {
	model := &scriptedModel{name: "m", turns: []turn{{ToolCalls: []scriptCall{call("finish", map[string]string{"summary": "s"})}}}}
	log := strings.Repeat("noise line\n", 2000) + "--- FAIL: TestBackoff\n    backoff_test.go:12: got 2h, want 1h\n"
	_, err := agent.Run(context.Background(), agent.Config{
		Models:      []agent.Tier{{Name: "m", Model: model}},
		Sandbox:     fakeSandbox{},
		CheckLogCap: 1024,
	}, agent.Step{
		Task:     "Cap the backoff at one hour.",
		CheckLog: log,
		Conflict: []string{"internal/webhook/backoff.go", "go.sum"},
		Question: "Cap per attempt or in total?",
		Answer:   "Per attempt.",
		Context: []agent.ContextPart{
			{Name: "low", Text: "low priority", Priority: 1},
			{Name: "high", Text: "high priority", Priority: 9},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	prompt := model.requests[0].Messages[1].Content
	at := -1
	for _, want := range []string{
		"## Task\n\nCap the backoff at one hour.",
		"## The previous Job stopped",
		"backoff_test.go:12: got 2h, want 1h",
		"- internal/webhook/backoff.go\n- go.sum",
		"## Answer to your earlier question\n\nYou asked: Cap per attempt or in total?\n\nThe answer: Per attempt.",
		"## high",
		"## low",
	} {
		i := strings.Index(prompt, want)
		if i < 0 || i < at {
			t.Fatalf("prompt lacks %q after position %d:\n%s", want, at, prompt)
		}
		at = i
	}
	if n := strings.Count(prompt, "noise line"); n == 0 || n > 1024/len("noise line\n") {
		t.Errorf("the check log holds %d noise lines; want its tail within 1 KiB", n)
	}
	if model.requests[0].Messages[0].Role != agent.RoleSystem || !strings.Contains(model.requests[0].Messages[0].Content, "There is no shell") {
		t.Errorf("first message is not the default system prompt: %+v", model.requests[0].Messages[0])
	}
}
