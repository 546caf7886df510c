package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/actionsio"
	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/checks"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/event"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/git"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/policy"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/redact"
	"github.com/roadmap-dev/roadmap/internal/report"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// What the two Job verbs (stage, implement) set up the same way before their
// runner: the configuration, the deadline, the checkout, the trace and the
// model ladder. Each returns an exit code other than ExitOK when the verb
// must stop, having said why.

// jobConfig loads the configuration: the file *path names (which must
// exist), else WORKDIR/.github/roadmap.yml, the defaults without it. *path
// is set to the file read.
func (e *Env) jobConfig(io *actionsio.IO, dir string, path *string) (*config.Config, int) {
	load := config.LoadExplicit
	if *path == "" {
		*path, load = filepath.Join(dir, config.DefaultPath), config.Load
	}
	cfg, err := load(*path)
	if err != nil {
		e.Errorf("%v", err)
		io.Error(*path, lineOf(err), err.Error())
		return nil, ExitUsage
	}
	return cfg, ExitOK
}

// jobDeadline is when the Job must have handed over: the job's start (now,
// unless startedAt says) plus its timeout-minutes; zero without a timeout.
func (e *Env) jobDeadline(verb, startedAt string, timeout int) (time.Time, int) {
	start := time.Now()
	if startedAt != "" {
		var err error
		if start, err = parseTime(startedAt); err != nil {
			e.Errorf("%s: --started-at: %v", verb, err)
			return time.Time{}, ExitUsage
		}
	}
	if timeout <= 0 {
		return time.Time{}, ExitOK
	}
	return start.Add(time.Duration(timeout) * time.Minute), ExitOK
}

// jobRepo opens the checkout for roadmap's own git, with the credentials
// its pushes use: a push token (an App installation token or a
// fine-grained PAT) when there is one, so the repository's CI runs on the
// pushes as on a contributor's (GITHUB_TOKEN's pushes start no workflow
// run), else GITHUB_TOKEN.
func (e *Env) jobRepo(ctx context.Context, verb, dir string) (*git.Repo, int) {
	gitEnv := e.environ()
	tok := e.Getenv("ROADMAP_PUSH_TOKEN")
	if tok == "" {
		tok = e.Getenv("GITHUB_TOKEN")
	}
	if tok != "" && e.Getenv("GITHUB_SERVER_URL") != "" {
		gitEnv = git.ExtraHeaderEnv(gitEnv, e.Getenv("GITHUB_SERVER_URL"), tok)
	}
	repo, err := git.Open(ctx, dir, gitEnv)
	if err != nil {
		e.Errorf("%s: %v", verb, err)
		return nil, ExitUsage
	}
	if err := repo.EnsureIdentity(ctx); err != nil {
		e.Errorf("%s: %v", verb, err)
		return nil, ExitInternal
	}
	return repo, ExitOK
}

// jobTrace opens the JSONL trace (*path, default RUNNER_TEMP/defaultName)
// for appending and returns its recorder and the file's closer. *path is set
// to the file written.
func (e *Env) jobTrace(verb string, path *string, defaultName string, masker *redact.Masker, job int) (*trace.Recorder, func(), int) {
	if *path == "" {
		tmp := e.Getenv("RUNNER_TEMP")
		if tmp == "" {
			tmp = os.TempDir()
		}
		*path = filepath.Join(tmp, defaultName)
	}
	tf, err := os.OpenFile(*path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		e.Errorf("%s: trace file: %v", verb, err)
		return nil, nil, ExitUsage
	}
	rec, err := trace.NewRecorder(tf, masker, time.Now, job)
	if err != nil {
		tf.Close()
		e.Errorf("%s: %v", verb, err)
		return nil, nil, ExitInternal
	}
	return rec, func() { tf.Close() }, ExitOK
}

// jobTiers builds the model ladder: retries traced, every exchange recorded
// as replay fixtures under recordDir when it is set, every request masked.
func (e *Env) jobTiers(verb, cfgPath string, cfg *config.Config, rec *trace.Recorder, recordDir string, masker *redact.Masker) ([]agent.Tier, int) {
	tiers, err := buildTiers(cfg, e, func(ev agent.RetryEvent) {
		_ = rec.Add(trace.Event{Type: trace.TypeRetry, Reason: ev.Reason, Attempt: ev.Attempt, Wait: ev.Wait})
	})
	if err != nil {
		e.Errorf("%s: %s: %v", verb, cfgPath, err)
		return nil, ExitUsage
	}
	if recordDir != "" {
		if err := os.MkdirAll(recordDir, 0o755); err != nil {
			e.Errorf("%s: --record: %v", verb, err)
			return nil, ExitUsage
		}
		for i := range tiers {
			tiers[i].Model = llm.Record(tiers[i].Model, recordDir)
		}
	}
	for i := range tiers {
		tiers[i].Model = agent.Masked(tiers[i].Model, masker.Mask)
	}
	return tiers, ExitOK
}

// setOutput is the runner's SetOutput: a step output, or a message when it
// cannot be written.
func (e *Env) setOutput(io *actionsio.IO) func(k, v string) {
	return func(k, v string) {
		if err := io.SetOutput(k, v); err != nil {
			e.Errorf("set output %s: %v", k, err)
		}
	}
}

// jobTraceName is the default trace file name of a Job: the run id tells
// the Jobs of an item apart (the Job's number may not be known before the
// record is read). The help shows it with the words ISSUE and RUNID.
func jobTraceName(verb, issue, runID string) string {
	if verb == "implement" {
		return "roadmap-trace-" + issue + "-run-" + runID + ".jsonl"
	}
	return "roadmap-" + verb + "-trace-" + issue + "-run-" + runID + ".jsonl"
}

// jobBudgetFlags are the budget flags of the Job verbs: the item's budget
// over all its Jobs, and the day's across items with the dashboard issue
// that holds its ledger.
type jobBudgetFlags struct {
	item, day *float64
	dashboard *int
}

func addBudgetFlags(fs *flag.FlagSet) jobBudgetFlags {
	return jobBudgetFlags{
		item:      fs.Float64("budget-usd", 0, "the item's budget in USD over all its Jobs, stage's and implement's (default: configuration budgets.item.usd)"),
		day:       fs.Float64("day-budget-usd", 0, "the day's budget in USD across items (default: configuration budgets.day.usd); needs --dashboard"),
		dashboard: fs.Int("dashboard", 0, "the issue holding the day's spend ledger (0: no day budget)"),
	}
}

// jobBudgets takes the budget flags into cfg: a flag above zero overrides
// the configuration.
func (e *Env) jobBudgets(verb string, f jobBudgetFlags, cfg *config.Config) int {
	if *f.item < 0 || *f.day < 0 || *f.dashboard < 0 {
		e.Errorf("%s: budgets and --dashboard must not be negative", verb)
		return ExitUsage
	}
	if *f.item > 0 {
		cfg.Budgets.Item.USD = *f.item
	}
	if *f.day > 0 {
		cfg.Budgets.Day.USD = *f.day
	}
	return ExitOK
}

// jobDayGate, with a dashboard and a day budget, reads the day's ledger
// before the Job starts. When the day's spend has reached the budget the Job
// does not start: it says so in the runner's typed line and sets the outputs
// of a Job that yielded on day_budget_exhausted (with outputs' own), and
// report waits for the next day instead of dispatching a continuation.
// refused is true then, and code is what the verb exits with.
func (e *Env) jobDayGate(ctx context.Context, io *actionsio.IO, gh *github.Client, verb string, dashboard int, cfg *config.Config, outputs map[string]string) (refused bool, code int) {
	budget := report.DayBudget{USD: cfg.Budgets.Day.USD, TokensIn: cfg.Budgets.Day.TokensIn, TokensOut: cfg.Budgets.Day.TokensOut}
	if dashboard == 0 || budget.Zero() {
		return false, ExitOK
	}
	day := report.Day(time.Now())
	spent, ok, err := report.DayCheck(ctx, gh, dashboard, day, budget)
	if err != nil {
		e.Errorf("%s: %v", verb, err)
		return true, ExitInternal
	}
	if ok {
		return false, ExitOK
	}
	msg := fmt.Sprintf("the day's budget (%s) is spent (%s on %s); the item waits for the next day",
		dayBudgetText(budget), spendLine(spent), day)
	fmt.Fprintf(e.Stderr, "::notice::%s\n", failure.TypedLine(failure.ResultYielded, failure.DayBudgetExhausted, msg))
	set := e.setOutput(io)
	set("result", string(record.ResultYielded))
	set("failure", string(failure.DayBudgetExhausted))
	for k, v := range outputs {
		set(k, v)
	}
	return true, ExitOK
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

// jobFlags are the flags both Job verbs take, with one meaning.
type jobFlags struct {
	issue                         *int
	config, workdir, remote, base *string
	timeout                       *int
	startedAt, traceFile          *string
	runID                         *int64
	budgets                       jobBudgetFlags
	recordComment                 *int64
	recordDir                     *string
	json                          *bool
}

// addJobFlags defines the shared flags of verb on fs: issueHelp says what
// the Job does with the issue, baseHelp what the base branch is for.
func addJobFlags(fs *flag.FlagSet, verb, issueHelp, baseHelp string) jobFlags {
	return jobFlags{
		issue:         fs.Int("issue", 0, issueHelp+" (default: from the event)"),
		config:        fs.String("config", "", "configuration file (default WORKDIR/"+config.DefaultPath+")"),
		workdir:       fs.String("workdir", "", "the repository checkout (default $GITHUB_WORKSPACE or .)"),
		remote:        fs.String("remote", "origin", "the git remote to push to"),
		base:          fs.String("base", "", baseHelp+" (default: configuration, main)"),
		timeout:       fs.Int("timeout-minutes", 0, "the job's timeout-minutes; with --started-at it sets the deadline"),
		startedAt:     fs.String("started-at", "", "when the job started (RFC 3339 or Unix seconds; default now)"),
		traceFile:     fs.String("trace-file", "", "where the JSONL trace goes (default $RUNNER_TEMP/"+jobTraceName(verb, "ISSUE", "RUNID")+")"),
		runID:         fs.Int64("run-id", 0, "the workflow run id (default $GITHUB_RUN_ID)"),
		budgets:       addBudgetFlags(fs),
		recordComment: fs.Int64("record-comment", 0, "the issue's record comment id, handed over by an earlier job (default: the dispatch input, else found by listing the comments once)"),
		recordDir:     fs.String("record", "", "write every model exchange to DIR as replay fixtures (docs/models.md)"),
		json:          fs.Bool("json", false, "print the result as JSON on stdout"),
	}
}

// jobStart is what a Job verb reads before it reaches anything: the issue,
// the run and the record comment (from the flags, else the event), the
// configuration with the flags' budgets, the base branch and the deadline.
type jobStart struct {
	io       *actionsio.IO
	ev       *event.Event
	issue    int
	runID    int64
	comment  int64
	dir      string
	cfgPath  string
	cfg      *config.Config
	base     string
	deadline time.Time
}

// startJob reads the shared flags f of verb; a nil jobStart means the verb
// exits with code, having said why.
func (e *Env) startJob(verb string, f jobFlags) (*jobStart, int) {
	s := &jobStart{io: actionsio.New(e.Getenv, e.Stdout), issue: *f.issue, runID: *f.runID, comment: *f.recordComment,
		cfgPath: *f.config, base: *f.base}
	var err error
	if s.ev, err = event.FromEnv(e.Getenv); err != nil {
		e.Errorf("%v", err)
		return nil, ExitUsage
	}
	if s.issue == 0 {
		s.issue = s.ev.Issue
	}
	if s.issue <= 0 {
		e.Errorf("%s: no issue: pass --issue or run on an issue or dispatch event", verb)
		return nil, ExitUsage
	}
	if s.runID == 0 {
		s.runID = s.ev.RunID
	}
	if s.comment == 0 && s.ev.Inputs != nil {
		s.comment = recordCommentInput(s.ev.Inputs)
	}
	s.dir = e.workdir(*f.workdir)
	cfg, code := e.jobConfig(s.io, s.dir, &s.cfgPath)
	if code != ExitOK {
		return nil, code
	}
	s.cfg = cfg
	if s.base == "" {
		s.base = cfg.Implement.BaseBranch
	}
	if code := e.jobBudgets(verb, f.budgets, cfg); code != ExitOK {
		return nil, code
	}
	if s.deadline, code = e.jobDeadline(verb, *f.startedAt, *f.timeout); code != ExitOK {
		return nil, code
	}
	return s, ExitOK
}

// openJob is what a Job runs with: the masker, GitHub (after the day's
// budget allows the Job), roadmap's own git, the policy, the isolation
// boundary and the tools inside it, the trace and the model ladder.
type openJob struct {
	masker      *redact.Masker
	gh          *github.Client
	repo        *git.Repo
	pol         *policy.Policy
	iso         *isolation
	unisolated  string
	sandbox     agent.Sandbox
	checkRunner checks.Runner
	rec         *trace.Recorder
	tiers       []agent.Tier
	close       func()
}

// openJob opens what s's Job runs with, Job number job in its trace. A nil
// openJob means the verb exits with code: a setup error it has printed, or
// ExitOK when the day's budget refused the Job (its outputs set, with
// dayOutputs). Otherwise the caller defers close.
func (e *Env) openJob(ctx context.Context, verb string, s *jobStart, f jobFlags, job int, dayOutputs map[string]string) (*openJob, int) {
	j := &openJob{masker: e.masker(e.modelKeys(s.cfg)...)}
	var err error
	if j.gh, err = e.gitHubClient(j.masker, s.deadline); err != nil {
		e.Errorf("%s: %v", verb, err)
		return nil, ExitUsage
	}
	if refused, code := e.jobDayGate(ctx, s.io, j.gh, verb, *f.budgets.dashboard, s.cfg, dayOutputs); refused {
		return nil, code
	}
	repo, code := e.jobRepo(ctx, verb, s.dir)
	if code != ExitOK {
		return nil, code
	}
	j.repo = repo
	if j.pol, err = policy.ParseNode(&s.cfg.Policy); err != nil {
		e.Errorf("%s: %s: policy: %v", verb, s.cfgPath, err)
		return nil, ExitUsage
	}
	if j.iso, j.unisolated, code = e.openBoundary(ctx, verb, string(s.cfg.Isolation), s.dir); code != ExitOK {
		return nil, code
	}
	j.sandbox, j.checkRunner = j.iso.tools(j.pol, e.environ())
	rec, closeTrace, code := e.jobTrace(verb, f.traceFile, jobTraceName(verb, strconv.Itoa(s.issue), strconv.FormatInt(s.runID, 10)), j.masker, job)
	if code != ExitOK {
		j.iso.close(e, verb)
		return nil, code
	}
	j.rec = rec
	j.close = func() {
		closeTrace()
		j.iso.close(e, verb)
	}
	if j.tiers, code = e.jobTiers(verb, s.cfgPath, s.cfg, rec, *f.recordDir, j.masker); code != ExitOK {
		j.close()
		return nil, code
	}
	return j, ExitOK
}
