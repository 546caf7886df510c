package faults

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/roadmap-dev/roadmap/internal/git"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/record"
	theworld "github.com/roadmap-dev/roadmap/internal/world"
)

// The item every history plays: internal/world's sample, a plan of Groups
// task groups. The token is the fake's own. They are exported for the
// process suite (tools/faultproc), which plays the same item from outside.
const (
	Owner = "acme"
	Repo  = "widgets"
	Token = "ghs_faultsFakeGitHubToken000000000000000"
	// PushToken is roadmap's push token (an App's): CI, which the suite
	// plays, runs on its pushes.
	PushToken = "ghs_faultsFakePushToken00000000000000000"
	PlanDir   = theworld.SamplePlanDir
	Groups    = 2
	// PersonBody is the person's issue text; roadmap must never change it.
	PersonBody = "Add greetings, one file per group.\n\nThe person's words, kept byte for byte.\n"
)

// Epoch is the item's clock at the start and every commit's date.
var Epoch = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// world is one history's surroundings (internal/world's): the fake GitHub
// and the replay model on loopback, the bare remote, the issue. The World's
// fields are copied under the names the suite's files use.
type world struct {
	base     *theworld.World
	dir      string
	remote   string
	fake     *githubfake.Fake
	replay   *llm.Replay
	modelURL string // without the API's /v1
	clock    *githubfake.ManualClock
	issue    int
	branch   string
	// fitted counts model requests that had to be cut to the input window;
	// maxModelRequest is the largest request body the model server got.
	fitted          atomic.Int64
	maxModelRequest atomic.Int64
	// body is the person's issue text as it must be at the end (their own
	// edits included).
	body string
	// staging: the issue has no plan yet; stage Jobs write it first.
	staging bool
	// groups is the plan's group count (Groups unless a history says).
	groups int
}

// gitEnv is internal/world's, with every commit dated at the epoch, so a
// history's commits have the same shas every time it is played.
func gitEnv() []string { return theworld.GitEnvAt(Epoch) }

func gitIn(dir string, args ...string) (string, error) { return theworld.Git(gitEnv(), dir, args...) }

// tasksMD is the plan of n groups: group i writes greeting-i.txt.
func tasksMD(n int) string { return theworld.SampleRepo(n)[PlanDir+"/tasks.md"] }

// Conversations are the model's recorded answers: per group, write the file
// and finish; each call costs 1,000 tokens in and 100 out. mutate changes
// them for a model fault.
func Conversations(mutate func(group int, c *llm.Conversation)) ([]*llm.Conversation, error) {
	return conversations(Groups, mutate)
}

// conversations are Conversations for a plan of n groups.
func conversations(n int, mutate func(group int, c *llm.Conversation)) ([]*llm.Conversation, error) {
	convs, err := theworld.SampleConversations(n)
	if err != nil {
		return nil, err
	}
	for i, c := range convs {
		if mutate != nil {
			mutate(i+1, c)
		}
	}
	return convs, nil
}

// SampleWorld is the world of the item, staged and labelled for implement,
// its model answering convs: the in-process histories' and the process
// suite's alike.
func SampleWorld(dir string, convs []*llm.Conversation) theworld.Options {
	return sampleWorld(dir, convs, Groups)
}

// sampleWorld is SampleWorld with a plan of n groups.
func sampleWorld(dir string, convs []*llm.Conversation, n int) theworld.Options {
	return theworld.Options{Dir: dir, Owner: Owner, Repo: Repo, Token: Token, PushToken: PushToken, CommitDate: Epoch,
		Files:         theworld.SampleRepo(n),
		Issue:         &githubfake.Issue{Title: "Add greetings", Body: PersonBody, Author: "alice", Labels: []string{"roadmap:implement"}},
		RecordComment: "**roadmap** · staged\n\n<!-- roadmap:record v1\nstage.plan: " + PlanDir + "\nstage.state: staged\n-->",
		Replay:        llm.NewReplay(convs)}
}

func newWorld(dir string, convs []*llm.Conversation, staging bool, groups int) (*world, error) {
	w := &world{dir: dir, body: PersonBody, staging: staging, groups: groups}
	o := sampleWorld(dir, convs, groups)
	o.Start, o.OnModelRequest = Epoch, w.noteFitted
	if staging {
		// No plan yet and no record comment: stage writes the plan (the
		// same change directory, from the issue's title), and its first
		// mark creates the comment.
		o.Files = theworld.SampleRepo(0)
		o.Issue.Labels = []string{"roadmap:stage"}
		o.RecordComment = ""
	}
	tw, err := theworld.New(o)
	if err != nil {
		return nil, err
	}
	w.base, w.remote, w.fake, w.replay, w.clock, w.issue = tw, tw.Remote, tw.Fake, tw.Replay, tw.Clock, tw.Issue
	w.modelURL = strings.TrimSuffix(tw.ModelURL(), "/v1")
	w.branch = git.WorkBranch(w.issue, "Add greetings")
	return w, nil
}

// noteFitted counts a model request whose old output was cut to fit the
// window.
func (w *world) noteFitted(body []byte) {
	for n := int64(len(body)); ; {
		m := w.maxModelRequest.Load()
		if n <= m || w.maxModelRequest.CompareAndSwap(m, n) {
			break
		}
	}
	if bytes.Contains(body, []byte("to fit the input window")) || bytes.Contains(body, []byte("to fit the model's input window")) {
		w.fitted.Add(1)
	}
}

func (w *world) close() { w.base.Close() }

// workspace clones the remote into a fresh directory, as a new runner would.
func (w *world) workspace(name string) (string, error) { return w.base.Workspace(name) }

// remoteHead is the work branch's sha on the remote ("" when absent).
func (w *world) remoteHead() string { return w.base.RemoteHead(w.branch) }

// remoteGroups are the groups whose commits the work branch holds on the
// remote, by their Roadmap-Group trailers (none before the first push).
func (w *world) remoteGroups() map[int]bool {
	out, err := gitIn(w.remote, "log", "--format=%(trailers:key="+git.TrailerGroup+",valueonly)", "main.."+w.branch, "--")
	if err != nil {
		return nil
	}
	groups := map[int]bool{}
	for _, line := range strings.Fields(out) {
		var n int
		if _, err := fmt.Sscan(line, &n); err == nil {
			groups[n] = true
		}
	}
	return groups
}

// playCI gives a pushed head a passing status, as the repository's CI would.
func (w *world) playCI() { w.base.PassCI(w.branch, "tests passed") }

// recordComment is the record comment as the fake holds it.
func (w *world) recordComment() (githubfake.Comment, bool) { return w.base.RecordComment() }

func (w *world) record() (*record.Record, error) {
	c, ok := w.recordComment()
	if !ok {
		return nil, fmt.Errorf("issue %d has no record comment", w.issue)
	}
	return record.Parse(c.Body)
}

// client is a GitHub client for one Job over transport rt.
func (w *world) client(rt http.RoundTripper) (*github.Client, error) { return w.base.GitHub(rt) }

// reportClient is a client for one report run over rt, as the report verb
// builds one: its recovery lines in log, and with noRetry no transient
// retries.
func (w *world) reportClient(rt http.RoundTripper, log io.Writer, noRetry bool) (*github.Client, error) {
	return github.New(github.Options{BaseURL: w.base.GitHubURL() + "/", Token: Token, Owner: Owner, Repo: Repo, Masker: w.base.Masker,
		HTTPClient: &http.Client{Timeout: 10 * time.Second, Transport: rt}, Clock: w.clock,
		OnRecovery: github.LogRecoveries(log), NoRetry: noRetry})
}

// Stamp prefixes each line with a runner-style timestamp, as a job log has.
func Stamp(log string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(log, "\n") {
		if l != "" {
			b.WriteString(Epoch.Format("2006-01-02T15:04:05.0000000Z") + " " + l)
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
