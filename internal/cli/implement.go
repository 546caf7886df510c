package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/implement"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/policy"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

func runImplement(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "implement")
	f := addJobFlags(fs, "implement", "the issue to implement", "the branch PRs target")
	planDir := fs.String("plan", "", "the OpenSpec change directory, relative to the workspace (default: the record's stage.plan)")
	attempt := fs.Int("attempt", 0, "this Job's number for the item (default: the dispatch input, else the record's + 1)")
	model := fs.String("model", "", "override the first model of the ladder")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	s, code := env.startJob("implement", f)
	if s == nil {
		return code
	}
	if *attempt == 0 && s.ev.Inputs != nil {
		if n, err := strconv.Atoi(strings.TrimSpace(s.ev.Inputs["attempt"])); err == nil {
			*attempt = n
		}
	}
	cfg := s.cfg
	if *model != "" {
		cfg.Models[0].Name = *model
	}
	j, code := env.openJob(ctx, "implement", s, f, *attempt, map[string]string{"attempt": strconv.Itoa(*attempt)})
	if j == nil {
		return code
	}
	defer j.close()
	opts := implement.Options{
		Issue: s.issue, Attempt: *attempt, RunID: s.runID, GitHub: j.gh, Repo: j.repo, Remote: *f.remote, Base: s.base,
		PlanDir: *planDir, RecordComment: s.comment, RunURL: env.runURL(s.runID), Models: j.tiers, Sandbox: j.sandbox,
		CheckRunner: j.checkRunner, Split: policy.Split, CheckCommands: cfg.Checks.Commands,
		BeforeTree: j.iso.beforeTree(env, string(cfg.Isolation), j.pol), TempDir: env.Getenv("RUNNER_TEMP"),
		Unisolated: j.unisolated, IsolationNote: j.iso.note(),
		CheckTimeout: cfg.Checks.Timeout,
		StepBudget:   agentBudget(cfg.Budgets.Step), ItemBudget: agentBudget(cfg.Budgets.Item),
		RepairRounds: cfg.Implement.RepairRounds, MaxOutput: cfg.Models[0].MaxOutput, Window: int64(cfg.Models[0].InputWindow),
		Deadline: s.deadline, PollInterval: cfg.Implement.PollInterval, WatchTimeout: cfg.Implement.WatchTimeout,
		CIWorkflows: cfg.Implement.CIWorkflows, ReadyWithoutCI: cfg.Implement.ReadyWithoutCI, CheckReruns: cfg.Implement.CheckReruns,
		Log: env.Stderr, Trace: j.rec, Mask: j.masker.Mask, SetOutput: env.setOutput(s.io),
	}
	res, err := implement.Run(ctx, opts)
	if err != nil {
		env.Errorf("implement: %v", err)
		s.io.Error("", 0, j.masker.Mask(err.Error()))
		if res.Result == "" {
			return ExitInternal
		}
	}
	_ = s.io.SetOutput("trace_file", *f.traceFile)
	if err := s.io.AddSummary(implementSummary(s.issue, res, j.rec.Events(), j.iso.note())); err != nil {
		env.Errorf("step summary: %v", err)
	}
	if *f.json {
		if code := env.JSON(res); code != ExitOK {
			return code
		}
	}
	if res.Result == record.ResultStopped {
		return ExitFindings
	}
	return ExitOK
}

// implementSummary is the step summary: the outcome, the table of steps and
// the timeline of the run.
func implementSummary(issue int, res implement.Result, events []trace.Event, note string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## roadmap · implement #%d · Job %d: %s\n\n", issue, res.Attempt, res.Result)
	if note != "" {
		fmt.Fprintf(&b, "> [!WARNING]\n> %s\n\n", note)
	}
	if res.Failure != "" || res.Reason != "" {
		fmt.Fprintf(&b, "`%s` %s\n\n", res.Failure, res.Reason)
	}
	switch res.CI {
	case "passed":
		b.WriteString("PR checks: reported on the head and passed.\n\n")
	case "none":
		b.WriteString("PR checks: **no check was reported on the head**; ready because `implement.ready_without_ci` is true.\n\n")
	}
	fmt.Fprintf(&b, "Item spend: %d tokens in, %d out, $%.4f over %d model calls (this Job: %d calls).\n\n",
		res.Spend.TokensIn, res.Spend.TokensOut, res.Spend.USD, res.Spend.ModelCalls, res.JobSpend.ModelCalls)
	b.WriteString(trace.SummaryTable(events))
	b.WriteString("\n")
	b.WriteString(trace.Timeline(events))
	b.WriteString("\n")
	return b.String()
}

// buildTiers makes one model per configured tier.
func buildTiers(cfg *config.Config, env *Env, onRetry func(agent.RetryEvent)) ([]agent.Tier, error) {
	prices := map[string]llm.Price{}
	for name, p := range cfg.Prices {
		prices[name] = llm.Price{Input: p.Input, Output: p.Output}
	}
	var tiers []agent.Tier
	for i, m := range cfg.Models {
		client, err := llm.New(llm.Config{Provider: m.Provider, BaseURL: m.BaseURL, Model: m.Name, APIKeyEnv: m.APIKeyEnv,
			InputWindow: m.InputWindow, MaxOutput: m.MaxOutput, Prices: prices, Fixtures: m.Fixtures},
			llm.WithGetenv(env.Getenv), llm.WithRetryObserver(onRetry))
		if err != nil {
			return nil, fmt.Errorf("models[%d]: %w", i, err)
		}
		p := prices[m.Name]
		// Each tier has its own request limits: a cheap model's window is
		// not a larger one's.
		tiers = append(tiers, agent.Tier{Name: m.Name, Model: client, USDPerMTokIn: p.Input, USDPerMTokOut: p.Output,
			MaxOutput: m.MaxOutput, Window: int64(m.InputWindow)})
	}
	return tiers, nil
}

// spendLine is a day's spend in the words of dayBudgetText.
func spendLine(s record.Spend) string {
	return fmt.Sprintf("$%.2f, %d tokens in, %d tokens out", s.USD, s.TokensIn, s.TokensOut)
}

func agentBudget(b config.Budget) agent.Budget {
	return agent.Budget{Turns: b.Turns, TokensIn: b.TokensIn, TokensOut: b.TokensOut, USD: b.USD, Wall: b.Wall}
}

// sandboxAdapter gives the policy sandbox the agent's Run signature.
type sandboxAdapter struct{ *policy.Sandbox }

func (s sandboxAdapter) Run(ctx context.Context, argv []string) (agent.RunResult, error) {
	r, err := s.Sandbox.Run(ctx, argv)
	return agent.RunResult(r), err
}

func parseTime(s string) (time.Time, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(n, 0), nil
	}
	return time.Parse(time.RFC3339, s)
}

func lineOf(err error) int {
	var ce *config.Error
	if errors.As(err, &ce) {
		return ce.Line
	}
	return 0
}
