package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// seamFactory is a Factory over an Env with environ and a fixed clock; its
// stderr is returned for the tests that look at what was said.
func seamFactory(environ ...string) (*Factory, *bytes.Buffer) {
	var stderr bytes.Buffer
	env := newEnv(nil, environ, strings.NewReader(""), &bytes.Buffer{}, &stderr)
	f := env.factory()
	f.Now = func() time.Time { return time.Date(2025, 3, 10, 12, 0, 0, 0, time.UTC) }
	return f, &stderr
}

// parsed runs cmd with a runF that only keeps the options it is given: no
// verb body runs, so nothing reaches GitHub or a model.
func parsed[O any](t *testing.T, cmd func(context.Context, *Factory, []string, func(context.Context, *Factory, *O) int) int, f *Factory, args ...string) (*O, int) {
	t.Helper()
	var got *O
	code := cmd(context.Background(), f, args, func(_ context.Context, _ *Factory, o *O) int {
		got = o
		return ExitOK
	})
	return got, code
}

func TestWakeFlags(t *testing.T) {
	f, stderr := seamFactory("GITHUB_REF_NAME=release")
	got, code := parsed(t, wakeCmd, f, "--day-usd", "2.5", "-dry-run", "--config", "c.yml", "--dashboard=7")
	if code != ExitOK || got == nil {
		t.Fatalf("code %d, options %v; stderr %s", code, got, stderr)
	}
	want := &wakeOptions{Workflow: "roadmap.yml", Ref: "release", Dashboard: 7, DayUSD: 2.5, DryRun: true}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("options (-want +got):\n%s", d)
	}
	if f.ConfigPath != "c.yml" {
		t.Errorf("the Factory's ConfigPath = %q, want c.yml", f.ConfigPath)
	}
	if !strings.Contains(stderr.String(), "--day-usd is an old name") {
		t.Errorf("stderr %q does not name the old flag", stderr)
	}

	f, _ = seamFactory()
	if got, _ := parsed(t, wakeCmd, f); got == nil || got.Ref != "main" {
		t.Errorf("without --ref or GITHUB_REF_NAME the ref is %+v, want main", got)
	}
	f, _ = seamFactory()
	if got, _ := parsed(t, wakeCmd, f, "--unblock-only"); got == nil || !got.UnblockOnly {
		t.Errorf("--unblock-only parsed as %+v", got)
	}
	f, _ = seamFactory()
	if got, code := parsed(t, wakeCmd, f, "--day-budget-usd", "-1"); got != nil || code != ExitUsage {
		t.Errorf("a negative day budget ran the verb (%+v) or exited %d, want %d", got, code, ExitUsage)
	}
}

func TestReportFlags(t *testing.T) {
	f, stderr := seamFactory("GITHUB_WORKFLOW_REF=acme/app/.github/workflows/roadmap.yml@refs/heads/main", "GITHUB_REF=refs/heads/main",
		"GITHUB_RUN_ID=99")
	got, code := parsed(t, reportCmd, f, "--issue", "12", "--result", "stopped", "--failure", "budget", "--spend", `{"usd":1}`,
		"--phase", "stage", "--max-jobs", "3", "--json")
	if code != ExitOK || got == nil {
		t.Fatalf("code %d, options %v; stderr %s", code, got, stderr)
	}
	if got.Event == nil {
		t.Fatal("no event read")
	}
	got.Event = nil
	want := &reportOptions{Issue: 12, Phase: "stage", Result: "stopped", FailureClass: "budget", Spend: `{"usd":1}`,
		RunID: 99, Workflow: "roadmap.yml", Ref: "refs/heads/main", MaxJobs: 3, JSON: true}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("options (-want +got):\n%s", d)
	}
	for _, args := range [][]string{{"extra"}, {"--day-budget-usd", "-1"}} {
		f, _ = seamFactory()
		if got, code := parsed(t, reportCmd, f, args...); got != nil || code != ExitUsage {
			t.Errorf("%q ran the verb (%+v) or exited %d, want %d", args, got, code, ExitUsage)
		}
	}
}

func TestReviewFlags(t *testing.T) {
	f, stderr := seamFactory()
	got, code := parsed(t, reviewCmd, f, "--pr", "5", "-C", "/src", "--max-findings", "3", "--plan", "openspec/changes/x")
	if code != ExitOK || got == nil {
		t.Fatalf("code %d, options %v; stderr %s", code, got, stderr)
	}
	if d := cmp.Diff(&reviewOptions{PR: 5, MaxFindings: 3, PlanDir: "openspec/changes/x"}, got); d != "" {
		t.Errorf("options (-want +got):\n%s", d)
	}
	if f.Workdir != "/src" {
		t.Errorf("the Factory's Workdir = %q, want /src", f.Workdir)
	}
	for _, args := range [][]string{{}, {"--pr", "5", "--max-findings", "0"}} {
		f, _ := seamFactory()
		if got, code := parsed(t, reviewCmd, f, args...); got != nil || code != ExitUsage {
			t.Errorf("%q ran the verb (%+v) or exited %d, want %d", args, got, code, ExitUsage)
		}
	}
}

func TestMetricsFlags(t *testing.T) {
	f, _ := seamFactory()
	got, code := parsed(t, metricsCmd, f, "--since", "7d", "--json")
	if code != ExitOK || got == nil {
		t.Fatalf("code %d, options %v", code, got)
	}
	now := f.Now().UTC()
	if d := cmp.Diff(&metricsOptions{Since: now.Add(-7 * 24 * time.Hour), Now: now, JSON: true}, got); d != "" {
		t.Errorf("options (-want +got):\n%s", d)
	}
	f, _ = seamFactory()
	if got, code := parsed(t, metricsCmd, f, "--since", "2099-01-01"); got != nil || code != ExitUsage {
		t.Errorf("a future --since ran the verb (%+v) or exited %d, want %d", got, code, ExitUsage)
	}
}

func TestCIFailToPassFlags(t *testing.T) {
	f, _ := seamFactory()
	got, code := parsed(t, f2pCmd, f, "--base", "origin/main", "--test", "go test ./...", "--junit", "out/*.xml", "-C", "repo")
	if code != ExitOK || got == nil {
		t.Fatalf("code %d, options %v", code, got)
	}
	if d := cmp.Diff(&f2pOptions{Base: "origin/main", Test: "go test ./...", JUnit: "out/*.xml", Dir: "repo"}, got); d != "" {
		t.Errorf("options (-want +got):\n%s", d)
	}
	f, _ = seamFactory()
	if got, code := parsed(t, f2pCmd, f); got != nil || code != ExitUsage {
		t.Errorf("no --base ran the verb (%+v) or exited %d, want %d", got, code, ExitUsage)
	}
}
