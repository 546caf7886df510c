//go:build unix

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/demo"
	"github.com/roadmap-dev/roadmap/internal/demo/demotest"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// The Python repository's caller (docs/examples/roadmap-caller-python.yml)
// and the setup action it names, which the user's repository holds at
// pythonSetupAction (docs/examples/roadmap-setup-python/action.yml).
const (
	pythonCaller      = "roadmap-caller-python.yml"
	pythonSetupAction = ".github/actions/roadmap-setup/action.yml"
)

// pythonItemOptions lays out the Python item (demotest.NewPythonIssueWorld)
// in a user's repository that holds the Python caller and its setup action,
// with a configuration whose checks run pytest.
//
// The harness writes a configuration whose checks are the Go sample's
// (go vet), which a Python repository cannot run. Its Files replace any file
// it writes, but the configuration names the model's address, which exists
// only once the world does: so World, which newItem calls before it reads
// Files, writes the configuration into Files from the world it makes. It
// serves the replay model directly, without the harness's latency proxy
// (this scenario kills nothing, so it needs none).
func pythonItemOptions(t *testing.T, watch time.Duration) itemOptions {
	t.Helper()
	setup, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "examples", "roadmap-setup-python", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{pythonSetupAction: string(setup)}
	return itemOptions{
		FromIssue:    true,
		WatchTimeout: watch,
		Caller:       pythonCaller,
		Files:        files,
		World: func(ctx context.Context, dir string, latency time.Duration) (*demo.World, error) {
			w, err := demotest.NewPythonIssueWorld(ctx, dir, latency)
			if err != nil {
				return nil, err
			}
			cfg, err := pythonConfig(w, watch)
			if err != nil {
				w.Close()
				return nil, err
			}
			files[config.DefaultPath] = cfg
			return w, nil
		},
	}
}

// pythonConfig is the user's .github/roadmap.yml: the world's own (the
// replay model, the checks running python3 -m pytest and the policy row
// that allows it), with the scenario's watch.
func pythonConfig(w *demo.World, watch time.Duration) (string, error) {
	p, err := w.Config()
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return "", err
	}
	cfg := string(data)
	if !strings.Contains(cfg, "  watch_timeout: 60s\n") || !strings.Contains(cfg, "python3 -m pytest") {
		return "", fmt.Errorf("the Python world's configuration is not the one the scenario expects:\n%s", cfg)
	}
	cfg = strings.Replace(cfg, "  watch_timeout: 60s\n", "  watch_timeout: "+watch.String()+"\n", 1)
	if _, err := config.Parse(config.DefaultPath, []byte(cfg)); err != nil {
		return "", fmt.Errorf("the Python item's configuration: %w", err)
	}
	return cfg, nil
}

// TestE2EPythonRepository: a whole item on a small Python project, through
// the real workflows under act. The user's repository is a greet package
// with pytest tests (demotest.NewPythonIssueWorld); its caller passes the
// reusable workflow `setup: .github/actions/roadmap-setup`, a composite
// action that installs pytest from Debian's packages when python3 has none.
// A person labels the issue roadmap:stage: stage writes the plan (verify
// commands that are pytest node ids), the OpenSpec CLI and the gates pass
// it, a draft PR holds it. The roadmap:implement label then runs the three
// groups, each checked with python3 -m pytest behind the isolation boundary
// (each behaviour group's test failing before it), and the PR ends ready.
func TestE2EPythonRepository(t *testing.T) {
	act := requireAct(t)
	it := newItem(t, act, pythonItemOptions(t, 30*time.Second))
	it.playCI("success")
	it.baselinePushes()
	alice := it.person("alice", "admin")

	it.stage(alice)
	alice.label(it.w.Issue, "roadmap:implement")
	ran := it.nextRun("run 1", it.workflowFile(), "issues", nil)
	run1 := ran.actRun
	it.wantJobs(run1, "success", "success")
	it.logf("the project's setup in the implement job: %s", pythonSetupRan(t, run1, "implement"))
	it.checkTrace(run1, 1, it.w.Replay.Stats().Calls-it.staged, false)

	rec := it.record()
	if res, _ := rec.Result(); res != record.ResultReady {
		t.Fatalf("implement.result = %q, want ready:\n%s", res, recordText(rec))
	}
	it.checkSpend(rec)
	pr, _ := rec.StagePR()
	it.checkReadyPR(pr)

	// pytest ran each behaviour group's failing test on the tree before the
	// group, and it failed there; the implement step says so.
	job := run1.job("implement")
	out := run1.StepOutput(job, implementStep)
	for _, want := range []string{
		"group 1: fail-to-pass held: `python3 -m pytest -q tests/test_greet.py::test_goodbye` failed before the group's change",
		"group 2: fail-to-pass held: `python3 -m pytest -q tests/test_greet.py::test_hello_default` failed before the group's change (exit 1)",
		"isolated: model-written commands run as uid",
		// Test strength measured the groups' Python changes with roadmap's
		// Python mutator (issue 49): a score, not "not measured".
		"roadmap: group 1: test strength: score ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the implement step's output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "roadmap: group 1: test strength: not measured") {
		t.Errorf("group 1's Python change was not measured:\n%s", out)
	}
	// The agent's Python code is on the PR's head.
	ctx := t.Context()
	code, err := git(ctx, "--git-dir", it.w.Remote, "show", it.w.Branch()+":greet/__init__.py")
	if err != nil || !strings.Contains(code, "def goodbye(name):") || !strings.Contains(code, `def hello(name="world"):`) {
		t.Errorf("greet/__init__.py on the work branch = %q (%v), want goodbye and hello's default name", code, err)
	}
	it.noMoreRuns("after ready")
	if n := it.requests(); n > maxRequests {
		t.Errorf("the item made %d counted GitHub requests, want at most %d", n, maxRequests)
	}
}

// pythonSetupRan returns what the project's setup (the reusable workflow's
// step "The project's setup", running the caller's roadmap-setup action)
// printed in the run's job, and fails the test when it did not run or did
// not find pytest.
func pythonSetupRan(t *testing.T, r *actRun, job string) string {
	t.Helper()
	name := r.job(job)
	var out strings.Builder
	ran := false
	for _, s := range r.Steps {
		if s.Job == name && s.Step == "The project's setup" && s.Stage == "Main" {
			ran = ran || s.Result == "success"
			out.WriteString(r.StepOutput(name, s.ID))
		}
	}
	line := ""
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.Contains(l, "roadmap-setup: pytest ") {
			line = strings.TrimSpace(l)
		}
	}
	if !ran || line == "" {
		t.Errorf("the %s job's project setup: ran %v, printed %q; want it to run the roadmap-setup action and find pytest (steps %+v)", job, ran, out.String(), r.Steps)
	}
	return line
}
