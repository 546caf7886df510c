package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/plan"
)

const checksToken = "ghs_checkstesttoken00000000000000000000"

// checksWorld is a git repository with a main branch and a work branch
// (the PR), a fake GitHub over HTTP, and the environment of an Actions step.
type checksWorld struct {
	t       *testing.T
	fake    *githubfake.Fake
	repo    string
	dir     string // GITHUB_OUTPUT, GITHUB_STEP_SUMMARY and the event live here
	environ []string
}

func newChecksWorld(t *testing.T, base map[string]string) *checksWorld {
	t.Helper()
	fake := githubfake.New(githubfake.Options{Token: checksToken, Owner: "acme", Repo: "widgets"})
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	w := &checksWorld{t: t, fake: fake, repo: t.TempDir(), dir: t.TempDir()}
	w.git("init", "--quiet", "--initial-branch=main")
	w.commit("base", base)
	w.git("checkout", "--quiet", "-b", "work")
	w.environ = []string{
		"PATH=" + os.Getenv("PATH"),
		"GITHUB_ACTIONS=true",
		"GITHUB_TOKEN=" + checksToken,
		"GITHUB_API_URL=" + srv.URL,
		"GITHUB_REPOSITORY=acme/widgets",
		"GITHUB_SERVER_URL=https://github.example",
		"GITHUB_RUN_ID=4242",
		"GITHUB_WORKSPACE=" + w.repo,
		"GITHUB_OUTPUT=" + filepath.Join(w.dir, "output"),
		"GITHUB_STEP_SUMMARY=" + filepath.Join(w.dir, "summary"),
		"GITHUB_EVENT_NAME=pull_request",
		"GITHUB_EVENT_PATH=" + filepath.Join(w.dir, "event.json"),
		"RUNNER_TEMP=" + t.TempDir(),
	}
	return w
}

func (w *checksWorld) git(args ...string) string {
	w.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = w.repo
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=Checks Test", "GIT_AUTHOR_EMAIL=checks@example.com",
		"GIT_COMMITTER_NAME=Checks Test", "GIT_COMMITTER_EMAIL=checks@example.com",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
	out, err := cmd.CombinedOutput()
	if err != nil {
		w.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// commit writes files ("" deletes one) and commits them; message may carry
// trailers after a blank line.
func (w *checksWorld) commit(message string, files map[string]string) string {
	w.t.Helper()
	for name, body := range files {
		p := filepath.Join(w.repo, filepath.FromSlash(name))
		if body == "" {
			if err := os.Remove(p); err != nil {
				w.t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			w.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			w.t.Fatal(err)
		}
	}
	w.git("add", "--all")
	w.git("commit", "--quiet", "--allow-empty", "-m", message)
	head := w.git("rev-parse", "HEAD")
	w.fake.AddCommit(head) // the pushed commit, as GitHub has it
	return head
}

// pullRequest writes the pull_request event for the work branch at head.
func (w *checksWorld) pullRequest(head string) {
	w.t.Helper()
	ev := fmt.Sprintf(`{"action":"synchronize","number":7,"pull_request":{"number":7,"head":{"sha":%q,"ref":"work"},"base":{"ref":"main"}}}`, head)
	if err := os.WriteFile(filepath.Join(w.dir, "event.json"), []byte(ev), 0o644); err != nil {
		w.t.Fatal(err)
	}
	for _, f := range []string{"output", "summary"} {
		if err := os.WriteFile(filepath.Join(w.dir, f), nil, 0o644); err != nil {
			w.t.Fatal(err)
		}
	}
}

func (w *checksWorld) run(args ...string) (code int, stdout, stderr string) {
	w.t.Helper()
	return w.runCtx(context.Background(), args...)
}

func (w *checksWorld) runCtx(ctx context.Context, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = Main(ctx, append([]string{"checks"}, args...), w.environ, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func (w *checksWorld) read(name string) string {
	w.t.Helper()
	b, err := os.ReadFile(filepath.Join(w.dir, name))
	if err != nil {
		w.t.Fatal(err)
	}
	return string(b)
}

// outputs parses $GITHUB_OUTPUT as the runner does (name<<delimiter).
func (w *checksWorld) outputs() map[string]string {
	w.t.Helper()
	out := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(w.read("output")))
	for sc.Scan() {
		name, delim, ok := strings.Cut(sc.Text(), "<<")
		if !ok {
			w.t.Fatalf("$GITHUB_OUTPUT line %q is not name<<delimiter", sc.Text())
		}
		var lines []string
		for sc.Scan() && sc.Text() != delim {
			lines = append(lines, sc.Text())
		}
		out[name] = strings.Join(lines, "\n")
	}
	return out
}

type statusSeen struct{ State, Description string }

func (w *checksWorld) statuses(sha string) []statusSeen {
	var out []statusSeen
	for _, s := range w.fake.Statuses(sha) {
		if s.Context != "roadmap/checks" {
			w.t.Errorf("status context %q, want roadmap/checks", s.Context)
		}
		if s.TargetURL != "https://github.example/acme/widgets/actions/runs/4242" {
			w.t.Errorf("status target %q, want the run's page", s.TargetURL)
		}
		out = append(out, statusSeen{s.State, s.Description})
	}
	return out
}

// The plan of a PR that adds a farewell: group 1 starts from a check that
// fails on main, group 2 keeps the greeting.
const goodbyeTasks = "## 1. Say goodbye\n\n" +
	"- [x] 1.1 Check for the farewell; verify: `grep -q goodbye greet.txt` fails\n" +
	"- [x] 1.2 Write the farewell; verify: `grep -q goodbye greet.txt`\n\n" +
	"## 2. Keep the greeting\n\n" +
	"- [x] 2.1 Keep hello; verify: `grep -q hello greet.txt`\n" +
	"- [x] 2.2 Nothing more; verify: `test -f greet.txt`\n"

const goodbyeTasksPath = "openspec/changes/say-goodbye/tasks.md"

// A proposal and a delta spec that pass `openspec validate --strict`, for
// the changes of these tests.
const (
	soundProposal = "# Say goodbye\n\n## Why\n\nThe greeting file says hello but never goodbye, and readers leave unsure.\n\n" +
		"## What Changes\n\n- greet.txt says goodbye after hello.\n"
	soundSpec = "## ADDED Requirements\n\n### Requirement: Farewell\n\nThe greeting file SHALL end with a farewell.\n\n" +
		"#### Scenario: A reader reaches the end\n\n- **WHEN** a reader reads greet.txt to the end\n- **THEN** the last line says goodbye\n"
)

// sound adds change id, with tasks and a sound proposal and delta spec, to
// files (a new map when nil).
func sound(id, tasks string, files map[string]string) map[string]string {
	if files == nil {
		files = map[string]string{}
	}
	dir := "openspec/changes/" + id + "/"
	files[dir+"tasks.md"] = tasks
	files[dir+"proposal.md"] = soundProposal
	files[dir+"specs/greeting/spec.md"] = soundSpec
	return files
}

func TestChecksStatus(t *testing.T) {
	w := newChecksWorld(t, map[string]string{
		"greet.txt":           "hello\n",
		".github/roadmap.yml": "checks:\n  commands:\n    - ls greet.txt\n",
	})

	// A head whose group checks pass.
	good := w.commit("say goodbye", map[string]string{
		"greet.txt":      "hello\ngoodbye\n",
		goodbyeTasksPath: goodbyeTasks,
		"openspec/changes/say-goodbye/proposal.md":            soundProposal,
		"openspec/changes/say-goodbye/specs/greeting/spec.md": soundSpec,
	})
	w.pullRequest(good)
	code, stdout, stderr := w.run()
	if code != ExitOK {
		t.Fatalf("checks on a passing head: exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	want := []statusSeen{{"pending", "checking 2 groups"}, {"success", "2 of 2 groups pass"}}
	if diff := cmp.Diff(want, w.statuses(good)); diff != "" {
		t.Errorf("statuses on the passing head (-want +got):\n%s", diff)
	}
	if stdout != "" {
		t.Errorf("stdout on a passing head = %q, want nothing", stdout)
	}
	if diff := cmp.Diff(map[string]string{"passed": "true", "failed_group": "", "failed_command": ""}, w.outputs()); diff != "" {
		t.Errorf("outputs (-want +got):\n%s", diff)
	}
	summary := w.read("summary")
	for _, s := range []string{
		"| 1. Say goodbye | `grep -q goodbye greet.txt` | ✅ exit 0 |",
		"| 1. Say goodbye | fail-to-pass `grep -q goodbye greet.txt` | ✅ failed before the change (exit 1) |",
		"| 2. Keep the greeting | `test -f greet.txt` | ✅ exit 0 |",
		"| checks.commands | `ls greet.txt` | ✅ exit 0 |",
	} {
		if !strings.Contains(summary, s) {
			t.Errorf("summary lacks %q:\n%s", s, summary)
		}
	}

	// A head where they fail: the farewell is gone again.
	bad := w.commit("drop the farewell", map[string]string{"greet.txt": "hello\n"})
	w.pullRequest(bad)
	code, stdout, stderr = w.run()
	if code != ExitFindings {
		t.Fatalf("checks on a failing head: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	want = []statusSeen{{"pending", "checking 2 groups"}, {"failure", "group 1: grep -q goodbye greet.txt exited 1"}}
	if diff := cmp.Diff(want, w.statuses(bad)); diff != "" {
		t.Errorf("statuses on the failing head (-want +got):\n%s", diff)
	}
	if got := w.statuses(good); len(got) != 2 {
		t.Errorf("the passing head's statuses changed: %+v", got)
	}
	// Task 1.2 (line 4) is the one the command must pass for.
	annotation := "::error file=" + goodbyeTasksPath + ",line=4::group 1 task 1.2: grep -q goodbye greet.txt exited 1"
	if !strings.Contains(stdout, annotation) {
		t.Errorf("stdout lacks the annotation %q:\n%s", annotation, stdout)
	}
	onlyWorkflowCommands(t, "checks", stdout)
	if diff := cmp.Diff(map[string]string{"passed": "false", "failed_group": "1", "failed_command": "grep -q goodbye greet.txt"}, w.outputs()); diff != "" {
		t.Errorf("outputs (-want +got):\n%s", diff)
	}
	summary = w.read("summary")
	for _, s := range []string{
		"| 1. Say goodbye | `grep -q goodbye greet.txt` | ❌ exited 1 |",
		"| 1. Say goodbye | fail-to-pass | not checked: the group's checks fail at the head | |",
		"| 2. Keep the greeting | `grep -q hello greet.txt` | ✅ exit 0 |",
		"<details><summary>group 1: grep -q goodbye greet.txt</summary>",
		"$ grep -q goodbye greet.txt\n[exit 1]",
	} {
		if !strings.Contains(summary, s) {
			t.Errorf("summary lacks %q:\n%s", s, summary)
		}
	}
	if strings.Contains(stdout+stderr+summary, checksToken) {
		t.Error("the token leaked")
	}
}

// checksJSON is the --json document as a script reads it.
type checksJSON struct {
	SHA    string `json:"sha"`
	Plan   string `json:"plan"`
	Passed bool   `json:"passed"`
	Groups []struct {
		Number   int    `json:"number"`
		Title    string `json:"title"`
		Passed   bool   `json:"passed"`
		Log      string `json:"log"`
		Commands []struct {
			Command    string `json:"command"`
			ExitCode   int    `json:"exit_code"`
			DurationMS int64  `json:"duration_ms"`
			Passed     bool   `json:"passed"`
			Ran        bool   `json:"ran"`
			Error      string `json:"error"`
		} `json:"commands"`
		FailToPass struct {
			Status   string   `json:"status"`
			Reason   string   `json:"reason"`
			Before   string   `json:"before"`
			Overlay  []string `json:"overlay"`
			Commands []struct {
				Command        string `json:"command"`
				BeforeExitCode int    `json:"before_exit_code"`
				Held           bool   `json:"held"`
			} `json:"commands"`
		} `json:"fail_to_pass"`
	} `json:"groups"`
	Findings      []checksFinding `json:"findings"`
	FailedGroup   int             `json:"failed_group"`
	FailedCommand string          `json:"failed_command"`
	Description   string          `json:"description"`
}

type checksFinding struct {
	Level   string `json:"level"`
	Rule    string `json:"rule"`
	File    string `json:"file"`
	Line    int    `json:"line"`
	Message string `json:"message"`
}

// runJSON runs checks --json and returns the document and the annotations.
func (w *checksWorld) runJSON(wantCode int, args ...string) (checksJSON, string) {
	w.t.Helper()
	code, stdout, stderr := w.run(append(args, "--json")...)
	if code != wantCode {
		w.t.Fatalf("checks %v: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", args, code, wantCode, stdout, stderr)
	}
	// In Actions annotations share stdout with the JSON; they come first.
	var lines, annotations []string
	for _, l := range strings.SplitAfter(stdout, "\n") {
		if strings.HasPrefix(l, "::") {
			annotations = append(annotations, l)
		} else {
			lines = append(lines, l)
		}
	}
	var got checksJSON
	if err := json.Unmarshal([]byte(strings.Join(lines, "")), &got); err != nil {
		w.t.Fatalf("checks --json printed no JSON object: %v\n%s", err, stdout)
	}
	return got, strings.Join(annotations, "")
}

func TestChecksFailToPass(t *testing.T) {
	t.Run("a fails command that passed before the change", func(t *testing.T) {
		w := newChecksWorld(t, map[string]string{"greet.txt": "hello\n"})
		tasks := "## 1. Greet\n\n- [x] 1.1 Check the greeting; verify: `grep -q hello greet.txt` fails\n"
		head := w.commit("greet", sound("greet", tasks, map[string]string{"notes.txt": "x\n"}))
		w.pullRequest(head)
		got, annotations := w.runJSON(ExitFindings)
		if want := "::error file=openspec/changes/greet/tasks.md,line=3::group 1 task 1.1: grep -q hello greet.txt passed before the group's change (fail-to-pass)\n"; annotations != want {
			t.Errorf("annotations = %q, want %q", annotations, want)
		}
		if got.Passed || got.FailedGroup != 1 || got.FailedCommand != "grep -q hello greet.txt" {
			t.Errorf("result = %+v, want group 1 failed on its fails command", got)
		}
		if want := "group 1: grep -q hello greet.txt passed before the group's change (fail-to-pass)"; got.Description != want {
			t.Errorf("description = %q, want %q", got.Description, want)
		}
		g := got.Groups[0]
		if g.FailToPass.Status != "failed" || len(g.FailToPass.Commands) != 1 || g.FailToPass.Commands[0].Held ||
			g.FailToPass.Commands[0].BeforeExitCode != 0 || !g.Commands[0].Passed {
			t.Errorf("group = %+v, want the head run passed and the fail-to-pass failed", g)
		}
		if st := w.statuses(head); len(st) != 2 || st[1].State != "failure" {
			t.Errorf("statuses = %+v, want pending then failure", st)
		}
	})

	t.Run("implement's group commits and the change's test files", func(t *testing.T) {
		w := newChecksWorld(t, map[string]string{"greet.txt": "hello\n"})
		tasks := "## 1. Say hi\n\n- [x] 1.1 Say hi; verify: `grep -q hi greet.txt` fails\n\n" +
			"## 2. Say goodbye\n\n- [x] 2.1 Expect the farewell; verify: `grep -q -f tests/expect.txt greet.txt` fails\n" +
			"- [x] 2.2 Write it; verify: `grep -q goodbye greet.txt`\n"
		g1 := w.commit("group 1\n\nRoadmap-Group: 1", sound("greet", tasks, map[string]string{"greet.txt": "hello\nhi\n"}))
		w.commit("work in progress\n\nRoadmap-WIP: true", map[string]string{"tests/expect.txt": "goodbye\n"})
		head := w.commit("group 2\n\nRoadmap-Group: 2", map[string]string{"greet.txt": "hello\nhi\ngoodbye\n"})
		w.pullRequest(head)
		got, _ := w.runJSON(ExitOK, "--no-status")
		if !got.Passed || got.SHA != head || got.Description != "2 of 2 groups pass" {
			t.Fatalf("result = %+v, want passed on %s", got, head)
		}
		if n := len(w.fake.Statuses(head)); n != 0 {
			t.Errorf("--no-status set %d statuses", n)
		}
		base := w.git("rev-parse", "main")
		g2 := got.Groups[1].FailToPass
		for _, c := range []struct {
			name      string
			got, want any
		}{
			{"group 1 before", got.Groups[0].FailToPass.Before, base},
			{"group 1 status", got.Groups[0].FailToPass.Status, "held"},
			{"group 2 before (group 1's commit, not the WIP commit)", g2.Before, g1},
			{"group 2 status", g2.Status, "held"},
			{"group 2 overlay", g2.Overlay, []string{"tests/expect.txt"}},
			// grep exits 1 (no match), not 2 (no such file): the test file was there.
			{"group 2 before exit", g2.Commands[0].BeforeExitCode, 1},
		} {
			if diff := cmp.Diff(c.want, c.got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", c.name, diff)
			}
		}
		if out := w.git("worktree", "list"); strings.Count(out, "\n") != 0 {
			t.Errorf("worktrees left behind:\n%s", out)
		}

		got, _ = w.runJSON(ExitOK, "--no-status", "--group", "2")
		if len(got.Groups) != 1 || got.Groups[0].Number != 2 || got.Description != "1 of 1 groups pass" {
			t.Errorf("--group 2 = %+v, want group 2 alone", got)
		}
	})

	t.Run("no base branch in the checkout", func(t *testing.T) {
		w := newChecksWorld(t, map[string]string{"greet.txt": "hello\n"})
		tasks := "## 1. Say goodbye\n\n- [x] 1.1 Farewell; verify: `grep -q goodbye greet.txt` fails\n"
		w.commit("goodbye", sound("bye", tasks, map[string]string{"greet.txt": "goodbye\n"}))
		got, _ := w.runJSON(ExitOK, "--no-status", "--base", "trunk")
		f := got.Groups[0].FailToPass
		if !got.Passed || f.Status != "not checked" || !strings.Contains(f.Reason, `"trunk" is not in the checkout`) {
			t.Errorf("result = %+v, want passed with fail-to-pass not checked for the missing base", got)
		}
		if want := "1 of 1 groups pass (fail-to-pass not checked)"; got.Description != want {
			t.Errorf("description = %q, want %q", got.Description, want)
		}
	})
}

func TestChecksRefusedCommand(t *testing.T) {
	w := newChecksWorld(t, map[string]string{"greet.txt": "hello\n"})
	tasks := "## 1. Fetch\n\n- [x] 1.1 Fetch it; verify: `curl http://127.0.0.1/`\n- [x] 1.2 Then; verify: `test -f greet.txt`\n"
	head := w.commit("fetch", sound("fetch", tasks, nil))
	w.pullRequest(head)
	got, _ := w.runJSON(ExitFindings)
	g := got.Groups[0]
	if g.Passed || len(g.Commands) != 2 || g.Commands[0].Ran != true || g.Commands[1].Ran {
		t.Errorf("group = %+v, want the refused command failed and the next not run", g)
	}
	// The plan gate refuses the form of the verify command; the group's
	// run says why it could not run.
	if !strings.Contains(got.Description, "roadmap/gate/verify-form: task 1.1: verify command `curl http://127.0.0.1/`") {
		t.Errorf("description = %q, want the verify-form finding first", got.Description)
	}
	if !strings.Contains(g.Commands[0].Error, "network access is refused") {
		t.Errorf("the curl command's error = %q, want the refusal", g.Commands[0].Error)
	}
	if st := w.statuses(head); len(st) != 2 || st[1].State != "failure" {
		t.Errorf("statuses = %+v, want pending then failure", st)
	}
}

// TestChecksCancelled cancels a run while a check hangs: the status must
// not stay pending.
func TestChecksCancelled(t *testing.T) {
	w := newChecksWorld(t, map[string]string{"greet.txt": "hello\n"})
	tasks := "## 1. Hang\n\n- [x] 1.1 Follow the file; verify: `tail -f greet.txt`\n"
	head := w.commit("hang", sound("hang", tasks, nil))
	w.pullRequest(head)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type ended struct {
		code           int
		stdout, stderr string
	}
	done := make(chan ended, 1)
	go func() {
		code, stdout, stderr := w.runCtx(ctx)
		done <- ended{code, stdout, stderr}
	}()
	deadline := time.Now().Add(20 * time.Second)
	for len(w.fake.Statuses(head)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no pending status within 20 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	var e ended
	select {
	case e = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("checks did not end within 20 s of the cancel")
	}
	if e.code != ExitInternal {
		t.Errorf("exit %d, want 3\nstderr:\n%s", e.code, e.stderr)
	}
	st := w.statuses(head)
	if len(st) != 2 || st[0].State != "pending" || st[1].State != "error" || !strings.Contains(st[1].Description, "context canceled") {
		t.Errorf("statuses = %+v, want pending then error (cancelled)", st)
	}
	onlyWorkflowCommands(t, "checks", e.stdout)
}

// TestChecksAction runs the action's step as the runner does (bash running
// its script, which execs roadmap) and checks each input reaches its flag.
func TestChecksAction(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildRoadmap(t)
	// The configuration the step names is the base branch's: a PR's own is
	// never trusted (TestChecksTrustFromBase).
	w := newChecksWorld(t, map[string]string{"greet.txt": "hello\n",
		"ci/roadmap.yml": "checks:\n  commands: [\"grep -q goodbye greet.txt\"]\n"})
	files := sound("bye", goodbyeTasks, map[string]string{
		"greet.txt": "hello\ngoodbye\n",
	})
	head := w.commit("goodbye", sound("other", "## 1. Other\n\n- [x] 1.1 x; verify: `false`\n", files))
	w.pullRequest(head)
	script, envMap, defaults := actionStep(t, filepath.Join("..", "..", "actions", "checks", "action.yml"), "run")
	step := func(inputs map[string]string) (int, string) {
		t.Helper()
		vars := append([]string(nil), w.environ...)
		for k, expr := range envMap {
			switch {
			case k == "ROADMAP_BIN":
				vars = append(vars, k+"="+bin)
			case k == "GITHUB_TOKEN":
				vars = append(vars, k+"="+checksToken)
			case strings.HasPrefix(expr, "${{ inputs."):
				name := strings.TrimSuffix(strings.TrimPrefix(expr, "${{ inputs."), " }}")
				v, ok := inputs[name]
				if !ok {
					v = defaults[name]
				}
				vars = append(vars, k+"="+v)
			default:
				t.Fatalf("step env %s=%s is not an input", k, expr)
			}
		}
		cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script)
		cmd.Dir = w.repo
		cmd.Env = vars
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, out.String()
	}

	// Two changes: without plan the step cannot choose.
	if code, out := step(nil); code != ExitUsage || !strings.Contains(out, "2 changes under openspec/changes") {
		t.Errorf("no plan input: exit %d, want 2\n%s", code, out)
	}
	code, out := step(map[string]string{"plan": "openspec/changes/bye", "config": "ci/roadmap.yml", "group": "2", "sha": head, "base": "main"})
	if code != ExitOK {
		t.Fatalf("exit %d, want 0\n%s", code, out)
	}
	want := []statusSeen{{"pending", "checking 1 group"}, {"success", "1 of 1 groups pass"}}
	if diff := cmp.Diff(want, w.statuses(head)); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	if summary := w.read("summary"); !strings.Contains(summary, "| checks.commands | `grep -q goodbye greet.txt` | ✅ exit 0 |") ||
		strings.Contains(summary, "| 1. Say goodbye |") {
		t.Errorf("summary does not show group 2 alone with ci/roadmap.yml's command:\n%s", summary)
	}
	if got := w.outputs(); got["passed"] != "true" {
		t.Errorf("outputs = %v, want passed true", got)
	}
	code, out = step(map[string]string{"plan": "openspec/changes/other", "no-status": "true"})
	if code != ExitFindings || len(w.statuses(head)) != 2 {
		t.Errorf("no-status: exit %d (want 1), %d statuses (want the 2 from before)\n%s", code, len(w.statuses(head)), out)
	}
}

// TestChecksNoPlan: a PR that carries no OpenSpec change (an ordinary
// contributor's) passes the plan part as "no plan": the status is success and
// says so, nothing runs, and the exit is 0.
func TestChecksNoPlan(t *testing.T) {
	w := newChecksWorld(t, map[string]string{"greet.txt": "hello\n"})
	head := w.commit("an ordinary change", map[string]string{"greet.txt": "hello, world\n"})
	w.pullRequest(head)
	code, stdout, stderr := w.run("--json")
	if code != ExitOK {
		t.Fatalf("exit %d, want 0\nstderr:\n%s", code, stderr)
	}
	want := []statusSeen{{"success", "no plan: this commit carries no OpenSpec change under openspec/changes"}}
	if diff := cmp.Diff(want, w.statuses(head)); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	if !strings.Contains(stdout, `"passed": true`) || !strings.Contains(stdout, `"groups": []`) {
		t.Errorf("--json does not say passed with no groups:\n%s", stdout)
	}
}

func TestChecksBadInput(t *testing.T) {
	tasks := "## 1. A\n\n- [x] 1.1 a; verify: `test -e .`\n"
	tests := []struct {
		name    string
		base    map[string]string // besides greet.txt
		files   map[string]string
		args    []string
		environ []string
		stderr  string
		stdout  string
	}{
		{name: "several plans", files: map[string]string{"openspec/changes/a/tasks.md": tasks, "openspec/changes/b/tasks.md": tasks},
			stderr: "2 changes under openspec/changes (a, b); pass --plan or --issue"},
		{name: "no group", files: map[string]string{"openspec/changes/a/tasks.md": tasks}, args: []string{"--group", "3"},
			stderr: "has no group 3"},
		{name: "bad configuration", base: map[string]string{".github/roadmap.yml": "checks:\n  comands: [x]\n"},
			stderr: "checks.comands: unknown key", stdout: "::error file=.github/roadmap.yml,line=2::"},
		{name: "a plan that does not parse", files: map[string]string{"openspec/changes/a/tasks.md": "## 1. A\n\n- [ ] 2.1 wrong group\n"},
			stderr: "task 2.1 is under group 1", stdout: "::error file=openspec/changes/a/tasks.md,line=3::"},
		{name: "no repository for the status", files: map[string]string{"openspec/changes/a/tasks.md": tasks},
			environ: []string{"GITHUB_REPOSITORY="}, stderr: "pass --no-status"},
		{name: "an argument", args: []string{"extra"}, stderr: `unexpected argument "extra"`},
		{name: "a --config that does not exist", files: map[string]string{"openspec/changes/a/tasks.md": tasks},
			args: []string{"--config", "ci/roadmap.yml"}, stderr: "ci/roadmap.yml: not in the base branch's tree"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := map[string]string{"greet.txt": "hello\n"}
			maps.Copy(base, tt.base)
			w := newChecksWorld(t, base)
			head := w.commit("change", tt.files)
			w.pullRequest(head)
			w.environ = append(w.environ, tt.environ...)
			code, stdout, stderr := w.run(tt.args...)
			if code != ExitUsage {
				t.Errorf("exit %d, want 2\nstderr:\n%s", code, stderr)
			}
			if !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.stderr, stderr)
			}
			if !strings.Contains(stdout, tt.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tt.stdout, stdout)
			}
			onlyWorkflowCommands(t, "checks", stdout)
		})
	}
}

// TestChecksValidatesPlan: the plan a PR carries is validated as
// `openspec validate --strict` does before its groups run. A finding that
// fails it (ERROR or WARNING) is an annotation on its file and line, a row of
// the summary, a finding in --json, and fails the status, whose description
// names it; a sound plan passes.
func TestChecksValidatesPlan(t *testing.T) {
	w := newChecksWorld(t, map[string]string{"greet.txt": "hello\n"})
	tasks := "## 1. Say goodbye\n\n- [x] 1.1 Write the farewell; verify: `grep -q goodbye greet.txt`\n"

	good := w.commit("say goodbye", sound("bye", tasks, map[string]string{"greet.txt": "hello\ngoodbye\n"}))
	w.pullRequest(good)
	got, annotations := w.runJSON(ExitOK)
	if !got.Passed || len(got.Findings) != 0 || annotations != "" || got.Description != "1 of 1 groups pass" {
		t.Errorf("a sound plan: passed %v, findings %+v, annotations %q, description %q; want passed, none, none, 1 of 1 groups pass",
			got.Passed, got.Findings, annotations, got.Description)
	}
	if summary := w.read("summary"); !strings.Contains(summary, "Plan validation (`openspec validate --strict` and roadmap's rules): no findings.") {
		t.Errorf("the summary does not say the plan validated:\n%s", summary)
	}

	// The same change with a requirement that has no scenario (an ERROR)
	// and one without SHALL or MUST (a WARNING under --strict); the group's
	// checks still pass.
	const specPath = "openspec/changes/bye/specs/greeting/spec.md"
	bad := w.commit("a spec OpenSpec refuses", map[string]string{specPath: "## ADDED Requirements\n\n" +
		"### Requirement: Farewell\n\nThe greeting file SHALL end with a farewell.\n\n" +
		"### Requirement: Politeness\n\nThe farewell is polite.\n\n" +
		"#### Scenario: A reader is thanked\n\n- **WHEN** a reader reaches the end\n- **THEN** the farewell thanks them\n"})
	w.pullRequest(bad)
	got, annotations = w.runJSON(ExitFindings)
	wantFindings := []checksFinding{
		{Level: "ERROR", Rule: "openspec/scenario-required", File: specPath, Line: 3, Message: `ADDED "Farewell" must include at least one scenario`},
		{Level: "WARNING", Rule: "openspec/shall-must", File: specPath, Line: 7, Message: `ADDED "Politeness" should contain SHALL or MUST (RFC 2119 best practice for English specs)`},
	}
	if diff := cmp.Diff(wantFindings, got.Findings); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	for _, want := range []string{
		"::error file=" + specPath + ",line=3::openspec/scenario-required: ADDED \"Farewell\" must include at least one scenario\n",
		"::warning file=" + specPath + ",line=7::openspec/shall-must: ADDED \"Politeness\" should contain SHALL or MUST",
	} {
		if !strings.Contains(annotations, want) {
			t.Errorf("annotations lack %q:\n%s", want, annotations)
		}
	}
	if got.Passed || !got.Groups[0].Passed {
		t.Errorf("passed %v, group 1 passed %v: want the plan to fail the checks while its group passes", got.Passed, got.Groups[0].Passed)
	}
	wantDesc := "plan, 2 findings: " + specPath + ":3: openspec/scenario-required: ADDED \"Farewell\" must include at least one scenario"
	if got.Description != wantDesc {
		t.Errorf("description = %q, want %q", got.Description, wantDesc)
	}
	st := w.statuses(bad)
	// GitHub keeps 140 characters of a description; the client cuts there.
	if len(st) != 2 || st[1].State != "failure" || !strings.HasPrefix(st[1].Description, "plan, 2 findings: "+specPath+":3: ") {
		t.Errorf("statuses = %+v, want pending then a failure naming %s:3", st, specPath)
	}
	summary := w.read("summary")
	for _, want := range []string{
		"| ❌ ERROR | `" + specPath + ":3` | `openspec/scenario-required` | ADDED \"Farewell\" must include at least one scenario |",
		"| ⚠️ WARNING | `" + specPath + ":7` | `openspec/shall-must` |",
	} {
		if !strings.Contains(summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, summary)
		}
	}

	// At the PR's last commit implement has archived the change (the spec
	// applied to openspec/specs): the archived plan is the one validated.
	w.commit("a sound spec again", map[string]string{specPath: soundSpec})
	findings, err := plan.Archive(w.repo, "bye", time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC))
	if err != nil || len(findings) != 0 {
		t.Fatalf("archive: %v %v", findings, err)
	}
	archived := w.commit("archive bye\n\nRoadmap-Archive: bye", nil)
	w.pullRequest(archived)
	got, annotations = w.runJSON(ExitOK, "--plan", "openspec/changes/bye")
	if !got.Passed || len(got.Findings) != 0 || annotations != "" || got.Plan != "openspec/changes/archive/2026-01-02-bye" {
		t.Errorf("the archived plan: passed %v, plan %q, findings %+v, annotations %q; want passed, the archive, none, none",
			got.Passed, got.Plan, got.Findings, annotations)
	}
}

// TestChecksReadOnlyToken: a pull request from a fork runs with a read-only
// token. checks runs, sets no status (the write would fail the job for
// nothing the PR did), says so in the job's summary, and exits on the
// checks' own result. A same-repository run whose token may not write
// statuses (403, as Dependabot's) ends the same way.
func TestChecksReadOnlyToken(t *testing.T) {
	const roToken = "ghs_readonly_checks_token_0123456789"
	tests := []struct {
		name      string
		headRepo  string // "" is the base repository
		breakHead bool   // the head fails its checks
		noPlan    bool
		wantCode  int
		wantWhy   string
		wantTries int // status writes the fake saw
	}{
		{name: "fork, passing", headRepo: "mallory/widgets", wantCode: ExitOK, wantWhy: "comes from mallory/widgets, and its run's token is read-only"},
		{name: "fork, failing", headRepo: "mallory/widgets", breakHead: true, wantCode: ExitFindings, wantWhy: "comes from mallory/widgets"},
		{name: "fork, no plan", headRepo: "mallory/widgets", noPlan: true, wantCode: ExitOK, wantWhy: "comes from mallory/widgets"},
		{name: "same repository, read-only token", wantCode: ExitOK, wantWhy: "the token may not set commit statuses", wantTries: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newChecksWorld(t, map[string]string{"greet.txt": "hello\n"})
			w.fake.AddToken(roToken, "github-actions[bot]", true)
			for i, kv := range w.environ {
				if strings.HasPrefix(kv, "GITHUB_TOKEN=") {
					w.environ[i] = "GITHUB_TOKEN=" + roToken
				}
			}
			var head string
			if tt.noPlan {
				head = w.commit("an ordinary change", map[string]string{"greet.txt": "hello, world\n"})
			} else {
				head = w.commit("say goodbye", map[string]string{
					"greet.txt":      "hello\ngoodbye\n",
					goodbyeTasksPath: goodbyeTasks,
					"openspec/changes/say-goodbye/proposal.md":            soundProposal,
					"openspec/changes/say-goodbye/specs/greeting/spec.md": soundSpec,
				})
				if tt.breakHead {
					head = w.commit("drop the farewell", map[string]string{"greet.txt": "hello\n"})
				}
			}
			w.pullRequest(head)
			if tt.headRepo != "" {
				ev := fmt.Sprintf(`{"action":"opened","number":7,"pull_request":{"number":7,"head":{"sha":%q,"ref":"main","repo":{"full_name":%q}},"base":{"ref":"main","repo":{"full_name":"acme/widgets"}}}}`, head, tt.headRepo)
				if err := os.WriteFile(filepath.Join(w.dir, "event.json"), []byte(ev), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			code, stdout, stderr := w.run()
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.wantCode, stdout, stderr)
			}
			if got := w.statuses(head); len(got) != 0 {
				t.Errorf("statuses on the head = %+v, want none", got)
			}
			tries := 0
			for _, r := range w.fake.Requests() {
				if r.Endpoint == "POST /repos/{owner}/{repo}/statuses/{sha}" {
					tries++
				}
			}
			if tries != tt.wantTries {
				t.Errorf("status writes tried %d, want %d", tries, tt.wantTries)
			}
			summary := w.read("summary")
			if !strings.Contains(summary, "**No `roadmap/checks` status**") || !strings.Contains(summary, tt.wantWhy) {
				t.Errorf("summary does not say why there is no status (%q):\n%s", tt.wantWhy, summary)
			}
			if strings.Count(summary, "No `roadmap/checks` status") != 1 {
				t.Errorf("summary says it more than once:\n%s", summary)
			}
			if want := strconv.FormatBool(!tt.breakHead); w.outputs()["passed"] != want {
				t.Errorf("output passed = %q, want %s", w.outputs()["passed"], want)
			}
			if strings.Contains(stdout+stderr+summary, roToken) {
				t.Error("the token leaked")
			}
		})
	}
}

// TestChecksLogSections: each group and the configured checks are a
// section of the job log; a command's output cannot open one.
func TestChecksLogSections(t *testing.T) {
	w := newChecksWorld(t, map[string]string{"greet.txt": "hello\n::group::from the tree\n"})
	tasks := "## 1. Greet\n\n- [x] 1.1 Keep hello; verify: `grep -q hello greet.txt`\n\n" +
		"## 2. Show\n\n- [x] 2.1 Show it; verify: `cat greet.txt missing.txt`\n"
	head := w.commit("greet", sound("greet", tasks, nil))
	w.pullRequest(head)
	code, _, stderr := w.run()
	if code != ExitFindings {
		t.Fatalf("exit %d, want %d\n%s", code, ExitFindings, stderr)
	}
	var opened []string
	depth := 0
	for _, line := range strings.Split(stderr, "\n") {
		switch {
		case strings.HasPrefix(line, "::group::"):
			if depth++; depth > 1 {
				t.Errorf("a section opened inside another: %q", line)
			}
			opened = append(opened, strings.TrimPrefix(line, "::group::"))
		case line == "::endgroup::":
			depth--
		}
	}
	if !strings.Contains(stderr, "from the tree") {
		t.Errorf("the failing command's output is not in the log:\n%s", stderr)
	}
	if depth != 0 || len(opened) != 2 || opened[0] != "roadmap checks: group 1: Greet" || opened[1] != "roadmap checks: group 2: Show" {
		t.Errorf("sections %q (open at the end: %d); want one per group, closed\n%s", opened, depth, stderr)
	}
}
