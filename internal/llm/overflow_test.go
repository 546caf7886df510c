package llm

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/agent"
)

// TestContextOverflowRefusal: an OpenAI-compatible server's context-length
// refusal (HTTP 400, context_length_exceeded) comes back from the client at
// once, not retried, as an error the agent recognises as a context
// overflow; other 400s and 5xx are not one.
func TestContextOverflowRefusal(t *testing.T) {
	const overflow = `{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9371 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`
	conv, err := ParseConversation("c", []byte(`{"comment":"an overflow, then an answer","source":"hand","match":"hello","turns":[
 {"errors":[{"status":400,"body":`+quoteJSON(overflow)+`}],"response":{"content":"hi","usage":{"tokens_in":10,"tokens_out":1}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	replay := NewReplay([]*Conversation{conv})
	srv := httptest.NewServer(replay)
	defer srv.Close()
	c, err := New(Config{Provider: ProviderOpenAICompatible, BaseURL: srv.URL + "/v1", Model: "m"}, WithClock(newFakeClock()))
	if err != nil {
		t.Fatal(err)
	}
	req := agent.ModelRequest{Model: "m", Messages: []agent.Message{{Role: agent.RoleUser, Content: "hello"}}}
	_, err = c.Complete(context.Background(), req)
	var o interface{ ContextOverflow() bool }
	if !errors.As(err, &o) || !o.ContextOverflow() {
		t.Fatalf("err = %v, want a context overflow", err)
	}
	if st := replay.Stats(); st.Errors != 1 || st.Calls != 0 {
		t.Errorf("stats %+v: want the one refusal, no retry", st)
	}
	if resp, err := c.Complete(context.Background(), req); err != nil || resp.Message.Content != "hi" {
		t.Errorf("the next request: %+v, %v; want the turn's answer", resp, err)
	}

	for _, tc := range []struct {
		e    APIError
		want bool
	}{
		{APIError{Status: 400, Body: overflow}, true},
		{APIError{Status: 400, Body: `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}`}, true},
		{APIError{Status: 400, Body: `{"error":{"message":"Invalid value for 'tools'","code":"invalid_value"}}`}, false},
		{APIError{Status: 500, Body: overflow}, false},
		{APIError{Status: 429, Body: "maximum context length"}, false},
	} {
		if got := tc.e.ContextOverflow(); got != tc.want {
			t.Errorf("%d %s: ContextOverflow = %v, want %v", tc.e.Status, tc.e.Body, got, tc.want)
		}
	}
}

func quoteJSON(s string) string {
	b := []byte{'"'}
	for _, r := range s {
		if r == '"' || r == '\\' {
			b = append(b, '\\')
		}
		b = append(b, string(r)...)
	}
	return string(append(b, '"'))
}
