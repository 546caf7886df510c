package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseFull(t *testing.T) {
	src := `# roadmap configuration
models:
  - provider: openai-compatible
    name: qwen2.5-coder
    base_url: http://127.0.0.1:11434/v1
    input_window: 16000
  - name: openai/gpt-4o
prices:
  openai/gpt-4o: {input: 2.5, output: 10}
budgets:
  step: {turns: 20, wall: 15m}
  item: {usd: 3.5}
  day: {usd: 20}
checks:
  commands: ["go vet ./...", "go test ./..."]
labels:
  stopped: roadmap:halted
implement:
  poll_interval: 45s
  repair_rounds: 2
policy:
  programs:
    go: {allow: true}
`
	cfg, err := Parse("roadmap.yml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(cfg.Models), 2; got != want {
		t.Fatalf("models = %d, want %d", got, want)
	}
	if got := cfg.Models[1]; got.Provider != "github-models" || got.InputWindow != 8000 || got.MaxOutput != 4000 {
		t.Errorf("second tier defaults = %+v", got)
	}
	if cfg.Models[0].InputWindow != 16000 {
		t.Errorf("input window = %d, want 16000", cfg.Models[0].InputWindow)
	}
	if diff := cmp.Diff(Price{Input: 2.5, Output: 10}, cfg.Prices["openai/gpt-4o"]); diff != "" {
		t.Errorf("price: %s", diff)
	}
	if cfg.Budgets.Step.Wall != 15*time.Minute || cfg.Budgets.Step.Turns != 20 || cfg.Budgets.Item.USD != 3.5 {
		t.Errorf("budgets = %+v", cfg.Budgets)
	}
	if cfg.Implement.PollInterval != 45*time.Second || cfg.Implement.RepairRounds != 2 || cfg.Implement.MaxJobs != 6 {
		t.Errorf("implement = %+v", cfg.Implement)
	}
	if cfg.Labels.Stopped != "roadmap:halted" || cfg.Labels.Implement != "roadmap:implement" {
		t.Errorf("labels = %+v", cfg.Labels)
	}
	if cfg.Policy.Kind == 0 {
		t.Error("policy node not kept")
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, src string
		line      int
		key, msg  string
	}{
		{"unknown top key", "modles: []\n", 1, "modles", "unknown key"},
		{"unknown nested key", "budgets:\n  item:\n    dollars: 3\n", 3, "budgets.item.dollars", "unknown key"},
		{"unknown model key", "models:\n  - name: x\n    temperature: 1\n", 3, "models[0].temperature", "unknown key"},
		{"bad provider", "models:\n  - provider: bard\n    name: x\n", 2, "models[0].provider", "unknown provider"},
		{"no name", "models:\n  - provider: openai\n", 2, "models[0].name", "needs a name"},
		{"replay without fixtures", "models:\n  - provider: replay\n    name: r\n", 2, "models[0].fixtures", "fixtures"},
		{"key in api_key_env", "models:\n  - name: x\n    api_key_env: ghp_abcdefghijklmnopqrstuvwxyz0123456789\n", 2, "models[0].api_key_env", "must name the environment variable"},
		{"negative budget", "budgets:\n  day:\n    usd: -1\n", 3, "budgets.day", "negative"},
		{"bad duration", "implement:\n  poll_interval: soon\n", 2, "", "soon"},
		{"zero poll", "implement:\n  poll_interval: 0s\n", 2, "implement.poll_interval", "positive"},
		{"wrong type", "implement:\n  repair_rounds: many\n", 2, "", "many"},
		{"not a mapping", "- a\n- b\n", 1, "", "mapping"},
		{"bad yaml", "models: [\n", 1, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("cfg.yml", []byte(tt.src))
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want *Error", err)
			}
			if ce.File != "cfg.yml" || ce.Line != tt.line || ce.Key != tt.key || !strings.Contains(ce.Msg, tt.msg) {
				t.Errorf("err = %q (line %d key %q), want line %d key %q msg containing %q", err, ce.Line, ce.Key, tt.line, tt.key, tt.msg)
			}
		})
	}
}

func TestLoadMissingIsDefault(t *testing.T) {
	cfg, err := Load(filepath.Join(t.TempDir(), "none.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Default().Labels, cfg.Labels); diff != "" {
		t.Error(diff)
	}
	p := filepath.Join(t.TempDir(), "roadmap.yml")
	os.WriteFile(p, []byte("labels:\n  stage: plan-me\n"), 0o644)
	cfg, err = Load(p)
	if err != nil || cfg.Labels.Stage != "plan-me" {
		t.Errorf("Load = %+v, %v", cfg, err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("models:\n  - name: x\n")
	f.Add("budgets: {item: {usd: 1}}\n")
	f.Add("implement: {poll_interval: 1s}\n")
	f.Fuzz(func(t *testing.T, s string) {
		cfg, err := Parse("f.yml", []byte(s))
		if err == nil && len(cfg.Models) == 0 {
			t.Error("a valid configuration has at least one model")
		}
	})
}
