package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/actionsio"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/event"
	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/policy"
	"github.com/roadmap-dev/roadmap/internal/stage"
)

// runStage is `roadmap stage`: one stage Job for an issue, from the issue to
// a checked plan in a draft PR (or the item returned with the findings).
func runStage(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "stage")
	issue := fs.Int("issue", 0, "the issue to plan (default: from the event)")
	cfgPath := fs.String("config", "", "configuration file (default WORKDIR/"+config.DefaultPath+")")
	workdir := fs.String("workdir", "", "the repository checkout (default $GITHUB_WORKSPACE or .)")
	remote := fs.String("remote", "origin", "the git remote to push to")
	base := fs.String("base", "", "the branch the draft PR targets (default: configuration, main)")
	timeout := fs.Int("timeout-minutes", 0, "the job's timeout-minutes; with --started-at it sets the deadline")
	startedAt := fs.String("started-at", "", "when the job started (RFC 3339 or Unix seconds; default now)")
	traceFile := fs.String("trace-file", "", "where the JSONL trace goes (default $RUNNER_TEMP/roadmap-stage-trace-ISSUE-run-RUNID.jsonl)")
	runID := fs.Int64("run-id", 0, "the workflow run id (default $GITHUB_RUN_ID)")
	rounds := fs.Int("rounds", 0, "the planner's revision rounds (default: configuration stage.rounds)")
	budgets := addBudgetFlags(fs)
	recordComment := fs.Int64("record-comment", 0, "the issue's record comment id (default: the dispatch input, else found by listing the comments once)")
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
		env.Errorf("stage: no issue: pass --issue or run on an issue or dispatch event")
		return ExitUsage
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
	if *base == "" {
		*base = cfg.Implement.BaseBranch
	}
	if *rounds < 0 {
		env.Errorf("stage: --rounds must not be negative")
		return ExitUsage
	}
	if *rounds == 0 {
		*rounds = cfg.Stage.Rounds
	}
	if code := env.jobBudgets("stage", budgets, cfg); code != ExitOK {
		return code
	}
	deadline, code := env.jobDeadline("stage", *startedAt, *timeout)
	if code != ExitOK {
		return code
	}
	masker := env.masker(env.modelKeys(cfg)...)
	gh, err := env.gitHubClient(masker, deadline)
	if err != nil {
		env.Errorf("stage: %v", err)
		return ExitUsage
	}
	if refused, code := env.jobDayGate(ctx, io, gh, "stage", *budgets.dashboard, cfg, nil); refused {
		return code
	}
	repo, code := env.jobRepo(ctx, "stage", dir)
	if code != ExitOK {
		return code
	}
	pol, err := policy.ParseNode(&cfg.Policy)
	if err != nil {
		env.Errorf("stage: %s: policy: %v", *cfgPath, err)
		return ExitUsage
	}
	iso, unisolated, code := env.openBoundary(ctx, "stage", string(cfg.Isolation), dir)
	if code != ExitOK {
		return code
	}
	defer iso.close(env, "stage")
	sb, _ := iso.tools(pol, env.environ())

	rec, closeTrace, code := env.jobTrace("stage", traceFile, jobTraceName("stage", *issue, *runID), masker, 0)
	if code != ExitOK {
		return code
	}
	defer closeTrace()
	tiers, code := env.jobTiers("stage", *cfgPath, cfg, rec, *recordDir, masker)
	if code != ExitOK {
		return code
	}
	verifier := tiers[len(tiers)-1:]
	for i, m := range cfg.Models {
		if m.Name == cfg.Stage.Verifier {
			verifier = tiers[i : i+1]
		}
	}
	opts := stage.Options{
		Issue: *issue, RunID: *runID, GitHub: gh, Repo: repo, Remote: *remote, Base: *base,
		RecordComment: *recordComment, RunURL: env.runURL(*runID),
		Planner: tiers, Verifier: verifier, Sandbox: sb, Rounds: *rounds,
		StepBudget: agentBudget(cfg.Budgets.Step), ItemBudget: agentBudget(cfg.Budgets.Item),
		MaxOutput: cfg.Models[0].MaxOutput, Window: int64(cfg.Models[0].InputWindow),
		Deadline: deadline, Unisolated: unisolated, IsolationNote: iso.note(),
		Log: env.Stderr, Trace: rec, Mask: masker.Mask, SetOutput: env.setOutput(io),
	}
	res, err := stage.Run(ctx, opts)
	if err != nil {
		env.Errorf("stage: %v", err)
		io.Error("", 0, masker.Mask(err.Error()))
		return ExitInternal
	}
	for _, f := range res.Findings {
		switch f.Level {
		case plan.LevelError:
			io.Error(f.File, f.Line, masker.Mask(f.Rule+": "+f.Message))
		case plan.LevelWarning:
			io.Warning(f.File, f.Line, masker.Mask(f.Rule+": "+f.Message))
		}
	}
	_ = io.SetOutput("trace_file", *traceFile)
	if err := io.AddSummary(masker.Mask(stageSummary(*issue, res, iso.note()))); err != nil {
		env.Errorf("step summary: %v", err)
	}
	if *asJSON {
		if code := env.JSON(res); code != ExitOK {
			return code
		}
	}
	if res.Result == stage.ResultStopped {
		return ExitFindings
	}
	return ExitOK
}

// stageSummary is the step summary of a stage Job.
func stageSummary(issue int, res stage.Result, note string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### roadmap stage · issue #%d: %s\n\n", issue, res.Result)
	if note != "" {
		b.WriteString("> [!WARNING]\n> " + note + "\n\n")
	}
	if res.PR > 0 {
		fmt.Fprintf(&b, "The plan `%s` is in draft PR #%d after %d round(s).\n\n", res.Plan, res.PR, res.Rounds)
	}
	if res.Reason != "" {
		fmt.Fprintf(&b, "%s: %s\n\n", res.Failure, res.Reason)
	}
	if len(res.Findings) > 0 {
		b.WriteString("| level | where | rule | finding |\n|---|---|---|---|\n")
		for _, f := range res.Findings {
			fmt.Fprintf(&b, "| %s | `%s:%d` | %s | %s |\n", f.Level, summaryCell(f.File), f.Line, summaryCell(f.Rule), summaryCell(f.Message))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "Spend: this Job %s; the item %s.\n", spendLine(res.JobSpend), spendLine(res.Spend))
	return b.String()
}

// summaryCell is text made safe for one cell of a Markdown table.
func summaryCell(s string) string {
	return strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "|", "\\|")
}
