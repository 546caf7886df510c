//go:build unix

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/roadmap-dev/roadmap/internal/sandbox/sandboxtest"
)

// Act runs workflows with nektos/act on the host (-P ubuntu-latest=-self-hosted).
type Act struct {
	Bin string // the act executable, .tools/bin/act under `make e2e`
	// GoEnv carries the Go settings (GOMODCACHE, GOPROXY, GOFLAGS, ...) of the
	// machine into the run, because the run gets a HOME of its own. GOCACHE
	// is not the developer's: it is the runner's (RunnerGoCache), what a
	// hosted runner's job has after setup-go restores its cache.
	GoEnv []string
}

// goKeys are the Go settings a step's `go build` needs to behave as it does
// outside act: same module cache, same proxy, same flags. GOCACHE is read
// too, and replaced by the runner's.
var goKeys = []string{
	"GOCACHE", "GOMODCACHE", "GOPATH", "GOPROXY", "GOFLAGS", "GONOPROXY",
	"GONOSUMDB", "GOPRIVATE", "GOSUMDB", "GOTOOLCHAIN", "GOINSECURE",
}

// NewAct returns a driver for the act executable at bin. goBin is the go
// command whose settings the runs inherit; root is this project's source,
// whose build warms the runs' Go build cache (RunnerGoCache).
func NewAct(ctx context.Context, bin, goBin, root string) (*Act, error) {
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("find act: %w (run `make tools`)", err)
	}
	out, err := exec.CommandContext(ctx, goBin, append([]string{"env", "-json"}, goKeys...)...).Output()
	if err != nil {
		return nil, fmt.Errorf("read go env: %w", err)
	}
	var vals map[string]string
	if err := json.Unmarshal(out, &vals); err != nil {
		return nil, fmt.Errorf("read go env: %w", err)
	}
	a := &Act{Bin: bin}
	for _, k := range goKeys {
		if v := vals[k]; v != "" {
			a.GoEnv = append(a.GoEnv, k+"="+v)
		}
	}
	cache, err := RunnerGoCache(ctx, goBin, root, a.GoEnv)
	if err != nil {
		return nil, err
	}
	a.GoEnv = withGoCache(a.GoEnv, cache)
	return a, nil
}

// withGoCache is env with GOCACHE=dir in place of its GOCACHE.
func withGoCache(env []string, dir string) []string {
	out := []string{"GOCACHE=" + dir}
	for _, kv := range env {
		if !strings.HasPrefix(kv, "GOCACHE=") {
			out = append(out, kv)
		}
	}
	return out
}

// RunnerGoCache is the Go build cache of the runs' runner (their GOCACHE):
// a folder of its own beside the user's cache (os.UserCacheDir()/roadmap-test/
// e2e-runner-gocache-<go version>), warmed once per test process with what
// the runs build, as a hosted runner's setup-go cache holds what its
// project's jobs build: roadmap as scripts/install-roadmap.sh builds it
// (`go build -trimpath ./cmd/roadmap` from root, with the runs' Go settings,
// so a run's build finds every package compiled; only the link is redone),
// and the standard library's packages a Go project's go test, go test -cover
// and go vet use (sandboxtest.WarmGoCache: the demo's greet and the other
// worlds' Go projects import no more).
//
// Why not the developer's cache: every user boundary a run's Job opens seeds
// its own cache with one hard link per entry of the runner's
// (sandbox.Options.GoCache, from the Job's GOCACHE), and removes them when it
// closes. A developer's cache (~90k entries, 8 GB on the machine this was
// measured on) cost each boundary ~3.5 s, in every scenario, and measured
// nothing a user's runner does. What a run needs that this cache lacks, it
// builds, as on a runner: slower, not wrong. The runs add their own builds
// to it; Go trims entries unused for days.
func RunnerGoCache(ctx context.Context, goBin, root string, goEnv []string) (string, error) {
	runnerCache.once.Do(func() {
		runnerCache.dir, runnerCache.err = warmRunnerGoCache(ctx, goBin, root, goEnv)
	})
	return runnerCache.dir, runnerCache.err
}

var runnerCache struct {
	once sync.Once
	dir  string
	err  error
}

func warmRunnerGoCache(ctx context.Context, goBin, root string, goEnv []string) (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "roadmap-test", "e2e-runner-gocache-"+sandboxtest.GoVersionTag())
	if err := sandboxtest.WarmGoCache(dir); err != nil {
		return "", fmt.Errorf("warm the runs' Go build cache %s: %w", dir, err)
	}
	tmp, err := os.MkdirTemp("", "roadmap-e2e-gocache-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	// The environment an act step has (Act.prepare): PATH, a HOME of its
	// own, the Go settings; so the build's cache keys are the step's.
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + tmp,
		"XDG_CONFIG_HOME=" + filepath.Join(tmp, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(tmp, ".cache"),
	}
	if t := os.Getenv("TMPDIR"); t != "" {
		env = append(env, "TMPDIR="+t)
	}
	env = append(env, withGoCache(goEnv, dir)...)
	cmd := exec.CommandContext(ctx, goBin, "build", "-trimpath", "-o", filepath.Join(tmp, "roadmap"), "./cmd/roadmap")
	cmd.Dir = root
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("warm the runs' Go build cache %s: go build -trimpath ./cmd/roadmap: %v\n%s", dir, err, out)
	}
	return dir, nil
}

// Run is one act invocation: one event against one workflow file.
type Run struct {
	Repo     *Repo
	Workflow string // relative to Repo.Dir, e.g. ".github/workflows/e2e-smoke.yml"
	Event    string // e.g. "workflow_dispatch"
	// Payload is the event JSON. When missing, "ref" (refs/heads/main),
	// "repository", "sender" and, for workflow_dispatch, "workflow" are
	// filled in.
	Payload map[string]any
	// Inputs are workflow_dispatch inputs, set into Payload["inputs"]. act
	// reads them only from the payload (--input is ignored once -e is given),
	// and compares boolean inputs with the string "true".
	Inputs map[string]string
	// APIURL is GITHUB_API_URL; GITHUB_GRAPHQL_URL (APIURL/graphql) and
	// GITHUB_SERVER_URL (APIURL's origin) follow it, so nothing points away
	// from loopback.
	APIURL string
	// Env is passed with --env: it is the workflow's base environment and
	// reaches every step.
	Env map[string]string
	// Secrets are written to a 0600 file, never to act's command line or
	// environment. GITHUB_TOKEN (github.token) defaults to a fake: without
	// it act would ask the gh CLI for the developer's real token.
	Secrets map[string]string
	Vars    map[string]string
	// LocalRepositories maps owner/repo@ref to a local directory
	// (--local-repository), e.g. this project for a caller workflow that
	// uses roadmap-dev/roadmap/.github/workflows/roadmap.yml@v0.1.0. Every other
	// remote action gets a stand-in that fails if it ever runs.
	LocalRepositories map[string]string
	Actor             string // github.actor; "roadmap-e2e" when empty
	// Scratch holds the event, secret and variable files, the stand-ins,
	// act's cache (where each job's workspace lives while it runs) and the
	// run's HOME. Required; a test's t.TempDir().
	Scratch string
	// ExtraEnv is added to the act process's environment, and so to every
	// step's (act on the host passes its own environment down). Use it for
	// markers that let a test find a step's process.
	ExtraEnv []string
}

// Result is what act reported. A workflow that fails is a Result with a
// non-zero ExitCode, not an error.
type Result struct {
	ExitCode int
	Elapsed  time.Duration
	// Jobs maps a job, named as act logs it ("workflow/job"; inside a
	// reusable workflow "callerjob/workflow/job"), to success or failure.
	// Jobs skipped by `if:` do not appear.
	Jobs map[string]string
	// Steps are the steps that ran, in order. Steps skipped by `if:` do not
	// appear (act logs them only with -v).
	Steps []StepResult
	// Summaries maps a job to what its steps wrote to $GITHUB_STEP_SUMMARY.
	Summaries map[string]string
	// Log is act's output, one readable line per event.
	Log string
	// Output is act's raw output: --json log lines and a few plain ones.
	Output []byte
}

// StepResult is one step's outcome as act logged it.
type StepResult struct {
	Job   string
	Stage string // Pre, Main, Post; "" for act's own set-up and complete steps
	// Step is the step's name as act shows it; a composite action's inner
	// steps carry the name of the step that uses the action.
	Step string
	// ID is the step's id (or index) path: "smoke" for the step, "smoke/0"
	// and "smoke/outputs" for steps inside the composite action it uses.
	ID     string
	Result string // success, failure
	// Error is act's reason for a failure: "exit status 1" for an exit,
	// "signal: killed" for a step whose process was killed.
	Error string
}

// Run runs act once and waits for it. The error is for a run that could not
// be started or read; ctx's deadline or cancellation stops act and its steps.
func (a *Act) Run(ctx context.Context, r Run) (*Result, error) {
	s, err := a.Start(ctx, r)
	if err != nil {
		return nil, err
	}
	return s.Wait()
}

// Started is an act run in progress, for a test that acts on it while it
// runs (signals a step, waits for a request).
type Started struct {
	ctx      context.Context
	cmd      *exec.Cmd
	out      *lockedBuffer
	start    time.Time
	workflow string
}

// Start starts act and returns without waiting. Call Wait once.
func (a *Act) Start(ctx context.Context, r Run) (*Started, error) {
	args, env, err := a.prepare(r)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, a.Bin, args...)
	cmd.Dir = r.Repo.Dir
	cmd.Env = env
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	// act runs each step in a session of its own (on a pty), so killing a
	// process group would miss them. SIGTERM is act's forced cancel: it
	// kills the running step (SIGKILL) and exits; WaitDelay covers an act
	// that does not.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	s := &Started{ctx: ctx, cmd: cmd, out: out, start: time.Now(), workflow: r.Workflow}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start act on %s: %w", r.Workflow, err)
	}
	return s, nil
}

// Pid is act's process id.
func (s *Started) Pid() int { return s.cmd.Process.Pid }

// Output is act's raw output so far.
func (s *Started) Output() []byte { return s.out.Bytes() }

// Snapshot reads act's log so far, for a test that waits on a job or a step
// while act runs. ExitCode and Elapsed are not set.
func (s *Started) Snapshot() *Result {
	out := s.out.Bytes()
	res := parseLog(out)
	res.Output = out
	return res
}

// Wait waits for act to exit and reads its log. A workflow that fails is a
// Result with a non-zero ExitCode; the error is for act itself.
func (s *Started) Wait() (*Result, error) {
	err := s.cmd.Wait()
	out := s.out.Bytes()
	res := parseLog(out)
	res.Output = out
	res.Elapsed = time.Since(s.start)
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit) && s.ctx.Err() == nil:
		res.ExitCode = exit.ExitCode()
	case err != nil:
		return res, fmt.Errorf("run act on %s: %w", s.workflow, err)
	}
	return res, nil
}

// lockedBuffer lets a test read act's output while act writes it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}

// prepare writes the run's files into r.Scratch and returns act's arguments
// and environment.
func (a *Act) prepare(r Run) (args, env []string, err error) {
	if r.Repo == nil || r.Workflow == "" || r.Event == "" || r.Scratch == "" {
		return nil, nil, errors.New("act run: Repo, Workflow, Event and Scratch are required")
	}
	home := filepath.Join(r.Scratch, "home")
	for _, d := range []string{home, filepath.Join(r.Scratch, "stubs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, nil, fmt.Errorf("act run scratch: %w", err)
		}
	}
	actor := r.Actor
	if actor == "" {
		actor = "roadmap-e2e"
	}

	payload, err := json.MarshalIndent(eventPayload(r, actor), "", "  ")
	if err != nil {
		return nil, nil, fmt.Errorf("encode event: %w", err)
	}
	secrets := map[string]string{"GITHUB_TOKEN": "roadmap-e2e-token"}
	for k, v := range r.Secrets {
		secrets[strings.ToUpper(k)] = v
	}
	files := map[string]map[string]string{
		"secrets.yml": secrets,
		"vars.yml":    r.Vars,
		"env.yml":     nil,
		"inputs.yml":  nil,
	}
	if err := os.WriteFile(filepath.Join(r.Scratch, "event.json"), payload, 0o600); err != nil {
		return nil, nil, fmt.Errorf("act run scratch: %w", err)
	}
	for name, m := range files {
		if m == nil {
			m = map[string]string{}
		}
		body, err := yaml.Marshal(m)
		if err != nil {
			return nil, nil, fmt.Errorf("encode %s: %w", name, err)
		}
		if err := os.WriteFile(filepath.Join(r.Scratch, name), body, 0o600); err != nil {
			return nil, nil, fmt.Errorf("act run scratch: %w", err)
		}
	}

	// The remote actions of the repository under test, and of every mapped
	// repository: a caller's reusable workflow (roadmap.yml@v0.1.0, mapped to this
	// project) uses actions of its own that act fetches too.
	remote, err := FindRemoteActions(r.Repo.Dir)
	if err != nil {
		return nil, nil, err
	}
	for _, k := range sortedKeys(r.LocalRepositories) {
		more, err := FindRemoteActions(r.LocalRepositories[k])
		if err != nil {
			return nil, nil, err
		}
		remote = append(remote, more...)
	}
	var unmapped []RemoteAction
	seen := map[string]bool{}
	for _, ra := range remote {
		if _, ok := r.LocalRepositories[ra.Key()]; !ok && !seen[ra.Uses] {
			seen[ra.Uses] = true
			unmapped = append(unmapped, ra)
		}
	}
	local, err := WriteStubs(filepath.Join(r.Scratch, "stubs"), unmapped)
	if err != nil {
		return nil, nil, err
	}
	for k, v := range r.LocalRepositories {
		local[k] = v
	}

	envs := map[string]string{"GITHUB_REPOSITORY": r.Repo.Name}
	if r.APIURL != "" {
		u, err := url.Parse(r.APIURL)
		if err != nil {
			return nil, nil, fmt.Errorf("api url: %w", err)
		}
		envs["GITHUB_API_URL"] = r.APIURL
		envs["GITHUB_GRAPHQL_URL"] = strings.TrimSuffix(r.APIURL, "/") + "/graphql"
		envs["GITHUB_SERVER_URL"] = u.Scheme + "://" + u.Host
	}
	for k, v := range r.Env {
		envs[k] = v
	}

	args = []string{
		r.Event,
		"--json",
		"--workflows", r.Workflow,
		"--platform", "ubuntu-latest=-self-hosted",
		"--eventpath", filepath.Join(r.Scratch, "event.json"),
		// Explicit files, so a .env/.secrets/.vars/.input in the repository
		// (act's defaults) never leaks into a run. act reads *.yml ones as
		// YAML, which quotes any value safely; secrets stay off the command line.
		"--secret-file", filepath.Join(r.Scratch, "secrets.yml"),
		"--var-file", filepath.Join(r.Scratch, "vars.yml"),
		"--env-file", filepath.Join(r.Scratch, "env.yml"),
		"--input-file", filepath.Join(r.Scratch, "inputs.yml"),
		"--actor", actor,
		"--defaultbranch", "main",
		"--action-cache-path", filepath.Join(r.Scratch, "act-cache"),
		"--action-offline-mode",
		"--no-cache-server",
		"--pull=false",
	}
	for _, k := range sortedKeys(envs) {
		args = append(args, "--env", k+"="+envs[k])
	}
	for _, k := range sortedKeys(local) {
		args = append(args, "--local-repository", k+"="+local[k])
	}

	// An allow-list: in host mode act hands its whole environment to every
	// step, and the caller's (a CI runner's GITHUB_TOKEN, ACTIONS_RUNTIME_TOKEN,
	// a developer's tokens) must not reach one.
	env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"ACT_DISABLE_VERSION_CHECK=1", // act otherwise asks the network for notices
	}
	if tmp := os.Getenv("TMPDIR"); tmp != "" {
		env = append(env, "TMPDIR="+tmp)
	}
	env = append(env, a.GoEnv...)
	env = append(env, r.ExtraEnv...)
	return args, env, nil
}

func eventPayload(r Run, actor string) map[string]any {
	p := map[string]any{}
	for k, v := range r.Payload {
		p[k] = v
	}
	owner, name, _ := strings.Cut(r.Repo.Name, "/")
	defaults := map[string]any{
		"ref": "refs/heads/main",
		"repository": map[string]any{
			"full_name":      r.Repo.Name,
			"name":           name,
			"owner":          map[string]any{"login": owner},
			"default_branch": "main",
		},
		"sender": map[string]any{"login": actor},
	}
	if r.Event == "workflow_dispatch" {
		defaults["workflow"] = r.Workflow
	}
	for k, v := range defaults {
		if _, ok := p[k]; !ok {
			p[k] = v
		}
	}
	if len(r.Inputs) > 0 {
		in := map[string]any{}
		if old, ok := p["inputs"].(map[string]any); ok {
			for k, v := range old {
				in[k] = v
			}
		}
		for k, v := range r.Inputs {
			in[k] = v
		}
		p["inputs"] = in
	}
	return p
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// logEntry is the part of one act --json log line the driver reads.
type logEntry struct {
	Msg        string   `json:"msg"`
	Level      string   `json:"level"`
	Job        string   `json:"job"`
	JobResult  string   `json:"jobResult"`
	Stage      string   `json:"stage"`
	Step       string   `json:"step"`
	StepResult string   `json:"stepResult"`
	StepID     []string `json:"stepID"`
	RawOutput  bool     `json:"raw_output"`
	Command    string   `json:"command"`
	Content    string   `json:"content"`
}

// StepOutput is what one step's process wrote (stdout and stderr, as act
// read them from the step's pty), line by line with "\r\n" made "\n": the
// text a runner would put in the job log for that step. job is act's job
// name ("callerjob/workflow/job" inside a reusable workflow), id the step's
// id path ("implement/run" for the step `run` of the composite action used
// by the step `implement`).
func (r *Result) StepOutput(job, id string) string {
	var b strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(r.Output))
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		var e logEntry
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			continue
		}
		if !e.RawOutput || strings.TrimSpace(e.Job) != job || strings.Join(e.StepID, "/") != id {
			continue
		}
		msg := strings.ReplaceAll(e.Msg, "\r\n", "\n")
		b.WriteString(msg)
		if !strings.HasSuffix(msg, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// parseLog reads act's --json output. Lines that are not JSON (act prints
// "Error: Job 'x' failed" plainly) go to the log as they are.
func parseLog(out []byte) *Result {
	res := &Result{Jobs: map[string]string{}, Summaries: map[string]string{}}
	var log strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		var e logEntry
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			log.Write(line)
			log.WriteByte('\n')
			continue
		}
		// act pads job names to a common width for its own display.
		e.Job = strings.TrimSpace(e.Job)
		if e.JobResult != "" {
			res.Jobs[e.Job] = e.JobResult
		}
		if e.StepResult != "" {
			res.Steps = append(res.Steps, StepResult{
				Job: e.Job, Stage: e.Stage, Step: e.Step, ID: strings.Join(e.StepID, "/"), Result: e.StepResult,
			})
		}
		if e.Level == "error" && e.Job != "" {
			id := strings.Join(e.StepID, "/")
			for i := len(res.Steps) - 1; i >= 0; i-- {
				if st := &res.Steps[i]; st.Job == e.Job && st.ID == id && st.Result == "failure" {
					st.Error = strings.TrimSpace(e.Msg)
					break
				}
			}
		}
		if e.Command == "summary" {
			res.Summaries[e.Job] += e.Content
		}
		msg := strings.TrimRight(e.Msg, "\n")
		switch {
		case e.Job == "":
			fmt.Fprintf(&log, "%s\n", msg)
		case e.RawOutput:
			fmt.Fprintf(&log, "[%s]   | %s\n", e.Job, msg)
		default:
			fmt.Fprintf(&log, "[%s] %s\n", e.Job, msg)
		}
	}
	res.Log = log.String()
	return res
}
