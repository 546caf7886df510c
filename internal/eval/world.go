package eval

import (
	"context"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/git"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/policy"
	"github.com/roadmap-dev/roadmap/internal/redact"
	"github.com/roadmap-dev/roadmap/internal/sandbox"
)

// The fake's repository and token: they open nothing real.
const (
	owner = "acme"
	repo  = "golden"
	token = "ghs_evalFakeGitHubToken00000000000000000"
	// modelName is the replay model's name; its price makes spend visible.
	modelName = "replay-model"
)

// t0 is when every case starts, so its spend and trace are the same on
// every run.
var t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

// world is one case's surroundings: the fake GitHub on loopback, a bare
// remote seeded with the case's repository snapshot, and the issue.
type world struct {
	dir    string
	remote string
	fake   *githubfake.Fake
	srv    *http.Server
	url    string
	clock  *githubfake.ManualClock
	issue  int
	title  string
	jobs   int
	masker *redact.Masker
}

// gitEnv keeps git apart from the machine's configuration.
func gitEnv() []string {
	return append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=roadmap eval", "GIT_AUTHOR_EMAIL=eval@roadmap.invalid",
		"GIT_COMMITTER_NAME=roadmap eval", "GIT_COMMITTER_EMAIL=eval@roadmap.invalid")
}

func runGit(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

// newWorld lays out a case under dir: snapshot (a directory tree) becomes
// main on a bare remote, the fake GitHub serves on loopback, and the issue
// is filed by a person.
func newWorld(dir, snapshot string, is Issue) (*world, error) {
	w := &world{dir: dir, remote: filepath.Join(dir, "remote.git"), clock: githubfake.NewManualClock(t0), title: is.Title,
		masker: redact.New(redact.Config{Secrets: []string{token}})}
	if _, err := runGit(dir, "init", "-q", "--bare", "-b", "main", w.remote); err != nil {
		return nil, err
	}
	seed := filepath.Join(dir, "seed")
	if err := copyTree(snapshot, seed); err != nil {
		return nil, fmt.Errorf("copy the repository snapshot: %w", err)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "--allow-empty", "-m", "the golden case's repository"},
		{"remote", "add", "origin", w.remote}, {"push", "-q", "origin", "main"}} {
		if _, err := runGit(seed, args...); err != nil {
			return nil, err
		}
	}
	w.fake = githubfake.New(githubfake.Options{Token: token, Owner: owner, Repo: repo, Clock: w.clock, GitRemote: w.remote})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen on loopback: %w", err)
	}
	w.srv = &http.Server{Handler: w.fake, ReadHeaderTimeout: 10 * time.Second}
	go w.srv.Serve(ln)
	w.url = "http://" + ln.Addr().String() + "/"
	w.issue = w.fake.CreateIssue(githubfake.Issue{Title: is.Title, Body: is.Body, Author: "maintainer"})
	return w, nil
}

func (w *world) close() { w.srv.Close() }

// branch is the item's work branch.
func (w *world) branch() string { return git.WorkBranch(w.issue, w.title) }

// requests counts the GitHub requests the fake answered, as DESIGN §9
// counts them: a 304 is free, and a job log download is not an API call.
func (w *world) requests() int {
	n := 0
	for _, r := range w.fake.Requests() {
		if r.Status != http.StatusNotModified && !strings.HasPrefix(r.Path, "/_logs/") {
			n++
		}
	}
	return n
}

// jobParts are what a stage or implement Job runs with: a fresh clone (a
// new runner), the GitHub client, the tool sandbox and the replay model.
type jobParts struct {
	ws      string
	repo    *git.Repo
	gh      *github.Client
	sb      *policy.Sandbox
	model   agent.Model
	closeFn func() error
}

// newJob clones the remote into a fresh workspace and wires a Job's parts
// over the recorded exchanges in fixtures. The boundary is `isolation:
// none`: the commands are the golden set's own recorded ones, run by the
// eval's own user (docs/eval.md says so).
func (w *world) newJob(ctx context.Context, fixtures string) (*jobParts, error) {
	w.jobs++
	ws := filepath.Join(w.dir, fmt.Sprintf("job-%d", w.jobs))
	if _, err := runGit(w.dir, "clone", "-q", w.remote, ws); err != nil {
		return nil, err
	}
	gitRepo, err := git.Open(ctx, ws, gitEnv())
	if err != nil {
		return nil, err
	}
	gh, err := github.New(github.Options{BaseURL: w.url, Token: token, Owner: owner, Repo: repo, Masker: w.masker, Clock: w.clock,
		HTTPClient: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}})
	if err != nil {
		return nil, err
	}
	b, err := sandbox.Open(ctx, sandbox.Options{Mode: sandbox.ModeNone, Workspace: ws, Environ: gitEnv()})
	if err != nil {
		return nil, err
	}
	model, err := llm.New(llm.Config{Provider: llm.ProviderReplay, Model: modelName, Fixtures: fixtures,
		Prices: map[string]llm.Price{modelName: {Input: 0.15, Output: 0.60}}})
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("the recorded exchanges in %s: %w", fixtures, err)
	}
	return &jobParts{ws: ws, repo: gitRepo, gh: gh, sb: policy.NewSandbox(b, policy.Default(), gitEnv()), model: model, closeFn: b.Close}, nil
}

// toolSandbox adapts the policy sandbox to the agent's interface.
type toolSandbox struct{ *policy.Sandbox }

func (s toolSandbox) Run(ctx context.Context, argv []string) (agent.RunResult, error) {
	r, err := s.Sandbox.Run(ctx, argv)
	return agent.RunResult(r), err
}

// copyTree copies the regular files and directories of src to dst. A
// symlink or any other kind of file is refused: a golden case is plain
// files.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type().IsRegular():
			data, err := readBounded(p, maxCaseFile)
			if err != nil {
				return err
			}
			return os.WriteFile(target, data, 0o644)
		}
		return fmt.Errorf("%s is not a regular file or a directory", p)
	})
}
