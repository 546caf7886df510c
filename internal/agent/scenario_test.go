package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"

	"github.com/roadmap-dev/roadmap/internal/agent"
)

// A scenario is a txtar file in testdata/scenarios: the archive's comment says
// what it shows; task.txt is the step's task; repo/... are the files of a git repository made for the run;
// turns.json is the model's side of a recorded exchange (assistant replies with
// tool calls), served in order; config.json (optional) sets budgets; want.json
// is the expected outcome. after/... (optional) are files the repository must
// hold when the step ends.
type scenarioConfig struct {
	Budget     budgetJSON  `json:"budget"`
	ItemBudget budgetJSON  `json:"item_budget"`
	ItemSpent  agent.Spend `json:"item_spent"`
	MaxOutput  int         `json:"max_output"`
	Tools      []string    `json:"tools"`
}

type budgetJSON struct {
	Turns     int     `json:"turns"`
	TokensIn  int64   `json:"tokens_in"`
	TokensOut int64   `json:"tokens_out"`
	USD       float64 `json:"usd"`
}

func (b budgetJSON) budget() agent.Budget {
	return agent.Budget{Turns: b.Turns, TokensIn: b.TokensIn, TokensOut: b.TokensOut, USD: b.USD}
}

type scenarioWant struct {
	Status         agent.Status `json:"status"`
	Summary        string       `json:"summary"`
	Question       string       `json:"question"`
	ReasonContains string       `json:"reason_contains"`
	ModelCalls     int          `json:"model_calls"`
	ToolClasses    []string     `json:"tool_classes"`
	// RepliesContain must appear in the tool replies the model was shown,
	// in this order.
	RepliesContain []string `json:"replies_contain"`
	// Absent are files the step must not have created.
	Absent []string `json:"absent"`
	// Verify is run outside the policy before and after the step.
	Verify *struct {
		BeforePasses bool `json:"before_passes"`
		AfterPasses  bool `json:"after_passes"`
	} `json:"verify"`
}

func TestScenarios(t *testing.T) {
	files, err := filepath.Glob("testdata/scenarios/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no scenarios in testdata/scenarios")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			runScenario(t, file)
		})
	}
}

func runScenario(t *testing.T, file string) {
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	repo := map[string]string{}
	after := map[string]string{}
	var turns []turn
	var task string
	var cfgJSON scenarioConfig
	var want scenarioWant
	for _, f := range ar.Files {
		switch {
		case strings.HasPrefix(f.Name, "repo/"):
			repo[strings.TrimPrefix(f.Name, "repo/")] = string(f.Data)
		case strings.HasPrefix(f.Name, "after/"):
			after[strings.TrimPrefix(f.Name, "after/")] = string(f.Data)
		case f.Name == "task.txt":
			task = string(f.Data)
		case f.Name == "turns.json":
			decodeStrict(t, f.Name, f.Data, &turns)
		case f.Name == "config.json":
			decodeStrict(t, f.Name, f.Data, &cfgJSON)
		case f.Name == "want.json":
			decodeStrict(t, f.Name, f.Data, &want)
		default:
			t.Fatalf("%s: unexpected file %q in the scenario", file, f.Name)
		}
	}
	if task == "" {
		t.Fatalf("%s: no task.txt", file)
	}
	if want.Status == "" {
		t.Fatalf("%s: want.json has no status", file)
	}

	ctx := context.Background()
	dir := gitRepo(t, repo)
	if want.Verify != nil {
		passed, log, err := goTest(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		if passed != want.Verify.BeforePasses {
			t.Fatalf("before the step: go test passed = %v, want %v\n%s", passed, want.Verify.BeforePasses, log)
		}
	}

	model := &scriptedModel{name: "scripted", turns: turns}
	obs := &recorder{}
	cfg := agent.Config{
		Models:     []agent.Tier{{Name: "scripted", Model: model}},
		Sandbox:    newSandbox(t, dir, os.Environ()),
		Observer:   obs,
		Budget:     cfgJSON.Budget.budget(),
		ItemBudget: cfgJSON.ItemBudget.budget(),
		ItemSpent:  cfgJSON.ItemSpent,
		MaxOutput:  cfgJSON.MaxOutput,
		Tools:      cfgJSON.Tools,
	}
	out, err := agent.Run(ctx, cfg, agent.Step{Task: task})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}

	if out.Status != want.Status {
		t.Errorf("status = %q (reason %q), want %q", out.Status, out.Reason, want.Status)
	}
	if out.Summary != want.Summary {
		t.Errorf("summary = %q, want %q", out.Summary, want.Summary)
	}
	if out.Question != want.Question {
		t.Errorf("question = %q, want %q", out.Question, want.Question)
	}
	if !strings.Contains(out.Reason, want.ReasonContains) {
		t.Errorf("reason = %q, want it to contain %q", out.Reason, want.ReasonContains)
	}
	// The model's own count: a call the loop refused to make never reached it.
	if got := model.calls(); got != want.ModelCalls {
		t.Errorf("model was called %d times, want %d", got, want.ModelCalls)
	}
	if out.Usage.ModelCalls != want.ModelCalls || out.Turns != want.ModelCalls {
		t.Errorf("outcome counts %d model calls and %d turns, want %d", out.Usage.ModelCalls, out.Turns, want.ModelCalls)
	}
	var wantUsage agent.Spend
	for _, tr := range turns[:min(want.ModelCalls, len(turns))] {
		wantUsage = wantUsage.Add(agent.Spend{TokensIn: tr.Usage.TokensIn, TokensOut: tr.Usage.TokensOut, USD: tr.Usage.USD, ModelCalls: 1})
	}
	if diff := cmp.Diff(wantUsage, out.Usage); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
	if len(obs.models) != want.ModelCalls {
		t.Errorf("observer saw %d model calls, want %d", len(obs.models), want.ModelCalls)
	}
	if diff := cmp.Diff(want.ToolClasses, obs.classes()); diff != "" {
		t.Errorf("tool result classes (-want +got):\n%s", diff)
	}
	replies := toolReplies(model)
	next := 0
	for _, w := range want.RepliesContain {
		found := false
		for ; next < len(replies); next++ {
			if strings.Contains(replies[next], w) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("no tool reply (in order) contains %q; replies:\n%s", w, strings.Join(replies, "\n---\n"))
			break
		}
	}
	for name, content := range after {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			t.Errorf("after the step: %v", err)
			continue
		}
		if diff := cmp.Diff(content, string(got)); diff != "" {
			t.Errorf("after the step, %s (-want +got):\n%s", name, diff)
		}
	}
	for _, name := range want.Absent {
		if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(name))); err == nil {
			t.Errorf("after the step, %s exists; the step must not have created it", name)
		}
	}
	if want.Verify != nil {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		defer cancel()
		passed, log, err := goTest(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		if passed != want.Verify.AfterPasses {
			t.Errorf("after the step: go test passed = %v, want %v\n%s", passed, want.Verify.AfterPasses, log)
		}
	}
}

func decodeStrict(t *testing.T, name string, data []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}
