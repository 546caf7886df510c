package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/actionsio"
	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/event"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/git"
	"github.com/roadmap-dev/roadmap/internal/implement"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/policy"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/report"
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
	budgetUSD := fs.Float64("budget-usd", 0, "the item's budget in USD over all its Jobs (default: configuration budgets.item.usd)")
	dayBudgetUSD := fs.Float64("day-budget-usd", 0, "the day's budget in USD across items (default: configuration budgets.day.usd); needs --dashboard")
	dashboard := fs.Int("dashboard", 0, "the issue holding the day's spend ledger (0: no day budget)")
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
	load := config.LoadExplicit
	if *cfgPath == "" {
		*cfgPath, load = filepath.Join(dir, config.DefaultPath), config.Load
	}
	cfg, err := load(*cfgPath)
	if err != nil {
		env.Errorf("%v", err)
		io.Error(*cfgPath, lineOf(err), err.Error())
		return ExitUsage
	}
	if *model != "" {
		cfg.Models[0].Name = *model
	}
	if *base == "" {
		*base = cfg.Implement.BaseBranch
	}
	if *budgetUSD < 0 || *dayBudgetUSD < 0 || *dashboard < 0 {
		env.Errorf("implement: budgets and --dashboard must not be negative")
		return ExitUsage
	}
	if *budgetUSD > 0 {
		cfg.Budgets.Item.USD = *budgetUSD
	}
	if *dayBudgetUSD > 0 {
		cfg.Budgets.Day.USD = *dayBudgetUSD
	}
	start := time.Now()
	if *startedAt != "" {
		if start, err = parseTime(*startedAt); err != nil {
			env.Errorf("implement: --started-at: %v", err)
			return ExitUsage
		}
	}
	var deadline time.Time
	if *timeout > 0 {
		deadline = start.Add(time.Duration(*timeout) * time.Minute)
	}
	masker := env.masker(env.modelKeys(cfg)...)
	gh, err := env.gitHubClient(masker, deadline)
	if err != nil {
		env.Errorf("implement: %v", err)
		return ExitUsage
	}
	dayBudget := report.DayBudget{USD: cfg.Budgets.Day.USD, TokensIn: cfg.Budgets.Day.TokensIn, TokensOut: cfg.Budgets.Day.TokensOut}
	if *dashboard > 0 && !dayBudget.Zero() {
		day := report.Day(time.Now())
		spent, ok, err := report.DayCheck(ctx, gh, *dashboard, day, dayBudget)
		if err != nil {
			env.Errorf("implement: %v", err)
			return ExitInternal
		}
		if !ok {
			// The Job does not start: the item yields until the next day.
			msg := fmt.Sprintf("the day's budget (%s) is spent (%s on %s); the item waits for the next day",
				dayBudgetText(dayBudget), spendLine(spent), day)
			fmt.Fprintf(env.Stderr, "::notice::%s\n", failure.TypedLine(failure.ResultYielded, failure.DayBudgetExhausted, msg))
			for k, v := range map[string]string{"result": string(record.ResultYielded), "failure": string(failure.DayBudgetExhausted), "attempt": strconv.Itoa(*attempt)} {
				_ = io.SetOutput(k, v)
			}
			return ExitOK
		}
	}
	gitEnv := env.environ()
	// A push token (an App installation token or a fine-grained PAT) pushes
	// as a contributor would, so the repository's CI runs on the pushes;
	// GITHUB_TOKEN's pushes start no workflow run.
	tok := env.Getenv("ROADMAP_PUSH_TOKEN")
	if tok == "" {
		tok = env.Getenv("GITHUB_TOKEN")
	}
	if tok != "" && env.Getenv("GITHUB_SERVER_URL") != "" {
		gitEnv = git.ExtraHeaderEnv(gitEnv, env.Getenv("GITHUB_SERVER_URL"), tok)
	}
	repo, err := git.Open(ctx, dir, gitEnv)
	if err != nil {
		env.Errorf("implement: %v", err)
		return ExitUsage
	}
	if err := repo.EnsureIdentity(ctx); err != nil {
		env.Errorf("implement: %v", err)
		return ExitInternal
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

	if *traceFile == "" {
		tmp := env.Getenv("RUNNER_TEMP")
		if tmp == "" {
			tmp = os.TempDir()
		}
		// The Job's number may not be known before the record is read; the
		// run id is, and tells the Jobs of an item apart.
		*traceFile = filepath.Join(tmp, fmt.Sprintf("roadmap-trace-%d-run-%d.jsonl", *issue, *runID))
	}
	tf, err := os.OpenFile(*traceFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		env.Errorf("implement: trace file: %v", err)
		return ExitUsage
	}
	defer tf.Close()
	rec, err := trace.NewRecorder(tf, masker, time.Now, *attempt)
	if err != nil {
		env.Errorf("implement: %v", err)
		return ExitInternal
	}
	tiers, err := buildTiers(cfg, env, func(e agent.RetryEvent) {
		_ = rec.Add(trace.Event{Type: trace.TypeRetry, Reason: e.Reason, Attempt: e.Attempt, Wait: e.Wait})
	})
	if err != nil {
		env.Errorf("implement: %s: %v", *cfgPath, err)
		return ExitUsage
	}
	if *recordDir != "" {
		if err := os.MkdirAll(*recordDir, 0o755); err != nil {
			env.Errorf("implement: --record: %v", err)
			return ExitUsage
		}
		for i := range tiers {
			tiers[i].Model = llm.Record(tiers[i].Model, *recordDir)
		}
	}
	for i := range tiers {
		tiers[i].Model = agent.Masked(tiers[i].Model, masker.Mask)
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
		Log: env.Stderr, Trace: rec, Mask: masker.Mask,
		SetOutput: func(k, v string) {
			if err := io.SetOutput(k, v); err != nil {
				env.Errorf("set output %s: %v", k, err)
			}
		},
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

// dayBudgetText names the day budget's bounds: "$5.00, 2000000 tokens in".
func dayBudgetText(b report.DayBudget) string {
	var parts []string
	if b.USD > 0 {
		parts = append(parts, fmt.Sprintf("$%.2f", b.USD))
	}
	if b.TokensIn > 0 {
		parts = append(parts, fmt.Sprintf("%d tokens in", b.TokensIn))
	}
	if b.TokensOut > 0 {
		parts = append(parts, fmt.Sprintf("%d tokens out", b.TokensOut))
	}
	return strings.Join(parts, ", ")
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
