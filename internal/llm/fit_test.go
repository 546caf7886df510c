package llm

import (
	"errors"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/text"

	"github.com/roadmap-dev/roadmap/internal/agent"
)

func TestFitMessages(t *testing.T) {
	big := strings.Repeat("FAIL: TestBackoffSchedule expected 2s got 1s\n", 200)
	msgs := []agent.Message{
		{Role: agent.RoleSystem, Content: "system prompt"},
		{Role: agent.RoleUser, Content: "the task"},
		{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "1", Name: "run", Arguments: `{}`}}},
		{Role: agent.RoleTool, ToolCallID: "1", Content: big},
		{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "2", Name: "run", Arguments: `{}`}}},
		{Role: agent.RoleTool, ToolCallID: "2", Content: big},
	}
	window := EstimateRequest(agent.ModelRequest{Messages: msgs}, Estimate) - Estimate(big)/2

	got, dropped, err := FitMessages(msgs, nil, window, Estimate)
	if err != nil {
		t.Fatal(err)
	}
	if n := EstimateRequest(agent.ModelRequest{Messages: got}, Estimate); n > window {
		t.Errorf("fitted request is %d tokens, over the window %d", n, window)
	}
	if len(got) != len(msgs) {
		t.Fatalf("got %d messages, want %d: fitting must not remove messages", len(got), len(msgs))
	}
	if len(dropped) != 1 || dropped[0].Name != "message 3 (run result)" {
		t.Errorf("dropped %+v, want only the oldest tool result", dropped)
	}
	if got[5].Content != big || msgs[3].Content != big {
		t.Errorf("the newest result must stay whole and the caller's slice must not change")
	}

	t.Run("newest cut in the middle as a last resort", func(t *testing.T) {
		got, _, err := FitMessages(msgs, nil, 600, Estimate)
		if err != nil {
			t.Fatal(err)
		}
		if n := EstimateRequest(agent.ModelRequest{Messages: got}, Estimate); n > 600 {
			t.Errorf("fitted request is %d tokens, over the window 600", n)
		}
		last := got[5].Content
		if !strings.Contains(last, "bytes dropped to fit the input window") || !strings.HasPrefix(last, "FAIL: ") || !strings.HasSuffix(last, "got 1s\n") {
			t.Errorf("newest message %q: want a head, a marker and the tail", text.Short(last, 300))
		}
	})
	t.Run("nothing left to cut", func(t *testing.T) {
		_, _, err := FitMessages(msgs[:2], nil, 5, Estimate)
		var we *WindowError
		if !errors.As(err, &we) {
			t.Errorf("got %v, want *WindowError", err)
		}
	})
}
