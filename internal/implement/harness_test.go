package implement_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/checks"
	"github.com/roadmap-dev/roadmap/internal/git"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/implement"
	"github.com/roadmap-dev/roadmap/internal/job/kernel"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/policy"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/redact"
	"github.com/roadmap-dev/roadmap/internal/sandbox/sandboxtest"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

const (
	token   = "ghs_implementtesttoken0000000000000000"
	owner   = "acme"
	repo    = "widgets"
	planDir = "openspec/changes/add-greetings"
)

var t0 = time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)

// world is one item: a fake GitHub over HTTP, a bare remote holding the
// sample repository with its plan, and the issue whose record the Jobs share.
type world struct {
	t      *testing.T
	dir    string
	remote string
	fake   *githubfake.Fake
	srv    *httptest.Server
	clock  *githubfake.ManualClock
	issue  int
	groups int
	jobs   int
}

// gitEnv isolates git from the host's configuration.
func gitEnv() []string {
	return append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=roadmap", "GIT_AUTHOR_EMAIL=roadmap@example.invalid",
		"GIT_COMMITTER_NAME=roadmap", "GIT_COMMITTER_EMAIL=roadmap@example.invalid")
}

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = gitEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// tasksMD is a plan of n groups; group i writes greeting-i.txt.
func tasksMD(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "## %d. Greeting %d\n\n- [ ] %d.1 Write greeting-%d.txt saying hello %d; verify: `grep -q \"hello %d\" greeting-%d.txt`\n\n", i, i, i, i, i, i, i)
	}
	return b.String()
}

func newWorld(t *testing.T, groups int, body string) *world {
	t.Helper()
	dir := t.TempDir()
	w := &world{t: t, dir: dir, remote: filepath.Join(dir, "remote.git"), groups: groups, clock: githubfake.NewManualClock(t0)}
	run(t, dir, "git", "init", "-q", "--bare", "-b", "main", w.remote)
	seed := filepath.Join(dir, "seed")
	run(t, dir, "git", "init", "-q", "-b", "main", seed)
	os.MkdirAll(filepath.Join(seed, planDir), 0o755)
	os.WriteFile(filepath.Join(seed, "README.md"), []byte("# widgets\n"), 0o644)
	os.WriteFile(filepath.Join(seed, planDir, "proposal.md"), []byte("# Add greetings\n\nWrite one greeting file per group.\n"), 0o644)
	os.WriteFile(filepath.Join(seed, planDir, "tasks.md"), []byte(tasksMD(groups)), 0o644)
	run(t, seed, "git", "add", "-A")
	run(t, seed, "git", "commit", "-q", "-m", "seed")
	run(t, seed, "git", "remote", "add", "origin", w.remote)
	run(t, seed, "git", "push", "-q", "origin", "main")

	w.fake = githubfake.New(githubfake.Options{Token: token, Owner: owner, Repo: repo, Clock: w.clock, GitRemote: w.remote})
	w.srv = httptest.NewServer(w.fake)
	t.Cleanup(w.srv.Close)
	if body == "" {
		body = "Add greetings.\n\n<!-- roadmap:record v1\nstage.plan: " + planDir + "\n-->\n"
	}
	// The record a test gives is roadmap's record comment (as the stage
	// phase leaves it); the issue body keeps the person's text only.
	text, block := body, ""
	if i := strings.Index(body, "<!-- roadmap:record v1"); i >= 0 && record.HasBlock(body) {
		text, block = body[:i], body[i:]
	}
	w.issue = w.fake.CreateIssue(githubfake.Issue{Title: "Add greetings", Body: text, Author: "alice"})
	if block != "" {
		if _, err := w.fake.AddComment(w.issue, github.DefaultIdentity, "**roadmap** · staged\n\n"+block); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// recordComment returns the record comment as the fake holds it: the oldest
// comment by roadmap's identity with a record block.
func (w *world) recordComment() (githubfake.Comment, bool) {
	for _, c := range w.fake.Comments(w.issue) {
		if c.Author == github.DefaultIdentity && record.HasBlock(c.Body) {
			return c, true
		}
	}
	return githubfake.Comment{}, false
}

// conversations are the recorded model exchanges of every group: write the
// file, then finish. Each call costs 1,000 tokens in and 100 out.
func (w *world) conversations() []*llm.Conversation {
	var convs []*llm.Conversation
	for i := 1; i <= w.groups; i++ {
		data := fmt.Sprintf(`{"comment":"written by hand: group %[1]d writes its greeting and finishes","source":"hand",
"match":"task group %[1]d of","turns":[
 {"response":{"tool_calls":[{"name":"write_file","arguments":{"path":"greeting-%[1]d.txt","content":"hello %[1]d\n"}}],"usage":{"tokens_in":1000,"tokens_out":100}}},
 {"expect":"","response":{"tool_calls":[{"name":"finish","arguments":{"summary":"wrote greeting %[1]d"}}],"usage":{"tokens_in":1000,"tokens_out":100}}}]}`, i)
		c, err := llm.ParseConversation(fmt.Sprintf("group-%d", i), []byte(data))
		if err != nil {
			w.t.Fatal(err)
		}
		convs = append(convs, c)
	}
	return convs
}

// job is one Job's parts; tweak its Options before run.
type job struct {
	w       *world
	opts    implement.Options
	log     bytes.Buffer
	outputs map[string]string
	checks  *countingRunner
	model   *spyModel
	gh      *github.Client
	ws      string
}

// countingRunner counts the scoped check commands that ran.
type countingRunner struct {
	checks.Runner
	mu   sync.Mutex
	cmds []string
}

func (c *countingRunner) Run(ctx context.Context, dir string, argv []string) (checks.Result, error) {
	c.mu.Lock()
	c.cmds = append(c.cmds, strings.Join(argv, " "))
	c.mu.Unlock()
	return c.Runner.Run(ctx, dir, argv)
}

// spyModel remembers every request it passed on.
type spyModel struct {
	agent.Model
	mu   sync.Mutex
	reqs []agent.ModelRequest
	// before runs before each call with the call's number (from 1).
	before func(n int, req agent.ModelRequest)
}

func (m *spyModel) Complete(ctx context.Context, req agent.ModelRequest) (agent.ModelResponse, error) {
	m.mu.Lock()
	m.reqs = append(m.reqs, req)
	n := len(m.reqs)
	m.mu.Unlock()
	if m.before != nil {
		m.before(n, req)
	}
	return m.Model.Complete(ctx, req)
}

type toolSandbox struct{ *policy.Sandbox }

func (s toolSandbox) Run(ctx context.Context, argv []string) (agent.RunResult, error) {
	r, err := s.Sandbox.Run(ctx, argv)
	return agent.RunResult(r), err
}

// newJob clones the remote into a fresh workspace (a new runner) and wires a Job.
func (w *world) newJob(convs []*llm.Conversation) *job {
	t := w.t
	w.jobs++
	ws := filepath.Join(w.dir, fmt.Sprintf("job-%d", w.jobs))
	run(t, w.dir, "git", "clone", "-q", w.remote, ws)
	gitRepo, err := git.Open(context.Background(), ws, gitEnv())
	if err != nil {
		t.Fatal(err)
	}
	masker := redact.New(redact.Config{Secrets: []string{token}})
	gh, err := github.New(github.Options{BaseURL: w.srv.URL + "/", Token: token, Owner: owner, Repo: repo,
		Masker: masker, Clock: w.clock,
		HTTPClient: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}})
	if err != nil {
		t.Fatal(err)
	}
	p := policy.Default()
	sb := policy.NewSandbox(sandboxtest.None(t, ws, gitEnv()), p, gitEnv())
	fixtures := filepath.Join(w.dir, fmt.Sprintf("fixtures-%d", w.jobs))
	os.MkdirAll(fixtures, 0o755)
	for _, c := range convs {
		data, err := llm.MarshalConversation(c)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(fixtures, c.Name+".json"), data, 0o644)
	}
	replay, err := llm.New(llm.Config{Provider: llm.ProviderReplay, Model: "replay-model", Fixtures: fixtures,
		Prices: map[string]llm.Price{"replay-model": {Input: 1, Output: 10}}})
	if err != nil {
		t.Fatal(err)
	}
	j := &job{w: w, outputs: map[string]string{}, gh: gh, ws: ws}
	j.model = &spyModel{Model: replay}
	j.checks = &countingRunner{Runner: checks.SandboxRunner(sb)}
	tr, err := trace.NewRecorder(&bytes.Buffer{}, masker, w.clock.Now, 0)
	if err != nil {
		t.Fatal(err)
	}
	j.opts = implement.Options{
		Options: kernel.Options{
			Issue:     w.issue,
			RunID:     int64(100 + w.jobs),
			GitHub:    gh,
			Repo:      gitRepo,
			Remote:    "origin",
			Base:      "main",
			Sandbox:   toolSandbox{sb},
			Clock:     w.clock,
			Log:       &j.log,
			Trace:     tr,
			Mask:      masker.Mask,
			SetOutput: func(k, v string) { j.outputs[k] = v },
		},
		Models:       []agent.Tier{{Name: "replay-model", Model: j.model}},
		CheckRunner:  j.checks,
		Split:        policy.Split,
		RepairRounds: 2,
		PollInterval: 30 * time.Second,
		WatchTimeout: 10 * time.Minute,
	}
	return j
}

func (j *job) run() implement.Result {
	j.w.t.Helper()
	res, err := implement.Run(context.Background(), j.opts)
	if err != nil {
		j.w.t.Fatalf("implement.Run: %v\nlog:\n%s", err, j.log.String())
	}
	return res
}

// record returns the issue's record as the fake holds it: the record comment.
func (w *world) record() *record.Record {
	w.t.Helper()
	c, ok := w.recordComment()
	if !ok {
		w.t.Fatal("the issue has no record comment")
	}
	r, err := record.Parse(c.Body)
	if err != nil {
		w.t.Fatalf("parse record: %v\n%s", err, c.Body)
	}
	return r
}

// patches returns the bodies of every write of an issue comment the fake
// received (the record comment's create and edits), in order.
func (w *world) patches() []string {
	var out []string
	for _, r := range w.fake.Requests() {
		if (r.Endpoint == "PATCH /repos/{owner}/{repo}/issues/comments/{id}" ||
			r.Endpoint == "POST /repos/{owner}/{repo}/issues/{n}/comments") && strings.Contains(r.Body, "roadmap:record") {
			out = append(out, r.Body)
		}
		if r.Endpoint == "PATCH /repos/{owner}/{repo}/issues/{n}" {
			w.t.Errorf("the issue was written (PATCH %s): roadmap never writes the issue", r.Path)
		}
	}
	return out
}
