package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/roadmap-dev/roadmap/internal/actionsio"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/event"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/job"
	"github.com/roadmap-dev/roadmap/internal/kernel"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/spf13/pflag"
)

// What the two Job verbs (stage, implement) set up the same way before their
// runner: the configuration, the deadline, the checkout, the trace and the
// model ladder. Each returns an exit code other than ExitOK when the verb
// must stop, having said why.

// jobDeadline is when the Job must have handed over: the job's start (now,
// unless startedAt says) plus its timeout-minutes; zero without a timeout.
func (e *Env) jobDeadline(verb, startedAt string, timeout int) (time.Time, int) {
	start := e.factory().Now()
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

// setOutput is the runner's SetOutput: a step output, or a message when it
// cannot be written.
func (e *Env) setOutput(io *actionsio.IO) func(k, v string) {
	return func(k, v string) {
		if err := io.SetOutput(k, v); err != nil {
			e.Errorf("set output %s: %v", k, err)
		}
	}
}

// jobBudgetFlags are the budget flags of the Job verbs: the item's budget
// over all its Jobs, and the day's across items with the dashboard issue
// that holds its ledger.
type jobBudgetFlags struct {
	item, day *float64
	dashboard *int
}

func addBudgetFlags(fs *pflag.FlagSet) jobBudgetFlags {
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
func addJobFlags(fs *pflag.FlagSet, verb, issueHelp, baseHelp string) jobFlags {
	return jobFlags{
		issue:         fs.Int("issue", 0, issueHelp+" (default: from the event)"),
		config:        fs.String("config", "", "configuration file (default WORKDIR/"+config.DefaultPath+")"),
		workdir:       fs.StringP("workdir", "C", "", "the repository checkout (default $GITHUB_WORKSPACE or .)"),
		remote:        fs.String("remote", "origin", "the git remote to push to"),
		base:          fs.String("base", "", baseHelp+" (default: configuration, main)"),
		timeout:       fs.Int("timeout-minutes", 0, "the job's timeout-minutes; with --started-at it sets the deadline"),
		startedAt:     fs.String("started-at", "", "when the job started (RFC 3339 or Unix seconds; default now)"),
		traceFile:     fs.String("trace-file", "", "where the JSONL trace goes (default $RUNNER_TEMP/"+job.TraceName(job.PhaseNamed(verb), "ISSUE", "RUNID")+")"),
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
	fa := e.factory()
	fa.ConfigPath, fa.Workdir = s.cfgPath, s.dir
	cfg, err := fa.Config()
	if err != nil {
		return nil, fa.configFailed(err)
	}
	s.cfg, s.cfgPath = cfg, fa.ConfigPath
	if s.base == "" {
		s.base = cfg.Implement.BaseBranch
	}
	if code := e.jobBudgets(verb, f.budgets, cfg); code != ExitOK {
		return nil, code
	}
	var code int
	if s.deadline, code = e.jobDeadline(verb, *f.startedAt, *f.timeout); code != ExitOK {
		return nil, code
	}
	return s, ExitOK
}

// openJob opens what s's Job runs with through job.Open, for phase, the
// Job numbered number (0: the record's next). A nil Kit means the verb exits
// with code: a setup error it has printed, or ExitOK when the day's budget
// refused the Job (its outputs set, with dayOutputs'). Otherwise the caller
// defers the Kit's Close.
func (e *Env) openJob(ctx context.Context, phase kernel.Phase, s *jobStart, f jobFlags, number int, dayOutputs map[string]string) (*job.Kit, int) {
	verb := phase.Name
	k, err := e.factory().OpenJob(ctx, job.Setup{
		Phase: phase, Issue: s.issue, RunID: s.runID, RecordComment: s.comment, Number: number,
		Dir: s.dir, Remote: *f.remote, Base: s.base, Deadline: s.deadline,
		Config: s.cfg, ConfigPath: s.cfgPath,
		Dashboard: *f.budgets.dashboard, TraceFile: *f.traceFile, RecordDir: *f.recordDir,
		SetOutput: e.setOutput(s.io),
	})
	if errors.Is(err, errNoAuth) {
		e.Errorf("%s: %v", verb, errNoAuth)
		return nil, ExitUsage
	}
	var refused *job.DayRefused
	var setup *job.Error
	switch {
	case errors.As(err, &refused):
		fmt.Fprintf(e.Stderr, "::notice::%s\n", failure.TypedLine(failure.ResultYielded, failure.DayBudgetExhausted, refused.Error()))
		set := e.setOutput(s.io)
		set("result", string(record.ResultYielded))
		set("failure", string(failure.DayBudgetExhausted))
		for k, v := range dayOutputs {
			set(k, v)
		}
		return nil, ExitOK
	case errors.As(err, &setup) && !setup.Usage:
		e.Errorf("%s: %v", verb, err)
		return nil, ExitInternal
	case err != nil:
		e.Errorf("%s: %v", verb, err)
		return nil, ExitUsage
	}
	*f.traceFile = k.TraceFile
	return k, ExitOK
}
