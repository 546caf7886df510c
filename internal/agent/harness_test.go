package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/policy"
	"github.com/roadmap-dev/roadmap/internal/sandbox/sandboxtest"
)

// policySandbox is the wiring the implement package does: the policy's
// sandbox, with its Result converted to the agent's RunResult.
type policySandbox struct{ *policy.Sandbox }

func (s policySandbox) Run(ctx context.Context, argv []string) (agent.RunResult, error) {
	r, err := s.Sandbox.Run(ctx, argv)
	return agent.RunResult(r), err
}

func newSandbox(t *testing.T, dir string, environ []string) policySandbox {
	t.Helper()
	sb := policy.NewSandbox(sandboxtest.None(t, dir, environ), policy.Default(), environ)
	return policySandbox{sb}
}

// turn is one scripted assistant reply, as scenario files write it.
type turn struct {
	Content   string       `json:"content,omitempty"`
	ToolCalls []scriptCall `json:"tool_calls,omitempty"`
	Usage     agent.Usage  `json:"usage"`
	// Error makes the model call fail with this message.
	Error string `json:"error,omitempty"`
}

// scriptCall is a tool call. Arguments is either a JSON string, sent as is
// (so malformed JSON can be scripted), or any other JSON value, sent as its
// text.
type scriptCall struct {
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

func (c scriptCall) raw() string {
	var s string
	if err := json.Unmarshal(c.Arguments, &s); err == nil {
		return s
	}
	return string(c.Arguments)
}

// scriptedModel replays recorded assistant turns in order and keeps every
// request it was sent. A request past the end of the script is an error that
// names the turn, as the replay provider's is.
type scriptedModel struct {
	mu       sync.Mutex
	name     string
	turns    []turn
	requests []agent.ModelRequest
}

func (m *scriptedModel) Complete(ctx context.Context, req agent.ModelRequest) (agent.ModelResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	req.Messages = append([]agent.Message(nil), req.Messages...)
	m.requests = append(m.requests, req)
	n := len(m.requests)
	if n > len(m.turns) {
		return agent.ModelResponse{}, fmt.Errorf("scripted model %s: no turn %d (the script has %d)", m.name, n, len(m.turns))
	}
	tr := m.turns[n-1]
	if tr.Error != "" {
		return agent.ModelResponse{}, fmt.Errorf("%s", tr.Error)
	}
	msg := agent.Message{Role: agent.RoleAssistant, Content: tr.Content}
	for i, c := range tr.ToolCalls {
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("t%d_%d", n, i+1)
		}
		msg.ToolCalls = append(msg.ToolCalls, agent.ToolCall{ID: id, Name: c.Name, Arguments: c.raw()})
	}
	return agent.ModelResponse{Model: m.name, Message: msg, Usage: tr.Usage}, nil
}

func (m *scriptedModel) calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.requests)
}

// call builds a scripted tool call with object arguments.
func call(name string, arguments any) scriptCall {
	b, err := json.Marshal(arguments)
	if err != nil {
		panic(err)
	}
	return scriptCall{Name: name, Arguments: b}
}

// recorder is an Observer that keeps every event.
type recorder struct {
	mu      sync.Mutex
	models  []agent.ModelCallEvent
	tools   []agent.ToolCallEvent
	retries []agent.RetryEvent
}

func (r *recorder) ModelBooked(agent.ModelBookedEvent) {}

func (r *recorder) ModelCall(e agent.ModelCallEvent) {
	r.mu.Lock()
	r.models = append(r.models, e)
	r.mu.Unlock()
}
func (r *recorder) ToolCall(e agent.ToolCallEvent) {
	r.mu.Lock()
	r.tools = append(r.tools, e)
	r.mu.Unlock()
}
func (r *recorder) Retry(e agent.RetryEvent) {
	r.mu.Lock()
	r.retries = append(r.retries, e)
	r.mu.Unlock()
}

func (r *recorder) classes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.tools {
		out = append(out, e.ResultClass)
	}
	return out
}

// gitRepo writes files into a new directory and commits them with real git.
func gitRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, argv := range [][]string{
		{"git", "init", "-q"},
		{"git", "add", "-A"},
		{"git", "-c", "user.name=roadmap test", "-c", "user.email=test@invalid", "commit", "-q", "--no-gpg-sign", "-m", "scenario"},
	} {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
		}
	}
	return dir
}

// goTest runs `go test ./...` in dir outside the policy, as a person would.
func goTest(ctx context.Context, dir string) (bool, string, error) {
	cmd := exec.CommandContext(ctx, "go", "test", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOTOOLCHAIN=local", "GOFLAGS=")
	out, err := cmd.CombinedOutput()
	if _, ok := err.(*exec.ExitError); ok {
		return false, string(out), nil
	}
	if err != nil {
		return false, "", err
	}
	return true, string(out), nil
}

// toolReplies returns the contents of the tool messages the model was shown,
// in order, from the last request it received.
func toolReplies(m *scriptedModel) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.requests) == 0 {
		return nil
	}
	var out []string
	for _, msg := range m.requests[len(m.requests)-1].Messages {
		if msg.Role == agent.RoleTool || (msg.Role == agent.RoleUser && strings.HasPrefix(msg.Content, "Error:")) {
			out = append(out, msg.Content)
		}
	}
	return out
}
