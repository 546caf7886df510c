package console

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/redact"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

const token = "ghs_consoleTestToken0123456789abcdef"

var t0 = time.Date(2099, 3, 1, 12, 0, 0, 0, time.UTC)

// item is one issue on the fake GitHub with roadmap's record comment, the
// way the Jobs leave it: the test changes the record and the runs as the
// Jobs would, and the console reads them over HTTP with the real client.
type item struct {
	t     *testing.T
	f     *githubfake.Fake
	gh    *github.Client
	issue int
	cid   int64
	rec   *record.Record
	doing string
}

func newItem(t *testing.T) *item {
	t.Helper()
	f := githubfake.New(githubfake.Options{Owner: "acme", Repo: "widgets", Token: token, Clock: githubfake.NewManualClock(t0)})
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	gh, err := github.New(github.Options{BaseURL: srv.URL, Token: token, Owner: "acme", Repo: "widgets",
		Masker: redact.New(redact.Config{Secrets: []string{token}})})
	if err != nil {
		t.Fatal(err)
	}
	it := &item{t: t, f: f, gh: gh, rec: mustParse(t, "")}
	it.issue = f.CreateIssue(githubfake.Issue{Title: "add a flag"})
	body := it.render()
	if it.cid, err = f.AddComment(it.issue, github.DefaultIdentity, body); err != nil {
		t.Fatal(err)
	}
	return it
}

func mustParse(t *testing.T, s string) *record.Record {
	t.Helper()
	r, err := record.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (it *item) render() string {
	it.t.Helper()
	it.rec.SetView(record.View{Doing: it.doing})
	body, err := record.RenderComment(it.rec)
	if err != nil {
		it.t.Fatal(err)
	}
	return body
}

// write applies a Job's mark to the record comment, as one write.
func (it *item) write(doing string, edit func(ch *record.Changes)) {
	it.t.Helper()
	var ch record.Changes
	edit(&ch)
	if err := it.rec.Apply(ch); err != nil {
		it.t.Fatal(err)
	}
	it.doing = doing
	body := it.render()
	if err := it.f.EditComment(it.cid, func(string) string { return body }); err != nil {
		it.t.Fatal(err)
	}
}

// run starts a workflow run with one job named name, in progress.
func (it *item) run(name string) (runID, jobID int64) {
	it.t.Helper()
	runID = it.f.AddRun(githubfake.Run{WorkflowFile: "roadmap-" + name + ".yml", Status: "in_progress"})
	jobID, err := it.f.AddJob(runID, githubfake.Job{Name: name, Status: "in_progress"})
	if err != nil {
		it.t.Fatal(err)
	}
	return runID, jobID
}

func (it *item) finish(runID, jobID int64) {
	it.t.Helper()
	if err := it.f.SetJobStatus(jobID, "completed", "success"); err != nil {
		it.t.Fatal(err)
	}
	if err := it.f.FinishRun(runID, "success"); err != nil {
		it.t.Fatal(err)
	}
}

func spendLine(job, group, call int, usd float64) string {
	b := fmt.Sprintf(`{"job":%d,"group":%d,"call":%d,"model":"gpt-4o-mini","tokens_in":100,"tokens_out":10,"usd":%g}`, job, group, call, usd)
	return "2099-03-01T12:00:01.0000000Z " + trace.SpendPrefix + b + "\n"
}

// traceCopy is the record copy a Job writes with its last mark.
func traceCopy(job int, events ...trace.Event) []byte {
	for i := range events {
		events[i].Seq, events[i].Job = i+1, job
		events[i].Time = t0.Add(time.Duration(job*60+i) * time.Second)
	}
	_, text := trace.Bound(events, trace.RecordLimit)
	return []byte(text)
}

// stepClock runs the test's next step while the console waits between
// polls, so "shown within one poll interval" is "shown by the next poll".
type stepClock struct {
	now   time.Time
	steps []func()
	polls int
}

func (c *stepClock) Now() time.Time { return c.now }
func (c *stepClock) Sleep(ctx context.Context, d time.Duration) error {
	c.now = c.now.Add(d)
	if c.polls < len(c.steps) {
		c.steps[c.polls]()
	}
	c.polls++
	return ctx.Err()
}

// seen is what a person would tell events apart by.
type seen struct {
	Phase  string
	Job    int
	Type   string
	Step   string
	Detail string
}

func briefs(evs []Event) []string {
	var out []string
	for _, e := range evs {
		if e.Type == TypeStatus {
			continue
		}
		s := fmt.Sprintf("%s %d %s", e.Phase, e.Job, e.Type)
		if e.Step != "" {
			s += " " + e.Step
		}
		if e.Outcome != "" {
			s += " " + e.Outcome
		}
		out = append(out, s)
	}
	return out
}

// TestConsoleFollow follows an item through a stage Job and two implement
// Jobs, the second a continuation of the first. Each thing a Job writes
// (a mark, its result with its trace copy, its run's status) between two
// polls is shown by the next poll, exactly once, in order; the follow
// stops by itself when the last Job is ready and its run has completed.
func TestConsoleFollow(t *testing.T) {
	it := newItem(t)
	stageRun, stageJob := it.run("stage")
	it.f.AppendJobLog(stageJob, "roadmap: plan round 1\n"+spendLine(1, 0, 1, 0.05))
	it.finish(stageRun, stageJob)
	it.write("the plan is staged", func(ch *record.Changes) {
		ch.SetStageState("staged")
		ch.SetStageJobs([]record.JobOutcome{{Job: 1, RunID: stageRun, Result: record.ResultStaged,
			Spend: record.Spend{TokensIn: 100, TokensOut: 10, USD: 0.05, ModelCalls: 1}}})
	})
	// A person approved the plan and implement's Job 1 is running.
	run1, job1 := it.run("implement")
	var run2, job2 int64
	it.write("implementing group 1 of 3: the flag", func(ch *record.Changes) {
		ch.SetJobs([]record.JobOutcome{{Job: 1, RunID: run1, Spend: record.Spend{USD: 0.01, ModelCalls: 1}}})
	})
	line1 := record.JobOutcome{Job: 1, RunID: run1, Group: 1, Spend: record.Spend{TokensIn: 300, TokensOut: 30, USD: 0.10, ModelCalls: 3}}

	steps := []func(){
		// 1: Job 1 marks group 1; its runner prints spend lines GitHub does
		// not serve yet.
		func() {
			it.f.AppendJobLog(job1, spendLine(1, 1, 1, 0.05))
			it.write("implementing group 2 of 3: the flag", func(ch *record.Changes) { ch.SetJobs([]record.JobOutcome{line1}) })
		},
		// 2: Job 1 yields with its last mark: result and trace copy.
		func() {
			l := line1
			l.Result, l.Failure, l.Group = record.ResultYielded, "deadline", 2
			l.Spend.USD, l.Spend.ModelCalls = 0.20, 5
			line1 = l
			it.write("yielded after group 2 of 3", func(ch *record.Changes) {
				ch.SetJobs([]record.JobOutcome{l})
				ch.SetResult(record.ResultYielded)
				ch.SetTrace(traceCopy(1,
					trace.Event{Type: trace.TypePhase, Phase: trace.PhaseJobStarted},
					trace.Event{Type: trace.TypeModelCall, Group: 1, Model: "gpt-4o-mini", TokensIn: 100, TokensOut: 10, USD: 0.05, Outcome: "ok"},
					trace.Event{Type: trace.TypePhase, Phase: trace.PhaseGroupPassed, Group: 2},
					trace.Event{Type: trace.TypePhase, Phase: trace.PhaseYielded, Reason: "deadline"}))
			})
		},
		// 3: Job 1's run completes; report dispatches the continuation.
		func() {
			it.finish(run1, job1)
			run2, job2 = it.run("implement")
		},
		// 4: the continuation (Job 2) marks group 3.
		func() {
			it.write("implementing group 3 of 3: the docs", func(ch *record.Changes) {
				ch.SetJobs([]record.JobOutcome{line1, {Job: 2, RunID: run2, Group: 2, Spend: record.Spend{USD: 0.02, ModelCalls: 1}}})
			})
		},
		// 5: Job 2 is ready.
		func() {
			it.write("ready for review", func(ch *record.Changes) {
				ch.SetJobs([]record.JobOutcome{line1, {Job: 2, RunID: run2, Group: 3, Result: record.ResultReady, Spend: record.Spend{USD: 0.09, ModelCalls: 3}}})
				ch.SetResult(record.ResultReady)
				ch.SetTrace(traceCopy(2,
					trace.Event{Type: trace.TypePhase, Phase: trace.PhaseGroupPassed, Group: 3},
					trace.Event{Type: trace.TypePhase, Phase: trace.PhaseReady}))
			})
		},
		// 6: Job 2's run completes after its last mark.
		func() { it.finish(run2, job2) },
	}
	clk := &stepClock{now: t0, steps: steps}
	c := New(Options{Issue: it.issue, Source: it.gh, Mask: redact.New(redact.Config{Secrets: []string{token}}), Clock: clk, Interval: time.Second})
	var polls [][]Event
	if err := c.Follow(context.Background(), func(evs []Event) error {
		polls = append(polls, evs)
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	want := [][]string{
		{"stage 1 job_started", "stage 1 model_call gpt-4o-mini", "stage 1 job_ended staged", "stage 1 run_status completed success",
			"implement 1 job_started", "implement 1 mark", "implement 1 run_status in_progress"},
		{"implement 1 mark"},
		{"implement 1 phase job_started", "implement 1 model_call ok", "implement 1 phase group_passed", "implement 1 phase yielded", "implement 1 job_ended yielded"},
		{"implement 1 run_status completed success"},
		{"implement 2 job_started", "implement 2 mark", "implement 2 run_status in_progress"},
		{"implement 2 phase group_passed", "implement 2 phase ready", "implement 2 job_ended ready"},
		{"implement 2 run_status completed success"},
	}
	var got [][]string
	for _, p := range polls {
		got = append(got, briefs(p))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events by poll (-want +got):\n%s", diff)
	}

	// Each event once, numbered 1, 2, 3 … across polls.
	next, once := 1, map[seen]bool{}
	for _, p := range polls {
		for _, e := range p {
			if e.Seq != next {
				t.Errorf("event %q has seq %d, want %d", e.Detail, e.Seq, next)
			}
			next = e.Seq + 1
			k := seen{e.Phase, e.Job, e.Type, e.Step, e.Detail}
			if once[k] && e.Type != TypeStatus {
				t.Errorf("shown twice: %+v", k)
			}
			once[k] = true
		}
	}
	var status []string
	for _, p := range polls {
		for _, e := range p {
			if e.Type == TypeStatus {
				status = append(status, e.Detail)
			}
		}
	}
	if n := len(status); n == 0 || !strings.Contains(status[n-1], "implement Job 2 (run ") || !strings.Contains(status[n-1], "· ready ·") {
		t.Errorf("status lines: %q; want the last to say implement Job 2 is ready", status)
	}
	if !strings.Contains(strings.Join(status, "\n"), "group 2 of 3") {
		t.Errorf("status lines: %q; none says group 2 of 3", status)
	}
	if len(polls) != len(steps)+1 {
		t.Errorf("%d polls, want %d: the follow stops at the first poll that sees the ready Job's run completed", len(polls), len(steps)+1)
	}
}

// TestConsoleIdlePollFree: a poll that finds nothing new costs no counted
// request — the record comment and the running Job's run are read with
// If-None-Match and answered 304 — and shows nothing; a poll after a
// change costs the one read of what changed.
func TestConsoleIdlePollFree(t *testing.T) {
	it := newItem(t)
	run1, job1 := it.run("implement")
	it.write("implementing group 1 of 2: a", func(ch *record.Changes) {
		ch.SetJobs([]record.JobOutcome{{Job: 1, RunID: run1, Spend: record.Spend{USD: 0.01, ModelCalls: 1}}})
	})
	c := New(Options{Issue: it.issue, Source: it.gh, Clock: &stepClock{now: t0}})
	ctx := context.Background()
	if evs, _, err := c.Poll(ctx); err != nil || len(evs) == 0 {
		t.Fatalf("first poll: %v, %d events", err, len(evs))
	}
	for i := 0; i < 3; i++ {
		// The runner keeps printing; GitHub serves none of it while the job runs.
		it.f.AppendJobLog(job1, spendLine(1, 1, i+2, 0.01))
		before := it.gh.Requests()
		evs, done, err := c.Poll(ctx)
		spent := it.gh.Requests().Sub(before)
		if err != nil || done {
			t.Fatalf("idle poll %d: %v done=%v", i, err, done)
		}
		if len(evs) != 0 {
			t.Errorf("idle poll %d showed %v", i, briefs(evs))
		}
		if spent.Counted() != 0 || spent.NotModified != 2 {
			t.Errorf("idle poll %d: %d counted, %d answered 304 (%v); want 0 counted, 2 free", i, spent.Counted(), spent.NotModified, spent.ByEndpoint)
		}
	}
	it.write("implementing group 2 of 2: b", func(ch *record.Changes) {
		ch.SetJobs([]record.JobOutcome{{Job: 1, RunID: run1, Group: 1, Spend: record.Spend{USD: 0.02, ModelCalls: 2}}})
	})
	before := it.gh.Requests()
	evs, _, err := c.Poll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if spent := it.gh.Requests().Sub(before); spent.Counted() != 1 {
		t.Errorf("poll after a mark: %d counted, want 1 (the comments)", spent.Counted())
	}
	if got := briefs(evs); !cmp.Equal(got, []string{"implement 1 mark"}) {
		t.Errorf("poll after a mark: %v", got)
	}
}

// TestConsoleHistory reads a finished item in one poll: the earlier Job
// from its log's spend lines (the record's trace copy is the last Job's),
// the last from the trace copy; text from the record is one-lined and the
// token never shows.
func TestConsoleHistory(t *testing.T) {
	it := newItem(t)
	run1, job1 := it.run("implement")
	it.f.AppendJobLog(job1, spendLine(1, 1, 1, 0.03)+spendLine(1, 1, 2, 0.04)+spendLine(1, 1, 2, 0.04))
	it.finish(run1, job1)
	run2, job2 := it.run("implement")
	it.f.AppendJobLog(job2, spendLine(2, 2, 1, 0.01))
	it.finish(run2, job2)
	it.write("stopped", func(ch *record.Changes) {
		ch.SetJobs([]record.JobOutcome{
			{Job: 1, RunID: run1, Result: record.ResultYielded, Failure: "deadline", Group: 1, Spend: record.Spend{USD: 0.07, ModelCalls: 2}},
			{Job: 2, RunID: run2, Result: record.ResultStopped, Failure: "tests_failed", Group: 1, Spend: record.Spend{USD: 0.08, ModelCalls: 3}},
		})
		ch.SetResult(record.ResultStopped)
		ch.SetTrace(traceCopy(2,
			trace.Event{Type: trace.TypeCheckRun, Group: 2, Step: "test\x1b[31m\n::error::pwned " + token, Command: "go test", ExitCode: 1},
			trace.Event{Type: trace.TypePhase, Phase: trace.PhaseStopped, Reason: "tests failed"}))
	})
	c := New(Options{Issue: it.issue, Source: it.gh, Mask: redact.New(redact.Config{Secrets: []string{token}}),
		Clock: &stepClock{now: t0}, Budget: 5})
	evs, done, err := c.Poll(context.Background())
	if err != nil || !done {
		t.Fatalf("poll: %v done=%v", err, done)
	}
	want := []string{
		"implement 1 job_started", "implement 1 model_call gpt-4o-mini", "implement 1 model_call gpt-4o-mini",
		"implement 1 job_ended yielded", "implement 1 run_status completed success",
		"implement 2 job_started", `implement 2 check_run test\x1b[31m\x0a::error::pwned [masked]`, "implement 2 phase stopped",
		"implement 2 job_ended stopped", "implement 2 run_status completed success",
	}
	if diff := cmp.Diff(want, briefs(evs)); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
	var text strings.Builder
	if err := WriteText(&text, evs); err != nil {
		t.Fatal(err)
	}
	out := text.String()
	if strings.Contains(out, token) || strings.Contains(out, "\x1b") || strings.Contains(out, "\n::") {
		t.Errorf("unsafe text reached the output:\n%s", out)
	}
	if st := evs[len(evs)-1]; st.Type != TypeStatus || !strings.Contains(st.Detail, "stopped (tests_failed)") || !strings.Contains(st.Detail, "$0.15 of $5.00 item budget") {
		t.Errorf("status: %q", st.Detail)
	}
}

// TestConsoleStageTrace: a stage-only item's record holds its Job's trace
// copy under stage.trace, and the console shows those events as the stage
// Job's, where it shows an implement Job's copy, instead of the spend
// lines of its log.
func TestConsoleStageTrace(t *testing.T) {
	it := newItem(t)
	run1, job1 := it.run("stage")
	it.f.AppendJobLog(job1, spendLine(1, 0, 1, 0.02))
	it.finish(run1, job1)
	it.write("staged", func(ch *record.Changes) {
		ch.SetStageJobs([]record.JobOutcome{{Job: 1, RunID: run1, Result: "staged", Spend: record.Spend{USD: 0.02, ModelCalls: 1}}})
		ch.SetStageState("staged")
		ch.SetStageTrace(traceCopy(1,
			trace.Event{Type: trace.TypePhase, Phase: trace.PhaseAgent, Step: "round 1: planner", Duration: time.Second},
			trace.Event{Type: trace.TypePhase, Phase: trace.PhaseStaged, Step: "staged"}))
	})
	c := New(Options{Issue: it.issue, Source: it.gh, Clock: &stepClock{now: t0}})
	evs, _, err := c.Poll(context.Background())
	if err != nil {
		t.Fatalf("poll: %v", err)
	}
	want := []string{
		"stage 1 job_started", "stage 1 phase agent", "stage 1 phase staged",
		"stage 1 job_ended staged", "stage 1 run_status completed success",
	}
	if diff := cmp.Diff(want, briefs(evs)); diff != "" {
		t.Errorf("stage history (-want +got):\n%s", diff)
	}
	for _, e := range evs {
		if e.Type == "phase" && e.Source != "trace" {
			t.Errorf("event %s %s read from %q, want the record's trace copy", e.Type, e.Step, e.Source)
		}
	}
}
