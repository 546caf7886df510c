package demo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/roadmap-dev/roadmap/internal/demo"
	"github.com/roadmap-dev/roadmap/internal/demo/demotest"
	"github.com/roadmap-dev/roadmap/internal/f2p"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/sandbox/sandboxtest"
)

// TestPythonItem plays the demo's whole life on a Python project: an issue
// with no plan; stage writes a plan whose verify commands are pytest node
// ids, the OpenSpec CLI, the gates and the verifier pass it; implement
// Job 1 is killed in group 2, report dispatches a continuation, Job 2 ends
// ready. Every check ran python3 -m pytest on the files the agent wrote,
// inside the isolation boundary; afterwards roadmap ci fail-to-pass, reading
// pytest's JUnit XML, finds the two new tests failing on main and passing on
// the PR's head, and the old one passing at both.
func TestPythonItem(t *testing.T) {
	if testing.Short() {
		t.Skip("plays a whole Python item with the real binary (make test runs it)")
	}
	path := sandboxtest.PytestPATH(t, "the Python item")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"ROADMAP_DEMO_BINARY=1", "PATH=" + path, "GOCACHE=" + sandboxtest.RunnerGoCache(t)}
	var progress bytes.Buffer
	dir := t.TempDir()
	sum, err := demo.Run(context.Background(), demo.Options{
		Dir:      dir,
		Progress: &progress,
		Log:      &progress, // the Jobs' own lines, which it reads below
		ExtraEnv: env,
		World:    demotest.NewPythonIssueWorld,
		Command: func(ctx context.Context, args []string) *exec.Cmd {
			return exec.CommandContext(ctx, self, args...)
		},
	})
	if err != nil {
		t.Fatalf("the Python item: %v\n%s", err, progress.String())
	}
	if sum.Stage.Result != "staged" || sum.Stage.Plan != "openspec/changes/add-greetings" || len(sum.Stage.Findings) != 0 {
		t.Errorf("stage = %+v, want the plan staged with no finding", sum.Stage)
	}
	if sum.Result != record.ResultReady {
		t.Errorf("the item ended %s, want ready\n%s", sum.Result, progress.String())
	}
	if sum.Kill.Class != "killed" || sum.Kill.Dispatched == 0 {
		t.Errorf("report on the killed Job: %+v, want class killed and a dispatched continuation", sum.Kill)
	}
	if !sum.SpendMatches() {
		t.Errorf("record spend %+v != recorded exchanges %+v and the bookings of calls killed in flight %+v", sum.Spend, sum.Recorded, sum.Estimated)
	}
	if len(sum.Jobs) != 2 || sum.Jobs[1].Result != record.ResultReady {
		t.Errorf("jobs = %+v, want the killed Job 1 and Job 2 ready", sum.Jobs)
	}
	// The model-written commands ran behind the boundary.
	if !strings.Contains(progress.String(), "isolated: model-written commands run as uid") {
		t.Errorf("no Job said it ran behind the isolation boundary:\n%s", progress.String())
	}
	// Each behaviour group's failing test really failed before the group:
	// pytest ran it on the tree before the group with the group's test file
	// laid over (its exit code is the evidence). Group 1's is in Job 1's
	// log (pytest cannot import goodbye there); group 2's, done by Job 2,
	// in the PR comment (hello() without a name fails).
	if want := "group 1: fail-to-pass held: `python3 -m pytest -q tests/test_greet.py::test_goodbye` failed before the group's change"; !strings.Contains(progress.String(), want) {
		t.Errorf("Job 1's log lacks %q:\n%s", want, progress.String())
	}
	if want := "group 2: **held**: `python3 -m pytest -q tests/test_greet.py::test_hello_default` failed before the group's change (exit 1)"; !strings.Contains(sum.Comment, want) {
		t.Errorf("the PR comment lacks %q:\n%s", want, sum.Comment)
	}
	// Test strength measured group 1's Python change by mutation (issue
	// 49): a score in Job 1's log, not "not measured". (Job 1 is killed
	// before group 1's row reaches the record; group 2 changed a def line
	// only, nothing to mutate, and says so in the PR comment.)
	var strengthLines []string
	for _, l := range strings.Split(progress.String(), "\n") {
		if strings.Contains(l, "test strength: ") && !strings.Contains(l, "mutant ") && !strings.Contains(l, "run: ") {
			strengthLines = append(strengthLines, strings.TrimSpace(l))
		}
	}
	t.Logf("test strength lines: %q", strengthLines)
	if want := "roadmap: group 1: test strength: score "; !strings.Contains(progress.String(), want) {
		t.Errorf("Job 1's log lacks %q: %q", want, strengthLines)
	}
	if want := "| 2 | — | — | — | — | — | not measured: 1 changed lines with nothing to mutate |"; !strings.Contains(sum.Comment, want) {
		t.Errorf("the PR comment lacks %q:\n%s", want, sum.Comment)
	}
	if sum.Requests.Total > 30 {
		t.Errorf("the item cost %d counted GitHub requests (%v), want at most 30", sum.Requests.Total, sum.Requests.ByPhase)
	}

	// The PR's head against main, test by test from pytest's JUnit XML.
	remote := filepath.Join(sum.Dir, "remote.git")
	out, err := exec.Command("git", "--git-dir", remote, "for-each-ref", "--format=%(refname:short)", "refs/heads/roadmap/").Output()
	branches := strings.Fields(string(out))
	if err != nil || len(branches) != 1 {
		t.Fatalf("work branches in the remote: %q (%v), want one", branches, err)
	}
	clone := filepath.Join(dir, "f2p-clone")
	for _, args := range [][]string{
		{"clone", "-q", "--branch", branches[0], remote, clone},
		{"-C", clone, "fetch", "-q", "origin", "main"},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	tmp := filepath.Join(dir, "runner-temp-f2p")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "ci", "fail-to-pass", "--base", "origin/main", "--test", "python3 -m pytest -q --junitxml=junit.xml",
		"-C", clone, "--config", filepath.Join(sum.Dir, "roadmap.yml"), "--json")
	cmd.Env = append(os.Environ(), append(env, "RUNNER_TEMP="+tmp)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var rep f2p.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("roadmap ci fail-to-pass: %v; its output %q: %v\n%s", runErr, stdout.String(), err, stderr.String())
	}
	if runErr != nil || !rep.Passed {
		t.Errorf("roadmap ci fail-to-pass failed (%v):\n%s\n%s", runErr, stdout.String(), stderr.String())
	}
	if rep.Base.Results != "junit" || rep.Head.Results != "junit" || rep.Base.Tests != 1 || rep.Head.Tests != 3 {
		t.Errorf("the runs were read as %s (%d tests) and %s (%d tests), want JUnit XML with 1 test on main and 3 at the head",
			rep.Base.Results, rep.Base.Tests, rep.Head.Results, rep.Head.Tests)
	}
	got := map[string][]string{"f2p": rep.F2P, "p2p": rep.P2P, "broken": rep.Broken, "failing": rep.Failing}
	want := map[string][]string{
		"f2p":     {"tests.test_greet.test_goodbye", "tests.test_greet.test_hello_default"},
		"p2p":     {"tests.test_greet.test_hello"},
		"broken":  nil,
		"failing": nil,
	}
	for k, v := range got {
		if len(v) == 0 {
			got[k] = nil
		} else {
			got[k] = slices.Sorted(slices.Values(v))
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fail-to-pass from pytest's JUnit XML (-want +got):\n%s\n%s", diff, stderr.String())
	}
	t.Logf("requests: %v; spend %+v; fail-to-pass: %v", sum.Requests.ByPhase, sum.Spend, got)
}
