package llm

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/openai/openai-go/v3"

	"github.com/roadmap-dev/roadmap/internal/agent"
)

// FuzzReplayRequest feeds the replay server bodies nobody controls: it must
// answer every one with 200 or a 4xx carrying an OpenAI-style error, never
// panic or 500.
func FuzzReplayRequest(f *testing.F) {
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":"Make TestAdd pass"}]}`))
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"Make TestAdd pass"}]},
		{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"read_file","arguments":"{\"path\":"}}]},
		{"role":"tool","tool_call_id":"c1","content":"return a - b"}]}`))
	f.Add([]byte(`{"messages":[{"role":"assistant","tool_calls":[{"function":{"arguments":{"path":1}}}]}]}`))
	f.Add([]byte(`{"messages":[],"stream":true}`))
	f.Add([]byte(`[]`))
	conv, err := ParseConversation("fix-add", []byte(fixAdd))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r := NewReplay([]*Conversation{conv})
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(body)))
		switch {
		case rec.Code == http.StatusOK:
			var w wireResponse
			if err := json.Unmarshal(rec.Body.Bytes(), &w); err != nil || len(w.Choices) != 1 {
				t.Fatalf("200 with body %q", rec.Body)
			}
		case rec.Code >= 400 && rec.Code < 500:
			var e wireError
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil && rec.Code != 429 {
				t.Fatalf("status %d with a body that is not an error object: %q", rec.Code, rec.Body)
			}
		default:
			t.Fatalf("status %d for body %q", rec.Code, body)
		}
		if req, err := parseChatRequest(body); err == nil {
			// What parses is a usable request.
			if len(req.Messages) == 0 {
				t.Fatal("parsed a request with no messages")
			}
			_ = EstimateRequest(req, Estimate)
		}
	})
}

// FuzzParseConversation: any fixture that loads survives a write and a
// reload unchanged (Record relies on it).
func FuzzParseConversation(f *testing.F) {
	f.Add([]byte(fixAdd))
	f.Add([]byte(`{"comment":"c","source":"recorded","match_regexp":"^a+$","model":"m","turns":[{"expect":"x","response":{"tool_calls":[{"name":"t","arguments":"<b>"}]}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConversation("f", data)
		if err != nil {
			return
		}
		out, err := MarshalConversation(c)
		if err != nil {
			t.Fatalf("marshal a loaded conversation: %v", err)
		}
		back, err := ParseConversation("f", out)
		if err != nil {
			t.Fatalf("reload of %s: %v", out, err)
		}
		if diff := cmp.Diff(c, back, cmpopts.IgnoreUnexported(Conversation{})); diff != "" {
			t.Fatalf("round trip changed the conversation (-first +second):\n%s", diff)
		}
	})
}

// FuzzOpenAIToolArguments: whatever text a model puts in a tool call's
// arguments reaches the agent byte for byte, however malformed.
func FuzzOpenAIToolArguments(f *testing.F) {
	f.Add(`{"path":"a.go"}`, "")
	f.Add(`{"path": `, "thinking…")
	f.Add("\x00\xff", "<b>")
	f.Fuzz(func(t *testing.T, args, content string) {
		type fn struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		}
		body, _ := json.Marshal(map[string]any{
			"id": "x", "object": "chat.completion", "created": 1, "model": "m",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "tool_calls", "message": map[string]any{
				"role": "assistant", "content": content,
				"tool_calls": []any{map[string]any{"id": "c", "type": "function", "function": fn{"run", args}}},
			}}},
			"usage": map[string]any{"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3},
		})
		var cc openai.ChatCompletion
		if err := json.Unmarshal(body, &cc); err != nil {
			t.Fatalf("the SDK refused a well-formed completion: %v", err)
		}
		resp, err := fromOpenAI(&cc, agent.ModelRequest{})
		if err != nil {
			t.Fatal(err)
		}
		// json.Marshal replaced invalid UTF-8 with U+FFFD; compare with what was sent.
		var sent struct {
			Choices []struct {
				Message struct {
					ToolCalls []struct{ Function fn } `json:"tool_calls"`
				} `json:"message"`
			} `json:"choices"`
		}
		json.Unmarshal(body, &sent)
		want := sent.Choices[0].Message.ToolCalls[0].Function.Arguments
		if got := resp.Message.ToolCalls[0].Arguments; got != want {
			t.Fatalf("arguments %q came through as %q", want, got)
		}
	})
}

// FuzzOpenAIResponse and FuzzAnthropicResponse: a provider's body, however
// odd, converts without a panic.
func FuzzOpenAIResponse(f *testing.F) {
	f.Add([]byte(okCompletion("hi", 1, 2)))
	f.Add([]byte(`{"choices":[{"message":{"tool_calls":[{"type":"custom","custom":{"name":"x","input":"y"}},{"function":{"arguments":{"a":1}}}]}}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var cc openai.ChatCompletion
		if json.Unmarshal(body, &cc) != nil {
			return
		}
		fromOpenAI(&cc, agent.ModelRequest{Messages: []agent.Message{{Role: agent.RoleUser, Content: "x"}}})
	})
}

func FuzzAnthropicResponse(f *testing.F) {
	f.Add([]byte(`{"content":[{"type":"text","text":"a"},{"type":"tool_use","id":"t","name":"run","input":{"command":"go test"}}],"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var m anthropic.Message
		if json.Unmarshal(body, &m) != nil {
			return
		}
		fromAnthropic(&m)
	})
}

// FuzzEstimate: the estimate is never below ceil(bytes/3) nor below the
// pieces a BPE tokenizer certainly splits the text into.
func FuzzEstimate(f *testing.F) {
	f.Add("func main() { fmt.Println(\"héllo, 世界\") }")
	f.Add("1,2,3,4 ,5")
	f.Add("a \n\t b ")
	f.Fuzz(func(t *testing.T, s string) {
		got := Estimate(s)
		if lb := lowerBound(s); got < lb {
			t.Fatalf("Estimate(%q) = %d, below %d pieces", s, got, lb)
		}
		if got < (len(s)+2)/3 {
			t.Fatalf("Estimate(%q) = %d, below ceil(bytes/3)", s, got)
		}
	})
}

// FuzzFitMessages: a fitted request is within the window or the error says
// why, and it keeps every message.
func FuzzFitMessages(f *testing.F) {
	f.Add("task", "tool output", 100)
	f.Fuzz(func(t *testing.T, task, out string, window int) {
		msgs := []agent.Message{
			{Role: agent.RoleSystem, Content: "s"},
			{Role: agent.RoleUser, Content: task},
			{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "1", Name: "run"}}},
			{Role: agent.RoleTool, ToolCallID: "1", Content: out},
			{Role: agent.RoleAssistant, Content: out},
			{Role: agent.RoleUser, Content: out + out},
		}
		got, _, err := FitMessages(msgs, nil, window, Estimate)
		if err != nil {
			return
		}
		if len(got) != len(msgs) {
			t.Fatalf("got %d messages, want %d", len(got), len(msgs))
		}
		if n := EstimateRequest(agent.ModelRequest{Messages: got}, Estimate); window > 0 && n > window {
			t.Fatalf("fitted to %d tokens, over the window %d", n, window)
		}
	})
}
