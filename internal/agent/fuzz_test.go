package agent

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/policy"
)

// fuzzSandbox resolves paths in a real directory under the policy's rules but
// runs nothing: fuzzed commands must not execute.
type fuzzSandbox struct{ dir string }

func (s fuzzSandbox) Workspace() (string, error)         { return s.dir, nil }
func (s fuzzSandbox) Resolve(p string) (string, error)   { return policy.Resolve(s.dir, p) }
func (s fuzzSandbox) Split(cmd string) ([]string, error) { return policy.Split(cmd) }
func (s fuzzSandbox) Run(ctx context.Context, argv []string) (RunResult, error) {
	if err := policy.Default().Check(argv); err != nil {
		return RunResult{}, err
	}
	return RunResult{Output: "not run"}, nil
}

// FuzzToolCall: whatever name and arguments a model sends, the dispatcher
// answers with a known result class and a message, and never panics.
func FuzzToolCall(f *testing.F) {
	for _, seed := range []struct{ name, args string }{
		{"read_file", `{"path": "a.txt"}`},
		{"read_file", `{"path": "a.txt", "start_line": 2, "end_line": 1}`},
		{"read_file", `{"path": "a.txt", "start_line": 1e400}`},
		{"read_file", `{"path": "a.txt"`},
		{"edit_file", `{"path": "a.txt", "old": "a", "new": "b"}`},
		{"write_file", `{"path": "d/e.txt", "content": "x"}`},
		{"run", `{"command": "ls | wc"}`},
		{"run", `{"command": "go test ./..."}`},
		{"search", `{"pattern": "x", "path": "../.."}`},
		{"list_dir", ``},
		{"list_dir", `null`},
		{"ask", `{"question": ""}`},
		{"finish", `[]`},
		{"plan_wrong", `{"reason": 1}`},
		{"nosuch", `{}`},
		{"", `{"path": {"a": [1, 2]}} trailing`},
	} {
		f.Add(seed.name, seed.args)
	}
	dir := f.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\nbeta\n"), 0o644); err != nil {
		f.Fatal(err)
	}
	_, err := newSession(Config{Models: []Tier{{Name: "m", Model: nil}}, Sandbox: fuzzSandbox{dir}})
	if err == nil {
		f.Fatal("a tier without a model was accepted")
	}
	s, err := newSession(Config{Models: []Tier{{Name: "m", Model: noModel{}}}, Sandbox: fuzzSandbox{dir}, ToolOutputCap: 256})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(s.close)
	f.Fuzz(func(t *testing.T, name, raw string) {
		res, err := s.dispatch(context.Background(), ToolCall{ID: "x", Name: name, Arguments: raw})
		if err != nil {
			t.Fatalf("dispatch(%q, %q) = %v", name, raw, err)
		}
		switch res.class {
		case ResultOK, ResultError, ResultRefused, ResultMalformed:
		default:
			t.Fatalf("dispatch(%q, %q): class %q", name, raw, res.class)
		}
		if res.content == "" {
			t.Fatalf("dispatch(%q, %q): no message for the model", name, raw)
		}
		if res.end != nil && res.class != ResultOK {
			t.Fatalf("dispatch(%q, %q): a %s call ended the step", name, raw, res.class)
		}
		if len(res.content) > 256+512 {
			t.Fatalf("dispatch(%q, %q): reply of %d bytes passes the cap", name, raw, len(res.content))
		}
	})
}

type noModel struct{}

func (noModel) Complete(context.Context, ModelRequest) (ModelResponse, error) {
	return ModelResponse{}, nil
}
