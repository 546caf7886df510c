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

// jobOptions are the flags both Job verbs (stage, implement) take, with one
// meaning, parsed.
type jobOptions struct {
	Issue                             int
	ConfigPath, Workdir, Remote, Base string
	TimeoutMinutes                    int
	StartedAt, TraceFile              string
	RunID                             int64
	// ItemUSD is the item's budget over all its Jobs, DayUSD the day's
	// across items, Dashboard the issue holding the day's ledger; above
	// zero each overrides the configuration.
	ItemUSD, DayUSD float64
	Dashboard       int
	RecordComment   int64
	RecordDir       string
	JSON            bool
}

// addJobFlags defines the shared flags of verb on fs into o: issueHelp says
// what the Job does with the issue, baseHelp what the base branch is for.
func addJobFlags(fs *pflag.FlagSet, o *jobOptions, verb, issueHelp, baseHelp string) {
	fs.IntVar(&o.Issue, "issue", 0, issueHelp+" (default: from the event)")
	fs.StringVar(&o.ConfigPath, "config", "", "configuration file (default WORKDIR/"+config.DefaultPath+")")
	fs.StringVarP(&o.Workdir, "workdir", "C", "", "the repository checkout (default $GITHUB_WORKSPACE or .)")
	fs.StringVar(&o.Remote, "remote", "origin", "the git remote to push to")
	fs.StringVar(&o.Base, "base", "", baseHelp+" (default: configuration, main)")
	fs.IntVar(&o.TimeoutMinutes, "timeout-minutes", 0, "the job's timeout-minutes; with --started-at it sets the deadline")
	fs.StringVar(&o.StartedAt, "started-at", "", "when the job started (RFC 3339 or Unix seconds; default now)")
	fs.StringVar(&o.TraceFile, "trace-file", "", "where the JSONL trace goes (default $RUNNER_TEMP/"+job.TraceName(job.PhaseNamed(verb), "ISSUE", "RUNID")+")")
	fs.Int64Var(&o.RunID, "run-id", 0, "the workflow run id (default $GITHUB_RUN_ID)")
	fs.Float64Var(&o.ItemUSD, "budget-usd", 0, "the item's budget in USD over all its Jobs, stage's and implement's (default: configuration budgets.item.usd)")
	fs.Float64Var(&o.DayUSD, "day-budget-usd", 0, "the day's budget in USD across items (default: configuration budgets.day.usd)")
	fs.IntVar(&o.Dashboard, "dashboard", 0, "the dashboard issue, which holds the day's spend ledger (0: the ledger issue roadmap opens, label roadmap:ledger)")
	fs.Int64Var(&o.RecordComment, "record-comment", 0, "the issue's record comment id, handed over by an earlier job (default: the dispatch input, else found by listing the comments once)")
	fs.StringVar(&o.RecordDir, "record", "", "write every model exchange to DIR as replay fixtures (docs/models.md)")
	fs.BoolVar(&o.JSON, "json", false, "print the result as JSON on stdout")
}

// parsedJob checks the shared flags of verb once they are parsed: the
// code is ExitOK, or ExitUsage when the verb must stop, having said why.
func (e *Env) parsedJob(verb string, o *jobOptions) int {
	if o.ItemUSD < 0 || o.DayUSD < 0 || o.Dashboard < 0 {
		e.Errorf("%s: budgets and --dashboard must not be negative", verb)
		return ExitUsage
	}
	return ExitOK
}

// jobBudgets takes the budget flags into cfg: a flag above zero overrides
// the configuration.
func jobBudgets(o *jobOptions, cfg *config.Config) {
	if o.ItemUSD > 0 {
		cfg.Budgets.Item.USD = o.ItemUSD
	}
	if o.DayUSD > 0 {
		cfg.Budgets.Day.USD = o.DayUSD
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

// startJob reads the shared flags o of verb; a nil jobStart means the verb
// exits with code, having said why.
func (e *Env) startJob(verb string, o *jobOptions) (*jobStart, int) {
	fa := e.factory()
	s := &jobStart{io: fa.IO(), issue: o.Issue, runID: o.RunID, comment: o.RecordComment, cfgPath: o.ConfigPath, base: o.Base}
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
	s.dir = e.workdir(o.Workdir)
	fa.ConfigPath, fa.Workdir = s.cfgPath, s.dir
	cfg, err := fa.Config()
	if err != nil {
		return nil, fa.configFailed(err)
	}
	s.cfg, s.cfgPath = cfg, fa.ConfigPath
	if s.base == "" {
		s.base = cfg.Implement.BaseBranch
	}
	jobBudgets(o, cfg)
	var code int
	if s.deadline, code = e.jobDeadline(verb, o.StartedAt, o.TimeoutMinutes); code != ExitOK {
		return nil, code
	}
	return s, ExitOK
}

// openJob opens what s's Job runs with through job.Open, for phase, the
// Job numbered number (0: the record's next). A nil Kit means the verb exits
// with code: a setup error it has printed, or ExitOK when the day's budget
// refused the Job (its outputs set, with dayOutputs'). Otherwise the caller
// defers the Kit's Close.
func (e *Env) openJob(ctx context.Context, phase kernel.Phase, s *jobStart, o *jobOptions, number int, dayOutputs map[string]string) (*job.Kit, int) {
	verb := phase.Name
	k, err := e.factory().OpenJob(ctx, job.Setup{
		Phase: phase, Issue: s.issue, RunID: s.runID, RecordComment: s.comment, Number: number,
		Dir: s.dir, Remote: o.Remote, Base: s.base, Deadline: s.deadline,
		Config: s.cfg, ConfigPath: s.cfgPath,
		Dashboard: o.Dashboard, TraceFile: o.TraceFile, RecordDir: o.RecordDir,
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
	o.TraceFile = k.TraceFile
	return k, ExitOK
}
