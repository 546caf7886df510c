package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/roadmap-dev/roadmap/internal/agent"
)

// fakeClock advances only when slept on.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	slept []time.Duration
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.slept = append(c.slept, d)
	c.now = c.now.Add(d)
	return ctx.Err()
}

const testKey = "ghs_testKEY0123456789abcdefghijklmnop"

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// okCompletion is a minimal OpenAI chat completion with text content.
func okCompletion(content string, in, out int) string {
	return fmt.Sprintf(`{"id":"c1","object":"chat.completion","created":1,"model":"openai/gpt-4o-mini",
"choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],
"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`, content, in, out, in+out)
}

// scripted serves the given handlers in order, one per request.
type scripted struct {
	mu    sync.Mutex
	steps []http.HandlerFunc
	calls int
	reqs  []*http.Request
	body  [][]byte
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	i := s.calls
	s.calls++
	b, _ := io.ReadAll(r.Body)
	s.reqs = append(s.reqs, r)
	s.body = append(s.body, b)
	s.mu.Unlock()
	if i >= len(s.steps) {
		i = len(s.steps) - 1
	}
	s.steps[i](w, r)
}

func status(code int, headers map[string]string, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for k, v := range headers {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

func newGitHubModels(t *testing.T, srv *httptest.Server, clock Clock, opts ...Option) *Client {
	t.Helper()
	base := []Option{WithHTTPClient(srv.Client()), WithClock(clock), WithGetenv(env(map[string]string{"GITHUB_TOKEN": testKey}))}
	c, err := New(Config{Provider: ProviderGitHubModels, BaseURL: srv.URL + "/inference", Model: "openai/gpt-4o-mini"}, append(base, opts...)...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

func hello() agent.ModelRequest {
	return agent.ModelRequest{Messages: []agent.Message{{Role: agent.RoleUser, Content: "hello"}}}
}

func TestRetryAfterHonoured(t *testing.T) {
	clock := newFakeClock()
	start := clock.Now()
	tests := []struct {
		name    string
		headers map[string]string
		want    time.Duration
	}{
		{"seconds", map[string]string{"Retry-After": "7"}, 7 * time.Second},
		{"milliseconds", map[string]string{"Retry-After-Ms": "1500", "Retry-After": "9"}, 1500 * time.Millisecond},
		{"http date", map[string]string{"Retry-After": start.Add(20 * time.Second).Format(http.TimeFormat)}, 20 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newFakeClock()
			start := clock.Now()
			srv := httptest.NewServer(&scripted{steps: []http.HandlerFunc{
				status(429, tt.headers, `{"error":{"code":"RateLimitReached","message":"Rate limit of 15 per 60s exceeded"}}`),
				status(200, nil, okCompletion("hi", 12, 3)),
			}})
			defer srv.Close()
			var events []agent.RetryEvent
			c := newGitHubModels(t, srv, clock, WithRetryObserver(func(e agent.RetryEvent) { events = append(events, e) }))

			resp, err := c.Complete(context.Background(), hello())
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if got := clock.Now().Sub(start); got != tt.want {
				t.Errorf("fake time waited %s, want %s", got, tt.want)
			}
			want := []agent.RetryEvent{{Reason: "rate_limited (HTTP 429)", Attempt: 1, Wait: tt.want}}
			if diff := cmp.Diff(want, events); diff != "" {
				t.Errorf("retry events (-want +got):\n%s", diff)
			}
			if resp.Message.Content != "hi" || resp.Usage.TokensIn != 12 || resp.Usage.TokensOut != 3 {
				t.Errorf("got response %+v, want content hi and usage 12/3", resp)
			}
		})
	}
}

func TestServerErrorBackoffBounded(t *testing.T) {
	clock := newFakeClock()
	srv := httptest.NewServer(&scripted{steps: []http.HandlerFunc{status(503, nil, `{"error":{"message":"upstream busy"}}`)}})
	defer srv.Close()
	var events []agent.RetryEvent
	c := newGitHubModels(t, srv, clock, WithMaxRetries(3), WithRetryObserver(func(e agent.RetryEvent) { events = append(events, e) }))

	_, err := c.Complete(context.Background(), hello())
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 503 {
		t.Fatalf("got error %v, want an *APIError with status 503", err)
	}
	if !strings.Contains(err.Error(), "gave up after 4 attempts") {
		t.Errorf("error %q does not say how many attempts were made", err)
	}
	if diff := cmp.Diff([]time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, clock.slept); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
	if len(events) != 3 || events[2].Reason != "transient (HTTP 503)" {
		t.Errorf("got events %+v, want 3 transient (HTTP 503)", events)
	}
	if got := backoff(20); got != backoffCap {
		t.Errorf("backoff(20) = %s, want the cap %s", got, backoffCap)
	}
}

func TestNonRetryableStatusReturnedAtOnce(t *testing.T) {
	for _, code := range []int{400, 401, 403, 404, 413, 422} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			clock := newFakeClock()
			s := &scripted{steps: []http.HandlerFunc{status(code, nil, `{"error":"a string, not an object"}`)}}
			srv := httptest.NewServer(s)
			defer srv.Close()
			c := newGitHubModels(t, srv, clock)
			_, err := c.Complete(context.Background(), hello())
			var apiErr *APIError
			if !errors.As(err, &apiErr) || apiErr.Status != code {
				t.Fatalf("got %v, want *APIError %d", err, code)
			}
			if s.calls != 1 || len(clock.slept) != 0 {
				t.Errorf("got %d calls and waits %v, want 1 call and no wait", s.calls, clock.slept)
			}
			if !strings.Contains(apiErr.Body, "a string, not an object") {
				t.Errorf("body %q lost the server's message", apiErr.Body)
			}
		})
	}
}

func TestLongRetryAfterReturnedToCaller(t *testing.T) {
	clock := newFakeClock()
	s := &scripted{steps: []http.HandlerFunc{status(429, map[string]string{"Retry-After": "3600"}, `{"error":{"message":"daily limit"}}`)}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	c := newGitHubModels(t, srv, clock)
	_, err := c.Complete(context.Background(), hello())
	var apiErr *APIError
	if !errors.As(err, &apiErr) || !apiErr.RateLimited() || apiErr.RetryAfter != time.Hour {
		t.Fatalf("got %v, want a rate-limited *APIError with RetryAfter 1h", err)
	}
	if len(clock.slept) != 0 || s.calls != 1 {
		t.Errorf("slept %v over %d calls; a wait past the limit must go back to the caller", clock.slept, s.calls)
	}
}

func TestRetryWaitPastDeadlineReturned(t *testing.T) {
	// Context deadlines are wall-clock times, so this fake clock starts now.
	clock := &fakeClock{now: time.Now()}
	s := &scripted{steps: []http.HandlerFunc{status(429, map[string]string{"Retry-After": "30"}, `{}`)}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	c := newGitHubModels(t, srv, clock)
	ctx, cancel := context.WithDeadline(context.Background(), clock.Now().Add(10*time.Second))
	defer cancel()
	_, err := c.Complete(ctx, hello())
	if err == nil || !strings.Contains(err.Error(), "would pass the deadline") {
		t.Fatalf("got %v, want an error saying the wait passes the deadline", err)
	}
}

func TestKeyNeverInErrors(t *testing.T) {
	echo := func(code int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(code)
			fmt.Fprintf(w, `{"error":{"message":"bad credentials: %s"}}`, r.Header.Get("Authorization"))
		}
	}
	for _, tt := range []struct {
		name     string
		provider string
		code     int
	}{
		{"github-models 401", ProviderGitHubModels, 401},
		{"openai 500 until given up", ProviderOpenAI, 500},
		{"anthropic 403", ProviderAnthropic, 403},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(echo(tt.code))
			defer srv.Close()
			c, err := New(Config{Provider: tt.provider, BaseURL: srv.URL, Model: "m", APIKeyEnv: "KEY"},
				WithHTTPClient(srv.Client()), WithClock(newFakeClock()), WithGetenv(env(map[string]string{"KEY": testKey})))
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Complete(context.Background(), hello())
			if err == nil {
				t.Fatal("got no error")
			}
			var apiErr *APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("got %T %v, want an *APIError in the chain", err, err)
			}
			for what, text := range map[string]string{"error": err.Error(), "body": apiErr.Body, "%+v": fmt.Sprintf("%+v", err)} {
				if strings.Contains(text, testKey) {
					t.Errorf("the key appears in the %s: %s", what, text)
				}
			}
			if !strings.Contains(apiErr.Body, "[masked]") {
				t.Errorf("body %q: want the echoed key replaced by [masked]", apiErr.Body)
			}
		})
	}
	t.Run("transport error with the key in the URL", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		url := srv.URL
		srv.Close() // nothing listens: every attempt fails to connect
		c, err := New(Config{Provider: ProviderOpenAICompatible, BaseURL: url + "/key=" + testKey, Model: "m", APIKeyEnv: "KEY"},
			WithClock(newFakeClock()), WithMaxRetries(1), WithGetenv(env(map[string]string{"KEY": testKey})))
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Complete(context.Background(), hello())
		if err == nil || !strings.Contains(err.Error(), "gave up after 2 attempts") {
			t.Fatalf("got %v, want a transport error given up after 2 attempts", err)
		}
		if strings.Contains(err.Error(), testKey) || !strings.Contains(err.Error(), "key=[masked]") {
			t.Errorf("error %q: want the key in the URL masked", err)
		}
		for e := err; e != nil; e = errors.Unwrap(e) {
			if strings.Contains(e.Error(), testKey) {
				t.Errorf("a wrapped error holds the key: %q", e)
			}
		}
	})
	t.Run("missing key names the variable only", func(t *testing.T) {
		_, err := New(Config{Provider: ProviderGitHubModels}, WithGetenv(env(nil)))
		if err == nil || !strings.Contains(err.Error(), "GITHUB_TOKEN") {
			t.Errorf("got %v, want an error naming GITHUB_TOKEN", err)
		}
	})
}

func TestGitHubModelsRequest(t *testing.T) {
	s := &scripted{steps: []http.HandlerFunc{status(200, nil, okCompletion("ok", 5, 1))}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	c := newGitHubModels(t, srv, newFakeClock())
	if _, err := c.Complete(context.Background(), hello()); err != nil {
		t.Fatal(err)
	}
	r := s.reqs[0]
	got := map[string]string{
		"method": r.Method, "path": r.URL.Path,
		"authorization": r.Header.Get("Authorization"), "accept": r.Header.Get("Accept"),
	}
	want := map[string]string{
		"method": "POST", "path": "/inference/chat/completions",
		"authorization": "Bearer " + testKey, "accept": "application/vnd.github+json",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
	var body map[string]any
	if err := json.Unmarshal(s.body[0], &body); err != nil {
		t.Fatal(err)
	}
	if body["model"] != "openai/gpt-4o-mini" || body["max_tokens"] != float64(DefaultMaxOutput) {
		t.Errorf("got model %v max_tokens %v, want the configured model and %d", body["model"], body["max_tokens"], DefaultMaxOutput)
	}
}

func TestOpenAICompatibleNoKey(t *testing.T) {
	s := &scripted{steps: []http.HandlerFunc{status(200, nil, okCompletion("ok", 5, 1))}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	c, err := New(Config{Provider: ProviderOpenAICompatible, BaseURL: srv.URL + "/v1", Model: "qwen2.5-coder"}, WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Complete(context.Background(), hello()); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if got := s.reqs[0].URL.Path; got != "/v1/chat/completions" {
		t.Errorf("path %q, want /v1/chat/completions", got)
	}
}

func TestOpenAIToolCallRoundTrip(t *testing.T) {
	// The response's second call has malformed arguments: they must reach the
	// agent byte for byte, for it to answer.
	const response = `{"id":"c2","object":"chat.completion","created":1,"model":"gpt-4.1",
"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[
 {"id":"call_b","type":"function","function":{"name":"edit_file","arguments":"{\"path\":\"calc.go\",\"old\":\"a-b\",\"new\":\"a+b\"}"}},
 {"id":"call_c","type":"function","function":{"name":"run","arguments":"{\"cmd\": [\"go\", \"test\""}}]}}],
"usage":{"prompt_tokens":321,"completion_tokens":45,"total_tokens":366}}`
	s := &scripted{steps: []http.HandlerFunc{status(200, nil, response)}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	c, err := New(Config{Provider: ProviderOpenAI, BaseURL: srv.URL + "/v1", Model: "gpt-4.1", MaxOutput: 1000,
		Prices: map[string]Price{"gpt-4.1": {Input: 2, Output: 8}}},
		WithHTTPClient(srv.Client()), WithGetenv(env(map[string]string{"OPENAI_API_KEY": testKey})))
	if err != nil {
		t.Fatal(err)
	}
	req := agent.ModelRequest{
		Messages: []agent.Message{
			{Role: agent.RoleSystem, Content: "You fix Go code."},
			{Role: agent.RoleUser, Content: "Make TestAdd pass."},
			{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "call_a", Name: "read_file", Arguments: `{"path":"calc.go"}`}}},
			{Role: agent.RoleTool, ToolCallID: "call_a", Content: "package calc\nfunc Add(a, b int) int { return a-b }"},
		},
		Tools: []agent.ToolSpec{{Name: "read_file", Description: "Read a file.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}},
	}
	got, err := c.Complete(context.Background(), req)
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	want := agent.ModelResponse{
		Model:        "gpt-4.1",
		FinishReason: "tool_calls",
		Message: agent.Message{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{
			{ID: "call_b", Name: "edit_file", Arguments: `{"path":"calc.go","old":"a-b","new":"a+b"}`},
			{ID: "call_c", Name: "run", Arguments: `{"cmd": ["go", "test"`},
		}},
		Usage: agent.Usage{TokensIn: 321, TokensOut: 45, USD: (321*2 + 45*8) / 1e6},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}

	var body map[string]any
	if err := json.Unmarshal(s.body[0], &body); err != nil {
		t.Fatal(err)
	}
	wantBody := map[string]any{}
	json.Unmarshal([]byte(`{
	 "model":"gpt-4.1",
	 "max_completion_tokens":1000,
	 "messages":[
	  {"role":"system","content":"You fix Go code."},
	  {"role":"user","content":"Make TestAdd pass."},
	  {"role":"assistant","tool_calls":[{"id":"call_a","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"calc.go\"}"}}]},
	  {"role":"tool","tool_call_id":"call_a","content":"package calc\nfunc Add(a, b int) int { return a-b }"}],
	 "tools":[{"type":"function","function":{"name":"read_file","description":"Read a file.",
	   "parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}}]}`), &wantBody)
	gotBody := map[string]any{}
	for k := range wantBody {
		gotBody[k] = body[k]
	}
	if diff := cmp.Diff(wantBody, gotBody); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
}

func TestUsageEstimatedWhenServerOmitsIt(t *testing.T) {
	s := &scripted{steps: []http.HandlerFunc{status(200, nil,
		`{"id":"x","object":"chat.completion","created":1,"model":"llama3","choices":[{"index":0,"message":{"role":"assistant","content":"done"},"finish_reason":"stop"}]}`)}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	c, err := New(Config{Provider: ProviderOpenAICompatible, BaseURL: srv.URL, Model: "llama3"}, WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Complete(context.Background(), hello())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Usage.TokensIn <= 0 || resp.Usage.TokensOut <= 0 {
		t.Errorf("usage %+v: a response without usage must still count tokens", resp.Usage)
	}
}

func TestAnthropicShape(t *testing.T) {
	const response = `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5",
"content":[{"type":"text","text":"Running the tests."},{"type":"tool_use","id":"toolu_2","name":"run","input":{"cmd":["go","test","./..."]}}],
"stop_reason":"tool_use","stop_sequence":null,
"usage":{"input_tokens":100,"cache_read_input_tokens":20,"cache_creation_input_tokens":0,"output_tokens":7}}`
	s := &scripted{steps: []http.HandlerFunc{
		status(529, map[string]string{"Retry-After": "2"}, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`),
		status(200, nil, response),
	}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	clock := newFakeClock()
	var events []agent.RetryEvent
	c, err := New(Config{Provider: ProviderAnthropic, BaseURL: srv.URL, Model: "claude-sonnet-4-5", MaxOutput: 2000,
		Prices: map[string]Price{"claude-sonnet-4-5": {Input: 3, Output: 15}}},
		WithHTTPClient(srv.Client()), WithClock(clock), WithRetryObserver(func(e agent.RetryEvent) { events = append(events, e) }),
		WithGetenv(env(map[string]string{"ANTHROPIC_API_KEY": testKey})))
	if err != nil {
		t.Fatal(err)
	}
	req := agent.ModelRequest{
		Messages: []agent.Message{
			{Role: agent.RoleSystem, Content: "You fix Go code."},
			{Role: agent.RoleUser, Content: "Make TestAdd pass."},
			{Role: agent.RoleAssistant, Content: "Reading both.", ToolCalls: []agent.ToolCall{
				{ID: "toolu_a", Name: "read_file", Arguments: `{"path":"calc.go"}`},
				{ID: "toolu_b", Name: "read_file", Arguments: `{"path":`},
			}},
			{Role: agent.RoleTool, ToolCallID: "toolu_a", Content: "package calc"},
			{Role: agent.RoleTool, ToolCallID: "toolu_b", Content: ""},
		},
		Tools: []agent.ToolSpec{{Name: "read_file", Description: "Read a file.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`)}},
	}
	got, err := c.Complete(context.Background(), req)
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	want := agent.ModelResponse{
		Model: "claude-sonnet-4-5", FinishReason: "tool_calls",
		Message: agent.Message{Role: agent.RoleAssistant, Content: "Running the tests.", ToolCalls: []agent.ToolCall{
			{ID: "toolu_2", Name: "run", Arguments: `{"cmd":["go","test","./..."]}`},
		}},
		Usage: agent.Usage{TokensIn: 120, TokensOut: 7, USD: (120*3 + 7*15) / 1e6},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]agent.RetryEvent{{Reason: "transient (HTTP 529)", Attempt: 1, Wait: 2 * time.Second}}, events); diff != "" {
		t.Errorf("retry events (-want +got):\n%s", diff)
	}

	r := s.reqs[1]
	if r.URL.Path != "/v1/messages" || r.Header.Get("Anthropic-Version") == "" {
		t.Errorf("got %s with anthropic-version %q, want POST /v1/messages with a version header", r.URL.Path, r.Header.Get("Anthropic-Version"))
	}
	if !strings.Contains(r.Header.Get("Authorization")+r.Header.Get("X-Api-Key"), testKey) {
		t.Errorf("the key was not sent")
	}
	var body map[string]any
	if err := json.Unmarshal(s.body[1], &body); err != nil {
		t.Fatal(err)
	}
	wantBody := map[string]any{}
	json.Unmarshal([]byte(`{
	 "model":"claude-sonnet-4-5","max_tokens":2000,
	 "system":[{"type":"text","text":"You fix Go code."}],
	 "messages":[
	  {"role":"user","content":[{"type":"text","text":"Make TestAdd pass."}]},
	  {"role":"assistant","content":[{"type":"text","text":"Reading both."},
	    {"type":"tool_use","id":"toolu_a","name":"read_file","input":{"path":"calc.go"}},
	    {"type":"tool_use","id":"toolu_b","name":"read_file","input":{"arguments":"{\"path\":"}}]},
	  {"role":"user","content":[
	    {"type":"tool_result","tool_use_id":"toolu_a","is_error":false,"content":[{"type":"text","text":"package calc"}]},
	    {"type":"tool_result","tool_use_id":"toolu_b","is_error":false,"content":[{"type":"text","text":"(no output)"}]}]}],
	 "tools":[{"name":"read_file","description":"Read a file.",
	   "input_schema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}}]}`), &wantBody)
	gotBody := map[string]any{}
	for k := range wantBody {
		gotBody[k] = body[k]
	}
	if diff := cmp.Diff(wantBody, gotBody); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tt := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, "no provider"},
		{Config{Provider: "bard"}, "unknown provider"},
		{Config{Provider: ProviderOpenAICompatible}, "needs base_url"},
		{Config{Provider: ProviderReplay}, "fixtures"},
		{Config{Provider: ProviderReplay, Fixtures: "/nonexistent"}, "no such file"},
		{Config{Provider: ProviderOpenAICompatible, BaseURL: "http://127.0.0.1:1", InputWindow: -1}, "negative"},
	} {
		_, err := New(tt.cfg)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%+v) = %v, want an error containing %q", tt.cfg, err, tt.want)
		}
	}
}

func TestCost(t *testing.T) {
	prices := map[string]Price{"openai/gpt-4o": {Input: 2.5, Output: 10}}
	if got, want := Cost(prices, "openai/gpt-4o", 1_000_000, 500_000), 7.5; got != want {
		t.Errorf("Cost = %v, want %v", got, want)
	}
	if got := Cost(prices, "unknown", 1_000_000, 1_000_000); got != 0 {
		t.Errorf("Cost of an unpriced model = %v, want 0", got)
	}
}
