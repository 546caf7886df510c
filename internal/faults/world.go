package faults

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/roadmap-dev/roadmap/internal/git"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// The item every history plays. The token is the fake's own.
const (
	owner   = "acme"
	repo    = "widgets"
	token   = "ghs_faultsFakeGitHubToken000000000000000"
	planDir = "openspec/changes/add-greetings"
	groups  = 2
	// personBody is the person's issue text; roadmap must never change it.
	personBody = "Add greetings, one file per group.\n\nThe person's words, kept byte for byte.\n"
)

var epoch = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// world is one history's surroundings: the fake GitHub and the replay model on
// loopback, the bare remote, the issue.
type world struct {
	dir      string
	remote   string
	fake     *githubfake.Fake
	ghURL    string
	replay   *llm.Replay
	modelURL string
	clock    *githubfake.ManualClock
	issue    int
	branch   string
	servers  []*http.Server
	// fitted counts model requests that had to be cut to the input window.
	fitted atomic.Int64
	// body is the person's issue text as it must be at the end (their own
	// edits included).
	body string
	// staging: the issue has no plan yet; stage Jobs write it first.
	staging bool
}

// gitEnv isolates git from the machine and fixes the dates, so a history's
// commits have the same shas every time it is played.
func gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GIT_") || strings.HasPrefix(k, "GITHUB_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=roadmap", "GIT_AUTHOR_EMAIL=roadmap@example.invalid",
		"GIT_COMMITTER_NAME=roadmap", "GIT_COMMITTER_EMAIL=roadmap@example.invalid",
		"GIT_AUTHOR_DATE=2026-03-01T09:00:00Z", "GIT_COMMITTER_DATE=2026-03-01T09:00:00Z")
}

func gitIn(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

// tasksMD is the plan: group i writes greeting-i.txt.
func tasksMD() string {
	var b strings.Builder
	for i := 1; i <= groups; i++ {
		fmt.Fprintf(&b, "## %d. Greeting %d\n\n- [ ] %d.1 Write greeting-%d.txt saying hello %d; verify: `grep -q \"hello %d\" greeting-%d.txt`\n\n", i, i, i, i, i, i, i)
	}
	return b.String()
}

// conversations are the model's recorded answers: per group, write the file
// and finish; each call costs 1,000 tokens in and 100 out. mutate changes
// them for a model fault.
func conversations(mutate func(group int, c *llm.Conversation)) ([]*llm.Conversation, error) {
	var convs []*llm.Conversation
	for i := 1; i <= groups; i++ {
		data := fmt.Sprintf(`{"comment":"written by hand for the fault suite: group %[1]d writes its greeting and finishes","source":"hand",
"match":"task group %[1]d of","turns":[
 {"response":{"tool_calls":[{"name":"write_file","arguments":{"path":"greeting-%[1]d.txt","content":"hello %[1]d\n"}}],"usage":{"tokens_in":1000,"tokens_out":100}}},
 {"response":{"tool_calls":[{"name":"finish","arguments":{"summary":"wrote greeting %[1]d"}}],"usage":{"tokens_in":1000,"tokens_out":100}}}]}`, i)
		c, err := llm.ParseConversation(fmt.Sprintf("group-%d", i), []byte(data))
		if err != nil {
			return nil, err
		}
		if mutate != nil {
			mutate(i, c)
		}
		convs = append(convs, c)
	}
	return convs, nil
}

func newWorld(dir string, convs []*llm.Conversation, staging bool) (*world, error) {
	w := &world{dir: dir, remote: filepath.Join(dir, "remote.git"), clock: githubfake.NewManualClock(epoch), body: personBody, staging: staging}
	if _, err := gitIn(dir, "init", "-q", "--bare", "-b", "main", w.remote); err != nil {
		return nil, err
	}
	seed := filepath.Join(dir, "seed")
	if err := os.MkdirAll(filepath.Join(seed, planDir), 0o755); err != nil {
		return nil, err
	}
	files := map[string]string{
		"README.md":                           "# widgets\n",
		filepath.Join(planDir, "proposal.md"): "# Add greetings\n\nWrite one greeting file per group.\n",
		filepath.Join(planDir, "tasks.md"):    tasksMD(),
	}
	if staging {
		// No plan yet: stage writes it (the same change directory, from the
		// issue's title).
		files = map[string]string{"README.md": "# widgets\n"}
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(seed, name), []byte(text), 0o644); err != nil {
			return nil, err
		}
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "seed"},
		{"remote", "add", "origin", w.remote}, {"push", "-q", "origin", "main"}} {
		if _, err := gitIn(seed, args...); err != nil {
			return nil, err
		}
	}
	w.fake = githubfake.New(githubfake.Options{Token: token, Owner: owner, Repo: repo, Clock: w.clock, GitRemote: w.remote})
	if staging {
		// An issue with no plan and no record comment: stage's first mark
		// creates it.
		w.issue = w.fake.CreateIssue(githubfake.Issue{Title: "Add greetings", Body: personBody, Author: "alice", Labels: []string{"roadmap:stage"}})
	} else {
		w.issue = w.fake.CreateIssue(githubfake.Issue{Title: "Add greetings", Body: personBody, Author: "alice", Labels: []string{"roadmap:implement"}})
		if _, err := w.fake.AddComment(w.issue, github.DefaultIdentity, "**roadmap** · staged\n\n<!-- roadmap:record v1\nstage.plan: "+planDir+"\nstage.state: staged\n-->"); err != nil {
			return nil, err
		}
	}
	w.branch = git.WorkBranch(w.issue, "Add greetings")
	w.replay = llm.NewReplay(convs)
	var err error
	if w.ghURL, err = w.serve(w.fake); err != nil {
		return nil, err
	}
	if w.modelURL, err = w.serve(http.HandlerFunc(w.model)); err != nil {
		w.close()
		return nil, err
	}
	return w, nil
}

// model serves the replay model, noting requests cut to fit the window.
func (w *world) model(rw http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if err != nil {
		http.Error(rw, err.Error(), http.StatusBadRequest)
		return
	}
	if bytes.Contains(body, []byte("to fit the input window")) || bytes.Contains(body, []byte("to fit the model's input window")) {
		w.fitted.Add(1)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	w.replay.ServeHTTP(rw, r)
}

func (w *world) serve(h http.Handler) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("listen on loopback: %w", err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	w.servers = append(w.servers, srv)
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), nil
}

func (w *world) close() {
	for _, s := range w.servers {
		s.Close()
	}
}

// workspace clones the remote into a fresh directory, as a new runner would.
func (w *world) workspace(name string) (string, error) {
	ws := filepath.Join(w.dir, name)
	_, err := gitIn(w.dir, "clone", "-q", w.remote, ws)
	return ws, err
}

// remoteHead is the work branch's sha on the remote ("" when absent).
func (w *world) remoteHead() string {
	if w.branch == "" {
		return ""
	}
	sha, err := gitIn(w.remote, "rev-parse", "-q", "--verify", "refs/heads/"+w.branch)
	if err != nil {
		return ""
	}
	return sha
}

// playCI gives a pushed head a passing status, as the repository's CI would.
func (w *world) playCI() {
	if sha := w.remoteHead(); sha != "" && len(w.fake.Statuses(sha)) == 0 {
		w.fake.AddStatus(sha, "ci/test", "success", "tests passed")
	}
}

// recordComment is the record comment as the fake holds it.
func (w *world) recordComment() (githubfake.Comment, bool) {
	for _, c := range w.fake.Comments(w.issue) {
		if c.Author == github.DefaultIdentity && record.HasBlock(c.Body) {
			return c, true
		}
	}
	return githubfake.Comment{}, false
}

func (w *world) record() (*record.Record, error) {
	c, ok := w.recordComment()
	if !ok {
		return nil, fmt.Errorf("issue %d has no record comment", w.issue)
	}
	return record.Parse(c.Body)
}

// client is a GitHub client for one Job over transport rt.
func (w *world) client(rt http.RoundTripper) (*github.Client, error) {
	return github.New(github.Options{BaseURL: w.ghURL + "/", Token: token, Owner: owner, Repo: repo,
		Masker: masker(), Clock: w.clock,
		HTTPClient: &http.Client{Timeout: 10 * time.Second, Transport: rt}})
}

// stamp prefixes each line with a runner-style timestamp, as a job log has.
func stamp(log string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(log, "\n") {
		if l != "" {
			b.WriteString(epoch.Format("2006-01-02T15:04:05.0000000Z") + " " + l)
		}
	}
	return b.String()
}

// lockedBuffer is a Job's log, written by the runner and read by the suite.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var _ io.Writer = (*lockedBuffer)(nil)

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
