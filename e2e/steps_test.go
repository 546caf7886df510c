//go:build unix

package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/record"
)

// stepsCaller is the example caller that runs roadmap's composite actions as
// steps of its own jobs, after its own setup (docs/install.md).
const stepsCaller = "roadmap-steps.yml"

// setupGoStandIn plays actions/setup-go offline: it puts the host's Go on
// the job's PATH, as setup-go puts the one it installs, and leaves the
// version it set up where the test reads it.
const setupGoStandIn = `name: setup-go (e2e stand-in)
description: Puts the host's Go on PATH, as actions/setup-go would put the one it installs.
inputs:
  go-version:
    description: The version asked for.
    required: false
    default: ""
runs:
  using: composite
  steps:
    - shell: bash
      env:
        WANT: ${{ inputs.go-version }}
      run: |
        go=$(command -v go) || { echo "::error::no Go on the host for the setup-go stand-in"; exit 1; }
        dirname "$go" >> "$GITHUB_PATH"
        printf 'go-version %s: %s\n' "$WANT" "$(go version)" > "$ROADMAP_E2E_ARTIFACTS/setup-go"
`

// TestE2ECompositeActions: the second way of running. The user's repository
// holds docs/examples/roadmap-steps.yml, unchanged: its own implement job
// checks out, runs its own setup step (actions/setup-go, played by a
// stand-in) and then roadmap's implement action as a step; its report job
// runs the report action after it. The label starts the item; with the
// repository's CI green the Job does the three groups, watches the checks
// and marks the PR ready in one run, and report sets roadmap/implement.
func TestE2ECompositeActions(t *testing.T) {
	act := requireAct(t)
	text, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "examples", stepsCaller))
	if err != nil {
		t.Fatal(err)
	}
	uses, err := ParseUses(stepsCaller, text)
	if err != nil {
		t.Fatal(err)
	}
	standIn := t.TempDir()
	if err := os.WriteFile(filepath.Join(standIn, "action.yml"), []byte(setupGoStandIn), 0o644); err != nil {
		t.Fatal(err)
	}
	local := map[string]string{}
	for _, u := range uses {
		if u.Repo == "actions/setup-go" && u.Path == "" {
			local[u.Key()] = standIn
		}
		if u.IsWorkflow() {
			t.Errorf("%s calls the reusable workflow %s; this way of running uses the actions as steps", stepsCaller, u.Uses)
		}
	}
	if len(local) == 0 {
		t.Fatalf("%s has no setup step (actions/setup-go) before roadmap's actions", stepsCaller)
	}

	it := newItem(t, act, itemOptions{Latency: 20 * time.Millisecond, WatchTimeout: 30 * time.Second, Caller: stepsCaller, Local: local})
	it.playCI("success")
	it.baselinePushes()
	alice := it.person("alice", "admin")
	alice.label(it.w.Issue, "roadmap:implement")
	r := it.nextRun("run 1", it.workflowFile(), "issues", nil).actRun
	it.wantJobs(r, "success", "success")

	// The caller's setup ran in the implement job, before roadmap's step.
	job := r.job("implement")
	setup := slices.IndexFunc(r.Steps, func(s StepResult) bool {
		return s.Job == job && s.Stage == "Main" && strings.Contains(s.Step, "actions/setup-go") && s.Result == "success"
	})
	run := slices.IndexFunc(r.Steps, func(s StepResult) bool { return s.Job == job && s.ID == implementStep })
	if setup < 0 || run < 0 || setup > run {
		t.Errorf("steps of %s: setup-go at %d, roadmap's implement at %d; want the caller's setup first:\n%+v", job, setup, run, r.Steps)
	}
	if got, err := os.ReadFile(filepath.Join(r.artifacts, "setup-go")); err != nil || !strings.Contains(string(got), "go version go") {
		t.Errorf("the setup step left %q (%v), want the Go it set up", got, err)
	}

	rec := it.record()
	if res, _ := rec.Result(); res != record.ResultReady {
		t.Fatalf("implement.result = %q, want ready:\n%s", res, recordText(rec))
	}
	it.checkSpend(rec)
	pr, _ := rec.StagePR()
	it.checkReadyPR(pr)
	if d := it.w.Fake.Dispatches(); len(d) != 0 {
		t.Errorf("report dispatched %+v after ready, want nothing", d)
	}
	if n := it.requests(); n > maxRequests {
		t.Errorf("the item made %d counted GitHub requests, want at most %d", n, maxRequests)
	}
}
