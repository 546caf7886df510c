package prcheck

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/roadmap-dev/roadmap/internal/actionsio"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/sandbox"
)

// A change that passes `openspec validate --strict`.
var soundChange = map[string]string{
	"openspec/changes/bye/proposal.md": "# Say goodbye\n\n## Why\n\nThe greeting file says hello but never goodbye, and readers leave unsure.\n\n" +
		"## What Changes\n\n- greet.txt says goodbye after hello.\n",
	"openspec/changes/bye/specs/greeting/spec.md": "## ADDED Requirements\n\n### Requirement: Farewell\n\nThe greeting file SHALL end with a farewell.\n\n" +
		"#### Scenario: A reader reaches the end\n\n- **WHEN** a reader reads greet.txt to the end\n- **THEN** the last line says goodbye\n",
	"openspec/changes/bye/tasks.md": "## 1. Say goodbye\n\n- [x] 1.1 Write the farewell; verify: `grep -q goodbye greet.txt`\n",
	"greet.txt":                     "hello\ngoodbye\n",
	".github/roadmap.yml":           "isolation: none\n",
}

// runIn runs the job on a git checkout of files with the rules, without a
// status, and returns what it printed as annotations.
func runIn(t *testing.T, files map[string]string, rules ...PlanRule) (*Result, string, error) {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	environ := []string{"PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull, "HOME=" + t.TempDir(),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com"}
	for _, args := range [][]string{{"init", "--quiet"}, {"add", "--all"}, {"commit", "--quiet", "-m", "change"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, environ
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	vars := map[string]string{"GITHUB_ACTIONS": "true"}
	getenv := func(k string) string { return vars[k] }
	var stdout, stderr bytes.Buffer
	res, err := Run(context.Background(), Options{
		Dir: dir, NoStatus: true, Getenv: getenv, Environ: environ, IO: actionsio.New(getenv, &stdout),
		Logf:   func(format string, args ...any) { t.Logf(format, args...) },
		Stderr: &stderr,
		Boundary: func(ctx context.Context, cfg *config.Config, dir string) (*sandbox.Boundary, error) {
			m, err := sandbox.ParseMode(string(cfg.Isolation))
			if err != nil {
				return nil, err
			}
			return sandbox.Open(ctx, sandbox.Options{Mode: m, Workspace: dir, Environ: environ})
		},
		PlanRules: rules,
	})
	return res, stdout.String(), err
}

// TestChecksPlanRules: a rule plugged in through Options.PlanRules sees the
// change, and its failing finding fails the checks like OpenSpec's own.
func TestChecksPlanRules(t *testing.T) {
	res, annotations, err := runIn(t, soundChange)
	if err != nil || !res.Passed || len(res.Findings) != 0 || annotations != "" {
		t.Fatalf("a sound plan with no rules: err %v, result %+v, annotations %q; want passed and clean", err, res, annotations)
	}

	var gotRoot, gotID string
	var gotCfg *config.Config
	gate := func(_ context.Context, root, id string, cfg *config.Config) ([]plan.Finding, error) {
		gotRoot, gotID, gotCfg = root, id, cfg
		return []plan.Finding{
			{Level: plan.LevelInfo, Rule: "gates/size", File: "openspec/changes/bye/tasks.md", Line: 1, Message: "one group"},
			{Level: plan.LevelError, Rule: "gates/test-first", File: "openspec/changes/bye/tasks.md", Line: 3, Message: "the group starts with no failing test"},
		}, nil
	}
	res, annotations, err = runIn(t, soundChange, gate)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(plan.ChangeDir(gotRoot, gotID), "tasks.md")); gotID != "bye" || err != nil {
		t.Errorf("the rule saw root %q, change %q; want the checkout and bye", gotRoot, gotID)
	}
	if gotCfg == nil {
		t.Error("the rule saw no configuration; want the trusted one, for the gates' settings")
	}
	if res.Passed {
		t.Error("a rule's ERROR finding did not fail the checks")
	}
	if want := "plan: openspec/changes/bye/tasks.md:3: gates/test-first: the group starts with no failing test"; res.Description != want {
		t.Errorf("description = %q, want %q", res.Description, want)
	}
	if want := "::error file=openspec/changes/bye/tasks.md,line=3::gates/test-first: the group starts with no failing test\n"; annotations != want {
		t.Errorf("annotations = %q, want %q (the INFO finding is no annotation)", annotations, want)
	}
	if len(res.Findings) != 2 {
		t.Errorf("findings = %+v, want the rule's two", res.Findings)
	}

	broken := func(context.Context, string, string, *config.Config) ([]plan.Finding, error) {
		return nil, errors.New("gate crashed")
	}
	if res, _, err := runIn(t, soundChange, broken); err == nil || !strings.Contains(err.Error(), "gate crashed") || res != nil {
		t.Errorf("a rule that cannot run: result %+v, err %v; want no result and its error", res, err)
	}
}

func TestChangeRoot(t *testing.T) {
	for _, tt := range []struct {
		dir, root, id string
		ok            bool
	}{
		{"/ws/openspec/changes/bye", "/ws", "bye", true},
		{"/ws/sub/openspec/changes/archive/2026-01-02-bye", "/ws/sub", "archive/2026-01-02-bye", true},
		{"/openspec/changes/bye", "/", "bye", true},
		{"/ws/openspec/changes", "", "", false},
		{"/ws/openspec/changes/archive", "", "", false},
		{"/ws/plans/bye", "", "", false},
	} {
		root, id, ok := changeRoot(filepath.FromSlash(tt.dir))
		if diff := cmp.Diff([]any{tt.root, tt.id, tt.ok}, []any{filepath.ToSlash(root), id, ok}); diff != "" {
			t.Errorf("changeRoot(%q) (-want +got):\n%s", tt.dir, diff)
		}
	}
}
