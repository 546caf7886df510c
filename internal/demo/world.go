package demo

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/llm"
)

//go:embed all:testdata/demo
var sample embed.FS

// The sample item. The token is the fake's own: it opens nothing real.
const (
	Owner    = "roadmap-dev"
	Repo     = "greet"
	Token    = "ghs_demoFakeGitHubToken0000000000000000"
	planDir  = "openspec/changes/add-greetings"
	branchOf = "roadmap/%d-add-greetings"
)

// World is the item's surroundings: the fake GitHub and the replay model on
// loopback, the bare remote, and the issue.
type World struct {
	Dir    string
	Remote string
	Fake   *githubfake.Fake
	Replay *llm.Replay
	Issue  int

	githubURL, modelURL string
	servers             []*http.Server
	// Latency is added to every model call, as a hosted model would.
	latency time.Duration
	// onCall, when set, sees every chat request before the model answers it
	// (the demo kills a Job while its call is in flight).
	mu     sync.Mutex
	onCall func(firstUser string, turn int)
	onBody func(body []byte)
}

// ModelURL is the model server's OpenAI-compatible base URL.
func (w *World) ModelURL() string { return w.modelURL + "/v1" }

// OnModelRequest sets a hook that sees the whole body of each chat request
// (what left the Job for the model).
func (w *World) OnModelRequest(f func(body []byte)) {
	w.mu.Lock()
	w.onBody = f
	w.mu.Unlock()
}

// OnModelCall sets a hook that sees each chat request's first user message
// and turn before the model server answers it.
func (w *World) OnModelCall(f func(firstUser string, turn int)) {
	w.mu.Lock()
	w.onCall = f
	w.mu.Unlock()
}

// gitEnv isolates git from the machine's configuration.
func gitEnv() []string {
	return append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=roadmap demo", "GIT_AUTHOR_EMAIL=demo@roadmap.invalid",
		"GIT_COMMITTER_NAME=roadmap demo", "GIT_COMMITTER_EMAIL=demo@roadmap.invalid")
}

func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

// NewWorld lays the item out under dir and starts the servers. The plan is
// already staged: committed on main and named in the record comment.
func NewWorld(ctx context.Context, dir string, latency time.Duration) (*World, error) {
	return newWorld(ctx, dir, latency, true)
}

// NewIssueWorld lays out the item as a person files it: an issue with no
// plan, labelled roadmap:stage. The replay model's planner writes the sample
// plan (stage's planner and verifier fixtures are made from its files).
func NewIssueWorld(ctx context.Context, dir string, latency time.Duration) (*World, error) {
	return newWorld(ctx, dir, latency, false)
}

func newWorld(ctx context.Context, dir string, latency time.Duration, staged bool) (*World, error) {
	w := &World{Dir: dir, Remote: filepath.Join(dir, "remote.git"), latency: latency}
	if _, err := git(dir, "init", "-q", "--bare", "-b", "main", w.Remote); err != nil {
		return nil, err
	}
	seed := filepath.Join(dir, "seed")
	if err := extract("testdata/demo/repo", seed); err != nil {
		return nil, err
	}
	fixtures := filepath.Join(dir, "fixtures")
	if err := extract("testdata/demo/fixtures", fixtures); err != nil {
		return nil, err
	}
	if !staged {
		// The plan leaves the repository and becomes what the planner writes.
		if err := stageFixtures(filepath.Join(seed, filepath.FromSlash(planDir)), fixtures); err != nil {
			return nil, err
		}
		if err := os.RemoveAll(filepath.Join(seed, "openspec")); err != nil {
			return nil, err
		}
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "greet: an empty package and a plan"},
		{"remote", "add", "origin", w.Remote}, {"push", "-q", "origin", "main"}} {
		if _, err := git(seed, args...); err != nil {
			return nil, err
		}
	}
	w.Fake = githubfake.New(githubfake.Options{Token: Token, Owner: Owner, Repo: Repo, GitRemote: w.Remote})
	if !staged {
		w.Issue = w.Fake.CreateIssue(githubfake.Issue{Title: "Add greetings", Body: issueBody, Author: "maintainer", Labels: []string{config.Default().Labels.Stage}})
	} else {
		body := "Callers need a greeting and a farewell; see the plan in `" + planDir + "`.\n"
		w.Issue = w.Fake.CreateIssue(githubfake.Issue{Title: "Add greetings", Body: body, Author: "maintainer", Labels: []string{config.Default().Labels.Implement}})
		// The stage phase left the plan in the record comment, written as
		// roadmap's identity.
		if _, err := w.Fake.AddComment(w.Issue, "github-actions[bot]", "**roadmap** · staged: planned\n\n"+
			"<!-- roadmap:record v1\nstage.plan: "+planDir+"\nstage.state: staged\n-->"); err != nil {
			return nil, err
		}
	}
	replay, err := llm.LoadReplay(fixtures)
	if err != nil {
		return nil, fmt.Errorf("load the recorded exchanges: %w", err)
	}
	w.Replay = replay
	if w.githubURL, err = w.serve(w.Fake); err != nil {
		return nil, err
	}
	if w.modelURL, err = w.serve(http.HandlerFunc(w.slowModel)); err != nil {
		return nil, err
	}
	return w, nil
}

// slowModel answers like the replay server, after the model's latency.
func (w *World) slowModel(rw http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, "/chat/completions") {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(rw, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		w.mu.Lock()
		hook, bodyHook := w.onCall, w.onBody
		w.mu.Unlock()
		if bodyHook != nil {
			bodyHook(body)
		}
		if hook != nil {
			hook(firstUserAndTurn(body))
		}
		select {
		case <-time.After(w.latency):
		case <-r.Context().Done():
			return
		}
	}
	w.Replay.ServeHTTP(rw, r)
}

// firstUserAndTurn reads an OpenAI chat request: its first user message and
// how many assistant messages it holds (the turn).
func firstUserAndTurn(body []byte) (string, int) {
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(body, &req) != nil {
		return "", 0
	}
	first, turn := "", 0
	for _, m := range req.Messages {
		switch m.Role {
		case "assistant":
			turn++
		case "user":
			if first == "" {
				var s string
				if json.Unmarshal(m.Content, &s) == nil {
					first = s
				} else {
					first = string(m.Content)
				}
			}
		}
	}
	return first, turn
}

func (w *World) serve(h http.Handler) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("listen on loopback: %w", err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	w.servers = append(w.servers, srv)
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), nil
}

// Close stops the servers.
func (w *World) Close() {
	for _, s := range w.servers {
		s.Close()
	}
}

// Branch is the item's work branch.
func (w *World) Branch() string { return fmt.Sprintf(branchOf, w.Issue) }

// Workspace clones the remote into a fresh directory, as a new runner would.
func (w *World) Workspace(name string) (string, error) {
	ws := filepath.Join(w.Dir, name)
	if _, err := git(w.Dir, "clone", "-q", w.Remote, ws); err != nil {
		return "", err
	}
	return ws, nil
}

// Config writes the repository configuration a Job runs with: the replay
// model over the OpenAI-compatible API, a short poll for the demo's CI.
func (w *World) Config() (string, error) {
	p := filepath.Join(w.Dir, "roadmap.yml")
	cfg := fmt.Sprintf(`# The demo's configuration: the recorded model exchanges served on loopback.
models:
  - provider: openai-compatible
    name: demo-model
    base_url: %s/v1
prices:
  demo-model: {input: 0.15, output: 0.60}
checks:
  commands: ["go vet ./..."]
implement:
  poll_interval: 1s
  watch_timeout: 60s
  repair_rounds: 2
`, w.modelURL)
	return p, os.WriteFile(p, []byte(cfg), 0o644)
}

// Env is the environment of a step of the item's workflow run: the machine's
// environment without anything of a real runner or a real token, git kept
// apart from the machine's configuration, and the fakes' addresses.
func (w *World) Env(runID int64, tmp string) []string {
	var env []string
	for _, kv := range gitEnv() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GITHUB_") || strings.HasPrefix(k, "ACTIONS_") || strings.HasPrefix(k, "RUNNER_") || strings.HasPrefix(k, "INPUT_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GITHUB_API_URL="+w.githubURL, "GITHUB_TOKEN="+Token, "GITHUB_REPOSITORY="+Owner+"/"+Repo,
		fmt.Sprintf("GITHUB_RUN_ID=%d", runID), "RUNNER_TEMP="+tmp)
}

// PlayCI gives the work branch's head a passing status, as the repository's
// CI would, until ctx is done.
func (w *World) PlayCI(ctx context.Context) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		sha, err := git(w.Remote, "rev-parse", "-q", "--verify", "refs/heads/"+w.Branch())
		if err != nil || sha == "" {
			continue
		}
		if len(w.Fake.Statuses(sha)) == 0 {
			w.Fake.AddStatus(sha, "ci/test", "success", "go test ./... passed")
		}
	}
}

// extract writes the embedded tree root to dir; go.mod.sample becomes go.mod
// (a go.mod cannot be embedded).
func extract(root, dir string) error {
	return fs.WalkDir(sample, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, root), "/")
		target := filepath.Join(dir, filepath.FromSlash(rel))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := sample.ReadFile(p)
		if err != nil {
			return err
		}
		if path.Base(p) == "go.mod.sample" {
			target = filepath.Join(filepath.Dir(target), "go.mod")
		}
		return os.WriteFile(target, data, 0o644)
	})
}
