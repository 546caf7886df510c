package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

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
		{"negative budget", "budgets:\n  day:\n    usd: -1\n", 3, "budgets.day.usd", "0 or more"},
		{"bad duration", "implement:\n  poll_interval: soon\n", 2, "implement.poll_interval", "soon"},
		{"zero poll", "implement:\n  poll_interval: 0s\n", 2, "implement.poll_interval", "at least 1s"},
		{"wrong type", "implement:\n  repair_rounds: many\n", 2, "implement.repair_rounds", "many"},
		{"wrong type in a list", "models:\n  - name: x\n    input_window: wide\n", 3, "models[0].input_window", "wide"},
		{"not a mapping", "- a\n- b\n", 1, "", "mapping"},
		{"first problem in the file's order", "budgets:\n  step: {turns: many}\nmodles: []\n", 2, "budgets.step.turns", `must be an integer, not "many"`},
		{"a scalar for a mapping", "budgets:\n  step: 5\n", 2, "budgets.step", "must be a mapping, not 5"},
		{"unknown label lists every label", "labels:\n  stopp: x\n", 2, "labels.stopp", "(known: blocked, implement, needs_input, stage, stop, stopped, tracker, waiting)"},
		{"isolation with no value", "isolation:\n", 1, "isolation", `"" is not auto, user or none`},
		{"duration out of range", "checks:\n  timeout: 9999999999h\n", 2, "checks.timeout", "into time.Duration"},
		{"alias that holds itself", "checks:\n  commands: &c [make, *c]\n", 2, "", "alias *c refers to its own value"},
		{"aliases that multiply", "policy:\n  a: &a [" + strings.Repeat("x, ", 63) + "x]\n  b: &b [" + strings.Repeat("*a, ", 63) + "*a]\n  c: &c [" +
			strings.Repeat("*b, ", 63) + "*b]\n  d: [" + strings.Repeat("*c, ", 63) + "*c]\n", 4, "", "aliases expand the configuration past"},
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

func TestEvalFloors(t *testing.T) {
	cfg, err := Parse("cfg.yml", []byte("eval:\n  stage:\n    floor: 0.75\n  implement: {floor: 1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Eval.Stage.Floor != 0.75 || cfg.Eval.Implement.Floor != 1 {
		t.Errorf("eval = %+v, want floors 0.75 and 1", cfg.Eval)
	}
	if d := Default().Eval; d.Stage.Floor != 0 || d.Implement.Floor != 0 {
		t.Errorf("default eval = %+v, want no floors", d)
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

// FuzzParse: a configuration nobody here wrote never panics or hangs, and
// every refusal is an *Error naming the file, as the annotation needs.
func FuzzParse(f *testing.F) {
	f.Add("models:\n  - name: x\n")
	f.Add("budgets: {item: {usd: 1}}\n")
	f.Add("implement: {poll_interval: 1s}\n")
	f.Add("budgets:\n  step: &b {turns: 2, wall: 90}\n  item: *b\nmodles: []\n")
	f.Add("checks:\n  commands: &c [make, *c]\n")
	f.Add("models: [{provider: bard, name: x, input_window: .nan}]\nisolation:\nprices: {m: {input: 1e400}}\n")
	f.Add("labels: {stop: x, waiting: ~}\nsandbox: {network: [a]}\n? [k]\n: v\n")
	f.Add("labels: {stage: " + strings.Repeat("l", 51) + "}\nimplement: {max_groups: 1001}\n")
	f.Fuzz(func(t *testing.T, s string) {
		cfg, err := Parse("f.yml", []byte(s))
		if err == nil && len(cfg.Models) == 0 {
			t.Error("a valid configuration has at least one model")
		}
		if err == nil {
			for _, l := range []string{cfg.Labels.Stage, cfg.Labels.Implement, cfg.Labels.NeedsInput, cfg.Labels.Stopped, cfg.Labels.Stop, cfg.Labels.Waiting} {
				if n := utf8.RuneCountInString(l); n > MaxLabelChars {
					t.Errorf("label %q of %d characters accepted, over GitHub's %d", l, n, MaxLabelChars)
				}
			}
			for _, c := range cfg.Checks.Commands {
				if n := utf8.RuneCountInString(c); n > MaxStringChars {
					t.Errorf("a command of %d characters accepted, over %d", n, MaxStringChars)
				}
			}
			if cfg.Implement.MaxGroups < 1 || cfg.Implement.MaxGroups > MaxGroupsLimit {
				t.Errorf("implement.max_groups %d accepted", cfg.Implement.MaxGroups)
			}
		}
		var ce *Error
		if err != nil && (!errors.As(err, &ce) || ce.File != "f.yml") {
			t.Errorf("err = %#v, want an *Error naming f.yml", err)
		}
	})
}

// TestDocumentedExampleParses: the example in docs/configuration.md, which
// names every key, is a valid configuration. The hand-kept key table this
// package had refused its labels.stop and labels.waiting.
func TestDocumentedExampleParses(t *testing.T) {
	doc, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(doc), "```yaml\n")
	example, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatal("docs/configuration.md has no yaml example")
	}
	cfg, err := Parse("configuration.md", []byte(example))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Labels.Stop != "roadmap:stop" || cfg.Labels.Waiting != "roadmap:waiting" {
		t.Errorf("labels = %+v, want stop and waiting as the example writes them", cfg.Labels)
	}
}

// TestAliases: a YAML alias stands for its anchor's value, as the decoder
// reads it.
func TestAliases(t *testing.T) {
	cfg, err := Parse("roadmap.yml", []byte("budgets:\n  step: &b {turns: 2, wall: 5m}\n  item: *b\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Budgets.Item; got.Turns != 2 || got.Wall != 5*time.Minute {
		t.Errorf("budgets.item = %+v, want turns 2 and wall 5m from the anchor", got)
	}
}

// TestConfigRejects is one row per value that would break a later write or
// loop: each is refused with an error that names the file, the line the
// value is on and its key, the way a user reads it in the log.
func TestConfigRejects(t *testing.T) {
	tests := []struct {
		name string
		src  string // "" with missing: no file at all
		want string // the error's text after "<file>:"
	}{
		{"negative input price", "prices:\n  openai/gpt-4o:\n    input: -1\n    output: 10\n", "3: prices.openai/gpt-4o.input: must be a finite number, 0 or more"},
		{"NaN output price", "prices:\n  m:\n    input: 1\n    output: .nan\n", "4: prices.m.output: must be a finite number, 0 or more"},
		{"infinite price", "prices:\n  m: {input: .inf}\n", "2: prices.m.input: must be a finite number, 0 or more"},
		{"negative item usd", "budgets:\n  item:\n    tokens_in: 10\n    usd: -0.5\n", "4: budgets.item.usd: must be a finite number, 0 or more"},
		{"NaN day usd", "budgets:\n  day:\n    usd: .NaN\n", "3: budgets.day.usd: must be a finite number, 0 or more"},
		{"infinite step usd", "budgets:\n  step: {usd: -.inf}\n", "2: budgets.step.usd: must be a finite number, 0 or more"},
		{"usd that overflows", "budgets:\n  item:\n    usd: 1e400\n", "3: budgets.item.usd: cannot unmarshal !!str `1e400` into float64"},
		{"negative tokens", "budgets:\n  item:\n    tokens_out: -3\n", "3: budgets.item.tokens_out: must not be negative"},
		{"negative turns", "budgets:\n  step:\n    turns: -1\n", "3: budgets.step.turns: must not be negative"},
		{"negative wall", "budgets:\n  step:\n    wall: -5m\n", "3: budgets.step.wall: must not be negative"},
		{"wall without a unit", "budgets:\n  step:\n    wall: 90\n", "3: budgets.step.wall: 90 is not a duration: write it with a unit, such as 90s"},
		{"zero check timeout", "checks:\n  timeout: 0s\n", "2: checks.timeout: must be positive"},
		{"negative check timeout", "checks:\n  commands: [make]\n  timeout: -1m\n", "3: checks.timeout: must be positive"},
		{"check timeout without a unit", "checks:\n  timeout: 600\n", "2: checks.timeout: 600 is not a duration: write it with a unit, such as 600s"},
		{"zero watch timeout", "implement:\n  watch_timeout: 0s\n", "2: implement.watch_timeout: must be positive"},
		{"zero poll interval", "implement:\n  poll_interval: 0s\n", "2: implement.poll_interval: must be at least 1s"},
		{"sub-second poll interval", "implement:\n  repair_rounds: 2\n  poll_interval: 500ms\n", "3: implement.poll_interval: must be at least 1s"},
		{"poll interval without a unit", "implement:\n  poll_interval: 30\n", "2: implement.poll_interval: 30 is not a duration: write it with a unit, such as 30s"},
		{"poll interval not a duration", "implement:\n  poll_interval: soon\n", `2: implement.poll_interval: "soon" is not a duration (90s, 15m, 2h)`},
		{"empty stage label", "labels:\n  stage: \"\"\n", "2: labels.stage: must not be empty"},
		{"blank stopped label", "labels:\n  implement: roadmap:go\n  stopped: '  '\n", "3: labels.stopped: must not be empty"},
		{"null needs-input label", "labels:\n  needs_input:\n", "2: labels.needs_input: must not be empty"},
		{"zero repair rounds", "implement:\n  repair_rounds: 0\n", "2: implement.repair_rounds: must be from 1 to 10"},
		{"unbounded repair rounds", "implement:\n  repair_rounds: 1000000\n", "2: implement.repair_rounds: must be from 1 to 10"},
		{"zero stage rounds", "stage:\n  rounds: 0\n", "2: stage.rounds: must be from 1 to 10"},
		{"unknown verifier", "stage:\n  verifier: gpt-9\n", "2: stage.verifier: \"gpt-9\" is not the name of one of models"},
		{"unknown reviewer", "review:\n  model: gpt-9\n", "2: review.model: \"gpt-9\" is not the name of one of models"},
		{"zero max findings", "review:\n  enabled: true\n  max_findings: 0\n", "3: review.max_findings: must be from 1 to 10"},
		{"unbounded review rounds", "review:\n  rounds: 6\n", "2: review.rounds: must be from 0 to 5"},
		{"test strength floor above 1", "implement:\n  test_strength: true\n  test_strength_floor: 2\n", "3: implement.test_strength_floor: must be a number from 0 to 1"},
		{"NaN test strength floor", "implement:\n  test_strength_floor: .nan\n", "2: implement.test_strength_floor: must be a number from 0 to 1"},
		{"parallel groups not a bool", "implement:\n  parallel_groups: sometimes\n", `2: implement.parallel_groups: must be true or false, not "sometimes"`},
		{"repair rounds not a number", "implement:\n  repair_rounds: many\n", `2: implement.repair_rounds: must be an integer, not "many"`},
		{"too many jobs", "implement:\n  max_jobs: 101\n", "2: implement.max_jobs: must be from 1 to 100"},
		{"unknown isolation", "isolation: sometimes\n", `1: isolation: "sometimes" is not auto, user or none`},
		{"empty isolation", "models:\n  - name: x\nisolation: \"\"\n", `3: isolation: "" is not auto, user or none`},
		{"wider sandbox network", "sandbox:\n  network: internet\n", `2: sandbox.network: "internet" is not loopback or none (anything wider is the runner's firewall: docs/isolation.md)`},
		{"empty sandbox network", "sandbox:\n  network: \"\"\n", `2: sandbox.network: "" is not loopback or none (anything wider is the runner's firewall: docs/isolation.md)`},
		{"relative unix socket", "sandbox:\n  unix_sockets: [run/db.sock]\n", `2: sandbox.unix_sockets: "run/db.sock" is not an absolute path of a UNIX socket`},
		{"unknown sandbox key", "sandbox:\n  egress: all\n", "2: sandbox.egress: unknown key (known: network, unix_sockets)"},
		{"eval floor above 1", "eval:\n  stage:\n    floor: 1.5\n", "3: eval.stage.floor: must be a number from 0 to 1"},
		{"gates floor above 1", "eval:\n  gates: {floor: 1.01}\n", "2: eval.gates.floor: must be a number from 0 to 1"},
		{"negative eval floor", "eval:\n  implement: {floor: -0.1}\n", "2: eval.implement.floor: must be a number from 0 to 1"},
		{"NaN eval floor", "eval:\n  implement:\n    floor: .nan\n", "3: eval.implement.floor: must be a number from 0 to 1"},
		{"eval floor not a number", "eval:\n  stage:\n    floor: high\n", `3: eval.stage.floor: must be a number, not "high"`},
		{"unknown eval key", "eval:\n  stage:\n    minimum: 0.5\n", "3: eval.stage.minimum: unknown key (known: floor)"},
		{"owner without @", "alerts:\n  owners: [octocat]\n", `2: alerts.owners[0]: "octocat" is not @login or @org/team`},
		{"owner that is a sentence", "alerts:\n  owners:\n    - \"@acme/platform\"\n    - \"@a b\"\n", `4: alerts.owners[1]: "@a b" is not @login or @org/team`},
		{"owner with a nested team", "alerts:\n  owners: [\"@acme/team/sub\"]\n", `2: alerts.owners[0]: "@acme/team/sub" is not @login or @org/team`},
		{"owners not a list", "alerts:\n  owners: \"@octocat\"\n", `2: alerts.owners: must be a list, not "@octocat"`},
		{"negative stops per day", "alerts:\n  stops_per_day: -1\n", "2: alerts.stops_per_day: must be 0 (off) or more"},
		{"stops per day not a number", "alerts:\n  stops_per_day: many\n", `2: alerts.stops_per_day: must be an integer, not "many"`},
		{"day budget share above 1", "alerts:\n  owners: [\"@octocat\"]\n  day_budget_share: 80\n", "3: alerts.day_budget_share: must be a number from 0 (off) to 1"},
		{"negative day budget share", "alerts:\n  day_budget_share: -0.1\n", "2: alerts.day_budget_share: must be a number from 0 (off) to 1"},
		{"NaN day budget share", "alerts:\n  day_budget_share: .nan\n", "2: alerts.day_budget_share: must be a number from 0 (off) to 1"},
		{"unknown alerts key", "alerts:\n  mention: \"@octocat\"\n", "2: alerts.mention: unknown key (known: day_budget_share, owners, stops_per_day)"},
		{"zero active sub-issues", "tracker:\n  max_active: 0\n", "2: tracker.max_active: must be from 1 to 50"},
		{"unbounded active sub-issues", "tracker:\n  max_active: 51\n", "2: tracker.max_active: must be from 1 to 50"},
		{"tracker completion not a word it knows", "tracker:\n  on_complete: reopen\n", `2: tracker.on_complete: "reopen" is not close or comment`},
		{"not planned met not a bool", "blockers:\n  not_planned_met: maybe\n", `2: blockers.not_planned_met: must be true or false, not "maybe"`},
		{"explicit path that does not exist", "", " does not exist (an explicit --config must name a file)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "roadmap.yml")
			if tt.src != "" {
				if err := os.WriteFile(path, []byte(tt.src), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cfg, err := LoadExplicit(path)
			if err == nil {
				t.Fatalf("LoadExplicit accepted it: %+v", cfg)
			}
			if got, want := err.Error(), path+":"+tt.want; got != want {
				t.Errorf("error\n got %s\nwant %s", got, want)
			}
			if tt.src == "" {
				return
			}
			// The annotation needs the line on its own.
			var ce *Error
			if !errors.As(err, &ce) || ce.Line == 0 {
				t.Errorf("err = %#v, want a *Error with a line", err)
			}
		})
	}
}

func TestIsolation(t *testing.T) {
	for _, tt := range []struct {
		src  string
		want Isolation
	}{
		{"", IsolationAuto},
		{"labels: {stage: s}\n", IsolationAuto},
		{"isolation: auto\n", IsolationAuto},
		{"isolation: user\n", IsolationUser},
		{"isolation: none\n", IsolationNone},
	} {
		cfg, err := Parse("roadmap.yml", []byte(tt.src))
		if err != nil {
			t.Fatalf("%q: %v", tt.src, err)
		}
		if cfg.Isolation != tt.want {
			t.Errorf("%q: isolation = %q, want %q", tt.src, cfg.Isolation, tt.want)
		}
	}
	for src, want := range map[string]string{"": "loopback", "sandbox:\n  network: none\n": "none", "sandbox: {network: loopback}\n": "loopback"} {
		cfg, err := Parse("roadmap.yml", []byte(src))
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		if cfg.Sandbox.Network != want {
			t.Errorf("%q: sandbox.network = %q, want %q", src, cfg.Sandbox.Network, want)
		}
	}
	if got := Default().Isolation; got != IsolationAuto {
		t.Errorf("default isolation = %q, want auto: none must be explicit", got)
	}
}

func TestLoadExplicitReadsTheFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "custom.yml")
	if err := os.WriteFile(p, []byte("isolation: none\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadExplicit(p)
	if err != nil || cfg.Isolation != IsolationNone {
		t.Fatalf("LoadExplicit = %+v, %v", cfg, err)
	}
}

// TestParallelGroups: implement.parallel_groups is off unless it is set.
func TestParallelGroups(t *testing.T) {
	cfg, err := Parse("roadmap.yml", []byte("models: [{name: m}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Implement.ParallelGroups {
		t.Error("parallel_groups is on by default; want off")
	}
	cfg, err = Parse("roadmap.yml", []byte("implement:\n  parallel_groups: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Implement.ParallelGroups {
		t.Error("parallel_groups: true read as off")
	}
}

// TestImplementCI: the keys that decide what the watch does when no CI ran
// and how often it re-runs CI the infrastructure broke.
func TestImplementCI(t *testing.T) {
	cfg, err := Parse("roadmap.yml", []byte("models: [{name: m}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Implement.ReadyWithoutCI || len(cfg.Implement.CIWorkflows) != 0 || cfg.Implement.CheckReruns != 2 {
		t.Errorf("defaults = %+v, want ready_without_ci false (the safe one), no CI workflows, 2 re-runs", cfg.Implement)
	}
	cfg, err = Parse("roadmap.yml", []byte("implement:\n  ci_workflows: [ci.yml, lint.yaml]\n  ready_without_ci: true\n  check_reruns: 0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"ci.yml", "lint.yaml"}, cfg.Implement.CIWorkflows); diff != "" || !cfg.Implement.ReadyWithoutCI || cfg.Implement.CheckReruns != 0 {
		t.Errorf("implement = %+v", cfg.Implement)
	}
	for _, bad := range []string{
		"implement:\n  ci_workflows: [../ci.yml]\n",
		"implement:\n  ci_workflows: [.github/workflows/ci.yml]\n",
		"implement:\n  ci_workflows: [ci]\n",
		"implement:\n  check_reruns: 9\n",
		"implement:\n  check_reruns: -1\n",
	} {
		_, err := Parse("roadmap.yml", []byte(bad))
		var ce *Error
		if !errors.As(err, &ce) || !strings.HasPrefix(ce.Key, "implement.") {
			t.Errorf("%q: err = %v, want an implement.* key error", bad, err)
		}
	}
}

// gates.verify_forms replaces the verify-form gate's default and
// gates.extra_verify_forms adds to it; a form the gate could not use is an
// error at its line.
func TestGatesVerifyForms(t *testing.T) {
	cfg, err := Parse("roadmap.yml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Gates.VerifyForms) != 0 || len(cfg.Gates.ExtraVerifyForms) != 0 {
		t.Errorf("default gates = %+v, want none (the gate's default forms)", cfg.Gates)
	}
	src := "gates:\n  verify_forms: [bazel test, \"^tox -e py3\\\\d+$\"]\n  extra_verify_forms:\n    - deno test\n"
	if cfg, err = Parse("roadmap.yml", []byte(src)); err != nil {
		t.Fatal(err)
	}
	want := Gates{VerifyForms: []string{"bazel test", `^tox -e py3\d+$`}, ExtraVerifyForms: []string{"deno test"}}
	if diff := cmp.Diff(want, cfg.Gates); diff != "" {
		t.Errorf("gates (-want +got):\n%s", diff)
	}
	for _, c := range []struct{ src, want string }{
		{"gates:\n  verify_forms:\n    - pytest\n    - \"^(\"\n", `roadmap.yml:4: gates.verify_forms[1]: "^(" is not a regular expression`},
		{"gates:\n  extra_verify_forms: [\"  \"]\n", "roadmap.yml:2: gates.extra_verify_forms[0]: empty form"},
		{"gates:\n  verify_form: [pytest]\n", "roadmap.yml:2: gates.verify_form: unknown key"},
		{"gates:\n  verify_forms: pytest\n", "roadmap.yml:2"},
	} {
		_, err := Parse("roadmap.yml", []byte(c.src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err = %v, want one saying %q", c.src, err, c.want)
		}
	}
}

// TestAlerts: the alerts section's defaults (3 stops of a class a day, 80%
// of the day's budget, no owners), values as written, and 0 turning a rule
// off.
func TestAlerts(t *testing.T) {
	for _, tt := range []struct {
		name, src string
		want      Alerts
	}{
		{"defaults", "", Alerts{StopsPerDay: 3, DayBudgetShare: 0.8}},
		{"as written", "alerts:\n  owners: [\"@octocat\", \"@acme/platform-team\"]\n  stops_per_day: 5\n  day_budget_share: 0.5\n",
			Alerts{Owners: []string{"@octocat", "@acme/platform-team"}, StopsPerDay: 5, DayBudgetShare: 0.5}},
		{"off", "alerts:\n  stops_per_day: 0\n  day_budget_share: 0\n", Alerts{}},
		{"owners alone keep the default thresholds", "alerts:\n  owners: [\"@o\"]\n", Alerts{Owners: []string{"@o"}, StopsPerDay: 3, DayBudgetShare: 0.8}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse("roadmap.yml", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, cfg.Alerts); diff != "" {
				t.Errorf("alerts (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBlockersAndTracker: the blockers' and the tracker's keys, their
// defaults and the bounds a file may set.
func TestBlockersAndTracker(t *testing.T) {
	for _, tt := range []struct {
		name, src string
		met       bool
		active    int
	}{
		{"defaults", "", false, 3},
		{"as written", "blockers:\n  not_planned_met: true\ntracker:\n  max_active: 50\n", true, 50},
		{"one at a time", "tracker:\n  max_active: 1\n", false, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse("roadmap.yml", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.Blockers.NotPlannedMet; got != tt.met {
				t.Errorf("blockers.not_planned_met = %v, want %v", got, tt.met)
			}
			if got := cfg.Tracker.MaxActive; got != tt.active {
				t.Errorf("tracker.max_active = %d, want %d", got, tt.active)
			}
		})
	}
}
