package report

import (
	"context"
	"fmt"

	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/recordstore"
	"github.com/roadmap-dev/roadmap/internal/redact"
)

// changes is the record write for cur: the settled line and spend, the
// typed result when the runner's is missing, and the keys of a stop.
func (r *reporter) changes(cur *record.Record) (record.Changes, settled) {
	s := r.settle(cur)
	if r.d.Action == ActionContinue && s.line.Dispatching == 0 && s.touched {
		// The intent mark, before the dispatch, riding on a write report
		// makes anyway: a re-run of report looks for the run instead of
		// sending it again. With no write to ride on (a typed yield), no
		// write is made for it: a re-run is a later attempt of the workflow
		// run (RunAttempt > 1), and that looks too.
		s.line.Dispatching = r.o.Clock.Now().Unix()
	}
	var ch record.Changes
	if s.touched {
		s.line.At = r.o.Clock.Now().Unix()
		jobs, _ := cur.Jobs()
		ch.SetJobs(withLine(jobs, s.line))
		if old, _ := cur.Spend(); old != s.item {
			ch.SetSpend(s.item)
		}
		if s.itemEstimated != cur.SpendEstimated() {
			ch.SetSpendEstimated(s.itemEstimated)
		}
	}
	switch {
	case r.facts != nil:
		// The last Job wrote no result: the record says so by having none,
		// and implement.failure names how it ended.
		ch.Delete(record.KeyImplementResult)
		ch.SetFailure(string(r.end.Killed))
	case s.setResult:
		ch.SetResult(r.end.Result)
		if r.end.Class != "" {
			ch.SetFailure(r.end.Class)
		} else {
			ch.Delete(record.KeyImplementFailure)
		}
		if n, _ := cur.Attempt(); r.job > n {
			ch.SetAttempt(r.job)
		}
	}
	if r.d.Action == ActionStop {
		ch.SetResult(record.ResultStopped)
		ch.SetFailure(string(r.d.Class))
		ch.SetStopped(r.stopStep(cur))
	}
	r.lessParallelism(cur, &ch)
	r.waitMark(&ch)
	return ch, s
}

// write makes the one record write, when there is something to write.
func (r *reporter) write(ctx context.Context) error {
	changes := r.changes
	if r.stage {
		changes = r.stageChanges
	}
	ch, s := changes(r.rec)
	r.note(s)
	if ch.Empty() || ch.Applied(r.rec) {
		return nil
	}
	err := recordstore.New(r.o.GitHub).Write(ctx, r.o.Issue, &r.rc,
		func(cur *record.Record) (record.Changes, error) {
			ch, s := changes(cur)
			r.note(s)
			return ch, nil
		}, r.view)
	if err != nil {
		return fmt.Errorf("write issue %d record: %w", r.o.Issue, err)
	}
	r.rec = r.rc.Record
	return nil
}

// notDispatched is how the record comment says that report's dispatch of the
// next Job did not land; a re-run that dispatches it says what happens now.
const notDispatched = "was not dispatched ("

// view is what the record comment says after report's decision. It can hold
// text roadmap did not write (the agent's reason, a step label), so it is
// masked and neutralised.
func (r *reporter) view(cur *record.Record) record.View {
	v := record.View{RunURL: r.o.RunURL}
	switch {
	case r.heldBy != "":
		v.Doing = fmt.Sprintf("stopped by %s; a comment `/roadmap retry` restarts it from its last mark", r.heldBy)
	case r.dispatchErr != "":
		job, resume := "Job", fmt.Sprintf("issue=%d and attempt=%d", r.o.Issue, r.job+1)
		if r.stage {
			job, resume = "stage Job", fmt.Sprintf("issue=%d and phase=stage", r.o.Issue)
		}
		v.Doing = fmt.Sprintf("%s %d ended %s; %s %d %s%s): re-run the report job, or dispatch the workflow with %s",
			job, r.job, r.end, job, r.job+1, notDispatched, r.dispatchErr, resume)
	case r.stage && r.d.Action == ActionContinue:
		v.Doing = fmt.Sprintf("stage Job %d ended %s; stage Job %d continues after the last recorded round", r.job, r.end, r.job+1)
	case r.stage && r.d.Action == ActionStop:
		v.Doing = fmt.Sprintf("stopped (%s) in stage: %s", r.d.Class, r.d.Reason)
	case r.d.Action == ActionYield:
		v.Doing = "waiting for the next day's budget: " + r.d.Reason
	case r.stage:
	case r.d.Action == ActionContinue:
		v.Doing = fmt.Sprintf("Job %d ended %s; Job %d continues from the last mark", r.job, r.end, r.job+1)
	case r.d.Action == ActionResume:
		v.Doing = fmt.Sprintf("answered (%s); Job %d continues", r.d.Reason, r.job+1)
	case r.d.Action == ActionStop:
		v.Doing = fmt.Sprintf("stopped (%s) in %s: %s", r.d.Class, r.stopStep(r.rec), r.d.Reason)
	case r.d.Action == ActionReturnToStage:
		v.Doing = "returned to stage: " + r.d.Reason
	}
	if v.Doing == "" {
		v.Doing = cur.State()
	}
	v.Doing = redact.NeutraliseIn(r.o.Mask(v.Doing), r.o.GitHub.ServerHost(), r.o.GitHub.FullName())
	return v
}

// stopStep is implement.stopped for a stop: the runner's own label, the
// gate's, or the workflow step a killed Job failed in.
func (r *reporter) stopStep(cur *record.Record) string {
	if r.d.Step != "" {
		return r.d.Step
	}
	if r.end.Result == record.ResultStopped {
		if s, ok := cur.Stopped(); ok && s != "" {
			return s
		}
	}
	if r.facts != nil {
		for _, st := range r.facts.job.Steps {
			if st.Conclusion == "failure" || st.Conclusion == "cancelled" {
				return fmt.Sprintf("job %s: %s", r.facts.job.Name, st.Name)
			}
		}
		return "job " + r.facts.job.Name
	}
	return fmt.Sprintf("job %d", r.job)
}
