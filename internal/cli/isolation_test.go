package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/demo"
	"github.com/roadmap-dev/roadmap/internal/demo/demotest"
	"github.com/roadmap-dev/roadmap/internal/implement"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/sandbox"
)

// The canaries: the Job's token is the fake GitHub's (demo.Token); the model
// key is configured under a neutral name, as `api_key_env: LLM` allows.
const (
	canaryKeyVar = "LLM"
	canaryKey    = "canary-model-key-7f3e9a1c5b2d4e6f8091"
)

// hostile is one run of the hostile agent: the world it ran in and where its
// evidence is.
type hostile struct {
	w                             *demo.World
	dir, home, temp, ws           string
	out, mark, script             string
	githubEnv, githubOut, summary string
	cfg, fixtures                 string
	bin                           string     // the built roadmap, for tests that run it again
	extraArgs                     []string   // more flags for implement
	extraEnv                      []string   // more variables for implement (later ones win)
	extraFiles                    []*os.File // descriptors implement inherits (3, 4, …), as a runner's may
	launcher                      string     // a program that execs implement (launchWithSessionKey)

	mu       sync.Mutex
	requests [][]byte
}

// newHostile lays out a runner as a hosted one is (the work tree under the
// runner's HOME, RUNNER_TEMP beside it, workflow command files in it, a gh
// login in HOME) and writes the hostile agent's fixtures and configuration.
func newHostile(t *testing.T, isolation string) *hostile {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "world"), 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := demo.NewWorld(ctx, filepath.Join(dir, "world"), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	h := &hostile{w: w, dir: dir, home: filepath.Join(dir, "home", "runner")}
	h.temp = filepath.Join(h.home, "work", "_temp")
	h.githubEnv = filepath.Join(h.temp, "_runner_file_commands", "set_env_1")
	h.githubOut = filepath.Join(h.temp, "_runner_file_commands", "set_output_1")
	h.summary = filepath.Join(h.temp, "_runner_file_commands", "step_summary_1")
	id := filepath.Base(dir)
	h.out = filepath.Join(os.TempDir(), "roadmap-isolation-leak-"+id)
	h.mark = filepath.Join(os.TempDir(), "roadmap-isolation-hook-ran-"+id)
	h.script = filepath.Join(os.TempDir(), "roadmap-isolation-script-"+id)
	t.Cleanup(func() { os.Remove(h.out); os.Remove(h.mark); os.Remove(h.script) })

	for path, body := range map[string]string{
		filepath.Join(h.home, ".config", "gh", "hosts.yml"): "github.com:\n    oauth_token: " + demo.Token + "\n",
		filepath.Join(h.home, ".git-credentials"):           "https://x-access-token:" + demo.Token + "@github.com\n",
		h.githubEnv: "MODEL_KEY=" + canaryKey + "\n",
		h.githubOut: "",
		h.summary:   "",
		filepath.Join(h.temp, "_github_workflow", "event.json"): `{"token":"` + demo.Token + `"}`,
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		// World-readable, as a careless tool would leave them: the boundary,
		// not the file modes, must keep the sandbox out.
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(h.home, 0o755); err != nil {
		t.Fatal(err)
	}
	ws, err := w.Workspace(filepath.Join("..", "home", "runner", "work", "widgets", "widgets"))
	if err != nil {
		t.Fatal(err)
	}
	h.ws = ws

	h.fixtures = filepath.Join(dir, "fixtures")
	h.writeFixtures(t)
	h.cfg = filepath.Join(dir, "roadmap.yml")
	replay, err := llm.LoadReplay(h.fixtures)
	if err != nil {
		t.Fatal(err)
	}
	w.Replay = replay
	cfg := fmt.Sprintf(`models:
  - provider: openai-compatible
    name: demo-model
    base_url: %s
    api_key_env: %s
prices:
  demo-model: {input: 0.15, output: 0.60}
checks:
  commands: ["go vet ./..."]
implement:
  poll_interval: 1s
  watch_timeout: 60s
  # The rows prove the boundary; the quality checks, on by default, have
  # tests of their own (internal/review, internal/strength) and would
  # only add model calls the rows do not record.
  test_strength: false
review:
  enabled: false
`, w.ModelURL(), canaryKeyVar)
	if isolation != "" {
		cfg += "isolation: " + isolation + "\n"
	}
	if err := os.WriteFile(h.cfg, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return h
}

// writeFixtures writes the hostile agent's group 1 and the demo's groups 2
// and 3.
func (h *hostile) writeFixtures(t *testing.T) {
	t.Helper()
	err := demotest.WriteHostileFixtures(h.fixtures, demotest.Hostile{Home: h.home, RunnerTemp: h.temp, GitHubEnv: h.githubEnv,
		GitHubOutput: h.githubOut, StepSummary: h.summary, Out: h.out, Mark: h.mark, Script: h.script, Token: demo.Token})
	if err != nil {
		t.Fatal(err)
	}
}

// useDemoAgent replaces the hostile group 1 with the demo's.
func (h *hostile) useDemoAgent(t *testing.T) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "demo", "testdata", "demo", "fixtures", "group-1-hello.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.fixtures, "group-1-hostile.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	replay, err := llm.LoadReplay(h.fixtures)
	if err != nil {
		t.Fatal(err)
	}
	h.w.Replay = replay
}

// env is the environment of the implement step.
func (h *hostile) env(runID int64) []string {
	env := h.w.Env(runID, h.temp)
	env = append(env, "HOME="+h.home, "GITHUB_ENV="+h.githubEnv, "GITHUB_OUTPUT="+h.githubOut,
		"GITHUB_STEP_SUMMARY="+h.summary, canaryKeyVar+"="+canaryKey, "GOCACHE="+runnerGoCache())
	return append(env, h.extraEnv...) // later entries win
}

// runnerGoCache is this machine's Go build cache. A hosted runner's job has
// one warm from setup-go's cache; the runner HOME a test makes has none, and
// every verify command would compile the standard library afresh in the
// sandbox (most of a hostile row's time). The sandbox only links the
// runner's cache entries into its own (sandbox.Options.GoCache).
var runnerGoCache = sync.OnceValue(func() string {
	if c := os.Getenv("GOCACHE"); c != "" {
		return c
	}
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
})

func (h *hostile) args(traceFile string) []string {
	return append([]string{"implement", "--issue", fmt.Sprint(h.w.Issue), "--attempt", "1", "--config", h.cfg,
		"--workdir", h.ws, "--trace-file", traceFile, "--json"}, h.extraArgs...)
}

// runInProcess runs `roadmap implement` in this process with probe standing
// in for the machine's answers.
func (h *hostile) runInProcess(t *testing.T, probe *sandbox.Probe) (implement.Result, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	e := &Env{Args: h.args(filepath.Join(h.dir, "trace.jsonl")), Vars: map[string]string{}, Stdin: strings.NewReader(""),
		Stdout: &stdout, Stderr: &stderr, probe: probe}
	for _, kv := range h.env(8001) {
		k, v, _ := strings.Cut(kv, "=")
		e.Vars[k] = v
	}
	run(context.Background(), e)
	var res implement.Result
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("implement printed no result: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	return res, stderr.String()
}

// TestIsolation runs a hostile agent through the real `roadmap implement`
// binary against the fakes and looks for the canary token and model key
// everywhere they could surface.
func TestIsolation(t *testing.T) {
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skip("the user boundary needs root on Linux to create its user; the test machines and CI run as root")
	}
	if testing.Short() {
		t.Skip("runs whole implement Jobs")
	}
	ctx := context.Background()
	h := newHostile(t, "")
	bin := buildRoadmap(t)
	h.w.OnModelRequest(func(body []byte) {
		h.mu.Lock()
		h.requests = append(h.requests, append([]byte(nil), body...))
		h.mu.Unlock()
	})
	ci, stop := context.WithCancel(ctx)
	defer stop()
	go h.w.PlayCI(ci)

	traceFile := filepath.Join(h.temp, "trace.jsonl")
	cmd := exec.Command(bin, h.args(traceFile)...)
	cmd.Env = h.env(8001)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	jobLog := stdout.String() + stderr.String()
	var res implement.Result
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil || res.Result == "" {
		t.Fatalf("the Job ended without a typed result (%v, %v):\n%s", runErr, err, jobLog)
	}
	t.Logf("the Job ended %s (%s %s)", res.Result, res.Failure, res.Reason)

	// The hostile code ran, and ran as someone else: its report was
	// committed and pushed (it could write nothing outside the work tree).
	report, err := pushedFile(h.w.Remote, "leak-report.txt")
	if err != nil {
		inTree, _ := os.ReadFile(filepath.Join(h.ws, "leak-report.txt"))
		t.Fatalf("the hostile test's report was not pushed: %v\n%s\nwhat the tools answered:\n%s\nleak-report.txt in the work tree:\n%.1500s", err, jobLog, h.toolResults(), inTree)
	}
	if _, err := os.Stat(h.out); err == nil {
		t.Errorf("the hostile test wrote %s, outside the work tree", h.out)
	}
	if strings.Contains(string(report), "ran as uid=0 ") || !strings.Contains(string(report), "ran as uid=") {
		t.Errorf("the hostile test ran as root:\n%.400s", report)
	}
	// Every group's commands ran and passed: a Job that ends in
	// "permission denied" (a second boundary closing the first's way) is a
	// failure of the boundary, not a safe outcome.
	if res.Result != record.ResultReady {
		t.Errorf("the Job ended %s (%s: %s), want ready: every group's verify commands must succeed behind the boundary", res.Result, res.Failure, res.Reason)
	}

	places := map[string]string{
		"the hostile test's own findings (outside the work tree)": string(report),
		"the job log": jobLog,
	}
	if data, err := os.ReadFile(traceFile); err == nil {
		places["the trace"] = string(data)
	} else {
		t.Errorf("no trace file: %v", err)
	}
	h.mu.Lock()
	for i, body := range h.requests {
		places[fmt.Sprintf("model request %d", i+1)] = string(body)
	}
	h.mu.Unlock()
	if len(h.requests) == 0 {
		t.Error("no model request was seen")
	}
	// Every write to GitHub: comments, the record, the PR, statuses.
	for _, r := range h.w.Fake.Requests() {
		places["GitHub writes"] += r.Endpoint + " " + r.Body + "\n"
	}
	for n := 1; n <= 10; n++ {
		if is, ok := h.w.Fake.Issue(n); ok {
			places["issues and their comments"] += is.Body + "\n"
		}
		for _, c := range h.w.Fake.Comments(n) {
			places["issues and their comments"] += c.Body + "\n"
		}
	}
	pushed, err := exec.Command("git", "-C", h.w.Remote, "log", "--all", "-p", "--binary").CombinedOutput()
	if err != nil {
		t.Fatalf("read the pushed branch: %v", err)
	}
	places["the pushed branch"] = string(pushed)
	if !strings.Contains(string(pushed), "leak-report.txt") {
		t.Error("the hostile test's report was not pushed: the pushed-branch check proves nothing")
	}
	for where, text := range places {
		for name, canary := range map[string]string{"token": demo.Token, "model key": canaryKey} {
			if strings.Contains(text, canary) {
				i := strings.Index(text, canary)
				t.Errorf("the canary %s reached %s: …%s…", name, where, text[max(0, i-200):min(len(text), i+60)])
			}
		}
	}
	// Nothing planted ran in the runner's git, and nothing of the runner's
	// was written.
	if data, err := os.ReadFile(h.mark); err == nil {
		for _, uid := range strings.Fields(string(data)) {
			if uid == "0" {
				t.Error("a planted hook or git config ran as the runner (uid 0)")
			}
		}
	}
	for _, s := range []string{"PLANTED", "WROTE", "MOVED .git"} {
		if strings.Contains(string(report), s) {
			t.Errorf("the hostile test could do %q:\n%s", s, grepLines(string(report), s))
		}
	}
	if data, _ := os.ReadFile(h.githubEnv); strings.Contains(string(data), "PLANTED") {
		t.Error("the hostile test wrote GITHUB_ENV")
	}
	// The symlinked design.md was refused, not followed: a prompt read
	// before the runner undid the change says so, or the runner undid the
	// plan change first (the plan is not the agent's to change).
	var refused bool
	for _, body := range h.requests {
		if strings.Contains(string(body), "leads out of the work tree") {
			refused = true
		}
	}
	if !refused && !strings.Contains(jobLog, "the agent changed the approved plan") {
		t.Error("no model request says design.md was refused, and the runner did not undo it: was the symlink planted and the plan read?")
	}
}

// toolResults are the tool messages of the last model request, for a
// failure message.
func (h *hostile) toolResults() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var b strings.Builder
	for _, body := range h.requests {
		var req struct {
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		if json.Unmarshal(body, &req) != nil {
			continue
		}
		b.Reset()
		for _, m := range req.Messages {
			if m.Role == "tool" {
				fmt.Fprintf(&b, "- %.600s\n", m.Content)
			}
		}
		if strings.Contains(b.String(), "TestHello") {
			break
		}
	}
	return b.String()
}

func grepLines(text, s string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestIsolationUnavailable: with no boundary (not root) and no explicit
// opt-out, the Job stops before any model-written command, with the class
// unisolated and a reason that says what to do.
func TestIsolationUnavailable(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an implement Job")
	}
	h := newHostile(t, "")
	var calls int
	h.w.OnModelRequest(func([]byte) { calls++ })
	res, log := h.runInProcess(t, &sandbox.Probe{OS: "linux", Euid: 1001})
	if res.Result != "stopped" || string(res.Failure) != "unisolated" {
		t.Fatalf("result %s/%s (%s), want stopped/unisolated\n%s", res.Result, res.Failure, res.Reason, log)
	}
	for _, want := range []string{"not root", "isolation: none", "docs/isolation.md"} {
		if !strings.Contains(res.Reason, want) {
			t.Errorf("the reason %q does not say %q", res.Reason, want)
		}
	}
	if calls != 0 {
		t.Errorf("%d model calls were made with no boundary", calls)
	}
	if _, err := os.Stat(h.out); err == nil {
		t.Error("model-written code ran with no boundary")
	}
}

// TestIsolationNoneWarns: `isolation: none` runs, and the step summary and
// the PR comment say the run was not isolated.
func TestIsolationNoneWarns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an implement Job")
	}
	h := newHostile(t, "none")
	// Under none the hostile agent would plant executing git config, and the
	// runner's git rightly stops the Job (TestRunnerGitRunsNothingPlanted):
	// this test runs the demo's own agent to see the warnings of a whole run,
	// on a one-group plan (the warnings are the run's, not a group's).
	h.useDemoAgent(t)
	oneGroupPlan(t, h.w, h.ws)
	ci, stop := context.WithCancel(context.Background())
	defer stop()
	go h.w.PlayCI(ci)
	res, log := h.runInProcess(t, nil)
	if res.Result == "" {
		t.Fatalf("no typed result\n%s", log)
	}
	summary, _ := os.ReadFile(h.summary)
	if !strings.Contains(string(summary), sandbox.NotIsolatedWarning) {
		t.Errorf("the step summary does not say the run was not isolated:\n%s", summary)
	}
	var commented bool
	for n := 1; n <= 10; n++ {
		for _, c := range h.w.Fake.Comments(n) {
			commented = commented || strings.Contains(c.Body, sandbox.NotIsolatedWarning)
		}
	}
	if !commented {
		t.Errorf("no PR comment says the run was not isolated (the Job ended %s: %s %s)", res.Result, res.Failure, res.Reason)
	}
}

// pushedFile is the newest version of file on any branch of the bare remote.
func pushedFile(remote, file string) ([]byte, error) {
	sha, err := exec.Command("git", "-C", remote, "rev-list", "--all", "-1", "--", file).Output()
	if err != nil || len(bytes.TrimSpace(sha)) == 0 {
		return nil, fmt.Errorf("no branch of %s has %s: %v", remote, file, err)
	}
	return exec.Command("git", "-C", remote, "show", string(bytes.TrimSpace(sha))+":"+file).Output()
}
