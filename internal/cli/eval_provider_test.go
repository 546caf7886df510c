package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// planServer is an OpenAI-compatible model on loopback that is not the
// replay: it answers the planner by writing a plan of its own with tool
// calls (proposal.md, tasks.md, a delta spec, then finish) and the verifier
// with no objection, each answer with its usage.
type planServer struct {
	tasks string // tasks.md the planner writes

	mu       sync.Mutex
	requests int
	models   []string
}

func (s *planServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.NotFound(w, r)
		return
	}
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.requests++
	s.models = append(s.models, req.Model)
	s.mu.Unlock()
	first, turn := "", 0
	for _, m := range req.Messages {
		switch m.Role {
		case "assistant":
			turn++
		case "user":
			if first == "" {
				first = text(m.Content)
			}
		}
	}
	type call struct {
		name string
		args map[string]string
	}
	var calls []call
	switch {
	case strings.Contains(first, "Review the plan for issue"):
		calls = []call{{"verdict", map[string]string{"objections": "none"}}}
	case strings.Contains(first, "Write the plan for issue"):
		plan := []call{
			{"write_plan_file", map[string]string{"path": "proposal.md", "content": "# Discounts round the amount off half up\n\n## Why\n\nA ten percent discount on 995 cents takes off 99 cents: `Discount` truncates.\n\n## What Changes\n\n- `Discount` rounds the amount it takes off to the nearest cent, halves up.\n\nKind: fix\n\n## Premises\n\n- `internal/price/price.go` exists.\n- `Discount` is defined in `internal/price/price.go`.\n"}},
			{"write_plan_file", map[string]string{"path": "tasks.md", "content": s.tasks}},
			{"write_plan_file", map[string]string{"path": "specs/pricing/spec.md", "content": "## ADDED Requirements\n\n### Requirement: The amount off rounds half up\n\nDiscount SHALL round the amount it takes off half up, to the cent.\n\n#### Scenario: 995 cents, ten percent off\n\n- **WHEN** Discount(995, 10) is called\n- **THEN** it returns 895\n"}},
			{"finish", map[string]string{"summary": "the plan is written"}},
		}
		calls = plan[min(turn, len(plan)-1):][:1]
	default:
		http.Error(w, "no answer for this conversation", http.StatusBadRequest)
		return
	}
	var tc []map[string]any
	for i, c := range calls {
		args, _ := json.Marshal(c.args)
		tc = append(tc, map[string]any{"id": fmt.Sprintf("call_%d_%d", turn, i), "type": "function",
			"function": map[string]any{"name": c.name, "arguments": string(args)}})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion", "created": 1, "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "tool_calls",
			"message": map[string]any{"role": "assistant", "content": nil, "tool_calls": tc}}},
		"usage": map[string]any{"prompt_tokens": 1000, "completion_tokens": 100, "total_tokens": 1100},
	})
}

// text is a message's content, a string or a list of text parts.
func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// TestEvalProvider runs `eval stage` on a model that is not the replay: an
// OpenAI-compatible server on loopback, named by --provider, --base-url and
// --model, priced by the configuration. The case is stage-clean without its
// recorded exchanges, so only the server can write its plan.
func TestEvalProvider(t *testing.T) {
	set := filepath.Join(t.TempDir(), "set")
	if err := os.CopyFS(filepath.Join(set, "stage-clean"), os.DirFS(filepath.Join(golden("stage"), "stage-clean"))); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(set, "stage-clean", "fixtures")); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "roadmap.yml")
	if err := os.WriteFile(cfg, []byte("prices:\n  test-model: {input: 2, output: 8}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sound := "## 1. Round the amount off half up (AC1)\n\n- [ ] 1.1 Add a failing test `TestDiscountRoundsHalfUp` to `internal/price/price_test.go`, beside `TestDiscount`; verify: `go test ./internal/price -run TestDiscountRoundsHalfUp` fails\n- [ ] 1.2 Round half up in `Discount` in `internal/price/price.go`; its caller in `internal/order/order.go` keeps working; verify: `go test ./internal/price ./internal/order`\n"
	// The same plan leaving out Discount's caller: the callers-and-tests
	// gate must find it, so the gates run on what the server wrote.
	flawed := strings.Replace(sound, "; its caller in `internal/order/order.go` keeps working", "", 1)
	for _, tc := range []struct {
		name, tasks string
		clean       bool
		score       float64
	}{{"sound", sound, true, 1}, {"caller left out", flawed, false, 0.36}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := &planServer{tasks: tc.tasks}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			code, out, stderr := runEvalCLI(t, "eval", "stage", "--golden", set, "--provider", "openai-compatible",
				"--base-url", ts.URL+"/v1", "--model", "test-model", "--config", cfg, "--json")
			if code != ExitOK {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			// A model of one's own is an attacker's: with no isolation
			// in the configuration, the Jobs take the default boundary.
			if !strings.Contains(stderr, "model test-model (openai-compatible), isolation auto") {
				t.Errorf("stderr does not say the model's code runs behind the auto boundary:\n%s", stderr)
			}
			doc := checkEvalJSON(t, out, 1, "failing", "openspec_valid", "spend", "seconds")
			c := doc.Cases[0]
			srv.mu.Lock()
			n, models := srv.requests, srv.models
			srv.mu.Unlock()
			if n < 4 || models[0] != "test-model" {
				t.Fatalf("the server answered %d requests for %v; want the planner's four (and the verifier's) for test-model", n, models)
			}
			if c["mode"] != "stage" || c["plan"] != "discounts-round-half-up" || c["openspec_valid"] != true {
				t.Errorf("the case: %v", c)
			}
			failing, _ := c["failing"].([]any)
			if tc.clean {
				if len(failing) != 0 || c["clean"] != true {
					t.Errorf("the sound plan has failing findings %v", failing)
				}
			} else if len(failing) == 0 || failing[0].(map[string]any)["rule"] != "roadmap/gate/callers-and-tests" {
				t.Errorf("the plan without the caller: failing %v, want the callers-and-tests gate's finding", failing)
			}
			if c["score"] != tc.score {
				t.Errorf("score %v, want %v (facts %v)", c["score"], tc.score, c["facts"])
			}
			sp, _ := c["spend"].(map[string]any)
			in, _ := sp["tokens_in"].(float64)
			outT, _ := sp["tokens_out"].(float64)
			usd, _ := sp["usd"].(float64)
			if in != float64(n)*1000 || outT != float64(n)*100 || usd <= 0 {
				t.Errorf("spend %v after %d requests; want their tokens and a price above 0", sp, n)
			}
			if want := (in*2 + outT*8) / 1e6; usd < want*0.999 || usd > want*1.001 {
				t.Errorf("usd %v, want %v at the configuration's price", usd, want)
			}
		})
	}
}
