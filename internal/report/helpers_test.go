package report

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/redact"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

const testToken = "ghs_fakeinstallationtoken000000000000000"

// t0 is the day of the recorded logs in testdata/logs.
var t0 = time.Date(2026, 11, 29, 10, 30, 0, 0, time.UTC)

var ctx = context.Background()

// logsDir holds the real-shaped job logs of the failure taxonomy.
var logsDir = filepath.Join("..", "..", "testdata", "logs")

const (
	workflow = "roadmap.yml"
	ref      = "main"
	headSHA  = "9c1d2e3f4a5b6c7d8e9f00112233445566778899"
)

type env struct {
	fake  *githubfake.Fake
	srv   *httptest.Server
	clock *githubfake.ManualClock
	gh    *github.Client
	mask  *redact.Masker
}

func newEnv(t *testing.T) *env {
	t.Helper()
	clock := githubfake.NewManualClock(t0)
	fake := githubfake.New(githubfake.Options{Token: testToken, Owner: "acme", Repo: "widgets", Clock: clock})
	// The repository has the caller workflow and the heads the tests name.
	fake.AddWorkflow(workflow)
	fake.AddCommit(headSHA, "aaaabbbbccccddddeeeeffff0000111122223333", "1111222233334444555566667777888899990000")
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	e := &env{fake: fake, srv: srv, clock: clock, mask: redact.New(redact.Config{Secrets: []string{testToken}})}
	e.gh = e.client(t)
	return e
}

// client returns another Client on the fake: another process, for GitHub.
func (e *env) client(t *testing.T) *github.Client {
	t.Helper()
	c, err := github.New(github.Options{
		BaseURL: e.srv.URL + "/", Token: testToken, Owner: "acme", Repo: "widgets",
		HTTPClient: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}},
		Masker:     e.mask, Clock: e.clock,
	})
	if err != nil {
		t.Fatalf("github.New: %v", err)
	}
	return c
}

// options are report's options for issue n after the implement job of runID.
func (e *env) options(n int, runID int64) Options {
	return Options{Issue: n, GitHub: e.gh, RunID: runID, Workflow: workflow, Ref: ref,
		Clock: e.clock, Mask: e.mask.Mask}
}

// issue creates an issue with labels whose record comment, written as
// roadmap's identity, holds ch.
func (e *env) issue(t *testing.T, ch record.Changes, labels ...string) int {
	t.Helper()
	n := e.fake.CreateIssue(githubfake.Issue{Title: "Webhook backoff", Body: "Retry webhook deliveries with a capped backoff.\n",
		Author: "maintainer", Labels: labels})
	rec, _ := record.Parse("")
	if err := rec.Apply(ch); err != nil {
		t.Fatalf("build the record: %v", err)
	}
	rec.SetView(record.View{})
	body, err := record.RenderComment(rec)
	if err != nil {
		t.Fatalf("build the record: %v", err)
	}
	if _, err := e.fake.AddComment(n, github.DefaultIdentity, body); err != nil {
		t.Fatal(err)
	}
	return n
}

// recordComment is issue n's record comment as the fake holds it.
func (e *env) recordComment(t *testing.T, n int) githubfake.Comment {
	t.Helper()
	for _, c := range e.fake.Comments(n) {
		if c.Author == github.DefaultIdentity && record.HasBlock(c.Body) {
			return c
		}
	}
	t.Fatalf("issue %d has no record comment", n)
	return githubfake.Comment{}
}

// run adds a finished workflow run with the implement job and its log.
func (e *env) run(t *testing.T, conclusion, log string) int64 {
	t.Helper()
	id := e.fake.AddRun(githubfake.Run{WorkflowFile: workflow, HeadBranch: ref, Conclusion: conclusion})
	if _, err := e.fake.AddJob(id, githubfake.Job{Name: "plan-check", Conclusion: "success", Log: "ok\n"}); err != nil {
		t.Fatal(err)
	}
	steps := []githubfake.Step{
		{Name: "Set up job", Status: "completed", Conclusion: "success"},
		{Name: "Run roadmap implement", Status: "completed", Conclusion: conclusion},
	}
	if _, err := e.fake.AddJob(id, githubfake.Job{Name: "implement", Conclusion: conclusion, Log: log, Steps: steps}); err != nil {
		t.Fatal(err)
	}
	return id
}

// body is the text of issue n's record comment.
func (e *env) body(t *testing.T, n int) string {
	t.Helper()
	return e.recordComment(t, n).Body
}

func (e *env) record(t *testing.T, n int) *record.Record {
	t.Helper()
	rec, err := record.Parse(e.body(t, n))
	if err != nil {
		t.Fatalf("parse issue %d record: %v", n, err)
	}
	return rec
}

func (e *env) hasLabel(n int, l string) bool { return slices.Contains(e.fake.Labels(n), l) }

// commentWith returns the body of issue n's comment holding marker, or "".
func (e *env) commentWith(n int, marker string) string {
	for _, c := range e.fake.Comments(n) {
		if strings.Contains(c.Body, marker) {
			return c.Body
		}
	}
	return ""
}

// statuses returns the states of roadmap/implement on sha, oldest first.
func (e *env) statuses(sha string) []string {
	var out []string
	for _, s := range e.fake.Statuses(sha) {
		if s.Context == StatusContext {
			out = append(out, s.State)
		}
	}
	return out
}

func readLog(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(logsDir, name))
	if err != nil {
		t.Fatalf("read log: %v", err)
	}
	return string(b)
}

// base is a record after Job 1 passed group 1 and yielded: what most tests
// continue from.
func base() record.Changes {
	var ch record.Changes
	ch.SetResult(record.ResultYielded)
	ch.SetAttempt(1)
	ch.SetGroup(1)
	ch.SetPublishedSHA(record.SHA(headSHA))
	s1 := record.Spend{TokensIn: 5200, TokensOut: 1300, USD: 0.0123, ModelCalls: 6}
	ch.SetSpend(s1)
	ch.SetJobs([]record.JobOutcome{{Job: 1, RunID: 9001, Result: record.ResultYielded, Group: 1, Spend: s1}})
	return ch
}

// endOfJob is what the runner's final mark of Job job adds to base: its
// line, the item's spend and, for a class, implement.failure, with a trace
// copy whose end event carries reason.
func endOfJob(t *testing.T, ch record.Changes, job int, runID int64, res record.Result, class, reason string, group int) record.Changes {
	t.Helper()
	jobSpend := record.Spend{TokensIn: 3000, TokensOut: 700, USD: 0.0071, ModelCalls: 4}
	prior := record.Spend{TokensIn: 5200, TokensOut: 1300, USD: 0.0123, ModelCalls: 6}
	ch.SetResult(res)
	ch.SetAttempt(job)
	ch.SetGroup(group)
	ch.SetSpend(prior.Add(jobSpend))
	if class != "" {
		ch.SetFailure(class)
	}
	ch.SetJobs([]record.JobOutcome{
		{Job: 1, RunID: 9001, Result: record.ResultYielded, Group: 1, Spend: prior},
		{Job: job, RunID: runID, Result: res, Failure: class, Group: group, Spend: jobSpend},
	})
	phase := map[record.Result]trace.Phase{record.ResultReady: trace.PhaseReady, record.ResultStopped: trace.PhaseStopped,
		record.ResultYielded: trace.PhaseYielded, record.ResultReturned: trace.PhaseReturned}[res]
	events := []trace.Event{
		{Seq: 1, Time: t0.Add(-20 * time.Minute), Type: trace.TypePhase, Phase: trace.PhaseJobStarted, Job: job, Step: "job"},
		{Seq: 2, Time: t0.Add(-19 * time.Minute), Type: trace.TypePhase, Phase: trace.PhaseGroupStarted, Job: job, Group: 2, Step: "Compute the delay"},
		{Seq: 3, Time: t0.Add(-18 * time.Minute), Type: trace.TypeModelCall, Job: job, Group: 2, Model: "gpt-4o-mini", TokensIn: 3000, TokensOut: 700, USD: 0.0071, Outcome: "ok"},
		{Seq: 4, Time: t0.Add(-17 * time.Minute), Type: trace.TypeCheckRun, Job: job, Group: 2, Step: "verify", Command: "go test ./internal/webhook", ExitCode: 1, Outcome: "failed"},
		{Seq: 5, Time: t0.Add(-16 * time.Minute), Type: trace.TypePhase, Phase: phase, Job: job, Group: 2, Step: "group 2", Reason: reason, Outcome: class},
	}
	_, text := trace.Bound(events, trace.RecordLimit)
	ch.SetTrace([]byte(text))
	return ch
}

// spendLines renders the spend lines a Job prints, one per call, through
// the trace recorder the runner uses.
func spendLines(t *testing.T, job, group int, calls []record.Spend, firstCall int) []string {
	t.Helper()
	rec, err := trace.NewRecorder(&bytes.Buffer{}, redact.New(redact.Config{}), func() time.Time { return t0 }, job)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i, c := range calls {
		out = append(out, rec.SpendLine(trace.SpendEntry{Job: job, Group: group, Call: firstCall + i,
			Model: "gpt-4o-mini", TokensIn: c.TokensIn, TokensOut: c.TokensOut, USD: c.USD}))
	}
	return out
}

// dispatchInputs returns the inputs of every accepted dispatch.
func (e *env) dispatchInputs() []map[string]any {
	var out []map[string]any
	for _, d := range e.fake.Dispatches() {
		out = append(out, d.Inputs)
	}
	return out
}

func githubfakeRun() githubfake.Run {
	return githubfake.Run{WorkflowFile: workflow, HeadBranch: ref, Conclusion: "failure"}
}

// recordCommentInput is the dispatch input that hands issue n's record
// comment to the continuation.
func (e *env) recordCommentInput(t *testing.T, n int) string {
	t.Helper()
	return strconv.FormatInt(e.recordComment(t, n).ID, 10)
}
