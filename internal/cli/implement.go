package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/actionsio"
	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/event"
	"github.com/roadmap-dev/roadmap/internal/implement"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/policy"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

func runImplement(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "implement")
	issue := fs.Int("issue", 0, "the issue to implement (default: from the event)")
	cfgPath := fs.String("config", "", "configuration file (default WORKDIR/"+config.DefaultPath+")")
	planDir := fs.String("plan", "", "the OpenSpec change directory, relative to the workspace (default: the record's stage.plan)")
	workdir := fs.String("workdir", "", "the repository checkout (default $GITHUB_WORKSPACE or .)")
	remote := fs.String("remote", "origin", "the git remote to push to")
	base := fs.String("base", "", "the branch PRs target (default: configuration, main)")
	attempt := fs.Int("attempt", 0, "this Job's number for the item (default: the dispatch input, else the record's + 1)")
	timeout := fs.Int("timeout-minutes", 0, "the job's timeout-minutes; with --started-at it sets the deadline")
	startedAt := fs.String("started-at", "", "when the job started (RFC 3339 or Unix seconds; default now)")
	traceFile := fs.String("trace-file", "", "where the JSONL trace goes (default $RUNNER_TEMP/roadmap-trace-ISSUE-run-RUNID.jsonl)")
	model := fs.String("model", "", "override the first model of the ladder")
	runID := fs.Int64("run-id", 0, "the workflow run id (default $GITHUB_RUN_ID)")
	budgets := addBudgetFlags(fs)
	recordComment := fs.Int64("record-comment", 0, "the issue's record comment id, handed over by an earlier job (default: the dispatch input, else found by listing the comments once)")
	recordDir := fs.String("record", "", "write every model exchange to DIR as replay fixtures (docs/models.md)")
	asJSON := fs.Bool("json", false, "print the result as JSON on stdout")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	io := actionsio.New(env.Getenv, env.Stdout)
	ev, err := event.FromEnv(env.Getenv)
	if err != nil {
		env.Errorf("%v", err)
		return ExitUsage
	}
	if *issue == 0 {
		*issue = ev.Issue
	}
	if *issue <= 0 {
		env.Errorf("implement: no issue: pass --issue or run on an issue or dispatch event")
		return ExitUsage
	}
	if *attempt == 0 && ev.Inputs != nil {
		if n, err := strconv.Atoi(strings.TrimSpace(ev.Inputs["attempt"])); err == nil {
			*attempt = n
		}
	}
	if *runID == 0 {
		*runID = ev.RunID
	}
	if *recordComment == 0 && ev.Inputs != nil {
		*recordComment = recordCommentInput(ev.Inputs)
	}
	dir := env.workdir(*workdir)
	cfg, code := env.jobConfig(io, dir, cfgPath)
	if code != ExitOK {
		return code
	}
	if *model != "" {
		cfg.Models[0].Name = *model
	}
	if *base == "" {
		*base = cfg.Implement.BaseBranch
	}
	if code := env.jobBudgets("implement", budgets, cfg); code != ExitOK {
		return code
	}
	deadline, code := env.jobDeadline("implement", *startedAt, *timeout)
	if code != ExitOK {
		return code
	}
	masker := env.masker(env.modelKeys(cfg)...)
	gh, err := env.gitHubClient(masker, deadline)
	if err != nil {
		env.Errorf("implement: %v", err)
		return ExitUsage
	}
	if refused, code := env.jobDayGate(ctx, io, gh, "implement", *budgets.dashboard, cfg, map[string]string{"attempt": strconv.Itoa(*attempt)}); refused {
		return code
	}
	repo, code := env.jobRepo(ctx, "implement", dir)
	if code != ExitOK {
		return code
	}
	pol, err := policy.ParseNode(&cfg.Policy)
	if err != nil {
		env.Errorf("implement: %s: policy: %v", *cfgPath, err)
		return ExitUsage
	}
	iso, unisolated, code := env.openBoundary(ctx, "implement", string(cfg.Isolation), dir)
	if code != ExitOK {
		return code
	}
	defer iso.close(env, "implement")
	sb, checkRunner := iso.tools(pol, env.environ())

	rec, closeTrace, code := env.jobTrace("implement", traceFile, jobTraceName("implement", *issue, *runID), masker, *attempt)
	if code != ExitOK {
		return code
	}
	defer closeTrace()
	tiers, code := env.jobTiers("implement", *cfgPath, cfg, rec, *recordDir, masker)
	if code != ExitOK {
		return code
	}
	opts := implement.Options{
		Issue: *issue, Attempt: *attempt, RunID: *runID, GitHub: gh, Repo: repo, Remote: *remote, Base: *base,
		PlanDir: *planDir, RecordComment: *recordComment, RunURL: env.runURL(*runID), Models: tiers, Sandbox: sb,
		CheckRunner: checkRunner, Split: policy.Split, CheckCommands: cfg.Checks.Commands,
		BeforeTree: iso.beforeTree(env, string(cfg.Isolation), pol), TempDir: env.Getenv("RUNNER_TEMP"),
		Unisolated: unisolated, IsolationNote: iso.note(),
		CheckTimeout: cfg.Checks.Timeout,
		StepBudget:   agentBudget(cfg.Budgets.Step), ItemBudget: agentBudget(cfg.Budgets.Item),
		RepairRounds: cfg.Implement.RepairRounds, MaxOutput: cfg.Models[0].MaxOutput, Window: int64(cfg.Models[0].InputWindow),
		Deadline: deadline, PollInterval: cfg.Implement.PollInterval, WatchTimeout: cfg.Implement.WatchTimeout,
		CIWorkflows: cfg.Implement.CIWorkflows, ReadyWithoutCI: cfg.Implement.ReadyWithoutCI, CheckReruns: cfg.Implement.CheckReruns,
		Log: env.Stderr, Trace: rec, Mask: masker.Mask, SetOutput: env.setOutput(io),
	}
	res, err := implement.Run(ctx, opts)
	if err != nil {
		env.Errorf("implement: %v", err)
		io.Error("", 0, masker.Mask(err.Error()))
		if res.Result == "" {
			return ExitInternal
		}
	}
	_ = io.SetOutput("trace_file", *traceFile)
	if err := io.AddSummary(implementSummary(*issue, res, rec.Events(), iso.note())); err != nil {
		env.Errorf("step summary: %v", err)
	}
	if *asJSON {
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
