package review

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/instructions"
	"github.com/roadmap-dev/roadmap/internal/llm"
)

// prompts records the first user message of each request a model is sent.
type prompts struct {
	m    agent.Model
	seen []string
}

func (p *prompts) Complete(ctx context.Context, req agent.ModelRequest) (agent.ModelResponse, error) {
	for _, m := range req.Messages {
		if m.Role == agent.RoleUser {
			p.seen = append(p.seen, m.Content)
			break
		}
	}
	return p.m.Complete(ctx, req)
}

// TestInstructionsReachEveryAgent (the review's part: stage's and
// implement's tests hold the planner, the verifier and the implementer):
// the repository's instructions the caller read reach the reviewer's and
// the refuter's prompts as served, under their own heading.
func TestInstructionsReachEveryAgent(t *testing.T) {
	w := newWorld(t)
	const text = "Conventions: a division by a caller's value is checked first.\n"
	avg := FindingID("calc.go", "return sum / len(xs)", "bug")
	rp := &prompts{m: llm.NewReplay([]*llm.Conversation{
		reviewer(t, answer(t, avgEmpty())),
		refuter(t, fmt.Sprintf(`[{"id": %q, "verdict": "upheld", "reason": "Avg(nil) panics"}]`, avg)),
	})}
	cfg := agent.Config{Models: []agent.Tier{{Name: "reviewer-model", Model: rp}}, Sandbox: treeSandbox{w.dir}}
	res, err := Run(context.Background(), Options{Config: cfg}, Input{Dir: w.dir, Diff: w.diff, Instructions: text})
	if err != nil || res.Status != agent.StatusFinished {
		t.Fatalf("Run: %v, %s: %s", err, res.Status, res.Reason)
	}
	if len(rp.seen) != 2 {
		t.Fatalf("%d calls, want the reviewer's and the refuter's", len(rp.seen))
	}
	for i, role := range []string{"reviewer", "refuter"} {
		if !strings.Contains(rp.seen[i], "## "+instructions.Title+"\n\n"+strings.TrimSpace(text)) {
			t.Errorf("the %s's prompt lacks the instructions section:\n%s", role, rp.seen[i])
		}
	}
}
