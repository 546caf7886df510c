package implement

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/actionsio"
	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/git"
	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// mark writes ch to the record in one write, with what every mark carries:
// the item's spend so far, the attempt and this Job's line of implement.jobs.
// The earlier stop's hand-off keys are cleared in the write after this Job's
// first mark, so a Job killed before its first mark leaves them for the next.
func (r *runner) mark(ctx context.Context, ch record.Changes) error {
	return r.write(ctx, ch, record.JobOutcome{})
}

func (r *runner) write(ctx context.Context, ch record.Changes, outcome record.JobOutcome) error {
	var all record.Changes
	if r.marks >= 1 && r.handoffPending {
		all.Delete(record.KeyImplementCheckLog, record.KeyImplementConflict)
	}
	all.Merge(r.pending)
	all.Merge(ch)
	all.SetSpend(r.prior.Add(r.job))
	all.SetAttempt(r.attempt)
	outcome.Job, outcome.RunID, outcome.Spend = r.attempt, r.o.RunID, r.job
	// Counted before this write: the line says what the Job had spent on
	// GitHub when it wrote its last mark.
	outcome.Requests = r.o.GitHub.Requests().Counted()
	if outcome.Group == 0 {
		outcome.Group = r.lastGroup
	}
	change := func(cur *record.Record) (record.Changes, error) {
		var c record.Changes
		c.Merge(all)
		c.SetJobs(jobsWith(cur, outcome))
		return c, nil
	}
	if err := r.o.GitHub.WriteRecord(ctx, r.o.Issue, &r.rc, change, r.view); err != nil {
		return fmt.Errorf("write marks %s: %w", keyList(all), err)
	}
	r.rec = r.rc.Record
	if r.marks >= 1 {
		r.handoffPending = false
	}
	r.marks++
	r.pending = record.Changes{}
	return nil
}

// jobsWith returns cur's implement.jobs with this Job's line set.
func jobsWith(cur *record.Record, j record.JobOutcome) []record.JobOutcome {
	jobs, _ := cur.Jobs()
	return record.WithJob(jobs, j)
}

func keyList(c record.Changes) string {
	var ks []string
	for _, k := range c.Keys() {
		ks = append(ks, string(k))
	}
	return strings.Join(ks, ", ")
}

// finish ends the Job: a WIP commit when work is left in the tree, the last
// mark with the typed result, the PR comment and the outputs. It runs on a
// fresh context when the Job's own was cancelled, within the grace the
// runner gives after SIGINT.
func (r *runner) finish(ctx context.Context, end ending) (Result, error) {
	o := r.o
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
	}
	var ch record.Changes
	ch.SetResult(end.result)
	switch end.result {
	case record.ResultReady:
		ch.Delete(record.KeyImplementFailure, record.KeyImplementStopped, record.KeyImplementWIP)
	case record.ResultStopped:
		ch.SetFailure(string(end.class))
		ch.SetStopped(end.step)
	case record.ResultYielded, record.ResultReturned:
		if end.class != "" {
			ch.SetFailure(string(end.class))
		} else {
			ch.Delete(record.KeyImplementFailure)
		}
	}
	if end.checkLog != "" {
		ch.SetCheckLog(o.Mask(end.checkLog))
	} else if end.class == failure.PlanWrong && end.reason != "" {
		// The evidence of a wrong plan goes back to stage with the item:
		// the plan amendment starts from it.
		ch.SetCheckLog(o.Mask(end.reason))
	}
	if len(end.conflict) > 0 {
		ch.SetConflict(end.conflict)
	}
	if end.question != "" {
		ch.SetQuestion(o.Mask(end.question))
		ch.Delete(record.KeyImplementAnswer)
	}
	if end.result != record.ResultReady && end.result != "" {
		if sha := r.wip(ctx); sha != "" {
			ch.SetWIP(record.SHA(sha))
		}
	}
	phase := map[record.Result]trace.Phase{record.ResultReady: trace.PhaseReady, record.ResultStopped: trace.PhaseStopped,
		record.ResultYielded: trace.PhaseYielded, record.ResultReturned: trace.PhaseReturned}[end.result]
	r.event(trace.Event{Type: trace.TypePhase, Phase: phase, Step: end.step, Reason: end.reason, Outcome: string(end.class)})
	_, copyText := trace.Bound(o.Trace.Events(), trace.RecordLimit)
	ch.SetTrace([]byte(copyText))
	outcome := record.JobOutcome{Result: end.result, Failure: string(end.class)}
	res := Result{Result: end.result, Failure: string(end.class), Reason: end.reason, Group: r.lastGroup, HeadSHA: r.head,
		Spend: r.prior.Add(r.job), JobSpend: r.job, PR: r.pr.Number, Question: end.question, Attempt: r.attempt}
	if end.result == record.ResultReady {
		res.CI = r.ci
	}
	if end.result != record.ResultReady {
		// The runner's own line: the classifier reads it first in this Job's log.
		level := map[record.Result]string{record.ResultStopped: "error", record.ResultYielded: "notice", record.ResultReturned: "warning"}[end.result]
		r.command(level, failure.TypedLine(failure.Result(end.result), end.class, end.reason))
	}
	r.doing = doing(end, r.pr.Number)
	werr := r.write(ctx, ch, outcome)
	if werr == nil && r.pr.Number != 0 {
		if _, err := o.GitHub.UpsertMarkerComment(ctx, r.pr.Number, o.Marker, r.comment(end)); err != nil {
			r.logf("roadmap: update the PR comment: %v", err)
		}
	}
	res.RecordComment = r.rc.ID
	r.outputs(res)
	r.logf("roadmap: Job %d ended %s%s; item spend %s", r.attempt, end.result, suffix(end), spendText(res.Spend))
	if werr != nil {
		return res, fmt.Errorf("write the typed result: %w", werr)
	}
	return res, nil
}

func suffix(end ending) string {
	var parts []string
	if end.class != "" {
		parts = append(parts, string(end.class))
	}
	if end.reason != "" {
		parts = append(parts, end.reason)
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ": ") + ")"
}

// wip commits and pushes work left in the tree so the next Job can see it.
// It is best effort: a Job that cannot do it loses only uncommitted edits.
func (r *runner) wip(ctx context.Context) string {
	changed, err := r.o.Repo.HasChanges(ctx)
	if err != nil || !changed {
		return ""
	}
	sha, err := r.o.Repo.CommitWIP(ctx, git.Message{Subject: fmt.Sprintf("roadmap: work in progress (Job %d)", r.attempt), Issue: r.o.Issue})
	if err != nil || sha == "" {
		return ""
	}
	if err := r.o.Repo.Push(ctx, r.o.Remote, r.branch); err != nil {
		r.logf("roadmap: push the WIP commit: %v", err)
		return ""
	}
	r.head = sha
	return sha
}

func (r *runner) outputs(res Result) {
	set := r.o.SetOutput
	set("result", string(res.Result))
	set("failure", res.Failure)
	set("group", fmt.Sprint(res.Group))
	set("head_sha", res.HeadSHA)
	set("spend", jsonText(res.Spend))
	set("attempt", fmt.Sprint(res.Attempt))
	set("reason", res.Reason)
	if res.PR != 0 {
		set("pr", fmt.Sprint(res.PR))
	}
	if res.RecordComment != 0 {
		set("record_comment", fmt.Sprint(res.RecordComment))
	}
}

// doing is what the record comment says at the end of a Job.
func doing(end ending, pr int) string {
	why := ""
	if end.reason != "" {
		why = ": " + end.reason
	}
	switch end.result {
	case record.ResultReady:
		return fmt.Sprintf("ready: every group passed and PR #%d is ready for review", pr)
	case record.ResultStopped:
		return fmt.Sprintf("stopped (%s) in %s%s", end.class, end.step, why)
	case record.ResultReturned:
		if end.class == failure.NeedsInput {
			return "needs input: a question waits for a person with write access"
		}
		return fmt.Sprintf("returned (%s)%s", end.class, why)
	case record.ResultYielded:
		return fmt.Sprintf("yielded in %s%s; a continuation goes on", end.step, why)
	}
	return ""
}

// logf prints a line of the Job's log. Its arguments often hold model or
// tool text (a reason, a plan title, an error), so the line is masked and
// made plain: it can never be a workflow command.
func (r *runner) logf(format string, args ...any) {
	fmt.Fprintln(r.o.Log, actionsio.PlainLine(r.o.Mask(fmt.Sprintf(format, args...))))
}

// section opens a collapsible section of the job log for one phase; the
// function it returns closes it. The runner does not nest sections.
func (r *runner) section(format string, args ...any) func() {
	fmt.Fprintln(r.o.Log, actionsio.Group(r.o.Mask(fmt.Sprintf(format, args...))))
	return func() { fmt.Fprintln(r.o.Log, actionsio.EndGroup) }
}

// command prints one of the runner's own workflow commands (::error:: and
// the like) whose message may hold model text.
func (r *runner) command(level, msg string) {
	fmt.Fprintln(r.o.Log, actionsio.Command(level, r.o.Mask(msg)))
}

func (r *runner) event(e trace.Event) {
	if e.Group == 0 {
		e.Group = r.group
	}
	if e.Job == 0 {
		e.Job = r.attempt
	}
	if err := r.o.Trace.Add(e); err != nil {
		r.logf("roadmap: trace: %v", err)
	}
}

// observer receives the agent's events: each model call is added to the
// Job's spend and printed as a spend line, so a killed Job's spend can be
// read back from its log.
type observer runner

func (ob *observer) ModelCall(e agent.ModelCallEvent) {
	r := (*runner)(ob)
	r.calls++
	r.job = r.job.Add(record.Spend{TokensIn: e.TokensIn, TokensOut: e.TokensOut, USD: e.USD, ModelCalls: 1})
	ev := trace.Event{Type: trace.TypeModelCall, Model: e.Model, TokensIn: e.TokensIn, TokensOut: e.TokensOut, USD: e.USD,
		Duration: e.Duration, Outcome: e.Outcome}
	r.event(ev)
	ev.Job, ev.Group = r.attempt, r.group
	fmt.Fprintln(r.o.Log, actionsio.PlainLine(r.o.Trace.SpendLine(trace.SpendFromEvent(ev, r.calls))))
}

func (ob *observer) ToolCall(e agent.ToolCallEvent) {
	(*runner)(ob).event(trace.Event{Type: trace.TypeToolCall, Tool: e.Name, ArgsDigest: e.ArgsDigest, ResultClass: e.ResultClass, Duration: e.Duration})
}

func (ob *observer) Retry(e agent.RetryEvent) {
	(*runner)(ob).event(trace.Event{Type: trace.TypeRetry, Reason: e.Reason, Attempt: e.Attempt, Wait: e.Wait})
}

// groupTask is the instruction of a group's agent step.
func groupTask(change *plan.Change, g plan.Group) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Implement task group %d of the plan %q: %s\n\n", g.Number, change.ID, g.Title)
	for _, t := range g.Tasks {
		fmt.Fprintf(&b, "- %s %s\n", t.ID, t.Text)
	}
	b.WriteString("\nWhen every verify command of the group passes, call finish with a one-line summary. ")
	b.WriteString("Do not edit tasks.md: the runner ticks the tasks when the checks pass.")
	return b.String()
}

// groupContext is the plan's text for the prompt, proposal first. The files
// are read inside the work tree only; one that leads out of it (a symlink
// the agent committed) is not read, and the prompt says why.
func groupContext(workdir string, change *plan.Change) []agent.ContextPart {
	var parts []agent.ContextPart
	for i, name := range []string{"proposal.md", "design.md"} {
		data, err := change.ReadFile(name)
		switch {
		case err == nil:
			parts = append(parts, agent.ContextPart{Name: name, Text: string(data), Priority: 10 - i})
		case !errors.Is(err, fs.ErrNotExist):
			parts = append(parts, agent.ContextPart{Name: name, Text: "[not read: " + err.Error() + "]", Priority: 10 - i})
		}
	}
	return parts
}
