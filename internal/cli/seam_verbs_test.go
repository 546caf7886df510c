package cli

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/roadmap-dev/roadmap/internal/adopt"
)

// The flag tests of the verbs seam_test.go does not hold: each parses a
// command line through the verb's runF seam and checks the options the
// verb would run with, then that a bad command line exits ExitUsage
// without running it.

// refused checks that each command line of bad exits ExitUsage and never
// reaches runF.
func refused[O any](t *testing.T, cmd func(context.Context, *Factory, []string, func(context.Context, *Factory, *O) int) int, bad ...[]string) {
	t.Helper()
	for _, args := range bad {
		f, _ := seamFactory()
		if got, code := parsed(t, cmd, f, args...); got != nil || code != ExitUsage {
			t.Errorf("%q ran the verb (%+v) or exited %d, want %d", args, got, code, ExitUsage)
		}
	}
}

func TestChecksFlags(t *testing.T) {
	f, stderr := seamFactory()
	got, code := parsed(t, checksCmd, f, "--plan", "openspec/changes/x", "-C", "/src", "--sha", "abc", "--group", "2",
		"-config", "c.yml", "--issue", "9", "--base", "dev", "--no-status", "--json")
	if code != ExitOK || got == nil {
		t.Fatalf("code %d, options %v; stderr %s", code, got, stderr)
	}
	want := &checksOptions{Plan: "openspec/changes/x", Dir: "/src", SHA: "abc", ConfigPath: "c.yml", Base: "dev", Group: 2, Issue: 9,
		NoStatus: true, JSON: true}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("options (-want +got):\n%s", d)
	}
	f, _ = seamFactory()
	if got, _ := parsed(t, checksCmd, f); got == nil || *got != (checksOptions{}) {
		t.Errorf("with no flags the options are %+v, want none set (every group, the status set)", got)
	}
	refused(t, checksCmd, []string{"--group", "-1"}, []string{"extra"}, []string{"--no-such-flag"})
}

func TestDashboardRefreshFlags(t *testing.T) {
	f, stderr := seamFactory()
	got, code := parsed(t, refreshCmd, f, "--dashboard", "4", "--since", "2025-03-01", "--config", "c.yml", "--json")
	if code != ExitOK || got == nil {
		t.Fatalf("code %d, options %v; stderr %s", code, got, stderr)
	}
	now := f.Now().UTC()
	want := &refreshOptions{Dashboard: 4, Since: time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC), Now: now, JSON: true}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("options (-want +got):\n%s", d)
	}
	if f.ConfigPath != "c.yml" {
		t.Errorf("the Factory's ConfigPath = %q, want c.yml", f.ConfigPath)
	}
	f, _ = seamFactory()
	if got, _ := parsed(t, refreshCmd, f); got == nil || !got.Since.Equal(now.Add(-8*24*time.Hour)) || got.Dashboard != 0 {
		t.Errorf("with no flags the options are %+v, want the labelled dashboard and eight days back", got)
	}
	refused(t, refreshCmd, []string{"--dashboard", "-1"}, []string{"--since", "2099-01-01"}, []string{"--since", "soon"}, []string{"7"})
}

func TestDashboardEvalFlags(t *testing.T) {
	f, stderr := seamFactory()
	got, code := parsed(t, dashboardEvalCmd, f, "--from", "gates.json", "--from", "stage.json", "--dashboard", "3", "--json")
	if code != ExitOK || got == nil {
		t.Fatalf("code %d, options %v; stderr %s", code, got, stderr)
	}
	if d := cmp.Diff(&dashboardEvalOptions{Dashboard: 3, From: []string{"gates.json", "stage.json"}, JSON: true}, got); d != "" {
		t.Errorf("options (-want +got):\n%s", d)
	}
	nine := []string{}
	for range 9 {
		nine = append(nine, "--from", "r.json")
	}
	refused(t, dashboardEvalCmd, []string{}, nine, []string{"--from", "r.json", "--dashboard", "-2"}, []string{"--from", "r.json", "r2.json"})
}

func TestTrackerStatusFlags(t *testing.T) {
	f, stderr := seamFactory()
	got, code := parsed(t, trackerCmd, f, "#31", "--json")
	if code != ExitOK || got == nil {
		t.Fatalf("code %d, options %v; stderr %s", code, got, stderr)
	}
	if d := cmp.Diff(&trackerOptions{Issue: 31, JSON: true}, got); d != "" {
		t.Errorf("options (-want +got):\n%s", d)
	}
	refused(t, trackerCmd, []string{}, []string{"0"}, []string{"x"}, []string{"1", "2"})
}

func TestCITestStrengthFlags(t *testing.T) {
	f, stderr := seamFactory()
	got, code := parsed(t, strengthCmd, f, "--base", "HEAD~1", "--test", "go test ./a", "--test", "go test ./b", "--floor", "0.5",
		"--max-mutants", "7", "--mutant-timeout", "30s", "-C", "repo", "--config", "c.yml", "--json")
	if code != ExitOK || got == nil {
		t.Fatalf("code %d, options %v; stderr %s", code, got, stderr)
	}
	want := &strengthOptions{Base: "HEAD~1", FloorText: "0.5", Dir: "repo", ConfigPath: "c.yml", Tests: testFlags{"go test ./a", "go test ./b"},
		Floor: 0.5, MaxMutants: 7, Timeout: 30 * time.Second, JSON: true}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("options (-want +got):\n%s", d)
	}
	f, _ = seamFactory()
	got, _ = parsed(t, strengthCmd, f, "--base", "main")
	if d := cmp.Diff(&strengthOptions{Base: "main", Floor: 0.8, MaxMutants: 30}, got); d != "" {
		t.Errorf("the defaults (-want +got):\n%s", d)
	}
	refused(t, strengthCmd, []string{}, []string{"--base", "main", "--floor", "2"}, []string{"--base", "main", "--max-mutants", "0"},
		[]string{"--base", "main", "--mutant-timeout", "-1s"}, []string{"--base", "main", "x"})
}

// evalCmdOf is eval verb v's seam with the verb bound, in parsed's shape.
func evalCmdOf(v evalVerb) func(context.Context, *Factory, []string, func(context.Context, *Factory, *evalOptions) int) int {
	return func(ctx context.Context, f *Factory, args []string, runF func(context.Context, *Factory, *evalOptions) int) int {
		return evalCmd(ctx, f, args, v, func(ctx context.Context, f *Factory, _ evalVerb, o *evalOptions) int { return runF(ctx, f, o) })
	}
}

func TestEvalFlags(t *testing.T) {
	gates := evalVerb{name: "eval gates", dirFlag: "golden", dirDefault: filepath.Join("testdata", "golden", "stage"), skipGates: true}
	stage := evalVerb{name: "eval stage", dirFlag: "golden", dirDefault: filepath.Join("testdata", "golden", "stage"), models: true}
	f, stderr := seamFactory()
	got, code := parsed(t, evalCmdOf(gates), f, "--skip-gate", "premises", "--skip-gate", "coverage", "--floor", "0.9", "--json", "--config", "c.yml")
	if code != ExitOK || got == nil {
		t.Fatalf("code %d, options %v; stderr %s", code, got, stderr)
	}
	want := &evalOptions{Dir: gates.dirDefault, FloorText: "0.9", SkipGates: []string{"premises", "coverage"}, JSON: true}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("eval gates options (-want +got):\n%s", d)
	}
	if f.ConfigPath != "c.yml" || f.Workdir != "." {
		t.Errorf("the Factory reads %q in %q, want c.yml in . (the working directory, not the workspace)", f.ConfigPath, f.Workdir)
	}

	f, _ = seamFactory()
	got, code = parsed(t, evalCmdOf(stage), f, "--golden", "g", "--provider", "openai", "--model", "m", "--base-url", "http://x")
	if code != ExitOK || got == nil {
		t.Fatalf("eval stage: code %d, options %v", code, got)
	}
	if d := cmp.Diff(&evalOptions{Dir: "g", Provider: "openai", Model: "m", URL: "http://x"}, got); d != "" {
		t.Errorf("eval stage options (-want +got):\n%s", d)
	}
	// --skip-gate is the gates' alone, and the model flags are for the
	// verbs that run Jobs.
	refused(t, evalCmdOf(stage), []string{"--skip-gate", "premises"}, []string{"extra"})
	refused(t, evalCmdOf(gates), []string{"--provider", "openai"})
}

func TestStageFlags(t *testing.T) {
	f, stderr := seamFactory()
	got, code := parsed(t, stageCmd, f, "--issue", "7", "--config", "c.yml", "-C", "/src", "--remote", "fork", "--base", "dev",
		"--timeout-minutes", "30", "--started-at", "1700000000", "--trace-file", "t.jsonl", "--run-id", "99", "--budget-usd", "2",
		"--day-budget-usd", "5", "--dashboard", "3", "--record-comment", "44", "--record", "rec", "--json", "--rounds", "2")
	if code != ExitOK || got == nil {
		t.Fatalf("code %d, options %v; stderr %s", code, got, stderr)
	}
	want := &stageOptions{Rounds: 2, Job: jobOptions{Issue: 7, ConfigPath: "c.yml", Workdir: "/src", Remote: "fork", Base: "dev",
		TimeoutMinutes: 30, StartedAt: "1700000000", TraceFile: "t.jsonl", RunID: 99, ItemUSD: 2, DayUSD: 5, Dashboard: 3,
		RecordComment: 44, RecordDir: "rec", JSON: true}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("options (-want +got):\n%s", d)
	}
	f, _ = seamFactory()
	if got, _ := parsed(t, stageCmd, f); got == nil || *got != (stageOptions{Job: jobOptions{Remote: "origin"}}) {
		t.Errorf("with no flags the options are %+v, want the origin remote and the rest from the event and configuration", got)
	}
	refused(t, stageCmd, []string{"--rounds", "-1"}, []string{"--budget-usd", "-1"}, []string{"--day-budget-usd", "-1"},
		[]string{"--dashboard", "-1"}, []string{"--plan", "x"})
}

func TestImplementFlags(t *testing.T) {
	f, stderr := seamFactory()
	got, code := parsed(t, implementCmd, f, "-issue", "8", "--plan", "openspec/changes/x", "--attempt", "3", "--model", "m", "--budget-usd", "1.5")
	if code != ExitOK || got == nil {
		t.Fatalf("code %d, options %v; stderr %s", code, got, stderr)
	}
	want := &implementOptions{Plan: "openspec/changes/x", Attempt: 3, Model: "m", Job: jobOptions{Issue: 8, Remote: "origin", ItemUSD: 1.5}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("options (-want +got):\n%s", d)
	}
	refused(t, implementCmd, []string{"--day-budget-usd", "-2"}, []string{"--rounds", "2"}, []string{"--attempt", "x"})
}

func TestExplainFlags(t *testing.T) {
	f, stderr := seamFactory()
	got, code := parsed(t, explainCmd, f, "--trace", "#12", "--trace-file", "t.jsonl", "--state", "kept", "--json", "-R", "acme/app")
	if code != ExitOK || got == nil {
		t.Fatalf("code %d, options %v; stderr %s", code, got, stderr)
	}
	if d := cmp.Diff(&explainOptions{Issue: 12, Trace: true, TraceFile: "t.jsonl", State: "kept", JSON: true}, got); d != "" {
		t.Errorf("options (-want +got):\n%s", d)
	}
	if r := f.env.Getenv("GITHUB_REPOSITORY"); r != "acme/app" {
		t.Errorf("-R set the repository to %q, want acme/app", r)
	}
	f, _ = seamFactory()
	if got, _ := parsed(t, explainCmd, f, "12"); got == nil || *got != (explainOptions{Issue: 12}) {
		t.Errorf("with no flags the options are %+v, want issue 12 alone", got)
	}
	refused(t, explainCmd, []string{}, []string{"0"}, []string{"12", "13"}, []string{"12", "-R", "noslash"})
}

func TestConsoleFlags(t *testing.T) {
	f, stderr := seamFactory()
	got, code := parsed(t, consoleCmd, f, "5", "--follow", "--interval", "2s", "--json", "--state", "kept", "--budget", "3", "--job-timeout", "1h")
	if code != ExitOK || got == nil {
		t.Fatalf("code %d, options %v; stderr %s", code, got, stderr)
	}
	want := &consoleOptions{Issue: 5, Follow: true, JSON: true, Interval: 2 * time.Second, JobTimeout: time.Hour, State: "kept", Budget: 3}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("options (-want +got):\n%s", d)
	}
	f, _ = seamFactory()
	got, _ = parsed(t, consoleCmd, f, "5")
	if got == nil || got.Interval != 5*time.Second || got.JobTimeout != 6*time.Hour || got.Budget <= 0 {
		t.Errorf("the defaults are %+v, want a 5s interval, a 6h Job and the default item budget", got)
	}
	refused(t, consoleCmd, []string{}, []string{"x"}, []string{"5", "--interval", "0s"})
}

func TestClassifyFlags(t *testing.T) {
	f, stderr := seamFactory()
	got, code := parsed(t, classifyCmd, f, "--log", "job.log", "--conclusion", "timed_out", "--exit-code", "137",
		"--annotation", "lost", "--annotation", "again", "--json")
	if code != ExitOK || got == nil {
		t.Fatalf("code %d, options %v; stderr %s", code, got, stderr)
	}
	if got.Input.ExitCode == nil || *got.Input.ExitCode != 137 {
		t.Fatalf("the exit code is %v, want 137", got.Input.ExitCode)
	}
	got.Input.ExitCode = nil
	want := &classifyOptions{Log: "job.log", JSON: true}
	want.Input.Conclusion, want.Input.Annotations = "timed_out", []string{"lost", "again"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("options (-want +got):\n%s", d)
	}
	f, _ = seamFactory()
	if got, _ := parsed(t, classifyCmd, f, "--log", "-"); got == nil || got.Input.ExitCode != nil {
		t.Errorf("without --exit-code the options are %+v, want no exit code", got)
	}
	refused(t, classifyCmd, []string{}, []string{"--log", "l", "x"}, []string{"--log", "l", "--conclusion", "bad"},
		[]string{"--log", "l", "--exit-code", "256"}, []string{"--log", "l", "--exit-code", "x"})
}

func TestPlanValidateFlags(t *testing.T) {
	f, stderr := seamFactory()
	got, code := parsed(t, planValidateCmd, f, "--json", "openspec/changes/x/", "--body-file", "issue.md", "--config", "c.yml")
	if code != ExitOK || got == nil {
		t.Fatalf("code %d, options %v; stderr %s", code, got, stderr)
	}
	if d := cmp.Diff(&planValidateOptions{Dir: "openspec/changes/x", BodyFile: "issue.md", ConfigPath: "c.yml", JSON: true}, got); d != "" {
		t.Errorf("options (-want +got):\n%s", d)
	}
	refused(t, planValidateCmd, []string{}, []string{"a", "b"}, []string{".", "--openspec", "--body-file", "issue.md"})
}

func TestInitFlags(t *testing.T) {
	f, stderr := seamFactory()
	got, code := parsed(t, initCmd, f, "-C", "repo", "--dry-run", "--json", "--ref", "v2.1.0", "--eval-workflow", "--eval-model", "openai/gpt-4o-mini")
	if code != ExitOK || got == nil {
		t.Fatalf("code %d, options %v; stderr %s", code, got, stderr)
	}
	want := &initOptions{Dir: "repo", Ref: "v2.1.0", Pin: adopt.Pin{Ref: "v2.1.0"}, EvalModel: "openai/gpt-4o-mini", Provider: "github-models", DryRun: true, JSON: true, EvalWorkflow: true}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("options (-want +got):\n%s", d)
	}
	f, _ = seamFactory()
	if got, _ := parsed(t, initCmd, f, "--dir", "old"); got == nil || got.Dir != "old" || got.Pin.Ref == "" {
		t.Errorf("--dir (the old name) gave %+v, want the workdir old and a pinned ref", got)
	}
	f, _ = seamFactory()
	if got, _ := parsed(t, initCmd, f, "--provider", "anthropic"); got == nil || got.Provider != "anthropic" {
		t.Errorf("--provider anthropic gave %+v", got)
	}
	refused(t, initCmd, []string{"extra"}, []string{"--eval-model", "openai/gpt-4o-mini"}, []string{"--provider", "mistral"})
}

func TestDemoFlags(t *testing.T) {
	f, stderr := seamFactory()
	got, code := parsed(t, demoCmd, f, "--keep", "out", "--json", "--verbose")
	if code != ExitOK || got == nil {
		t.Fatalf("code %d, options %v; stderr %s", code, got, stderr)
	}
	if d := cmp.Diff(&demoOptions{Keep: "out", JSON: true, Verbose: true}, got); d != "" {
		t.Errorf("options (-want +got):\n%s", d)
	}
	refused(t, demoCmd, []string{"--keep"}, []string{"--no-such-flag"})
}

func TestTryFlags(t *testing.T) {
	f, stderr := seamFactory()
	got, code := parsed(t, tryCmd, f, "-C", "src", "-R", "acme/widgets", "--issue", "12", "--replay", "fx", "--record", "rec", "--keep", "out", "--json", "--verbose")
	if code != ExitOK || got == nil {
		t.Fatalf("code %d, options %v; stderr %s", code, got, stderr)
	}
	if d := cmp.Diff(&tryOptions{Dir: "src", Issue: 12, Replay: "fx", Record: "rec", Keep: "out", JSON: true, Verbose: true}, got); d != "" {
		t.Errorf("options (-want +got):\n%s", d)
	}
	if r := f.env.Getenv("GITHUB_REPOSITORY"); r != "acme/widgets" {
		t.Errorf("-R acme/widgets set GITHUB_REPOSITORY %q", r)
	}
	if got, _ := parsed(t, tryCmd, f, "--issue-file", "issue.md"); got == nil || got.IssueFile != "issue.md" || got.Dir != "." {
		t.Errorf("--issue-file issue.md gave %+v, want it and the current directory", got)
	}
	refused(t, tryCmd, []string{"extra"}, []string{"-R", "widgets"}, []string{"--issue", "x"}, []string{"--no-such-flag"})
}
