//go:build unix

package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
)

func TestParseUses(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		want    []RemoteAction
		wantErr string
	}{
		{
			name: "steps, quoting, comments, local actions",
			text: `jobs:
  a:
    steps:
      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2
      - uses: ./actions/smoke
      - name: x
        uses: "github/codeql-action/init@v3"
      -   uses: 'actions/upload-artifact@v4'
`,
			want: []RemoteAction{
				{Uses: "actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683", Repo: "actions/checkout", Ref: "11bd71901bbe5b1630ceea73d27597364c9af683"},
				{Uses: "github/codeql-action/init@v3", Repo: "github/codeql-action", Path: "init", Ref: "v3"},
				{Uses: "actions/upload-artifact@v4", Repo: "actions/upload-artifact", Ref: "v4"},
			},
		},
		{
			name: "job-level reusable workflows",
			text: `jobs:
  local:
    uses: ./.github/workflows/roadmap.yml
  remote:
    uses: roadmap-dev/roadmap/.github/workflows/roadmap.yml@v1
`,
			want: []RemoteAction{
				{Uses: "roadmap-dev/roadmap/.github/workflows/roadmap.yml@v1", Repo: "roadmap-dev/roadmap", Path: ".github/workflows/roadmap.yml", Ref: "v1"},
			},
		},
		{
			name: "a key that only ends in uses is not uses",
			text: "steps:\n  - run: echo\n    reuses: a/b@c\n",
		},
		{name: "docker action", text: "- uses: docker://alpine:3\n", wantErr: "docker actions"},
		{name: "no ref", text: "- uses: actions/checkout\n", wantErr: "not owner/repo"},
		{name: "no repo", text: "- uses: actions@v1\n", wantErr: "not owner/repo"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseUses("w.yml", []byte(tt.text))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseUses error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseUses (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFindRemoteActions runs on the repository itself: the e2e-smoke workflow
// must be found with its guarded upload, and the local action it uses holds
// no remote one.
func TestFindRemoteActions(t *testing.T) {
	got, err := FindRemoteActions(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	var uses []string
	for _, a := range got {
		uses = append(uses, a.Uses)
	}
	for _, want := range []string{
		"actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1",
		"actions/upload-artifact@bbbca2ddaa5d8feaa63e36b76fdaad77386f024f",
	} {
		if !slices.Contains(uses, want) {
			t.Errorf("FindRemoteActions = %v, want it to hold %s", uses, want)
		}
	}
	if !slices.IsSorted(uses) || len(slices.Compact(slices.Clone(uses))) != len(uses) {
		t.Errorf("FindRemoteActions = %v, want sorted and distinct", uses)
	}
}

func TestWriteStubs(t *testing.T) {
	dir := t.TempDir()
	got, err := WriteStubs(dir, []RemoteAction{
		{Uses: "github/codeql-action/init@v3", Repo: "github/codeql-action", Path: "init", Ref: "v3"},
		{Uses: "github/codeql-action/analyze@v3", Repo: "github/codeql-action", Path: "analyze", Ref: "v3"},
		{Uses: "actions/upload-artifact@v4", Repo: "actions/upload-artifact", Ref: "v4"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("WriteStubs mapped %v, want one directory per owner/repo@ref", got)
	}
	for _, p := range []string{
		filepath.Join(got["github/codeql-action@v3"], "init", "action.yml"),
		filepath.Join(got["github/codeql-action@v3"], "analyze", "action.yml"),
		filepath.Join(got["actions/upload-artifact@v4"], "action.yml"),
	} {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("stand-in: %v", err)
		}
		var action struct {
			Runs struct {
				Using string
				Steps []struct{ Run string }
			}
		}
		if err := yaml.Unmarshal(raw, &action); err != nil {
			t.Fatalf("stand-in %s is not YAML: %v", p, err)
		}
		if action.Runs.Using != "composite" || len(action.Runs.Steps) != 1 ||
			!strings.Contains(action.Runs.Steps[0].Run, "exit 1") ||
			!strings.Contains(action.Runs.Steps[0].Run, "env.ACT != 'true'") {
			t.Errorf("stand-in %s does not fail with the guard to add:\n%s", p, raw)
		}
	}

	_, err = WriteStubs(t.TempDir(), []RemoteAction{{Uses: "o/r/.github/workflows/w.yml@v1", Repo: "o/r", Path: ".github/workflows/w.yml", Ref: "v1"}})
	if err == nil || !strings.Contains(err.Error(), "LocalRepositories") {
		t.Errorf("WriteStubs of a reusable workflow: error = %v, want one pointing at LocalRepositories", err)
	}
}

func TestPrepareRepo(t *testing.T) {
	ctx := t.Context()
	src := t.TempDir()
	write := func(name, body string, mode os.FileMode) {
		t.Helper()
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(".gitignore", "/bin/\n", 0o644)
	write("tracked.txt", "committed\n", 0o644)
	write("gone.txt", "deleted after commit\n", 0o644)
	write("scripts/run.sh", "#!/bin/sh\n", 0o755)
	for _, args := range [][]string{
		{"-C", src, "init", "--quiet"},
		{"-C", src, "add", "--all"},
		{"-C", src, "commit", "--quiet", "-m", "src"},
	} {
		if _, err := git(ctx, args...); err != nil {
			t.Fatal(err)
		}
	}
	write("tracked.txt", "modified, not committed\n", 0o644)
	write("new.txt", "untracked\n", 0o644)
	write("bin/roadmap", "ignored build output\n", 0o755)
	if err := os.Remove(filepath.Join(src, "gone.txt")); err != nil {
		t.Fatal(err)
	}

	repo, err := PrepareRepo(ctx, src, t.TempDir(), "acme/widgets")
	if err != nil {
		t.Fatal(err)
	}
	tree, err := git(ctx, "-C", repo.Dir, "ls-tree", "-r", "--format=%(objectmode) %(path)", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	want := "100644 .gitignore\n100644 new.txt\n100755 scripts/run.sh\n100644 tracked.txt\n"
	if tree != want {
		t.Errorf("snapshot tree:\n%s\nwant:\n%s", tree, want)
	}
	body, err := git(ctx, "-C", repo.Dir, "show", "HEAD:tracked.txt")
	if err != nil {
		t.Fatal(err)
	}
	if body != "modified, not committed\n" {
		t.Errorf("tracked.txt in the snapshot = %q, want the working tree's content", body)
	}
	remote, err := git(ctx, "-C", repo.Remote, "rev-parse", "main")
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(remote) != repo.SHA || len(repo.SHA) != 40 {
		t.Errorf("origin main = %q, snapshot SHA = %q: want the same commit", strings.TrimSpace(remote), repo.SHA)
	}
	status, err := git(ctx, "-C", repo.Dir, "status", "--porcelain")
	if err != nil {
		t.Fatal(err)
	}
	if status != "" {
		t.Errorf("snapshot working tree is not clean:\n%s", status)
	}
}

// TestPrepareRun checks what act is handed: no token from the caller's
// environment, secrets in a private file and not on the command line, a
// stand-in for each remote action, and an event with the defaults filled in.
func TestPrepareRun(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", "host-token-must-not-leak")
	t.Setenv("ACTIONS_RUNTIME_TOKEN", "runner-token-must-not-leak")
	dir := t.TempDir()
	wf := filepath.Join(dir, ".github", "workflows")
	if err := os.MkdirAll(wf, 0o755); err != nil {
		t.Fatal(err)
	}
	body := "on: workflow_dispatch\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/upload-artifact@v4\n"
	if err := os.WriteFile(filepath.Join(wf, "w.yml"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	scratch := t.TempDir()
	a := &Act{Bin: "act", GoEnv: []string{"GOCACHE=/cache"}}
	args, env, err := a.prepare(Run{
		Repo:     &Repo{Dir: dir, Name: "acme/widgets"},
		Workflow: ".github/workflows/w.yml",
		Event:    "workflow_dispatch",
		Inputs:   map[string]string{"issue": "7"},
		APIURL:   "http://127.0.0.1:8080",
		Secrets:  map[string]string{"model_key": "sk-test value # with spaces"},
		Scratch:  scratch,
		ExtraEnv: []string{"ROADMAP_E2E_RUN=r1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(append(slices.Clone(args), env...), "\n")
	for _, secret := range []string{"host-token-must-not-leak", "runner-token-must-not-leak", "sk-test"} {
		if strings.Contains(all, secret) {
			t.Errorf("act's arguments or environment hold %q:\n%s", secret, all)
		}
	}
	for _, want := range []string{
		"GITHUB_API_URL=http://127.0.0.1:8080",
		"GITHUB_GRAPHQL_URL=http://127.0.0.1:8080/graphql",
		"GITHUB_SERVER_URL=http://127.0.0.1:8080",
		"GITHUB_REPOSITORY=acme/widgets",
		"ubuntu-latest=-self-hosted",
	} {
		if !slices.Contains(args, want) {
			t.Errorf("act arguments lack %q: %v", want, args)
		}
	}
	for _, want := range []string{"GOCACHE=/cache", "ACT_DISABLE_VERSION_CHECK=1", "ROADMAP_E2E_RUN=r1", "HOME=" + filepath.Join(scratch, "home")} {
		if !slices.Contains(env, want) {
			t.Errorf("act environment lacks %q: %v", want, env)
		}
	}
	i := slices.Index(args, "--local-repository")
	if i < 0 || !strings.HasPrefix(args[i+1], "actions/upload-artifact@v4="+filepath.Join(scratch, "stubs")) {
		t.Errorf("act arguments map no stand-in for actions/upload-artifact@v4: %v", args)
	}

	var secrets map[string]string
	raw, err := os.ReadFile(filepath.Join(scratch, "secrets.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &secrets); err != nil {
		t.Fatal(err)
	}
	wantSecrets := map[string]string{"GITHUB_TOKEN": "roadmap-e2e-token", "MODEL_KEY": "sk-test value # with spaces"}
	if diff := cmp.Diff(wantSecrets, secrets); diff != "" {
		t.Errorf("secret file (-want +got):\n%s", diff)
	}
	if info, err := os.Stat(filepath.Join(scratch, "secrets.yml")); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("secret file mode = %v (%v), want 0600", info.Mode().Perm(), err)
	}

	var event map[string]any
	raw, err = os.ReadFile(filepath.Join(scratch, "event.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &event); err != nil {
		t.Fatal(err)
	}
	wantEvent := map[string]any{
		"ref":      "refs/heads/main",
		"workflow": ".github/workflows/w.yml",
		"inputs":   map[string]any{"issue": "7"},
		"sender":   map[string]any{"login": "roadmap-e2e"},
		"repository": map[string]any{
			"full_name": "acme/widgets", "name": "widgets",
			"owner": map[string]any{"login": "acme"}, "default_branch": "main",
		},
	}
	if diff := cmp.Diff(wantEvent, event); diff != "" {
		t.Errorf("event (-want +got):\n%s", diff)
	}
}

// TestParseLog reads real act output recorded by `TestActSmoke -update`.
// TestWithGoCache: the runs' GOCACHE is the runner's cache, in place of the
// developer's, and the other Go settings pass unchanged.
func TestWithGoCache(t *testing.T) {
	got := withGoCache([]string{"GOCACHE=/home/dev/.cache/go-build", "GOMODCACHE=/mod", "GOFLAGS=-buildvcs=false"}, "/runner")
	want := []string{"GOCACHE=/runner", "GOMODCACHE=/mod", "GOFLAGS=-buildvcs=false"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("withGoCache (-want +got):\n%s", diff)
	}
	if got := withGoCache([]string{"GOPROXY=off"}, "/runner"); !slices.Equal(got, []string{"GOCACHE=/runner", "GOPROXY=off"}) {
		t.Errorf("withGoCache without a GOCACHE = %v, want the runner's added", got)
	}
}

func TestParseLog(t *testing.T) {
	tests := []struct {
		file      string
		wantJobs  map[string]string
		wantSteps []StepResult // the Main steps of the workflow's own jobs
		wantTail  string
		wantSum   map[string]string
	}{
		{
			file:     "act-smoke-ok.jsonl",
			wantJobs: map[string]string{"e2e-smoke/first": "success", "e2e-smoke/second": "success"},
			wantSteps: []StepResult{
				{Job: "e2e-smoke/first", Stage: "Main", Step: "actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683", ID: "0", Result: "success"},
				{Job: "e2e-smoke/first", Stage: "Main", Step: "./actions/smoke", ID: "smoke/0", Result: "success"},
				{Job: "e2e-smoke/first", Stage: "Main", Step: "./actions/smoke", ID: "smoke/1", Result: "success"},
				{Job: "e2e-smoke/first", Stage: "Main", Step: "./actions/smoke", ID: "smoke/outputs", Result: "success"},
				{Job: "e2e-smoke/first", Stage: "Main", Step: "./actions/smoke", ID: "smoke", Result: "success"},
				{Job: "e2e-smoke/first", Stage: "Main", Step: "Keep the artifact for the e2e", ID: "2", Result: "success"},
				{Job: "e2e-smoke/second", Stage: "Main", Step: "Comment on the issue", ID: "0", Result: "success"},
			},
			wantTail: "[e2e-smoke/second] 🏁  Job succeeded\n",
			wantSum:  map[string]string{"e2e-smoke/second": "e2e-smoke: first job success, roadmap dev\n"},
		},
		{
			file:     "act-smoke-first-fails.jsonl",
			wantJobs: map[string]string{"e2e-smoke/first": "failure", "e2e-smoke/second": "success"},
			wantSteps: []StepResult{
				{Job: "e2e-smoke/first", Stage: "Main", Step: "actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683", ID: "0", Result: "success"},
				{Job: "e2e-smoke/first", Stage: "Main", Step: "./actions/smoke", ID: "smoke/0", Result: "success"},
				{Job: "e2e-smoke/first", Stage: "Main", Step: "./actions/smoke", ID: "smoke/1", Result: "success"},
				{Job: "e2e-smoke/first", Stage: "Main", Step: "./actions/smoke", ID: "smoke/outputs", Result: "success"},
				{Job: "e2e-smoke/first", Stage: "Main", Step: "./actions/smoke", ID: "smoke", Result: "success"},
				{Job: "e2e-smoke/first", Stage: "Main", Step: "Keep the artifact for the e2e", ID: "2", Result: "success"},
				{Job: "e2e-smoke/first", Stage: "Main", Step: "Fail on request", ID: "4", Result: "failure", Error: "exit status 1"},
				{Job: "e2e-smoke/second", Stage: "Main", Step: "Comment on the issue", ID: "0", Result: "success"},
			},
			wantTail: "[e2e-smoke/second] 🏁  Job succeeded\nError: Job 'first' failed\n",
			wantSum:  map[string]string{"e2e-smoke/second": "e2e-smoke: first job failure, roadmap dev\n"},
		},
		{
			file:     "act-smoke-first-killed.jsonl",
			wantJobs: map[string]string{"e2e-smoke/first": "failure", "e2e-smoke/second": "success"},
			wantSteps: []StepResult{
				{Job: "e2e-smoke/first", Stage: "Main", Step: "actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683", ID: "0", Result: "success"},
				{Job: "e2e-smoke/first", Stage: "Main", Step: "./actions/smoke", ID: "smoke/0", Result: "success"},
				{Job: "e2e-smoke/first", Stage: "Main", Step: "./actions/smoke", ID: "smoke/1", Result: "success"},
				{Job: "e2e-smoke/first", Stage: "Main", Step: "./actions/smoke", ID: "smoke/outputs", Result: "success"},
				{Job: "e2e-smoke/first", Stage: "Main", Step: "./actions/smoke", ID: "smoke", Result: "success"},
				{Job: "e2e-smoke/first", Stage: "Main", Step: "Keep the artifact for the e2e", ID: "2", Result: "success"},
				{Job: "e2e-smoke/first", Stage: "Main", Step: "Hold until killed", ID: "5", Result: "failure", Error: "signal: killed"},
				{Job: "e2e-smoke/second", Stage: "Main", Step: "Comment on the issue", ID: "0", Result: "success"},
			},
			wantTail: "[e2e-smoke/second] 🏁  Job succeeded\nError: Job 'first' failed\n",
			wantSum:  map[string]string{"e2e-smoke/second": "e2e-smoke: first job failure, roadmap dev\n"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			res := parseLog(raw)
			if diff := cmp.Diff(tt.wantJobs, res.Jobs); diff != "" {
				t.Errorf("jobs (-want +got):\n%s", diff)
			}
			var main []StepResult
			for _, s := range res.Steps {
				if s.Stage == "Main" {
					main = append(main, s)
				}
			}
			if diff := cmp.Diff(tt.wantSteps, main); diff != "" {
				t.Errorf("main steps (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantSum, res.Summaries); diff != "" {
				t.Errorf("summaries (-want +got):\n%s", diff)
			}
			if !strings.HasSuffix(res.Log, tt.wantTail) {
				t.Errorf("log ends %q, want it to end %q", res.Log[max(0, len(res.Log)-200):], tt.wantTail)
			}
		})
	}
}

func TestParseStat(t *testing.T) {
	tests := []struct {
		stat     string
		wantComm string
		wantPPID int
		wantOK   bool
	}{
		{stat: "4242 (roadmap) S 4200 4242 4242 34816 0", wantComm: "roadmap", wantPPID: 4200, wantOK: true},
		{stat: "7 (a (b) c) R 1 7 7 0", wantComm: "a (b) c", wantPPID: 1, wantOK: true},
		{stat: "7 (x) S", wantOK: false},
		{stat: "7 x S 1", wantOK: false},
		{stat: "7 (x) S one", wantOK: false},
	}
	for _, tt := range tests {
		t.Run(tt.stat, func(t *testing.T) {
			comm, ppid, ok := parseStat(tt.stat)
			if comm != tt.wantComm || ppid != tt.wantPPID || ok != tt.wantOK {
				t.Errorf("parseStat = %q, %d, %v; want %q, %d, %v", comm, ppid, ok, tt.wantComm, tt.wantPPID, tt.wantOK)
			}
		})
	}
}

// TestChildProcesses finds a child this test starts, as the e2e finds the
// step act starts.
func TestChildProcesses(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc on this system")
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	want := Process{PID: cmd.Process.Pid, Comm: "sleep", Args: []string{"sleep", "30"}}
	// Start returns once the child exists, not once its exec is done: for a
	// moment its comm is the new program's and its cmdline still empty. The
	// e2e polls too, so this asks again until the exec is through.
	var procs []Process
	for range 200 {
		var err error
		if procs, err = childProcesses("/proc", os.Getpid()); err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(procs, func(p Process) bool { return cmp.Equal(p, want) }) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("childProcesses = %+v, want it to hold %+v", procs, want)
}

// A caller's reusable workflow, mapped to a local directory, uses remote
// actions of its own: they get stand-ins as the caller's do, and the mapped
// repository itself gets none.
func TestPrepareRunLocalRepositories(t *testing.T) {
	write := func(path, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	caller, called := t.TempDir(), t.TempDir()
	write(filepath.Join(caller, ".github", "workflows", "caller.yml"),
		"on: issues\njobs:\n  r:\n    uses: o/tool/.github/workflows/tool.yml@v1\n")
	write(filepath.Join(called, ".github", "workflows", "tool.yml"),
		"on: workflow_call\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: o/tool/actions/x@v1\n      - uses: actions/upload-artifact@v9\n")
	scratch := t.TempDir()
	args, _, err := (&Act{Bin: "act"}).prepare(Run{
		Repo:              &Repo{Dir: caller, Name: "acme/widgets"},
		Workflow:          ".github/workflows/caller.yml",
		Event:             "issues",
		LocalRepositories: map[string]string{"o/tool@v1": called},
		Scratch:           scratch,
	})
	if err != nil {
		t.Fatal(err)
	}
	var mapped []string
	for i, a := range args {
		if a == "--local-repository" {
			mapped = append(mapped, args[i+1])
		}
	}
	want := []string{
		"actions/upload-artifact@v9=" + filepath.Join(scratch, "stubs", "000"),
		"o/tool@v1=" + called,
	}
	if diff := cmp.Diff(want, mapped); diff != "" {
		t.Errorf("--local-repository (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(scratch, "stubs", "000", "action.yml")); err != nil {
		t.Errorf("stand-in for the called workflow's remote action: %v", err)
	}
}

func TestStepOutput(t *testing.T) {
	line := func(job, id, msg string, raw bool) string {
		b, err := json.Marshal(map[string]any{"job": job, "stepID": strings.Split(id, "/"), "msg": msg, "raw_output": raw, "level": "info"})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	out := strings.Join([]string{
		line("w/caller/implement ", "implement/run", "roadmap: group 1\r\n", true),
		line("w/caller/implement ", "implement/install", "built\n", true),
		line("w/caller/implement ", "implement/run", "⭐ Run Main", false),
		"Error: not JSON",
		line("w/caller/report    ", "report/run", "report: continue\n", true),
		line("w/caller/implement ", "implement/run", "roadmap::spend {}", true),
	}, "\n")
	res := &Result{Output: []byte(out)}
	tests := []struct{ name, job, id, want string }{
		{"lines of one step, CRLF made LF, a newline added", "w/caller/implement", "implement/run", "roadmap: group 1\nroadmap::spend {}\n"},
		{"another step of the job", "w/caller/implement", "implement/install", "built\n"},
		{"another job", "w/caller/report", "report/run", "report: continue\n"},
		{"a step the job has not", "w/caller/report", "implement/run", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := res.StepOutput(tt.job, tt.id); got != tt.want {
				t.Errorf("StepOutput(%q, %q) = %q, want %q", tt.job, tt.id, got, tt.want)
			}
		})
	}
}
