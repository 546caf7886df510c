package cli

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/roadmap-dev/roadmap/internal/demo"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// actionsEnv is the environment the runner gives a step: the world's, plus
// the files the runner reads back and the event that started the run.
type actionsEnv struct {
	vars             []string
	output, summary  string
	workspace, event string
}

func newActionsEnv(t *testing.T, w *demo.World, runID int64, ws, eventName, payload string) actionsEnv {
	t.Helper()
	dir := t.TempDir()
	a := actionsEnv{output: filepath.Join(dir, "output"), summary: filepath.Join(dir, "summary"), workspace: ws, event: filepath.Join(dir, "event.json")}
	for _, p := range []string{a.output, a.summary} {
		os.WriteFile(p, nil, 0o644)
	}
	os.WriteFile(a.event, []byte(payload), 0o644)
	a.vars = append(w.Env(runID, dir), "GITHUB_ACTIONS=true", "GITHUB_OUTPUT="+a.output, "GITHUB_STEP_SUMMARY="+a.summary,
		"GITHUB_EVENT_PATH="+a.event, "GITHUB_EVENT_NAME="+eventName, "GITHUB_WORKSPACE="+ws)
	return a
}

// outputs parses $GITHUB_OUTPUT as the runner does.
func (a actionsEnv) outputs(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile(a.output)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		name, delim, ok := strings.Cut(sc.Text(), "<<")
		if !ok {
			t.Fatalf("$GITHUB_OUTPUT line %q is not name<<delimiter", sc.Text())
		}
		var val []string
		for sc.Scan() && sc.Text() != delim {
			val = append(val, sc.Text())
		}
		out[name] = strings.Join(val, "\n")
	}
	return out
}

// onlyWorkflowCommands fails on any stdout line that is not a workflow command.
func onlyWorkflowCommands(t *testing.T, verb, stdout string) {
	t.Helper()
	for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
		if l != "" && !strings.HasPrefix(l, "::") {
			t.Errorf("%s wrote %q to stdout; only outputs, the summary and workflow commands may leave a verb in Actions", verb, l)
		}
	}
}

// TestActionOutputs runs implement, then report and checks on what it left,
// as the action's steps do under Actions, and reads the outputs, the step
// summary and stdout the runner reads. It keeps a whole Job to ready: only
// a Job that ends ready writes every output with its value (the head, the
// PR, the spend) and the summary's timeline. Its world is the smallest that
// has one: the demo's plan cut to one group (oneGroupPlan), test strength
// off (no output or summary line of these is about it).
func TestActionOutputs(t *testing.T) {
	ctx := context.Background()
	w, err := demo.NewWorld(ctx, t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	cfg, err := w.Config()
	if err != nil {
		t.Fatal(err)
	}
	cfg = withoutTestStrength(t, cfg)
	ws, err := w.Workspace("job-1")
	if err != nil {
		t.Fatal(err)
	}
	oneGroupPlan(t, w, ws)
	ciCtx, stopCI := context.WithCancel(ctx)
	defer stopCI()
	go w.PlayCI(ciCtx)

	t.Run("implement", func(t *testing.T) {
		a := newActionsEnv(t, w, 7001, ws, "workflow_dispatch", fmt.Sprintf(`{"inputs":{"issue":"%d","attempt":"1"}}`, w.Issue))
		var stdout, stderr bytes.Buffer
		code := Main(ctx, []string{"implement", "--config", cfg}, a.vars, strings.NewReader(""), &stdout, &stderr)
		if code != ExitOK {
			t.Fatalf("exit %d\n%s", code, stderr.String())
		}
		out := a.outputs(t)
		for _, name := range []string{"result", "failure", "group", "head_sha", "spend", "attempt", "reason", "pr", "trace_file"} {
			if _, ok := out[name]; !ok {
				t.Errorf("output %s not set; outputs: %v", name, out)
			}
		}
		// group is the last group that passed: the plan's only one.
		if out["result"] != "ready" || out["group"] != "1" || out["attempt"] != "1" {
			t.Errorf("outputs = %v, want result ready, group 1, attempt 1", out)
		}
		summary, _ := os.ReadFile(a.summary)
		for _, want := range []string{"## roadmap · implement #", "| ", "gantt"} {
			if !strings.Contains(string(summary), want) {
				t.Errorf("the step summary lacks %q:\n%s", want, summary)
			}
		}
		onlyWorkflowCommands(t, "implement", stdout.String())
	})

	t.Run("report", func(t *testing.T) {
		rec, _ := recordOf(t, w.Fake, w.Issue)
		sha, _ := rec.PublishedSHA()
		pr, _ := rec.StagePR()
		a := newActionsEnv(t, w, 7001, ws, "workflow_dispatch", fmt.Sprintf(`{"inputs":{"issue":"%d","attempt":"1"}}`, w.Issue))
		var stdout, stderr bytes.Buffer
		code := Main(ctx, []string{"report", "--issue", fmt.Sprint(w.Issue), "--job-result", "success", "--result", "ready",
			"--group", "1", "--head-sha", string(sha), "--pr", fmt.Sprint(pr), "--attempt", "1", "--config", cfg},
			a.vars, strings.NewReader(""), &stdout, &stderr)
		if code != ExitOK {
			t.Fatalf("exit %d\n%s", code, stderr.String())
		}
		out := a.outputs(t)
		if out["action"] == "" {
			t.Errorf("report set no action output: %v", out)
		}
		if st := w.Fake.Statuses(string(sha)); !hasStatus(st, "roadmap/implement", "success") {
			t.Errorf("report set no roadmap/implement success on %s: %+v", sha, st)
		}
		onlyWorkflowCommands(t, "report", stdout.String())
	})

	t.Run("checks", func(t *testing.T) {
		rec, _ := recordOf(t, w.Fake, w.Issue)
		sha, _ := rec.PublishedSHA()
		plan, _ := rec.StagePlan()
		a := newActionsEnv(t, w, 7002, ws, "workflow_dispatch", `{}`)
		var stdout, stderr bytes.Buffer
		code := Main(ctx, []string{"checks", "--plan", plan, "--workdir", ws, "--sha", string(sha), "--config", cfg},
			a.vars, strings.NewReader(""), &stdout, &stderr)
		if code != ExitOK {
			t.Fatalf("exit %d\n%s", code, stderr.String())
		}
		if out := a.outputs(t); out["passed"] != "true" {
			t.Errorf("outputs = %v, want passed true", out)
		}
		if summary, _ := os.ReadFile(a.summary); !strings.Contains(string(summary), "|") {
			t.Errorf("checks wrote no summary table:\n%s", summary)
		}
		if !hasStatus(w.Fake.Statuses(string(sha)), "roadmap/checks", "") {
			t.Errorf("no roadmap/checks status on %s", sha)
		}
		onlyWorkflowCommands(t, "checks", stdout.String())
	})
}

func hasStatus[S any](statuses []S, context, state string) bool {
	for _, s := range statuses {
		v := fmt.Sprintf("%+v", s)
		if strings.Contains(v, context) && strings.Contains(v, state) {
			return true
		}
	}
	return false
}

// actionStep returns the run script and env mapping of the step with id of
// the composite action at path.
func actionStep(t *testing.T, path, id string) (script string, env map[string]string, inputs map[string]string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var action struct {
		Inputs map[string]struct {
			Default string `yaml:"default"`
		} `yaml:"inputs"`
		Runs struct {
			Steps []struct {
				ID  string            `yaml:"id"`
				Run string            `yaml:"run"`
				Env map[string]string `yaml:"env"`
			} `yaml:"steps"`
		} `yaml:"runs"`
	}
	if err := yaml.Unmarshal(data, &action); err != nil {
		t.Fatal(err)
	}
	inputs = map[string]string{}
	for k, v := range action.Inputs {
		inputs[k] = v.Default
	}
	for _, s := range action.Runs.Steps {
		if s.ID == id {
			return s.Run, s.Env, inputs
		}
	}
	t.Fatalf("%s has no step %q", path, id)
	return
}

// TestSignalForwarding starts the implement step as the action does (bash
// running the step's script, which execs roadmap), sends SIGINT to that
// process as the runner does on cancel while the Job waits on a model call,
// and checks that SIGINT alone ends the Job: it leaves the call unanswered,
// writes yielded with its marks and exits on its own. The runner sends
// SIGTERM 7.5 s after SIGINT and kills 2.5 s later; this test sends SIGTERM
// only after giveUp, far longer, so a loaded machine cannot fail it and a
// Job that needs more than SIGINT still does. That the last mark fits in the
// runner's grace is the kernel's: it is written on kernel.LastMarkContext,
// whose deadline is kernel.Grace (5 s) after the signal
// (TestLastMarkContextFitsTheGrace).
func TestSignalForwarding(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the runner's SIGINT is a unix signal")
	}
	const giveUp = 2 * time.Minute
	ctx := context.Background()
	bin := buildRoadmap(t)
	// A model that answers nothing while the test runs: the Job is inside a
	// model call when the signal comes, and only the signal can end it.
	w, err := demo.NewWorld(ctx, t.TempDir(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	inCall := make(chan struct{})
	var once sync.Once
	w.OnModelCall(func(string, int) { once.Do(func() { close(inCall) }) })
	cfg, _ := w.Config()
	ws, _ := w.Workspace("job-1")
	script, envMap, inputs := actionStep(t, filepath.Join("..", "..", "actions", "implement", "action.yml"), "run")
	a := newActionsEnv(t, w, 7101, ws, "workflow_dispatch", fmt.Sprintf(`{"inputs":{"issue":"%d"}}`, w.Issue))
	vars := append([]string{}, a.vars...)
	inputs["issue"] = fmt.Sprint(w.Issue)
	inputs["config"] = cfg
	inputs["attempt"] = "1"
	for k, expr := range envMap {
		switch {
		case k == "ROADMAP_BIN":
			vars = append(vars, k+"="+bin)
		case k == "GITHUB_TOKEN":
			vars = append(vars, k+"="+demo.Token)
		case strings.HasPrefix(expr, "${{ inputs."):
			name := strings.TrimSuffix(strings.TrimPrefix(expr, "${{ inputs."), " }}")
			vars = append(vars, k+"="+inputs[name])
		}
	}
	// The runner runs a composite step's script with bash -e, as its entry process.
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script)
	cmd.Dir = ws
	cmd.Env = vars
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	// Wait (giving up after a minute) until group 1 has started and its
	// first model call is on the server.
	var log strings.Builder
	started, calling := false, inCall
	wait := time.After(time.Minute)
	for !started || calling != nil {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the Job ended before its first group's model call:\n%s", log.String())
			}
			log.WriteString(l + "\n")
			started = started || strings.Contains(l, "roadmap: group 1:")
		case <-calling:
			calling = nil
		case <-wait:
			cmd.Process.Kill()
			t.Fatalf("no group started a model call in a minute (group started: %v):\n%s", started, log.String())
		}
	}
	// The step's entry process is roadmap itself (exec), not a shell.
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", cmd.Process.Pid))
	if err == nil && filepath.Base(exe) != "roadmap" {
		t.Errorf("the step's entry process is %s, want roadmap (the action must exec it)", exe)
	}
	signalled := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		for l := range lines {
			log.WriteString(l + "\n")
		}
		cmd.Wait()
		close(exited)
	}()
	select {
	case <-exited:
	case <-time.After(giveUp):
		// Long past the runner's SIGTERM and kill: the Job did not end on
		// SIGINT. Send what the runner sends next, then the kill.
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(giveUp):
			cmd.Process.Kill()
			<-exited
		}
		t.Fatalf("roadmap did not end on SIGINT alone (it had not ended %s after it; the runner sends SIGTERM at 7.5 s); after SIGTERM: %s\n%s",
			giveUp, cmd.ProcessState, log.String())
	}
	// It exited on its own, before any SIGTERM, with 0 as for any result.
	if st := cmd.ProcessState; !st.Exited() || st.ExitCode() != ExitOK {
		t.Errorf("roadmap ended with %s after SIGINT; want exit 0, on its own (a yield is a result)\n%s", st, log.String())
	}
	// It left the model call unanswered: the server served none.
	if n := w.Replay.Stats().Calls; n != 0 {
		t.Errorf("the replay model served %d calls; want none (the Job leaves its call on SIGINT, it does not wait it out)", n)
	}
	rec, _ := recordOf(t, w.Fake, w.Issue)
	if res, _ := rec.Result(); res != record.ResultYielded {
		t.Errorf("implement.result = %q after SIGINT, want yielded\n%s", res, log.String())
	}
	if n, _ := rec.Attempt(); n != 1 {
		t.Errorf("implement.attempt = %d, want the Job's marks (1)", n)
	}
	if out := a.outputs(t); out["result"] != "yielded" {
		t.Errorf("result output = %q, want yielded", out["result"])
	}
	t.Logf("exit %d, %s after SIGINT", cmd.ProcessState.ExitCode(), time.Since(signalled).Round(time.Millisecond))
}
