package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/actionsio"
	"github.com/roadmap-dev/roadmap/internal/blockers"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/event"
	"github.com/roadmap-dev/roadmap/internal/report"
	txt "github.com/roadmap-dev/roadmap/internal/text"
)

// reportOptions are `roadmap report`'s flags, parsed, with their defaults
// from the environment and the event filled in.
type reportOptions struct {
	Event                                  *event.Event
	Issue                                  int
	Phase, JobResult, Result, FailureClass string
	Group                                  int
	Spend, HeadSHA                         string
	PR, Attempt                            int
	Reason                                 string
	RunID, RecordComment                   int64
	JobName, Workflow, Ref                 string
	MaxJobs, Dashboard                     int
	DayUSD                                 float64
	JSON                                   bool
}

// runReport is the report action: after every implement Job (a job with
// `needs: implement` and `if: always()`) it reads how the Job ended and takes
// the one action its class has; on an issue_comment event it handles a reply
// to a needs-input question. It exits 0 when it did its job, a stop included
// (the stop is the implement Job's result, shown by the label, the comment and
// the failing status, not a failure of report); 2 on bad input; 3 when GitHub
// or the record failed it.
func runReport(ctx context.Context, env *Env, args []string) int {
	return reportCmd(ctx, env.factory(), args, reportRun)
}

// reportCmd parses report's flags into its options, then calls runF.
func reportCmd(ctx context.Context, f *Factory, args []string, runF func(context.Context, *Factory, *reportOptions) int) int {
	env, o := f.env, &reportOptions{}
	fs := newFlags(env, "report")
	fs.IntVar(&o.Issue, "issue", 0, "the issue (default: from the event)")
	fs.StringVar(&o.Phase, "phase", report.PhaseImplement, "the Job reported on: implement, or stage (a stage Job: results staged, returned, stopped, yielded)")
	fs.StringVar(&o.JobResult, "job-result", "", "needs.<implement>.result: success, failure, cancelled or skipped")
	fs.StringVar(&o.Result, "result", "", "the implement job's result output: ready, stopped, yielded, returned (empty when it was killed)")
	fs.StringVar(&o.FailureClass, "failure", "", "the implement job's failure output: a failure class")
	fs.IntVar(&o.Group, "group", 0, "the implement job's group output")
	fs.StringVar(&o.Spend, "spend", "", "the implement job's spend output (JSON)")
	fs.StringVar(&o.HeadSHA, "head-sha", "", "the implement job's head_sha output")
	fs.IntVar(&o.PR, "pr", 0, "the implement job's pr output")
	fs.IntVar(&o.Attempt, "attempt", 0, "the implement Job's number (its attempt output or dispatch input; default: found in the record or the log)")
	fs.StringVar(&o.Reason, "reason", "", "the implement job's reason output, when it has one")
	fs.Int64Var(&o.RunID, "run-id", 0, "the workflow run of the implement job (default $GITHUB_RUN_ID)")
	fs.Int64Var(&o.RecordComment, "record-comment", 0, "the record comment id (the implement job's record_comment output; default: found by listing the comments once)")
	fs.StringVar(&o.JobName, "job-name", "", "the reported job's name in the run (default: the phase, implement or stage)")
	fs.StringVar(&o.Workflow, "workflow", "", "the implement workflow file a continuation dispatches (default: from $GITHUB_WORKFLOW_REF)")
	fs.StringVar(&o.Ref, "ref", "", "the ref the continuation runs on (default $GITHUB_REF_NAME)")
	fs.IntVar(&o.MaxJobs, "max-jobs", 0, "cap of Jobs per item (default: configuration implement.max_jobs)")
	fs.IntVar(&o.Dashboard, "dashboard", 0, "the dashboard issue (label roadmap:dashboard): report keeps its item's line there, and the day ledger with a day budget (0: no line; the ledger on the issue roadmap opens, label roadmap:ledger)")
	fs.Float64Var(&o.DayUSD, "day-budget-usd", 0, "the day's budget in USD across items (default: configuration budgets.day.usd)")
	fs.StringVar(&f.ConfigPath, "config", "", "configuration file (default $GITHUB_WORKSPACE/"+config.DefaultPath+")")
	fs.BoolVar(&o.JSON, "json", false, "print the outcome as JSON on stdout")
	repoFlag(fs, env)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		env.Errorf("report takes no arguments")
		return ExitUsage
	}
	if o.DayUSD < 0 {
		env.Errorf("report: --day-budget-usd must not be negative")
		return ExitUsage
	}
	var err error
	if o.Event, err = event.FromEnv(env.Getenv); err != nil {
		env.Errorf("report: %v", err)
		return ExitUsage
	}
	o.Workflow = firstSet(o.Workflow, workflowFile(env.Getenv("GITHUB_WORKFLOW_REF")))
	o.Ref = firstSet(o.Ref, env.Getenv("GITHUB_REF_NAME"), env.Getenv("GITHUB_REF"))
	if o.RunID == 0 {
		o.RunID = o.Event.RunID
	}
	if o.Issue == 0 {
		o.Issue = o.Event.Issue
	}
	return runF(ctx, f, o)
}

// reportRun takes the one action the event and the Job's outputs call
// for: a person's ticks on the dashboard, a reply or a stop label, or how
// the Job ended.
func reportRun(ctx context.Context, f *Factory, o *reportOptions) int {
	env := f.env
	cfg, gh, code := f.configAndGitHub()
	if code != ExitOK {
		return code
	}
	if o.MaxJobs == 0 {
		o.MaxJobs = cfg.Implement.MaxJobs
	}
	var err error
	ev, labels := o.Event, reportLabels(cfg)
	if ev.Name == "issues" && ev.Action == "edited" && o.Dashboard > 0 && ev.Issue == o.Dashboard {
		return reportDashboardEdit(ctx, f, o, report.DashboardEditOptions{GitHub: gh, Event: ev, Dashboard: o.Dashboard,
			Workflow: o.Workflow, Ref: o.Ref, MaxJobs: o.MaxJobs, Labels: labels, DayBudget: dayBudget(cfg, o.DayUSD),
			Alerts: alertRules(cfg.Alerts), Mask: f.Masker().Mask, Log: env.Stderr})
	}
	var out report.Outcome
	if ev.Name == "issue_comment" || (ev.Name == "issues" && ev.Action == "labeled" && ev.Label == labels.Stop) {
		out, err = report.Resume(ctx, report.ResumeOptions{GitHub: gh, Event: ev, Workflow: o.Workflow, Ref: o.Ref,
			MaxJobs: o.MaxJobs, Labels: labels, Mask: f.Masker().Mask, Log: env.Stderr})
	} else {
		if o.Issue <= 0 {
			env.Errorf("report: no issue: pass --issue or run on an issue or dispatch event")
			return ExitUsage
		}
		out, err = report.Run(ctx, o.runOptions(f, cfg))
	}
	return reportOutcome(f, o, out, err)
}

// runOptions are report.Run's options from o and the configuration.
func (o *reportOptions) runOptions(f *Factory, cfg *config.Config) report.Options {
	env := f.env
	gh, _ := f.GitHub()
	return report.Options{
		Issue: o.Issue, GitHub: gh, Phase: o.Phase, JobResult: o.JobResult, Result: o.Result, Failure: o.FailureClass, Group: o.Group,
		Spend: o.Spend, HeadSHA: o.HeadSHA, PR: o.PR, Attempt: o.Attempt, Reason: o.Reason, RunID: o.RunID, RunAttempt: runAttempt(env),
		RecordComment: o.RecordComment, RunURL: env.runURL(o.RunID),
		JobName: o.JobName, Workflow: o.Workflow, Ref: o.Ref, MaxJobs: o.MaxJobs, Dashboard: o.Dashboard,
		DayBudget: dayBudget(cfg, o.DayUSD), Alerts: alertRules(cfg.Alerts), Labels: reportLabels(cfg), Mask: f.Masker().Mask, Log: env.Stderr,
		Tracker: trackerDrive(cfg), Blockers: blockers.Options{NotPlannedMet: cfg.Blockers.NotPlannedMet},
	}
}

// reportDashboardEdit carries out a person's ticks on the dashboard's boxes.
func reportDashboardEdit(ctx context.Context, f *Factory, o *reportOptions, eo report.DashboardEditOptions) int {
	env := f.env
	out, err := report.DashboardEdit(ctx, eo)
	if err != nil {
		return reportFailed(f, err)
	}
	if o.JSON {
		return env.JSON(out)
	}
	line := fmt.Sprintf("dashboard #%d edited by %s: %d box(es) carried out", o.Dashboard, out.Editor, len(out.Boxes))
	if out.Ignored != "" {
		line += "; " + out.Ignored
	}
	fmt.Fprintln(env.Stderr, f.Masker().Mask(line))
	return ExitOK
}

// reportFailed says report's error, masked, on stderr and as an annotation;
// it returns the error's exit code.
func reportFailed(f *Factory, err error) int {
	msg := f.Masker().Mask(err.Error())
	f.env.Errorf("report: %s", msg)
	f.IO().Error("", 0, "roadmap report: "+msg)
	return exitFor(err)
}

// reportOutcome sets the step's outputs and summary from out and prints
// its line, or says err. What report decided and did before GitHub failed
// it (the class, the action, a dispatch's failure class) is still the
// step's.
func reportOutcome(f *Factory, o *reportOptions, out report.Outcome, err error) int {
	env, io := f.env, f.IO()
	if err != nil {
		code := reportFailed(f, err)
		if code == ExitUsage {
			return code
		}
		setReportOutputs(env, io, out)
		if o.JSON {
			env.JSON(out)
		}
		return code
	}
	setReportOutputs(env, io, out)
	if err := io.AddSummary(reportSummary(out)); err != nil {
		env.Errorf("step summary: %v", err)
	}
	if o.JSON {
		return env.JSON(out)
	}
	// In Actions stdout carries workflow commands only; the line goes to the log.
	if io.InActions() {
		fmt.Fprintln(env.Stderr, reportLine(out))
	} else {
		fmt.Fprintln(env.Stdout, reportLine(out))
	}
	return ExitOK
}

// workflowFile is the workflow file of GITHUB_WORKFLOW_REF
// ("owner/repo/.github/workflows/roadmap.yml@refs/heads/main" → "roadmap.yml").
func workflowFile(ref string) string {
	p, _, _ := strings.Cut(ref, "@")
	if p == "" {
		return ""
	}
	return path.Base(p)
}

func setReportOutputs(env *Env, io *actionsio.IO, o report.Outcome) {
	spend, _ := json.Marshal(o.Spend)
	outputs := [][2]string{
		{"class", string(o.Class)},
		{"action", string(o.Action)},
		{"dispatched_run_id", strconv.FormatInt(o.DispatchedRunID, 10)},
		{"next_attempt", strconv.Itoa(o.NextAttempt)},
		{"stopped", strconv.FormatBool(o.Stopped)},
		{"spend", string(spend)},
		{"spend_lost", strconv.FormatBool(o.SpendLost)},
		{"spend_estimated", strconv.Itoa(o.SpendEstimated.ModelCalls)},
		{"dispatch_failure", string(o.DispatchFailure)},
	}
	for _, kv := range outputs {
		if err := io.SetOutput(kv[0], kv[1]); err != nil {
			env.Errorf("set output %s: %v", kv[0], err)
		}
	}
}

// reportLine is the one line a person reads in the log.
func reportLine(o report.Outcome) string {
	var b strings.Builder
	fmt.Fprintf(&b, "issue #%d", o.Issue)
	if o.Job > 0 {
		fmt.Fprintf(&b, " Job %d", o.Job)
	}
	ended := o.Result
	if ended == "" {
		ended = "no result"
	}
	if o.Class != "" {
		ended += " (" + string(o.Class)
		if o.KillReason != "" {
			ended += ", " + o.KillReason
		}
		ended += ")"
	}
	fmt.Fprintf(&b, ": %s → %s", ended, o.Action)
	switch {
	case o.Dispatched != nil && o.DispatchFailure != "":
		fmt.Fprintf(&b, ": Job %d dispatched (run %d) after a failed dispatch (%s, %d sent)", o.NextAttempt, o.Dispatched.RunID, o.DispatchFailure, o.DispatchAttempts)
	case o.Dispatched != nil:
		fmt.Fprintf(&b, ": Job %d dispatched (run %d)", o.NextAttempt, o.Dispatched.RunID)
	case o.DispatchFailure != "":
		fmt.Fprintf(&b, ": Job %d NOT dispatched (%s): re-run report", o.NextAttempt, o.DispatchFailure)
	}
	if o.Reason != "" {
		fmt.Fprintf(&b, "; %s", o.Reason)
	}
	if o.SpendLost {
		b.WriteString("; the killed Job's spend after its last mark is lost (its log is gone, or the runner lost communication)")
	}
	if n := o.SpendEstimated.ModelCalls; n > 0 {
		fmt.Fprintf(&b, "; %d model call(s) of the killed Job at their booked estimate (killed while in flight)", n)
	}
	return b.String()
}

func reportSummary(o report.Outcome) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## roadmap · report #%d · Job %d: %s\n\n", o.Issue, o.Job, o.Action)
	fmt.Fprintf(&b, "%s\n\n", reportLine(o))
	if o.Evidence != "" {
		fmt.Fprintf(&b, "Evidence (log line %d): `%s`\n\n", o.EvidenceLine, strings.ReplaceAll(o.Evidence, "`", "'"))
	}
	fmt.Fprintf(&b, "Item spend: %d tokens in, %d out, %s over %d model calls", o.Spend.TokensIn, o.Spend.TokensOut, txt.USD(o.Spend.USD), o.Spend.ModelCalls)
	if !o.SpendRecovered.Zero() {
		fmt.Fprintf(&b, " (%d calls, %s recovered from the killed Job's log)", o.SpendRecovered.ModelCalls, txt.USD(o.SpendRecovered.USD))
	}
	b.WriteString(".\n")
	return b.String()
}

// runAttempt is GitHub's attempt of this workflow run ($GITHUB_RUN_ATTEMPT,
// 1 when unset): above 1, report is a re-run.
func runAttempt(env *Env) int {
	if n, err := strconv.Atoi(strings.TrimSpace(env.Getenv("GITHUB_RUN_ATTEMPT"))); err == nil && n > 0 {
		return n
	}
	return 1
}
