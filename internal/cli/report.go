package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/actionsio"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/event"
	"github.com/roadmap-dev/roadmap/internal/report"
)

// runReport is the report action: after every implement Job (a job with
// `needs: implement` and `if: always()`) it reads how the Job ended and takes
// the one action its class has; on an issue_comment event it handles a reply
// to a needs-input question. It exits 0 when it did its job, a stop included
// (the stop is the implement Job's result, shown by the label, the comment and
// the failing status, not a failure of report); 2 on bad input; 3 when GitHub
// or the record failed it.
func runReport(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "report")
	issue := fs.Int("issue", 0, "the issue (default: from the event)")
	phase := fs.String("phase", report.PhaseImplement, "the Job reported on: implement, or stage (a stage Job: results staged, returned, stopped, yielded)")
	jobResult := fs.String("job-result", "", "needs.<implement>.result: success, failure, cancelled or skipped")
	result := fs.String("result", "", "the implement job's result output: ready, stopped, yielded, returned (empty when it was killed)")
	failureClass := fs.String("failure", "", "the implement job's failure output: a failure class")
	group := fs.Int("group", 0, "the implement job's group output")
	spend := fs.String("spend", "", "the implement job's spend output (JSON)")
	headSHA := fs.String("head-sha", "", "the implement job's head_sha output")
	pr := fs.Int("pr", 0, "the implement job's pr output")
	attempt := fs.Int("attempt", 0, "the implement Job's number (its attempt output or dispatch input; default: found in the record or the log)")
	reason := fs.String("reason", "", "the implement job's reason output, when it has one")
	runID := fs.Int64("run-id", 0, "the workflow run of the implement job (default $GITHUB_RUN_ID)")
	recordComment := fs.Int64("record-comment", 0, "the record comment id (the implement job's record_comment output; default: found by listing the comments once)")
	jobName := fs.String("job-name", "", "the reported job's name in the run (default: the phase, implement or stage)")
	workflow := fs.String("workflow", "", "the implement workflow file a continuation dispatches (default: from $GITHUB_WORKFLOW_REF)")
	refFlag := fs.String("ref", "", "the ref the continuation runs on (default $GITHUB_REF_NAME)")
	maxJobs := fs.Int("max-jobs", 0, "cap of Jobs per item (default: configuration implement.max_jobs)")
	dashboard := fs.Int("dashboard", 0, "the dashboard issue (label roadmap:dashboard): report keeps its item's line there, and the day ledger with a day budget (0: none)")
	dayUSD := fs.Float64("day-budget-usd", 0, "the day's budget in USD across items (default: configuration budgets.day.usd)")
	cfgPath := fs.String("config", "", "configuration file (default $GITHUB_WORKSPACE/"+config.DefaultPath+")")
	asJSON := fs.Bool("json", false, "print the outcome as JSON on stdout")
	repoFlag(fs, env)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		env.Errorf("report takes no arguments")
		return ExitUsage
	}
	io := actionsio.New(env.Getenv, env.Stdout)
	ev, err := event.FromEnv(env.Getenv)
	if err != nil {
		env.Errorf("report: %v", err)
		return ExitUsage
	}
	load := config.LoadExplicit
	if *cfgPath == "" {
		*cfgPath, load = filepath.Join(env.workdir(""), config.DefaultPath), config.Load
	}
	cfg, err := load(*cfgPath)
	if err != nil {
		env.Errorf("report: %v", err)
		io.Error(*cfgPath, configLine(err), err.Error())
		return ExitUsage
	}
	if *maxJobs == 0 {
		*maxJobs = cfg.Implement.MaxJobs
	}
	budget := report.DayBudget{USD: cfg.Budgets.Day.USD, TokensIn: cfg.Budgets.Day.TokensIn, TokensOut: cfg.Budgets.Day.TokensOut}
	if *dayUSD < 0 {
		env.Errorf("report: --day-budget-usd must not be negative")
		return ExitUsage
	}
	if *dayUSD > 0 {
		budget.USD = *dayUSD
	}
	labels := report.Labels{Stage: cfg.Labels.Stage, Implement: cfg.Labels.Implement,
		NeedsInput: cfg.Labels.NeedsInput, Stopped: cfg.Labels.Stopped, Stop: cfg.Labels.Stop, Waiting: cfg.Labels.Waiting}
	if *workflow == "" {
		*workflow = workflowFile(env.Getenv("GITHUB_WORKFLOW_REF"))
	}
	if *refFlag == "" {
		*refFlag = env.Getenv("GITHUB_REF_NAME")
	}
	if *refFlag == "" {
		*refFlag = env.Getenv("GITHUB_REF")
	}
	if *runID == 0 {
		*runID = ev.RunID
	}
	if *issue == 0 {
		*issue = ev.Issue
	}

	masker := env.masker()
	gh, err := env.gitHubClient(masker, time.Time{})
	if err != nil {
		env.Errorf("report: %v", err)
		return ExitUsage
	}
	if ev.Name == "issues" && ev.Action == "edited" && *dashboard > 0 && ev.Issue == *dashboard {
		// A person's ticks on the dashboard's boxes.
		out, err := report.DashboardEdit(ctx, report.DashboardEditOptions{GitHub: gh, Event: ev, Dashboard: *dashboard,
			Workflow: *workflow, Ref: *refFlag, MaxJobs: *maxJobs, Labels: labels, DayBudget: budget,
			Alerts: alertRules(cfg.Alerts), Mask: masker.Mask, Log: env.Stderr})
		if err != nil {
			msg := masker.Mask(err.Error())
			env.Errorf("report: %s", msg)
			io.Error("", 0, "roadmap report: "+msg)
			var ie *report.InputError
			if errors.As(err, &ie) {
				return ExitUsage
			}
			return ExitInternal
		}
		if *asJSON {
			return env.JSON(out)
		}
		line := fmt.Sprintf("dashboard #%d edited by %s: %d box(es) carried out", *dashboard, out.Editor, len(out.Boxes))
		if out.Ignored != "" {
			line += "; " + out.Ignored
		}
		fmt.Fprintln(env.Stderr, masker.Mask(line))
		return ExitOK
	}
	var out report.Outcome
	if ev.Name == "issue_comment" || (ev.Name == "issues" && ev.Action == "labeled" && ev.Label == labels.Stop) {
		out, err = report.Resume(ctx, report.ResumeOptions{GitHub: gh, Event: ev, Workflow: *workflow, Ref: *refFlag,
			MaxJobs: *maxJobs, Labels: labels, Mask: masker.Mask, Log: env.Stderr})
	} else {
		if *issue <= 0 {
			env.Errorf("report: no issue: pass --issue or run on an issue or dispatch event")
			return ExitUsage
		}
		out, err = report.Run(ctx, report.Options{
			Issue: *issue, GitHub: gh, Phase: *phase, JobResult: *jobResult, Result: *result, Failure: *failureClass, Group: *group,
			Spend: *spend, HeadSHA: *headSHA, PR: *pr, Attempt: *attempt, Reason: *reason, RunID: *runID, RunAttempt: runAttempt(env),
			RecordComment: *recordComment, RunURL: env.runURL(*runID),
			JobName: *jobName, Workflow: *workflow, Ref: *refFlag, MaxJobs: *maxJobs, Dashboard: *dashboard,
			DayBudget: budget, Alerts: alertRules(cfg.Alerts), Labels: labels, Mask: masker.Mask, Log: env.Stderr,
		})
	}
	if err != nil {
		msg := masker.Mask(err.Error())
		env.Errorf("report: %s", msg)
		io.Error("", 0, "roadmap report: "+msg)
		var ie *report.InputError
		if errors.As(err, &ie) {
			return ExitUsage
		}
		// What report decided and did before GitHub failed it (the class,
		// the action, a dispatch's failure class) is still the step's.
		setReportOutputs(env, io, out)
		if *asJSON {
			env.JSON(out)
		}
		return ExitInternal
	}
	setReportOutputs(env, io, out)
	if err := io.AddSummary(reportSummary(out)); err != nil {
		env.Errorf("step summary: %v", err)
	}
	if *asJSON {
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
	fmt.Fprintf(&b, "Item spend: %d tokens in, %d out, $%.4f over %d model calls", o.Spend.TokensIn, o.Spend.TokensOut, o.Spend.USD, o.Spend.ModelCalls)
	if !o.SpendRecovered.Zero() {
		fmt.Fprintf(&b, " (%d calls, $%.4f recovered from the killed Job's log)", o.SpendRecovered.ModelCalls, o.SpendRecovered.USD)
	}
	b.WriteString(".\n")
	return b.String()
}

// configLine is the line of a configuration error, 0 when it has none.
func configLine(err error) int {
	var ce *config.Error
	if errors.As(err, &ce) {
		return ce.Line
	}
	return 0
}

// runAttempt is GitHub's attempt of this workflow run ($GITHUB_RUN_ATTEMPT,
// 1 when unset): above 1, report is a re-run.
func runAttempt(env *Env) int {
	if n, err := strconv.Atoi(strings.TrimSpace(env.Getenv("GITHUB_RUN_ATTEMPT"))); err == nil && n > 0 {
		return n
	}
	return 1
}
