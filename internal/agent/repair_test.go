package agent_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/roadmap-dev/roadmap/internal/agent"
)

var calcRepo = map[string]string{
	"go.mod":  "module example.com/calc\n\ngo 1.26\n",
	"calc.go": "package calc\n\n// Add returns the sum of a and b.\nfunc Add(a, b int) int {\n\treturn a - b\n}\n",
	"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n" +
		"\tif got := Add(2, 3); got != 5 {\n\t\tt.Fatalf(\"Add(2, 3) = %d, want 5\", got)\n\t}\n}\n",
}

// TestRepairRounds: the first round's fix is wrong and the checks fail; the
// failing log reaches the model in the same conversation; the second round
// fixes it and the checks pass.
func TestRepairRounds(t *testing.T) {
	dir := gitRepo(t, calcRepo)
	usage := agent.Usage{TokensIn: 1000, TokensOut: 100, USD: 0.002}
	model := &scriptedModel{name: "small", turns: []turn{
		{ToolCalls: []scriptCall{call("edit_file", map[string]string{"path": "calc.go", "old": "return a - b", "new": "return a * b"})}, Usage: usage},
		{ToolCalls: []scriptCall{call("finish", map[string]string{"summary": "Add multiplies now."})}, Usage: usage},
		{ToolCalls: []scriptCall{call("edit_file", map[string]string{"path": "calc.go", "old": "return a * b", "new": "return a + b"})}, Usage: usage},
		{ToolCalls: []scriptCall{call("finish", map[string]string{"summary": "Add adds now."})}, Usage: usage},
	}}
	obs := &recorder{}
	cfg := agent.Config{
		Models:   []agent.Tier{{Name: "small", Model: model}, {Name: "large", Model: &scriptedModel{name: "large"}}},
		Sandbox:  newSandbox(t, dir, os.Environ()),
		Observer: obs,
	}
	checks := 0
	check := func(ctx context.Context) (bool, string, error) {
		checks++
		return goTest(ctx, dir)
	}
	out, err := agent.RunWithRepair(context.Background(), cfg, agent.Step{Task: "Fix Add so TestAdd passes."}, check, 3)
	if err != nil {
		t.Fatal(err)
	}
	want := agent.Outcome{
		Status:   agent.StatusFinished,
		Summary:  "Add adds now.",
		Usage:    agent.Spend{TokensIn: 4000, TokensOut: 400, USD: 0.008, ModelCalls: 4},
		Turns:    4,
		Attempts: 2,
		Tier:     0,
		Model:    "small",
	}
	if diff := cmp.Diff(want, out, cmp.Comparer(func(a, b float64) bool { return fmt.Sprintf("%.6f", a) == fmt.Sprintf("%.6f", b) })); diff != "" {
		t.Errorf("outcome (-want +got):\n%s", diff)
	}
	if checks != 2 {
		t.Errorf("checks ran %d times, want 2", checks)
	}
	if len(model.requests) != 4 {
		t.Fatalf("model got %d requests, want 4", len(model.requests))
	}
	// The third request opens round two: the same conversation (the first
	// round's messages are still there) with the failing log appended.
	r3 := model.requests[2].Messages
	if diff := cmp.Diff(model.requests[1].Messages, r3[:len(model.requests[1].Messages)]); diff != "" {
		t.Errorf("round two did not continue round one's conversation (-round1 +round2):\n%s", diff)
	}
	last := r3[len(r3)-1]
	if last.Role != agent.RoleUser || !strings.Contains(last.Content, "The checks failed (round 1)") || !strings.Contains(last.Content, "Add(2, 3) = 6, want 5") {
		t.Errorf("round two's prompt ends with %q, want the failing log", last.Content)
	}
	if len(obs.retries) != 1 || !strings.HasPrefix(obs.retries[0].Reason, "checks_failed: repair round") {
		t.Errorf("retry events = %+v, want one repair round", obs.retries)
	}
	if passed, log, _ := goTest(context.Background(), dir); !passed {
		t.Errorf("go test fails after the step:\n%s", log)
	}
}

// finisher is a model that finishes at once and remembers what it was sent.
type finisher struct {
	mu   sync.Mutex
	name string
	reqs [][]agent.Message
}

func (f *finisher) Complete(ctx context.Context, req agent.ModelRequest) (agent.ModelResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reqs = append(f.reqs, append([]agent.Message(nil), req.Messages...))
	if req.Model != f.name {
		return agent.ModelResponse{}, fmt.Errorf("model %s sent a request for %s", f.name, req.Model)
	}
	return agent.ModelResponse{Message: agent.Message{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{
		{ID: "c", Name: "finish", Arguments: `{"summary": "done"}`},
	}}, Usage: agent.Usage{TokensIn: 10, TokensOut: 1}}, nil
}

// TestModelLadder: each fresh conversation climbs the ladder — conversation i
// runs on tier min(i, len-1) — and a fresh conversation holds the task and the
// latest log only.
func TestModelLadder(t *testing.T) {
	tests := []struct {
		name string
		// log returns the failing log of round r (1-based).
		log func(r int) string
		// want is the tier name of each round's request.
		want []string
	}{
		{
			// Round 1 fails; round 2 (same conversation) repeats the failure,
			// so round 3 starts afresh on tier 1; it repeats again, so round 4
			// is on tier 2, and so is round 5 (the top of the ladder).
			name: "repeated failure climbs each time",
			log:  func(int) string { return "--- FAIL: TestX (0.01s)\n    x_test.go:9: got 1, want 2\nFAIL" },
			want: []string{"small", "small", "medium", "large", "large"},
		},
		{
			// Distinct failures: two rounds per conversation, then a fresh
			// start on the next tier.
			name: "two rounds per conversation",
			log:  func(r int) string { return fmt.Sprintf("--- FAIL: TestX\n    x_test.go:9: got %d, want 0\nFAIL", r) },
			want: []string{"small", "small", "medium", "medium", "large"},
		},
		{
			// Timings differ between runs of the same failure; it is still
			// the same failure.
			name: "timings do not make a failure new",
			log:  func(r int) string { return fmt.Sprintf("--- FAIL: TestX (0.0%ds)\nFAIL\tpkg\t1.%03ds", r, r*7) },
			want: []string{"small", "small", "medium", "large", "large"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tiers := map[string]*finisher{}
			var ladder []agent.Tier
			for _, n := range []string{"small", "medium", "large"} {
				tiers[n] = &finisher{name: n}
				ladder = append(ladder, agent.Tier{Name: n, Model: tiers[n]})
			}
			var order []string
			round := 0
			check := func(context.Context) (bool, string, error) {
				round++
				return false, tt.log(round), nil
			}
			obs := &recorder{}
			cfg := agent.Config{Models: ladder, Sandbox: fakeSandbox{}, Observer: obs}
			out, err := agent.RunWithRepair(context.Background(), cfg, agent.Step{Task: "Make TestX pass."}, check, 5)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range obs.models {
				order = append(order, m.Model)
			}
			if diff := cmp.Diff(tt.want, order); diff != "" {
				t.Errorf("tier of each round (-want +got):\n%s", diff)
			}
			if out.Status != agent.StatusChecksFailed || out.Attempts != 5 || out.Model != "large" || out.Tier != 2 {
				t.Errorf("outcome = %s after %d rounds on %s (tier %d), want checks_failed after 5 on large (tier 2)", out.Status, out.Attempts, out.Model, out.Tier)
			}
			if out.CheckLog != tt.log(5) {
				t.Errorf("outcome check log = %q, want the last round's %q", out.CheckLog, tt.log(5))
			}
			if got, want := out.Usage, (agent.Spend{TokensIn: 50, TokensOut: 5, ModelCalls: 5}); got != want {
				t.Errorf("usage = %+v, want %+v (every round summed)", got, want)
			}
			// A fresh conversation: the system prompt and one user message
			// holding the task and the latest log, nothing of the old thread.
			first := tiers["medium"].reqs[0]
			if len(first) != 2 || !strings.Contains(first[1].Content, "Make TestX pass.") ||
				!strings.Contains(first[1].Content, "## The checks failed") || !strings.Contains(first[1].Content, tt.log(2)) {
				t.Errorf("the medium tier's first request is not a fresh start with the latest log: %+v", first)
			}
		})
	}
}

// fakeSandbox answers without touching anything: for tests where the tools
// that run are the terminal ones.
type fakeSandbox struct{}

func (fakeSandbox) Workspace() (string, error)       { return "/nonexistent", nil }
func (fakeSandbox) Resolve(p string) (string, error) { return "/nonexistent/" + p, nil }
func (fakeSandbox) Split(cmd string) ([]string, error) {
	return strings.Fields(cmd), nil
}
func (fakeSandbox) Run(context.Context, []string) (agent.RunResult, error) {
	return agent.RunResult{Output: "ran"}, nil
}

// TestRepairOutOfBudget: a step that runs out of budget in a repair round
// still hands on the failing log, so the next Job starts from it.
func TestRepairOutOfBudget(t *testing.T) {
	cfg := agent.Config{
		Models:  []agent.Tier{{Name: "small", Model: &finisher{name: "small"}}},
		Sandbox: fakeSandbox{},
		Budget:  agent.Budget{Turns: 1},
	}
	check := func(context.Context) (bool, string, error) { return false, "FAIL: TestY", nil }
	out, err := agent.RunWithRepair(context.Background(), cfg, agent.Step{Task: "x"}, check, 3)
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != agent.StatusBudgetExhausted || out.CheckLog != "FAIL: TestY" || out.Attempts != 2 {
		t.Errorf("outcome = %s, check log %q, %d attempts; want budget_exhausted with the failing log after 2", out.Status, out.CheckLog, out.Attempts)
	}
}
