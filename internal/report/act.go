package report

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/recordstore"
	"github.com/roadmap-dev/roadmap/internal/redact"
	"github.com/roadmap-dev/roadmap/internal/report/decide"
	"github.com/roadmap-dev/roadmap/internal/text"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// act takes the decided action on GitHub.
func (r *reporter) act(ctx context.Context) error {
	switch r.d.Action {
	case ActionReady:
		return r.andWake(ctx, r.ready(ctx))
	case ActionContinue:
		return r.continuation(ctx)
	case ActionYield:
		return r.yield(ctx)
	case ActionReturnToStage:
		return r.andWake(ctx, r.returnToStage(ctx))
	case ActionAsk:
		return r.ask(ctx)
	case ActionNone:
		return nil
	}
	return r.andWake(ctx, r.stop(ctx))
}

// andWake follows an item's end (ready, stopped, back to stage), whose
// Job gave its claims back, with the wake of the items that waited for
// them (claimwake.go). The action's own error comes first; a failed wake is
// logged, the waiters keep their label and are listed again at the next end.
func (r *reporter) andWake(ctx context.Context, err error) error {
	if r.stage {
		return err
	}
	r.wakeClaimWaiters(ctx)
	return err
}

// ready sets the head's status to success and clears a stop or a question
// left from before.
func (r *reporter) ready(ctx context.Context) error {
	if err := r.status(ctx, "success", "ready: every group passed, the PR is ready for review"); err != nil {
		return err
	}
	return r.removeLabels(ctx, r.o.Labels.Stopped, r.o.Labels.NeedsInput, r.o.Labels.Waiting)
}

// maxDispatchAttempts bounds the dispatches of one continuation in one run
// of report: the first and two more, each after a look for the run.
const maxDispatchAttempts = 3

// continuation dispatches the next Job of the item, once. The intent mark
// (the Job's line's dispatching time) went into the record with report's
// mark, before the dispatch; a re-run of report that finds it looks first:
// the next Job already in the record, or a run of the workflow dispatched
// since the mark, is the continuation landed, and nothing is sent again.
// No run since the mark means the first run was killed before its dispatch
// landed: it is sent now.
//
// A dispatch that fails in a way that may have landed (a 5xx, a dropped
// answer: GitHub may have started the run and lost the answer) is
// reconciled from ground truth, the workflow's runs dispatched since it was
// sent, and sent again only when no run is there, at most
// maxDispatchAttempts times. Its class is in the outcome (DispatchFailure);
// a dispatch that never lands is said in the record comment, with the intent
// mark, so a re-run of report looks before it sends.
func (r *reporter) continuation(ctx context.Context) error {
	next := r.job + 1
	if r.dispatching != 0 || r.o.RunAttempt > 1 {
		defer r.clearNotDispatched(ctx)
		var since time.Time
		if r.dispatching != 0 {
			since = time.Unix(r.dispatching, 0).UTC()
		}
		done, err := r.landed(ctx, next, since)
		if err != nil || done {
			return err
		}
	}
	inputs := map[string]any{"issue": strconv.Itoa(r.o.Issue), "attempt": strconv.Itoa(next)}
	if r.stage {
		// A stage continuation: the stage Job numbers itself from stage.jobs.
		inputs = map[string]any{"issue": strconv.Itoa(r.o.Issue), "phase": PhaseStage}
	}
	if r.rc.ID != 0 {
		// The continuation reads the record comment by its id, no search.
		inputs["record-comment"] = strconv.FormatInt(r.rc.ID, 10)
	}
	// The runs list filters on whole seconds of creation time.
	sent := r.o.Clock.Now().UTC().Truncate(time.Second)
	res, err := r.dispatch(ctx, inputs)
	for attempt := 1; err != nil; attempt++ {
		class := dispatchClass(err)
		r.out.DispatchFailure, r.out.DispatchAttempts = class, attempt
		r.logf("report: issue #%d: the dispatch of Job %d failed (%s): %v", r.o.Issue, next, class, err)
		if !github.Indeterminate(err) {
			return r.dispatchFailed(ctx, next, class, err)
		}
		// It may have landed: look before sending it again.
		done, lerr := r.landed(ctx, next, sent)
		if lerr != nil {
			return r.dispatchFailed(ctx, next, class, fmt.Errorf("%w (and looking for its run: %v)", err, lerr))
		}
		if done {
			return nil
		}
		if attempt == maxDispatchAttempts {
			return r.dispatchFailed(ctx, next, class, err)
		}
		if serr := r.o.Clock.Sleep(ctx, time.Duration(attempt)*2*time.Second); serr != nil {
			return r.dispatchFailed(ctx, next, class, err)
		}
		res, err = r.dispatch(ctx, inputs)
	}
	if r.out.DispatchFailure != "" {
		r.out.DispatchAttempts++ // the one that landed
	}
	r.out.Dispatched, r.out.DispatchedRunID, r.out.NextAttempt = &res, res.RunID, next
	r.logf("report: issue #%d: dispatched Job %d (%s on %s) run %d", r.o.Issue, next, r.o.Workflow, r.o.Ref, res.RunID)
	return nil
}

// dispatch sends one workflow_dispatch of the continuation.
func (r *reporter) dispatch(ctx context.Context, inputs map[string]any) (github.DispatchResult, error) {
	res, err := r.o.GitHub.DispatchWorkflow(ctx, r.o.Workflow, r.o.Ref, inputs)
	var se *github.StatusError
	if errors.As(err, &se) && se.Status == 422 && strings.Contains(se.Message, "Unexpected inputs") && inputs["record-comment"] != nil {
		// A caller workflow from before the record comment declares no
		// record-comment input: dispatch without it (the Job lists the
		// comments once instead).
		delete(inputs, "record-comment")
		res, err = r.o.GitHub.DispatchWorkflow(ctx, r.o.Workflow, r.o.Ref, inputs)
	}
	return res, err
}

// dispatchClass is the failure class of a failed dispatch: indeterminate
// when it may have landed (the answer was a 5xx or never came), else the
// error's own class.
func dispatchClass(err error) failure.Class {
	if github.Indeterminate(err) {
		return failure.Indeterminate
	}
	return failure.ClassifyError(err)
}

// dispatchFailed ends a continuation whose dispatch did not land: the record
// gets the intent mark (a re-run of report looks for the run before it sends
// one) and its comment says the next Job was not started, and why. The
// error fails report (exit 3): the item goes on when report is re-run.
func (r *reporter) dispatchFailed(ctx context.Context, next int, class failure.Class, err error) error {
	r.out.NextAttempt = next
	r.dispatchErr = class
	fail := fmt.Errorf("dispatch Job %d of issue %d (%s): %w", next, r.o.Issue, class, err)
	werr := recordstore.New(r.o.GitHub).Write(ctx, r.o.Issue, &r.rc, func(cur *record.Record) (record.Changes, error) {
		var ch record.Changes
		var lines []record.JobOutcome
		if r.stage {
			lines, _ = cur.StageJobs()
		} else {
			lines, _ = cur.Jobs()
		}
		l, ok := findLine(lines, func(j record.JobOutcome) bool { return j.Job == r.job })
		if ok && l.Dispatching == 0 {
			l.Dispatching = r.o.Clock.Now().Unix()
			if r.stage {
				ch.SetStageJobs(record.WithJob(lines, l))
			} else {
				ch.SetJobs(record.WithJob(lines, l))
			}
		}
		return ch, nil
	}, r.view)
	if werr != nil {
		return fmt.Errorf("%w (and saying so in the record: %v)", fail, werr)
	}
	r.rec = r.rc.Record
	return fail
}

// clearNotDispatched re-renders the record comment when an earlier run of
// report left it saying the next Job was not dispatched and this one has it
// dispatched (or found it landed): the comment says what happens now.
func (r *reporter) clearNotDispatched(ctx context.Context) {
	if r.out.NextAttempt == 0 || r.dispatchErr != "" || !strings.Contains(r.rec.Text(), notDispatched) {
		return
	}
	err := recordstore.New(r.o.GitHub).Write(ctx, r.o.Issue, &r.rc,
		func(*record.Record) (record.Changes, error) { return record.Changes{}, nil }, r.view)
	if err != nil {
		// The next Job's first mark renders it again.
		r.logf("report: issue #%d: the record comment still says Job %d was not dispatched: %v", r.o.Issue, r.out.NextAttempt, err)
		return
	}
	r.rec = r.rc.Record
}

// landed looks for Job next dispatched by an earlier run of report, or by
// this one before its answer was lost: in the record (it started), else in
// the workflow's runs dispatched since since and newer than the reported
// Job's run (one request; a zero since looks at every dispatched run newer
// than it). GitHub's list has no inputs; a run's title (the caller's
// run-name, "roadmap #<issue> …") names its issue, so a run that names
// another issue is another item's continuation and does not count. A run
// whose title names no issue (a caller without run-name) is taken for this
// item's, as before: the report jobs of one issue are serialised, and the
// mark is seconds old.
func (r *reporter) landed(ctx context.Context, next int, since time.Time) (bool, error) {
	n, _ := r.rec.Attempt()
	lines := mustJobs(r.rec)
	if r.stage {
		n = 0
		lines, _ = r.rec.StageJobs()
	}
	_, started := findLine(lines, func(j record.JobOutcome) bool { return j.Job == next })
	if n >= next || started {
		r.out.NextAttempt = next
		r.logf("report: issue #%d: Job %d was dispatched at %s and has started: not dispatched again", r.o.Issue, next, since.Format(time.RFC3339))
		return true, nil
	}
	runs, err := r.o.GitHub.DispatchedRuns(ctx, r.o.Workflow, since)
	if err != nil {
		return false, fmt.Errorf("look for Job %d of issue %d, dispatched at %s: %w", next, r.o.Issue, since.Format(time.RFC3339), err)
	}
	// The reported Job's own run, and any run older than it (run ids
	// grow), is not its continuation, though a clock's second may hold both.
	runs = slices.DeleteFunc(runs, func(w github.WorkflowRun) bool { return r.o.RunID != 0 && w.ID <= r.o.RunID })
	others := 0
	runs = slices.DeleteFunc(runs, func(w github.WorkflowRun) bool {
		n, ok := runIssue(w.DisplayTitle)
		if ok && n != r.o.Issue {
			others++
			return true
		}
		return false
	})
	if others > 0 {
		r.logf("report: issue #%d: %d %s run(s) dispatched since %s are other issues' (by their titles)",
			r.o.Issue, others, r.o.Workflow, since.Format(time.RFC3339))
	}
	if len(runs) == 0 {
		r.logf("report: issue #%d: no %s run dispatched since %s: the dispatch of Job %d never landed; it is sent now",
			r.o.Issue, r.o.Workflow, since.Format(time.RFC3339), next)
		return false, nil
	}
	run := runs[len(runs)-1] // the oldest since the mark: the first dispatch
	r.out.Dispatched = &github.DispatchResult{RunID: run.ID, URL: run.URL}
	r.out.DispatchedRunID, r.out.NextAttempt = run.ID, next
	r.logf("report: issue #%d: Job %d was already dispatched (run %d, %s): not dispatched again", r.o.Issue, next, run.ID, run.Status)
	return true, nil
}

// maxTitle bounds the part of a run's title runIssue reads: GitHub's titles
// are short, and the issue's token comes first in the callers' run-name.
const maxTitle = 1024

// runIssue reads the issue a run's title names: the token "#<n>" (digits,
// no leading zero, at most nine), between whitespace or the title's ends,
// in the title's first maxTitle bytes (a token the bound cuts is not read). A title with no such token, or with
// tokens of two issues, names none. The title is untrusted text: whoever
// dispatched the run chose its inputs.
func runIssue(title string) (int, bool) {
	if len(title) > maxTitle {
		// A token the bound cuts through ("#12" read as "#1") is not read.
		title = title[:maxTitle+1]
		title = title[:max(strings.LastIndexFunc(title, unicode.IsSpace), 0)]
	}
	issue := 0
	for _, f := range strings.Fields(title) {
		d, ok := strings.CutPrefix(f, "#")
		if !ok || d == "" || len(d) > 9 || d[0] == '0' || strings.Trim(d, "0123456789") != "" {
			continue
		}
		n, err := strconv.Atoi(d)
		if err != nil {
			continue
		}
		if issue != 0 && n != issue {
			return 0, false
		}
		issue = n
	}
	return issue, issue != 0
}

func mustJobs(rec *record.Record) []record.JobOutcome {
	jobs, _ := rec.Jobs()
	return jobs
}

// yield leaves the item waiting for the next day's budget: nothing is
// dispatched now; the record's item.wake_at and the waiting label let
// roadmap wake dispatch it then, and a comment says when and how.
func (r *reporter) yield(ctx context.Context) error {
	next := wakeAt(r.o.Clock.Now())
	r.out.ResumeAfter, r.out.NextAttempt = next, r.job+1
	job, resume := "Job", fmt.Sprintf("`issue=%d` and `attempt=%d`", r.o.Issue, r.job+1)
	if r.stage {
		// A stage Job numbers itself from stage.jobs: no attempt to name.
		job, resume = "Stage Job", fmt.Sprintf("`issue=%d` and `phase=stage`", r.o.Issue)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### roadmap is waiting for the day's budget\n\n")
	fmt.Fprintf(&b, "%s %d yielded: %s. The day's spend across items has reached its budget, so no Job starts before %s.\n\n",
		job, r.job, inline(r.d.Reason), next.Format(time.RFC3339))
	fmt.Fprintf(&b, "The item has the `%s` label: `roadmap wake` (the roadmap-wake workflow `roadmap init` writes, on a schedule) dispatches it then, oldest first, as far as the day's budget goes. To go on sooner, dispatch the workflow with %s.\n",
		r.o.Labels.Waiting, resume)
	err := r.comment(ctx, MarkerWaiting, b.String())
	if err != nil {
		return fmt.Errorf("post the waiting comment: %w", err)
	}
	return r.o.GitHub.AddLabels(ctx, r.o.Issue, r.o.Labels.Waiting)
}

// wakeAt is when a Job refused for the day's budget may start: the next
// 00:00 UTC.
func wakeAt(now time.Time) time.Time {
	now = now.UTC()
	return time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
}

// waitMark is item.wake_at of a yield for the day's budget, in report's
// one record write.
func (r *reporter) waitMark(ch *record.Changes) {
	if r.d.Action == ActionYield {
		ch.SetWakeAt(wakeAt(r.o.Clock.Now()))
	}
}

// returnToStage hands the item back to stage with the agent's reason: a plan
// amendment. Stage is started by a workflow_dispatch with phase stage: a
// label added with the workflow's GITHUB_TOKEN starts no workflow run, so
// the stage label would leave the item waiting forever (and with an App
// token it would start a second run beside the dispatch).
func (r *reporter) returnToStage(ctx context.Context) error {
	reason := r.d.Reason
	if r.facts != nil && r.out.Evidence != "" {
		// No result was written: the runner's typed line in the log carries
		// the agent's reason.
		reason = r.out.Evidence
	}
	if reason == "" {
		reason = "the agent found that the plan cannot work, and recorded no reason"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### roadmap returned this item to stage: the plan is wrong\n\n")
	fmt.Fprintf(&b, "Job %d found that the plan cannot work as written. The agent's reason:\n\n%s\n", r.job, fenced(reason))
	fmt.Fprintf(&b, "Stage is dispatched to amend the plan on the same PR; implement resumes from the last passed group once the amended plan is approved.\n")
	if err := r.comment(ctx, MarkerReturned, b.String()); err != nil {
		return fmt.Errorf("post the return-to-stage comment: %w", err)
	}
	if err := r.removeLabels(ctx, r.o.Labels.Implement); err != nil {
		return err
	}
	return r.dispatchStage(ctx)
}

// dispatchStage dispatches the stage Job that amends the plan.
func (r *reporter) dispatchStage(ctx context.Context) error {
	inputs := map[string]any{"issue": strconv.Itoa(r.o.Issue), "phase": PhaseStage}
	if r.rc.ID != 0 {
		inputs["record-comment"] = strconv.FormatInt(r.rc.ID, 10)
	}
	res, err := r.o.GitHub.DispatchWorkflow(ctx, r.o.Workflow, r.o.Ref, inputs)
	var se *github.StatusError
	if errors.As(err, &se) && se.Status == 422 && strings.Contains(se.Message, "Unexpected inputs") && inputs["record-comment"] != nil {
		delete(inputs, "record-comment")
		res, err = r.o.GitHub.DispatchWorkflow(ctx, r.o.Workflow, r.o.Ref, inputs)
	}
	if err != nil {
		return fmt.Errorf("dispatch stage for issue %d (plan amendment): %w", r.o.Issue, err)
	}
	r.out.Dispatched, r.out.DispatchedRunID = &res, res.RunID
	r.logf("report: issue #%d: dispatched stage to amend the plan (%s on %s) run %d", r.o.Issue, r.o.Workflow, r.o.Ref, res.RunID)
	return nil
}

// ask posts the Job's question on the issue and marks the item as waiting
// for a person's answer (Resume handles the reply).
func (r *reporter) ask(ctx context.Context) error {
	q, _ := r.rec.Question()
	if strings.TrimSpace(q) == "" {
		// The final mark was lost: the runner's typed line in the log
		// carries the question.
		if r.facts != nil {
			q = r.out.Evidence
		}
	}
	if strings.TrimSpace(q) == "" {
		// Nothing to ask: stopping says so instead of posting an empty question.
		r.d = decide.NoQuestion()
		r.out.Class, r.out.Action, r.out.Reason = r.d.Class, ActionStop, r.d.Reason
		if err := r.write(ctx); err != nil {
			return err
		}
		if r.stage {
			return r.stageStop(ctx)
		}
		return r.stop(ctx)
	}
	who := "Job"
	if r.stage {
		who = "Stage Job"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### roadmap needs a decision\n\n")
	fmt.Fprintf(&b, "%s %d stopped to ask a question only a person can answer:\n\n%s\n", who, r.job, fenced(q))
	fmt.Fprintf(&b, "Reply on this issue with the answer. A reply from someone with write access to the repository resumes the item, and the whole reply is given to the next step as the answer. Replies from others are ignored.\n")
	if err := r.comment(ctx, MarkerNeedsInput, b.String()); err != nil {
		return fmt.Errorf("post the question: %w", err)
	}
	return r.o.GitHub.AddLabels(ctx, r.o.Issue, r.o.Labels.NeedsInput)
}

// stop stops the item: the stop comment, the label and a failing status.
// implement.stopped and implement.failure were written with the record.
func (r *reporter) stop(ctx context.Context) error {
	r.out.Stopped = true
	r.out.Step, _ = r.rec.Stopped()
	if err := r.comment(ctx, MarkerStop, r.stopComment()); err != nil {
		return fmt.Errorf("post the stop comment: %w", err)
	}
	if err := r.o.GitHub.AddLabels(ctx, r.o.Issue, r.o.Labels.Stopped); err != nil {
		return err
	}
	return r.status(ctx, "failure", fmt.Sprintf("stopped: %s at %s", r.d.Class, r.out.Step))
}

// comment keeps one of report's marker comments on the issue. Its body
// holds text roadmap did not write (the agent's reason and question, log
// evidence, step labels from the plan, the trace's commands), so it is
// masked, then neutralised: no mention, HTML, image, outside link or
// workflow command reaches the issue from it.
func (r *reporter) comment(ctx context.Context, marker, body string) error {
	_, err := r.o.GitHub.UpsertMarkerComment(ctx, r.o.Issue, marker, redact.NeutraliseIn(r.o.Mask(body), r.o.GitHub.ServerHost(), r.o.GitHub.FullName()))
	return err
}

// status sets roadmap/implement on the head. A head that cannot be found is
// said in the log, not an error: the comment and label still tell.
func (r *reporter) status(ctx context.Context, state, description string) error {
	head, err := r.head(ctx)
	if err != nil {
		return err
	}
	if head == "" {
		r.logf("report: issue #%d: no head commit known (no head_sha, PR or published_sha): status %s not set", r.o.Issue, state)
		return nil
	}
	r.out.Head = head
	err = r.o.GitHub.CreateStatus(ctx, head, StatusContext, state, description, "")
	var se *github.StatusError
	if errors.As(err, &se) && se.Status == http.StatusUnprocessableEntity && head == r.o.HeadSHA {
		// The Job's head never reached GitHub (its push was refused before
		// it stopped): the status goes on the head GitHub has.
		r.logf("report: issue #%d: head %s is not on GitHub (%v); the status goes on the PR head or published_sha", r.o.Issue, head, err)
		o := r.o
		r.o.HeadSHA = ""
		defer func() { r.o = o }()
		return r.status(ctx, state, description)
	}
	return err
}

// head is the commit the status goes on: the Job's head_sha output, the PR's
// head (a killed Job may have pushed past its last mark), else the record's
// published_sha.
func (r *reporter) head(ctx context.Context) (string, error) {
	if r.o.HeadSHA != "" {
		return r.o.HeadSHA, nil
	}
	pr := r.o.PR
	if pr == 0 {
		pr, _ = r.rec.StagePR()
	}
	if pr > 0 {
		p, err := r.o.GitHub.PR(ctx, pr)
		if err != nil {
			return "", fmt.Errorf("read the head of PR #%d: %w", pr, err)
		}
		if p.HeadSHA != "" {
			return p.HeadSHA, nil
		}
	}
	sha, _ := r.rec.PublishedSHA()
	return string(sha), nil
}

// removeLabels removes the labels the issue has (as read): no request for a
// label that is not there.
func (r *reporter) removeLabels(ctx context.Context, labels ...string) error {
	is, err := r.readIssue(ctx)
	if err != nil {
		return err
	}
	for _, l := range labels {
		if l == "" || !slices.Contains(is.Labels, l) {
			continue
		}
		if err := r.o.GitHub.RemoveLabel(ctx, r.o.Issue, l); err != nil {
			return err
		}
	}
	return nil
}

// stopHead writes the head of a stop comment: the table, why, the
// evidence, what the class needs and whether spend was lost.
func (r *reporter) stopHead(b *strings.Builder, title, jobLabel, lostLine string) {
	row, _ := failure.Lookup(r.d.Class)
	fmt.Fprintf(b, "### %s: `%s`\n\n", title, r.d.Class)
	fmt.Fprintf(b, "| | |\n|---|---|\n")
	fmt.Fprintf(b, "| Step | %s |\n", cell(r.out.Step))
	fmt.Fprintf(b, "| Class | `%s` |\n", r.d.Class)
	fmt.Fprintf(b, "| %s | %d%s |\n", jobLabel, r.job, runSuffix(r.o.RunID))
	fmt.Fprintf(b, "| Job ended | %s |\n", cell(r.end.String()))
	fmt.Fprintf(b, "\n**Why:** %s\n\n", inline(r.d.Reason))
	if r.out.Evidence != "" {
		where := "the job log"
		if r.out.EvidenceLine > 0 {
			where = fmt.Sprintf("job log line %d", r.out.EvidenceLine)
		}
		fmt.Fprintf(b, "**Evidence** (%s):\n\n%s\n", where, fenced(r.out.Evidence))
	}
	if row.Does != "" {
		fmt.Fprintf(b, "**What this class needs:** %s.\n\n", row.Does)
	}
	job := strings.Replace(jobLabel, "Stage", "stage", 1)
	switch {
	case r.out.SpendLost && r.facts != nil && r.facts.logGone:
		fmt.Fprintf(b, "**Spend lost:** the log of %s %d is gone, so the spend of its model calls after its last mark is not in the record (%s).\n\n",
			job, r.job, lostLine)
	case r.out.SpendLost:
		fmt.Fprintf(b, "**Spend lost:** the runner of %s %d lost communication, so its log stops where the upload stopped: the calls its log holds are in the record, any call after them is not (%s).\n\n",
			job, r.job, lostLine)
	}
	if n := r.rec.SpendEstimated(); n > 0 {
		fmt.Fprintf(b, "**Spend estimated:** %d of the item's model calls are in its spend at their booked estimate (the request's input as estimated, plus its max_tokens out): the Job was killed or stopped while they were in flight, so their answer was never recorded, and they may have cost less (`implement.spend_estimated`).\n\n", n)
	}
}

// stopComment is the stop comment: step, class, reason, evidence, what the
// class's action is, the trace summary of the last Job and the jobs table.
func (r *reporter) stopComment() string {
	var b strings.Builder
	r.stopHead(&b, "roadmap stopped this item", "Job", fmt.Sprintf("its line in `implement.jobs` says `%s`", spendLost))
	fmt.Fprintf(&b, "To go on, fix the cause and dispatch the implement workflow with `issue=%d` and `attempt=%d`; the Job resumes from the last mark.\n\n",
		r.o.Issue, r.job+1)
	b.WriteString(modelsLine(r.rec))
	fmt.Fprintf(&b, "#### Trace of the last recorded Job\n\n")
	b.WriteString(traceTable(r.rec))
	fmt.Fprintf(&b, "\n#### Jobs\n\n")
	b.WriteString(jobsTable(r.rec))
	return b.String()
}

// modelsLine names the model of each role that ran on the item
// (item.models), "" when none is recorded.
func modelsLine(rec *record.Record) string {
	models := rec.Models()
	var parts []string
	for _, role := range record.Roles {
		if m := models[role]; m != "" {
			parts = append(parts, role+" "+inline(m))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "**Models:** " + strings.Join(parts, ", ") + ".\n\n"
}

func traceTable(rec *record.Record) string {
	raw, ok := rec.Trace()
	if !ok {
		return "_The record holds no trace copy._\n"
	}
	c, err := trace.ParseRecordCopy(string(raw))
	if err != nil {
		return fmt.Sprintf("_The record's trace copy does not read: %s._\n", inline(err.Error()))
	}
	t := trace.SummaryTable(c.Events)
	if c.Dropped > 0 {
		t += fmt.Sprintf("\n_%d older events were dropped from the record's copy; the trace artifact has them all._\n", c.Dropped)
	}
	return t
}

func jobsTable(rec *record.Record) string {
	jobs, _ := rec.Jobs()
	if len(jobs) == 0 {
		return "_No Job is recorded._\n"
	}
	var b strings.Builder
	b.WriteString("| Job | Run | Result | Failure | Last group | Tokens in | Tokens out | Cost | Model calls |\n")
	b.WriteString("|--:|--:|---|---|--:|--:|--:|--:|--:|\n")
	for _, j := range jobs {
		res := string(j.Result)
		if res == "" {
			res = "no result"
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %d | %d | %d | %s | %d |\n",
			j.Job, dashIfZero(j.RunID), res, dashIfEmpty(j.Failure), j.Group,
			j.Spend.TokensIn, j.Spend.TokensOut, text.USD(j.Spend.USD), j.Spend.ModelCalls)
	}
	total, _ := rec.Spend()
	fmt.Fprintf(&b, "| **Item** | | | | | %d | %d | %s | %d |\n",
		total.TokensIn, total.TokensOut, text.USD(total.USD), total.ModelCalls)
	return b.String()
}

func runSuffix(id int64) string {
	if id == 0 {
		return ""
	}
	return fmt.Sprintf(" (run %d)", id)
}

func dashIfZero(n int64) string {
	if n == 0 {
		return "-"
	}
	return strconv.FormatInt(n, 10)
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "-"
	}
	return "`" + s + "`"
}

// inline makes text safe inside a Markdown line: one line, and no mention,
// link or markup a log line or a model could smuggle in (it is shown as code).
func inline(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return "-"
	}
	s = strings.ReplaceAll(s, "`", "'")
	return "`" + s + "`"
}

// cell is inline text for a table cell.
func cell(s string) string { return strings.ReplaceAll(inline(s), "|", "\\|") }

// fenced puts text in a code block whose fence is longer than any run of
// backticks inside it, so no text can close it early.
func fenced(s string) string {
	longest, run := 0, 0
	for _, c := range s {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	return fence + "text\n" + strings.TrimRight(s, "\n") + "\n" + fence + "\n"
}
