package report

import (
	"context"
	"fmt"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/report/decide"
)

// The phases report reports on: the Job of the report job's `needs`.
const (
	PhaseImplement = "implement"
	PhaseStage     = "stage"
)

// runStage reports on one stage Job. A Job that ended staged, or returned
// with findings, needs nothing from report, and report makes no request for
// it; a return with the planner's question gets the question posted and the
// needs-input label, as implement's does. A Job that
// stopped gets the stop comment and label; one that yielded, or wrote no
// result (killed, timed out, a lost runner), gets the spend its log holds
// past its last mark added to the record (its line in stage.jobs counts the
// calls that mark included) and, when its class continues, a stage
// continuation dispatched, bounded by the cap of Jobs per item.
func (r *reporter) runStage(ctx context.Context) error {
	o := r.o
	r.stage = true
	r.out.Result = o.Result
	settled, settledEnd := decide.StageSettled(o.Result, o.Failure)
	switch {
	case o.JobResult == "skipped":
		return r.nothing("the stage job was skipped: no stage Job ran")
	case settledEnd && o.DayBudget.Zero() && (o.Dashboard == 0 || o.Result == decide.StageStaged):
		// No ledger to book, and nothing for the dashboard: a staged plan
		// is shown by the refresh (docs/dashboard.md).
		return r.nothing(settled)
	}
	if err := r.read(ctx); err != nil {
		return err
	}
	lines, _ := r.rec.StageJobs()
	line, hasLine := findLine(lines, func(j record.JobOutcome) bool {
		if o.Attempt > 0 {
			return j.Job == o.Attempt
		}
		return o.RunID != 0 && j.RunID == o.RunID
	})
	if settledEnd {
		// With a day ledger the Job's spend is booked: its line has it.
		r.job, r.out.Job, r.out.JobSpend = line.Job, line.Job, line.Spend
		r.out.Spend, _ = r.rec.Spend()
		if hasLine {
			if err := r.book(ctx); err != nil {
				return err
			}
		}
		r.keepDashboard(ctx)
		return r.nothing(settled)
	}
	typed, class := o.Result, o.Failure
	if typed == "" && hasLine && line.Result != "" {
		// The outputs were lost (a kill after the last mark): the line has it.
		typed, class = string(line.Result), line.Failure
		r.out.Result = typed
		if _, ok := decide.StageSettled(typed, class); ok {
			r.job, r.out.Job, r.out.JobSpend = line.Job, line.Job, line.Spend
			if err := r.book(ctx); err != nil {
				return err
			}
			return r.nothing(fmt.Sprintf("the stage Job's last mark says %s", typed))
		}
	}
	if typed == "" {
		if o.RunID == 0 {
			return inputErr(fmt.Errorf("the stage Job wrote no result: report needs the run id to read its log"))
		}
		if err := r.readLog(ctx, "stage Job"); err != nil {
			return err
		}
	}
	r.end.Result, r.end.Class = record.Result(typed), class
	r.job = r.stageJobNumber(lines, line, hasLine)
	r.out.Job = r.job

	if r.facts == nil {
		r.d = decide.Typed(r.end.Result, r.end.Class)
	} else {
		r.d = decide.Killed(r.facts.ended())
	}
	if r.d.Reason == "" {
		r.d.Reason = o.Reason
	}
	r.d = decide.Stage(r.d, r.job, o.MaxJobs, r.end)
	return r.carryOut(ctx, lines, "stage Job", r.stageAct)
}

// stageAct is the action after a stage Job: a continuation, a wait for the
// day's budget, a question, or a stop.
func (r *reporter) stageAct(ctx context.Context) error {
	switch r.d.Action {
	case ActionContinue:
		return r.continuation(ctx)
	case ActionYield:
		return r.yield(ctx)
	case ActionAsk:
		return r.ask(ctx)
	case ActionNone:
		return nil
	}
	return r.stageStop(ctx)
}

// nothing ends a report that has nothing to do.
func (r *reporter) nothing(reason string) error {
	r.out.Action, r.out.Reason = ActionNone, r.o.Mask(reason)
	r.logf("report: issue #%d: %s", r.o.Issue, r.out.Reason)
	return nil
}

// stageJobNumber is the reported stage Job's number: the option, the line
// of its run, the Job its log's spend lines name, else the number the Job
// would have taken (one past the newest line).
func (r *reporter) stageJobNumber(lines []record.JobOutcome, line record.JobOutcome, hasLine bool) int {
	switch {
	case r.o.Attempt > 0:
		return r.o.Attempt
	case hasLine:
		return line.Job
	}
	if r.facts != nil {
		if js := jobsFromLog(r.facts.spend); len(js) > 0 {
			return js[len(js)-1]
		}
	}
	n := 0
	for _, l := range lines {
		n = max(n, l.Job)
	}
	return n + 1
}

// settleStage is the stage Job's line and the item's spend as report leaves
// them in cur: for a Job that wrote no result, the spend of its log's calls
// past the ones its line counts is added to both. It depends only on cur and
// the Job's facts, so a second report for the same Job adds nothing.
func (r *reporter) settleStage(cur *record.Record) settled {
	lines, _ := cur.StageJobs()
	item, _ := cur.Spend()
	line, ok := findLine(lines, func(j record.JobOutcome) bool { return j.Job == r.job })
	if !ok {
		line = record.JobOutcome{Job: r.job, RunID: r.o.RunID}
	}
	if line.RunID == 0 {
		line.RunID = r.o.RunID
	}
	s := settled{line: line, item: item, itemEstimated: cur.SpendEstimated()}
	if r.facts == nil {
		if !ok || line.Result != r.end.Result {
			s.touched = true
			s.line.Result, s.line.Failure = r.end.Result, r.end.Class
		}
		return s
	}
	r.recover(&s, ok)
	return s
}

// stageChanges is the record write for a stage Job: its settled line, the
// item's spend, the intent mark of a continuation and stage.state of a stop.
func (r *reporter) stageChanges(cur *record.Record) (record.Changes, settled) {
	s := r.settleStage(cur)
	if r.d.Action == ActionContinue && s.line.Dispatching == 0 {
		s.line.Dispatching, s.touched = r.o.Clock.Now().Unix(), true
	}
	var ch record.Changes
	if s.touched {
		s.line.At = r.o.Clock.Now().Unix()
		lines, _ := cur.StageJobs()
		ch.SetStageJobs(record.WithJob(lines, s.line))
		if old, _ := cur.Spend(); old != s.item {
			ch.SetSpend(s.item)
		}
		if s.itemEstimated != cur.SpendEstimated() {
			ch.SetSpendEstimated(s.itemEstimated)
		}
	}
	if r.d.Action == ActionStop {
		ch.SetStageState("stopped")
	}
	r.waitMark(&ch)
	return ch, s
}

// stageStop posts the stop comment and the stopped label. There is no
// status: a stage Job has no head of its own to mark.
func (r *reporter) stageStop(ctx context.Context) error {
	r.out.Stopped = true
	r.out.Step = r.d.Step
	if r.out.Step == "" {
		r.out.Step = "stage"
	}
	if err := r.comment(ctx, MarkerStop, r.stageStopComment()); err != nil {
		return fmt.Errorf("post the stop comment: %w", err)
	}
	return r.o.GitHub.AddLabels(ctx, r.o.Issue, r.o.Labels.Stopped)
}

func (r *reporter) stageStopComment() string {
	var b strings.Builder
	r.stopHead(&b, "roadmap stopped this item in stage", "Stage Job", fmt.Sprintf("its line in `stage.jobs` says `%s`", spendLost))
	b.WriteString(modelsLine(r.rec))
	fmt.Fprintf(&b, "To go on, fix the cause and dispatch the workflow with `issue=%d` and `phase=stage`, or label the issue again; stage resumes after its last recorded round.\n", r.o.Issue)
	return b.String()
}
