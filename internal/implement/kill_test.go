package implement_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/checks"
	"github.com/roadmap-dev/roadmap/internal/git"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/implement"
	"github.com/roadmap-dev/roadmap/internal/kernel"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/policy"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/redact"
	"github.com/roadmap-dev/roadmap/internal/report"
	"github.com/roadmap-dev/roadmap/internal/sandbox"
	"github.com/roadmap-dev/roadmap/internal/trace"
	theworld "github.com/roadmap-dev/roadmap/internal/world"
)

// childConfig is what a Job run in a subprocess (so it can be SIGKILLed) needs.
type childConfig struct {
	FakeURL   string
	Workspace string
	Fixtures  string
	Issue     int
	Attempt   int
	HangOn    string // the first request whose first user message holds this…
	HangTurn  int    // …at this turn (assistant messages so far) hangs forever
	Ready     string // a file the child creates when it hangs
	// ModelURL, when set, is the replay model server the Job asks (over
	// the OpenAI-compatible API), instead of the fixtures in process.
	ModelURL string
	// HangAnswered: the Job hangs right after the model's answer to the
	// hanging request came back, before the Job has recorded it.
	HangAnswered bool
	// HangPush, when set, hangs the Job before its HangPush-th git push:
	// no model call is in flight.
	HangPush int
	// MarkEvery writes every group's mark at once (the mark interval at
	// its least) instead of letting it wait for the Job's next write.
	MarkEvery bool
}

// modelPrice is what the replay model costs in the child, per million
// tokens in and out, on the tier and in the provider alike.
var modelPrice = llm.Price{Input: 1, Output: 10}

// hangAnswered passes calls on; once hang says so for a request, it hangs
// after the answer came back: the model server served it, the Job never
// saw it.
type hangAnswered struct {
	agent.Model
	hang func(agent.ModelRequest) bool
}

func (h hangAnswered) Complete(ctx context.Context, req agent.ModelRequest) (agent.ModelResponse, error) {
	resp, err := h.Model.Complete(ctx, req)
	if err == nil && h.hang(req) {
		select {} // until SIGKILL
	}
	return resp, err
}

func TestMain(m *testing.M) {
	if cfg := os.Getenv("ROADMAP_IMPLEMENT_CHILD"); cfg != "" {
		os.Exit(childJob(cfg))
	}
	os.Exit(m.Run())
}

// childJob runs one Job as a separate process, its log on stdout.
func childJob(cfgJSON string) int {
	var c childConfig
	if err := json.Unmarshal([]byte(cfgJSON), &c); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	ctx := context.Background()
	gitRepo, err := git.Open(ctx, c.Workspace, gitEnv())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	masker := redact.New(redact.Config{Secrets: []string{token}})
	gh, err := github.New(github.Options{BaseURL: c.FakeURL + "/", Token: token, Owner: owner, Repo: repo,
		Masker: masker, HTTPClient: &http.Client{Timeout: 10 * time.Second}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	bound, err := sandbox.Open(ctx, sandbox.Options{Mode: sandbox.ModeNone, Workspace: c.Workspace, Environ: gitEnv()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	defer bound.Close()
	sb := policy.NewSandbox(bound, policy.Default(), gitEnv())
	mc := llm.Config{Provider: llm.ProviderReplay, Model: "replay-model", Fixtures: c.Fixtures}
	if c.ModelURL != "" {
		mc = llm.Config{Provider: llm.ProviderOpenAICompatible, Model: "replay-model", BaseURL: c.ModelURL,
			Prices: map[string]llm.Price{"replay-model": modelPrice}}
	}
	model, err := llm.New(mc)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	hangs := func(req agent.ModelRequest) bool {
		turn := 0
		for _, m := range req.Messages {
			if m.Role == agent.RoleAssistant {
				turn++
			}
		}
		if c.HangOn == "" || !strings.Contains(firstUser(req), c.HangOn) || turn != c.HangTurn {
			return false
		}
		os.WriteFile(c.Ready, []byte("hanging"), 0o644)
		return true
	}
	var inner agent.Model = model
	if c.HangAnswered {
		inner = hangAnswered{Model: model, hang: hangs}
	}
	spy := &spyModel{Model: inner, Before: func(n int, req agent.ModelRequest) {
		if !c.HangAnswered && hangs(req) {
			select {} // until SIGKILL
		}
	}}
	pushes := 0
	gitRepo.Hook = func(args []string, done bool, err error) {
		if done || len(args) == 0 || args[0] != "push" || git.NotePush(args) || c.HangPush == 0 {
			return
		}
		if pushes++; pushes == c.HangPush {
			os.WriteFile(c.Ready, []byte("hanging"), 0o644)
			select {} // until SIGKILL
		}
	}
	tr, _ := trace.NewRecorder(os.Stderr, masker, time.Now, c.Attempt)
	_, err = implement.Run(ctx, implement.Options{
		Options: kernel.Options{
			Issue:        c.Issue,
			RunID:        500,
			GitHub:       gh,
			Repo:         gitRepo,
			Sandbox:      toolSandbox{sb},
			Log:          os.Stdout,
			Trace:        tr,
			Mask:         masker.Mask,
			MarkInterval: markInterval(c.MarkEvery),
		},
		Attempt:      c.Attempt,
		Models:       []agent.Tier{{Name: "replay-model", Model: spy, USDPerMTokIn: modelPrice.Input, USDPerMTokOut: modelPrice.Output}},
		CheckRunner:  checks.SandboxRunner(sb),
		Split:        policy.Split,
		RepairRounds: 1,
		PollInterval: time.Second,
		WatchTimeout: time.Second,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	return 0
}

// markInterval is the child's mark interval: the least there is when every
// mark is written at once, else the default.
func markInterval(every bool) time.Duration {
	if every {
		return time.Nanosecond
	}
	return 0
}

func firstUser(req agent.ModelRequest) string {
	for _, m := range req.Messages {
		if m.Role == agent.RoleUser {
			return m.Content
		}
	}
	return ""
}

// costly makes every call of the conversations cost 10,000 tokens in.
func costly(convs []*llm.Conversation) []*llm.Conversation {
	for _, c := range convs {
		for i := range c.Turns {
			c.Turns[i].Response.Usage.TokensIn = 10_000
		}
	}
	return convs
}

func TestSpendSurvivesKill(t *testing.T) {
	w := newWorld(t, 3, "")
	convs := costly(w.conversations())
	// Job 1 runs in a subprocess and is SIGKILLed in group 2, after its first
	// model call there.
	killed := w.newJob(convs)
	fixtures := filepath.Join(w.dir, "fixtures-1")
	ready := filepath.Join(w.dir, "hanging")
	// Every group's mark is written at once here: the record holds group
	// 1's spend when the kill lands. (With the default interval the mark
	// waits, and report brings the killed Job's spend back from its log:
	// TestRequestsIndependentOfGroups in internal/faults.)
	cfg, _ := json.Marshal(childConfig{FakeURL: w.base.GitHubURL(), Workspace: killed.ws, Fixtures: fixtures, Issue: w.issue, Attempt: 1,
		HangOn: "task group 2 of", HangTurn: 1, Ready: ready, MarkEvery: true})
	logPath := filepath.Join(w.dir, "job-1.log")
	logFile, _ := os.Create(logPath)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "ROADMAP_IMPLEMENT_CHILD="+string(cfg))
	cmd.Stdout = logFile
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the child Job never reached group 2\nstderr:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	logFile.Close()

	// What the killed Job left: the group 1 mark with its spend, and one
	// spend line per model call in its log (group 2's first call included).
	r := w.record()
	marked, _ := r.Spend()
	if marked.TokensIn != 20_000 || marked.ModelCalls != 2 {
		t.Fatalf("recorded spend after the kill = %+v, want group 1's 2 calls, 20,000 tokens in", marked)
	}
	if res, ok := r.Result(); ok {
		t.Fatalf("a killed Job wrote a result %q", res)
	}
	f, _ := os.Open(logPath)
	lines, err := trace.ParseSpendLines(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if got := lines.Total(); got.ModelCalls != 3 || got.TokensIn != 30_000 {
		t.Errorf("spend lines in the killed Job's log = %+v, want 3 calls, 30,000 tokens in", got)
	}

	// The continuation starts from the recorded sum, so the item budget
	// (35,000 tokens in) stops it before group 3: a fresh budget would not.
	next := w.newJob(convs)
	next.opts.Attempt = 2
	next.opts.ItemBudget = agent.Budget{TokensIn: 35_000}
	res := next.run()
	if res.Result != record.ResultStopped || res.Failure != "budget_exhausted" {
		t.Fatalf("continuation ended %s/%s (%s), want stopped/budget_exhausted\n%s", res.Result, res.Failure, res.Reason, next.log.String())
	}
	if res.Group != 2 {
		t.Errorf("last passed group = %d, want 2", res.Group)
	}
	if res.Spend.TokensIn != 40_000 || res.Spend.ModelCalls != 4 {
		t.Errorf("item spend = %+v, want the sum of both Jobs' marked calls: 40,000 tokens in, 4 calls", res.Spend)
	}
	total, _ := w.record().Spend()
	if total != res.Spend {
		t.Errorf("record spend %+v, result spend %+v: the stop must write the sum", total, res.Spend)
	}
	jobs, _ := w.record().Jobs()
	if len(jobs) != 2 || jobs[0].Spend.TokensIn != 20_000 || jobs[1].Spend.TokensIn != 20_000 {
		t.Errorf("implement.jobs = %+v, want two Jobs of 20,000 tokens in each", jobs)
	}
}

// toolSandbox gives the policy sandbox the agent's Run signature, for the
// runner this test wires by hand.
type toolSandbox struct{ *policy.Sandbox }

func (s toolSandbox) Run(ctx context.Context, argv []string) (agent.RunResult, error) {
	r, err := s.Sandbox.Run(ctx, argv)
	return agent.RunResult(r), err
}

// killChild runs Job 1 of w in a subprocess with cfg, waits until it says it
// hangs, SIGKILLs it and returns its log as GitHub would keep it: what the
// Job printed, then the runner's own lines after the process died.
func killChild(t *testing.T, w *world, cfg childConfig) string {
	t.Helper()
	killed := w.newJob(w.conversations()) // its workspace, a new runner's clone
	cfg.FakeURL, cfg.Workspace, cfg.Issue, cfg.Attempt = w.base.GitHubURL(), killed.ws, w.issue, 1
	cfg.Ready = filepath.Join(w.dir, "hanging")
	data, _ := json.Marshal(cfg)
	logPath := filepath.Join(w.dir, "job-1.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "ROADMAP_IMPLEMENT_CHILD="+string(data))
	cmd.Stdout = logFile
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(cfg.Ready); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the child Job never reached the point to kill\nstderr:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	logFile.Close()
	printed, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	return string(printed) + "##[error]Process completed with exit code 137.\nPost job cleanup.\nCleaning up orphan processes\n"
}

// reportKilled runs report on the killed Job 1 of w, whose log is log, as
// the report job after it would.
func reportKilled(t *testing.T, w *world, log string) report.Outcome {
	t.Helper()
	w.fake.AddWorkflow("roadmap.yml")
	runID := w.fake.AddRun(githubfake.Run{WorkflowFile: "roadmap.yml", HeadBranch: "main", Conclusion: "failure"})
	if _, err := w.fake.AddJob(runID, githubfake.Job{Name: "implement", Conclusion: "failure", Log: log}); err != nil {
		t.Fatal(err)
	}
	gh, err := w.base.GitHub(nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := report.Run(context.Background(), report.Options{Issue: w.issue, GitHub: gh, JobResult: "failure", RunID: runID,
		Workflow: "roadmap.yml", Ref: "main", Clock: w.clock, Mask: w.base.Masker.Mask})
	if err != nil {
		t.Fatalf("report: %v", err)
	}
	return out
}

// TestSpendBookedBeforeCall: every model call is booked in the Job's log
// before its request goes out and settled when its answer is recorded. A Job
// SIGKILLed after the model server served an answer and before the Job
// recorded it leaves the booking, and report counts it: the record's spend
// is at least what the server served, flagged as estimated in the record and
// its comment. Killed where no call is in flight, the record equals it.
func TestSpendBookedBeforeCall(t *testing.T) {
	served := func(w *world) llm.Stats { return w.base.Replay.Stats() }
	modelWorld := func(t *testing.T) *world {
		convs, err := theworld.SampleConversations(2)
		if err != nil {
			t.Fatal(err)
		}
		return newWorldWith(t, 2, "", func(o *theworld.Options) { o.Replay = llm.NewReplay(convs) })
	}

	t.Run("killed between the served answer and its spend line", func(t *testing.T) {
		w := modelWorld(t)
		log := killChild(t, w, childConfig{ModelURL: w.base.ModelURL(), HangOn: "task group 2 of", HangTurn: 0, HangAnswered: true})
		sv := served(w)
		if sv.Calls != 3 {
			t.Fatalf("the model server served %d calls before the kill, want group 1's 2 and group 2's first", sv.Calls)
		}
		lines, err := trace.ParseSpendLines(strings.NewReader(log))
		if err != nil {
			t.Fatal(err)
		}
		if len(lines.Booked) != 3 || len(lines.Entries) != 2 {
			t.Fatalf("the log books %d calls and settles %d; want 3 booked (each before its request) and 2 settled", len(lines.Booked), len(lines.Entries))
		}
		booking := lines.Booked[2]
		if booking.Call != 3 || booking.TokensOut != int64(agent.DefaultMaxOutput) || booking.TokensIn < 1000 {
			t.Errorf("the booking of the killed call = %+v; want call 3 at its estimate (its input, %d out)", booking, agent.DefaultMaxOutput)
		}

		out := reportKilled(t, w, log)
		if out.SpendLost || out.SpendEstimated.ModelCalls != 1 || out.Action != report.ActionContinue {
			t.Errorf("report: spend_lost %v, %d estimated, action %s; want false, 1, continue", out.SpendLost, out.SpendEstimated.ModelCalls, out.Action)
		}
		rec := w.record()
		spend, _ := rec.Spend()
		if spend.ModelCalls != sv.Calls || spend.TokensIn < sv.TokensIn || spend.TokensOut < sv.TokensOut {
			t.Errorf("implement.spend = %+v; the model server served %d calls, %d tokens in, %d out: the record must hold at least that",
				spend, sv.Calls, sv.TokensIn, sv.TokensOut)
		}
		wantIn := 2*1000 + booking.TokensIn
		if spend.TokensIn != wantIn || spend.TokensOut != 2*100+booking.TokensOut {
			t.Errorf("implement.spend = %+v; want the two settled calls and the booking: %d in, %d out", spend, wantIn, 2*100+booking.TokensOut)
		}
		if rec.SpendEstimated() != 1 {
			t.Errorf("implement.spend_estimated = %d, want 1", rec.SpendEstimated())
		}
		if c, _ := w.recordComment(); !strings.Contains(c.Body, "3 model calls, 1 estimated") {
			t.Errorf("the record comment does not flag the estimate:\n%s", c.Body)
		}
	})

	t.Run("killed with no call in flight", func(t *testing.T) {
		w := modelWorld(t)
		// Before group 2's push: both of its calls are settled.
		log := killChild(t, w, childConfig{ModelURL: w.base.ModelURL(), HangPush: 2})
		sv := served(w)
		out := reportKilled(t, w, log)
		spend, _ := w.record().Spend()
		if spend.ModelCalls != sv.Calls || spend.TokensIn != sv.TokensIn || spend.TokensOut != sv.TokensOut || out.SpendEstimated.ModelCalls != 0 {
			t.Errorf("implement.spend = %+v (%d estimated); want exactly what the server served: %d calls, %d in, %d out",
				spend, out.SpendEstimated.ModelCalls, sv.Calls, sv.TokensIn, sv.TokensOut)
		}
		if sv.Calls != 4 {
			t.Errorf("the model server served %d calls, want 4 (two groups of two)", sv.Calls)
		}
	})
}

func TestPublishedSHAReconcile(t *testing.T) {
	w := newWorld(t, 2, "")
	// Job 1 committed group 1 and pushed it, and was killed before its mark:
	// the remote has the commit, the record does not.
	killed := w.newJob(w.conversations())
	branch := "roadmap/" + fmt.Sprint(w.issue) + "-add-greetings"
	run(t, killed.ws, "git", "checkout", "-q", "-b", branch)
	os.WriteFile(filepath.Join(killed.ws, "greeting-1.txt"), []byte("hello 1\n"), 0o644)
	tasks, _ := os.ReadFile(filepath.Join(killed.ws, planDir, "tasks.md"))
	os.WriteFile(filepath.Join(killed.ws, planDir, "tasks.md"), []byte(strings.Replace(string(tasks), "- [ ] 1.1", "- [x] 1.1", 1)), 0o644)
	run(t, killed.ws, "git", "add", "-A")
	run(t, killed.ws, "git", "commit", "-q", "-m", "roadmap: 1. Greeting 1\n\nRoadmap-Group: 1")
	run(t, killed.ws, "git", "push", "-q", "origin", branch)
	pushed := run(t, killed.ws, "git", "rev-parse", "HEAD")
	// Count pushes from here on with a hook on the remote.
	hook := filepath.Join(w.remote, "hooks", "post-receive")
	// Branch pushes only: the item's lease is pushed by every Job.
	os.WriteFile(hook, []byte("#!/bin/sh\ngrep -q ' refs/heads/' && echo push >> \""+filepath.Join(w.dir, "pushes")+"\"\n"), 0o755)

	next := w.newJob(w.conversations())
	next.opts.WatchTimeout = time.Minute
	next.model.Before = func(n int, req agent.ModelRequest) {
		if strings.Contains(req.Messages[1].Content, "task group 1 of") {
			t.Errorf("group 1 was worked on again")
		}
	}
	res := next.run()
	if res.Result == record.ResultStopped {
		t.Fatalf("stopped: %s %s\n%s", res.Failure, res.Reason, next.log.String())
	}
	// The first write holds the reconciled mark for the push that happened
	// (it rides on the Job's first write, as a group's mark does): group 1,
	// at the commit the killed Job pushed.
	p := w.patches()
	if len(p) == 0 || !strings.Contains(p[0], "implement.group: 2") {
		t.Errorf("the first write does not hold the reconciled group mark with group 2's:\n%v", p)
	}
	if out, err := exec.Command("git", "-C", w.remote, "merge-base", "--is-ancestor", pushed, branch).CombinedOutput(); err != nil {
		t.Errorf("the killed Job's push %s is not under the branch's head: %v %s", pushed, err, out)
	}
	pushes, _ := os.ReadFile(filepath.Join(w.dir, "pushes"))
	if n := strings.Count(string(pushes), "push"); n != 2 {
		t.Errorf("%d pushes after the kill, want 2 (group 2, then the OpenSpec archive; group 1 is never pushed again)", n)
	}
	// Group 1's verify command runs once, in the scoped checks at the new
	// head; a redone group 1 would run it in its own repair loop too.
	var g1 int
	for _, c := range next.checks.cmds {
		if strings.Contains(c, "greeting-1.txt") {
			g1++
		}
	}
	if g1 != 1 {
		t.Errorf("group 1's verify command ran %d times, want 1 (the scoped checks): %v", g1, next.checks.cmds)
	}
}

// leaseOnRemote is the item's lease ref on the bare remote ("" when none).
func (w *world) leaseOnRemote() string {
	out, err := theworld.Git(gitEnv(), w.remote, "for-each-ref", "--format=%(objectname)", kernel.LeaseRef(w.issue))
	if err != nil {
		w.t.Fatal(err)
	}
	return strings.TrimSpace(out)
}

// runReads counts the requests that read a workflow run.
func (w *world) runReads() int {
	n := 0
	for _, r := range w.fake.Requests() {
		if r.Endpoint == "GET /repos/{owner}/{repo}/actions/runs/{run_id}" {
			n++
		}
	}
	return n
}

func (w *world) activeRun(event string) int64 {
	return w.fake.AddRun(githubfake.Run{WorkflowFile: "roadmap.yml", HeadBranch: "main", Event: event, Status: "in_progress"})
}

// TestLeaseOneJobPerItem: two implement Jobs for one item at once (a
// person's dispatch while the label's run goes). The first takes the
// item's lease before it reads the record; the second finds it held by a
// run GitHub says is in progress and leaves the item: no mark, no model
// call, no Job number, no spend, typed yielded/busy, and the first ends
// ready as Job 1, the only line in the record, its lease released.
func TestLeaseOneJobPerItem(t *testing.T) {
	w := newWorld(t, 1, "")
	first, second := w.newJob(w.conversations()), w.newJob(w.conversations())
	first.opts.RunID, second.opts.RunID = w.activeRun("issues"), w.activeRun("workflow_dispatch")
	first.opts.PollInterval = time.Minute

	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	first.model.Before = func(int, agent.ModelRequest) {
		once.Do(func() { close(entered); <-release })
	}
	done := make(chan implement.Result)
	go func() { done <- first.runWithGreenCI() }()
	<-entered // the first Job is in its first model call, holding the lease
	if w.leaseOnRemote() == "" {
		t.Fatal("the first Job is at work and the remote has no lease for the item")
	}
	res := second.run()
	close(release)
	firstRes := <-done

	if res.Result != record.ResultYielded || res.Failure != "busy" {
		t.Errorf("the second Job ended %s/%s (%s), want yielded/busy\n%s", res.Result, res.Failure, res.Reason, second.log.String())
	}
	if !strings.Contains(res.Reason, "in_progress") {
		t.Errorf("reason %q does not say the holder's run is in progress", res.Reason)
	}
	if n := len(second.model.Requests()); n != 0 {
		t.Errorf("the second Job made %d model calls, want 0", n)
	}
	if got := second.outputs["attempt"]; got != "0" {
		t.Errorf("the second Job's attempt output = %q, want 0 (it takes no number)", got)
	}
	if !strings.Contains(second.log.String(), "class=busy") {
		t.Errorf("the second Job's log has no typed busy line:\n%s", second.log.String())
	}
	if firstRes.Result != record.ResultReady {
		t.Fatalf("the first Job ended %s/%s (%s), want ready\n%s", firstRes.Result, firstRes.Failure, firstRes.Reason, first.log.String())
	}
	jobs, _ := w.record().Jobs()
	if len(jobs) != 1 || jobs[0].Job != 1 || jobs[0].RunID != first.opts.RunID {
		t.Errorf("implement.jobs = %+v, want only Job 1 of run %d", jobs, first.opts.RunID)
	}
	spend, _ := w.record().Spend()
	if spend != firstRes.Spend {
		t.Errorf("item spend %+v, want the first Job's %+v: the second spent nothing", spend, firstRes.Spend)
	}
	if sha := w.leaseOnRemote(); sha != "" {
		t.Errorf("the lease %s is still on the remote after the holder ended", sha)
	}
}

// TestLeaseTakenOverFromGoneJob: a Job that was killed holding the lease
// (it took it and never released it) blocks the item only while its run
// lives. Its lease is taken over when the record has its ending (report
// settled it: no request), when its run completed or vanished (one read of
// the run), and when it was an earlier attempt of this run; the Job that
// takes it over goes on with the next number and releases the lease at its
// end. That a taker runs the item to ready is shown once (its run
// completed); the other takers end at their first group, with a deadline
// that leaves no room for it, as the takeover is decided before any group.
func TestLeaseTakenOverFromGoneJob(t *testing.T) {
	for _, tc := range []struct {
		name string
		// gone makes the holder of run holder gone (or leaves it live).
		gone func(w *world, holder int64) error
		// sameRun: the taker runs in the holder's run (its next attempt).
		sameRun  bool
		live     bool
		runReads int
		why      string
		// toReady: the taker runs the item to ready; else it yields at
		// its first group.
		toReady bool
	}{
		{name: "its run is in progress", gone: func(*world, int64) error { return nil }, live: true, runReads: 1, why: "in_progress"},
		{name: "its run completed", gone: func(w *world, id int64) error { return w.fake.FinishRun(id, "cancelled") },
			runReads: 1, why: "has completed (cancelled)", toReady: true},
		{name: "its run vanished", gone: func(*world, int64) error { return nil }, runReads: 1, why: "is gone"},
		{name: "report settled its line", gone: settleKilled, why: "the record has its Job 1's ending (no result, killed)"},
		{name: "an earlier attempt of this run", gone: func(*world, int64) error { return nil }, sameRun: true, why: "earlier attempt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, 1, "")
			holder := w.activeRun("issues")
			if tc.name == "its run vanished" {
				holder = 999999 // a run GitHub does not have (deleted)
			}
			killed := w.newJob(w.conversations())
			killed.opts.RunID = holder
			// The killed Job's start, as the binary makes it; then the
			// process is gone, with no release.
			kj, err := kernel.Start(context.Background(), killed.opts.Options, 0)
			if err != nil || kj.Busy != nil {
				t.Fatalf("the first Job could not take the lease: %v %v", err, kj.Busy)
			}
			left := w.leaseOnRemote()
			if err := tc.gone(w, holder); err != nil {
				t.Fatal(err)
			}
			before := w.runReads()

			next := w.newJob(w.conversations())
			next.opts.RunID = w.activeRun("workflow_dispatch")
			if tc.sameRun {
				next.opts.RunID = holder
			}
			next.opts.PollInterval = time.Minute
			if !tc.toReady {
				next.opts.Deadline = w.clock.Now().Add(time.Minute) // less than the reserve: no group can start
			}
			res := next.runWithGreenCI()
			if got := w.runReads() - before; got != tc.runReads {
				t.Errorf("the Job read the holder's run %d times, want %d", got, tc.runReads)
			}
			if tc.live {
				if res.Result != record.ResultYielded || res.Failure != "busy" || !strings.Contains(res.Reason, tc.why) {
					t.Fatalf("ended %s/%s (%s), want yielded/busy saying %q", res.Result, res.Failure, res.Reason, tc.why)
				}
				if got := w.leaseOnRemote(); got != left {
					t.Errorf("the live holder's lease moved: %s, was %s", got, left)
				}
				return
			}
			want := record.ResultReady
			if !tc.toReady {
				want = record.ResultYielded
			}
			if res.Result != want || res.Failure == "busy" {
				t.Fatalf("ended %s/%s (%s), want %s\n%s", res.Result, res.Failure, res.Reason, want, next.log.String())
			}
			if !strings.Contains(next.log.String(), "took over the item's lease") || !strings.Contains(next.log.String(), tc.why) {
				t.Errorf("the log does not say the lease was taken over because %q:\n%s", tc.why, next.log.String())
			}
			jobs, _ := w.record().Jobs()
			nums := map[int]int{}
			for _, j := range jobs {
				nums[j.Job]++
			}
			for n, c := range nums {
				if c != 1 {
					t.Errorf("Job %d has %d lines in %+v: numbers are unique", n, c, jobs)
				}
			}
			if last := jobs[len(jobs)-1]; last.Result != want || last.RunID != next.opts.RunID {
				t.Errorf("the last line %+v is not the taker's %s", last, want)
			}
			if sha := w.leaseOnRemote(); sha != "" {
				t.Errorf("the lease %s is still on the remote after the taker ended", sha)
			}
		})
	}
}

// settleKilled writes the record line report writes for a killed Job 1 of
// run id: no result, class killed. The run stays in progress (report is its
// last job).
func settleKilled(w *world, id int64) error {
	c, ok := w.recordComment()
	if !ok {
		return errors.New("no record comment")
	}
	var ch record.Changes
	ch.SetJobs([]record.JobOutcome{{Job: 1, RunID: id, Failure: "killed"}})
	ch.SetAttempt(1)
	var uerr error
	err := w.fake.EditComment(c.ID, func(body string) string {
		out, err := record.Update(body, ch)
		uerr = err
		return out
	})
	return errors.Join(err, uerr)
}

// TestGroupMarkCarriesPublishedSHA: a group's mark written alone (the mark
// interval at its least, so it does not wait for the next write) names the
// head the group published, implement.published_sha equal to its
// implement.sha: the next Job reconciles a killed Job's work from it
// (docs/record.md). Later writes (the checked mark, the archive) set it
// too, so only a mark written alone shows it missing.
func TestGroupMarkCarriesPublishedSHA(t *testing.T) {
	w := newWorld(t, 2, "")
	j := w.newJob(w.conversations())
	// The harness's clock stands still unless asked: a clock that moves a
	// second on every read makes each mark due at once.
	j.opts.Options.MarkInterval = time.Nanosecond
	j.opts.Clock = tickingClock{w.clock}
	j.run()
	mark, sha := recordWrite(w.patches(), "implement.group: 1\n")
	if mark == "" {
		t.Fatalf("no record write holds group 1's mark alone:\n%v", w.patches())
	}
	if sha == "" || !strings.Contains(mark, "implement.published_sha: "+sha) {
		t.Errorf("group 1's mark lacks implement.published_sha equal to its implement.sha %q:\n%s", sha, mark)
	}
}

// tickingClock is the world's clock moved a second on every read.
type tickingClock struct{ *githubfake.ManualClock }

func (c tickingClock) Now() time.Time {
	c.Advance(time.Second)
	return c.ManualClock.Now()
}

// recordWrite is the first record write among patches whose body holds
// line, and the implement.sha it names ("" for each when there is none).
func recordWrite(patches []string, line string) (body, sha string) {
	for _, p := range patches {
		var req struct {
			Body string `json:"body"`
		}
		if json.Unmarshal([]byte(p), &req) == nil && strings.Contains(req.Body, line) {
			body = req.Body
			break
		}
	}
	for _, l := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(l, "implement.sha: "); ok {
			sha = strings.TrimSpace(v)
		}
	}
	return body, sha
}
