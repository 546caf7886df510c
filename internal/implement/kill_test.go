package implement_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/checks"
	"github.com/roadmap-dev/roadmap/internal/git"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/implement"
	"github.com/roadmap-dev/roadmap/internal/job/kernel"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/policy"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/redact"
	"github.com/roadmap-dev/roadmap/internal/sandbox"
	"github.com/roadmap-dev/roadmap/internal/trace"
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
	model, err := llm.New(llm.Config{Provider: llm.ProviderReplay, Model: "replay-model", Fixtures: c.Fixtures})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	spy := &spyModel{Model: model, Before: func(n int, req agent.ModelRequest) {
		turn := 0
		for _, m := range req.Messages {
			if m.Role == agent.RoleAssistant {
				turn++
			}
		}
		if strings.Contains(firstUser(req), c.HangOn) && turn == c.HangTurn {
			os.WriteFile(c.Ready, []byte("hanging"), 0o644)
			select {} // until SIGKILL
		}
	}}
	tr, _ := trace.NewRecorder(os.Stderr, masker, time.Now, c.Attempt)
	_, err = implement.Run(ctx, implement.Options{
		Options: kernel.Options{
			Issue:   c.Issue,
			RunID:   500,
			GitHub:  gh,
			Repo:    gitRepo,
			Sandbox: toolSandbox{sb},
			Log:     os.Stdout,
			Trace:   tr,
			Mask:    masker.Mask,
		},
		Attempt:      c.Attempt,
		Models:       []agent.Tier{{Name: "replay-model", Model: spy}},
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
	cfg, _ := json.Marshal(childConfig{FakeURL: w.base.GitHubURL(), Workspace: killed.ws, Fixtures: fixtures, Issue: w.issue, Attempt: 1,
		HangOn: "task group 2 of", HangTurn: 1, Ready: ready})
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
