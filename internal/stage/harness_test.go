package stage_test

import (
	"bytes"
	"context"
	"encoding/json"
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
	"github.com/roadmap-dev/roadmap/internal/git"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/job/kernel"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/policy"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/redact"
	"github.com/roadmap-dev/roadmap/internal/sandbox/sandboxtest"
	"github.com/roadmap-dev/roadmap/internal/stage"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

const (
	token = "ghs_stagetesttoken00000000000000000000"
	owner = "acme"
	repo  = "widgets"
	// changeDir is where stage puts the plan of the issue titled "Add greetings".
	changeDir = "openspec/changes/add-greetings"
)

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

const issueBody = `The greet package is empty: callers need a greeting.

## Acceptance

- Hello("Ada") returns "Hello, Ada!".
`

// world is one item: a fake GitHub over HTTP, a bare remote holding a small
// Go module, and the issue.
type world struct {
	t      *testing.T
	dir    string
	remote string
	fake   *githubfake.Fake
	srv    *httptest.Server
	clock  *githubfake.ManualClock
	issue  int
	jobs   int
}

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

func newWorld(t *testing.T) *world {
	t.Helper()
	dir := t.TempDir()
	w := &world{t: t, dir: dir, remote: filepath.Join(dir, "remote.git"), clock: githubfake.NewManualClock(t0)}
	run(t, dir, "git", "init", "-q", "--bare", "-b", "main", w.remote)
	seed := filepath.Join(dir, "seed")
	run(t, dir, "git", "init", "-q", "-b", "main", seed)
	write(t, seed, "go.mod", "module example.com/greet\n\ngo 1.22\n")
	write(t, seed, "greet.go", "// Package greet says hello.\npackage greet\n")
	write(t, seed, "README.md", "# greet\n")
	run(t, seed, "git", "add", "-A")
	run(t, seed, "git", "commit", "-q", "-m", "seed")
	run(t, seed, "git", "remote", "add", "origin", w.remote)
	run(t, seed, "git", "push", "-q", "origin", "main")
	w.fake = githubfake.New(githubfake.Options{Token: token, Owner: owner, Repo: repo, Clock: w.clock, GitRemote: w.remote})
	w.srv = httptest.NewServer(w.fake)
	t.Cleanup(w.srv.Close)
	w.issue = w.fake.CreateIssue(githubfake.Issue{Title: "Add greetings", Body: issueBody, Author: "alice"})
	return w
}

func write(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// spyModel remembers every request; before runs before each call.
type spyModel struct {
	agent.Model
	mu     sync.Mutex
	reqs   []agent.ModelRequest
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

// job is one stage Job's parts; tweak opts before run.
type job struct {
	w       *world
	opts    stage.Options
	log     bytes.Buffer
	outputs map[string]string
	model   *spyModel
	ws      string
	trace   bytes.Buffer
}

// newJob clones the remote into a fresh workspace and wires a Job with the
// given conversations (each a JSON fixture).
func (w *world) newJob(convs ...string) *job {
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
	sb := policy.NewSandbox(sandboxtest.None(t, ws, gitEnv()), policy.Default(), gitEnv())
	fixtures := filepath.Join(w.dir, fmt.Sprintf("fixtures-%d", w.jobs))
	for i, c := range convs {
		write(t, fixtures, fmt.Sprintf("%02d.json", i), c)
	}
	replay, err := llm.New(llm.Config{Provider: llm.ProviderReplay, Model: "replay-model", Fixtures: fixtures,
		Prices: map[string]llm.Price{"replay-model": {Input: 1, Output: 10}}})
	if err != nil {
		t.Fatal(err)
	}
	j := &job{w: w, outputs: map[string]string{}, ws: ws}
	j.model = &spyModel{Model: replay}
	tr, err := trace.NewRecorder(&j.trace, masker, w.clock.Now, 0)
	if err != nil {
		t.Fatal(err)
	}
	j.opts = stage.Options{
		Options: kernel.Options{
			Issue:     w.issue,
			RunID:     int64(200 + w.jobs),
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
		Planner: []agent.Tier{{Name: "replay-model", Model: j.model}},
		Rounds:  3,
	}
	return j
}

func (j *job) run(ctx context.Context) stage.Result {
	j.w.t.Helper()
	res, err := stage.Run(ctx, j.opts)
	if err != nil {
		j.w.t.Fatalf("stage.Run: %v\nlog:\n%s", err, j.log.String())
	}
	return res
}

// record returns the issue's record as the fake holds it.
func (w *world) record() *record.Record {
	w.t.Helper()
	for _, c := range w.fake.Comments(w.issue) {
		if c.Author == github.DefaultIdentity && record.HasBlock(c.Body) {
			r, err := record.Parse(c.Body)
			if err != nil {
				w.t.Fatalf("parse record: %v\n%s", err, c.Body)
			}
			return r
		}
	}
	w.t.Fatal("the issue has no record comment")
	return nil
}

func (w *world) recordText() string {
	for _, c := range w.fake.Comments(w.issue) {
		if c.Author == github.DefaultIdentity && record.HasBlock(c.Body) {
			return c.Body
		}
	}
	return ""
}

// conv renders a hand-written conversation: match is a substring of the
// first user message; each turn is one tool call; every call costs usage.
func conv(comment, match string, calls ...call) string {
	type tc struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	}
	type turn struct {
		Response struct {
			ToolCalls []tc `json:"tool_calls"`
			Usage     struct {
				TokensIn  int `json:"tokens_in"`
				TokensOut int `json:"tokens_out"`
			} `json:"usage"`
		} `json:"response"`
	}
	c := struct {
		Comment     string `json:"comment"`
		Source      string `json:"source"`
		Match       string `json:"match,omitempty"`
		MatchRegexp string `json:"match_regexp,omitempty"`
		Turns       []turn `json:"turns"`
	}{Comment: comment, Source: "hand"}
	if strings.HasPrefix(match, "re:") {
		c.MatchRegexp = strings.TrimPrefix(match, "re:")
	} else {
		c.Match = match
	}
	for _, k := range calls {
		var t turn
		t.Response.ToolCalls = []tc{{Name: k.name, Arguments: k.args}}
		t.Response.Usage.TokensIn, t.Response.Usage.TokensOut = 1000, 100
		c.Turns = append(c.Turns, t)
	}
	data, err := json.Marshal(c)
	if err != nil {
		panic(err)
	}
	return string(data)
}

type call struct {
	name string
	args map[string]any
}

func read(path string) call { return call{"read_file", map[string]any{"path": path}} }
func planFile(path, content string) call {
	return call{"write_plan_file", map[string]any{"path": path, "content": content}}
}
func finish(s string) call       { return call{"finish", map[string]any{"summary": s}} }
func verdict(s string) call      { return call{"verdict", map[string]any{"objections": s}} }
func writeFile(p, c string) call { return call{"write_file", map[string]any{"path": p, "content": c}} }

const proposal = `# Add greetings

## Why

The greet package is empty: callers need a greeting.

## What Changes

- ` + "`Hello(name)`" + ` returns "Hello, NAME!".
`

const tasks = "## 1. Hello\n\n" +
	"- [ ] 1.1 Add a failing test that Hello greets Ada, in `greet_test.go`; verify: `go test ./... -run TestHello` fails\n" +
	"- [ ] 1.2 Implement `Hello` in `greet.go`; verify: `go test ./... -run TestHello`\n"

const spec = `## ADDED Requirements

### Requirement: Hello greets by name

The greet package SHALL return "Hello, NAME!" from Hello(NAME).

#### Scenario: Ada

- **WHEN** Hello is called with "Ada"
- **THEN** it returns "Hello, Ada!"
`

// soundPlanner investigates, writes a sound plan and finishes.
func soundPlanner(match string) string {
	return conv("planner: investigates and writes a sound plan", match,
		read("greet.go"),
		planFile("proposal.md", proposal),
		planFile("tasks.md", tasks),
		planFile("specs/greetings/spec.md", spec),
		finish("wrote the plan"))
}

func cleanVerifier(match string) string {
	return conv("verifier: finds nothing to object to", match, read("greet.go"), verdict("none"))
}

// openspecCLI is the pinned OpenSpec CLI scripts/npm-tools.sh installs.
func openspecCLI(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("Node.js is not on PATH: validating with the OpenSpec CLI needs it (docs/openspec.md)")
	}
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		dir = filepath.Dir(dir)
	}
	bin := filepath.Join(dir, "tools", "npm", "node_modules", ".bin", "openspec")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("the OpenSpec CLI is not installed at %s; run scripts/npm-tools.sh (make unit does)", bin)
	}
	return bin
}
