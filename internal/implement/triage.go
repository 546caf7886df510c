package implement

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/citriage"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// triage reads every failed check at the head and does what the watch
// decides (internal/citriage): re-run the failed jobs when the
// infrastructure broke them, else end with the failing part of the logs
// handed on. again is true when the watch goes on polling.
func (r *runner) triage(ctx context.Context, sum github.CheckSummary) (end ending, again bool) {
	var findings []citriage.Finding
	for _, c := range sum.Checks {
		if c.State == "failure" {
			findings = append(findings, r.ci.Read(ctx, r.o.GitHub, c, r.j.Logf))
		}
	}
	v := r.ci.Triage(findings, r.o.CheckReruns)
	r.decided(v.Decisions...)
	if v.Kind != citriage.Rerun {
		return r.ciEnding(ctx, v)
	}
	for _, f := range v.Reruns {
		started := true
		if err := r.o.GitHub.RerunFailedJobs(ctx, f.RunID); err != nil {
			if !strings.Contains(err.Error(), "already running") {
				return r.fail(ctx, "watch", err), false
			}
			// GitHub refuses a re-run of a run in progress (403): an
			// earlier Job's re-run is under way and its checks will show.
			r.j.Logf("roadmap: watch: run %d is already running again; watching it", f.RunID)
			started = false
		}
		if d, ok := r.ci.Reran(f, started, r.o.CheckReruns); ok {
			r.decided(d)
			r.j.Event(trace.Event{Type: trace.TypeRetry, Step: "watch", Reason: fmt.Sprintf("PR check %s: %s", f.Check.Name, f.Verdict.Class),
				Attempt: f.Attempt})
		}
	}
	return ending{}, true
}

// ciEnding does what a verdict of the watch leads to: ready after checks
// that passed, or without CI when the configuration allows it; the Job's
// ending on a failure; again (the watch polls on) after a re-run.
func (r *runner) ciEnding(ctx context.Context, v citriage.Verdict) (end ending, again bool) {
	var body string
	switch v.Kind {
	case citriage.Rerun:
		return ending{}, true
	case citriage.Failed:
		return endingOf("watch", v.Failure), false
	case citriage.Passed:
		body = readyState(r.pr.Number, "")
	case citriage.None:
		body = readyState(r.pr.Number, "No CI reported a check on the head; ready because implement.ready_without_ci is true.")
	}
	if end, ok := r.markReady(ctx, r.prBody(body)); !ok {
		return end, false
	}
	return ending{result: record.ResultReady, step: "ready"}, false
}

// decided records decisions on PR checks in the log and the trace (the
// watch's notes hold them for the PR comment).
func (r *runner) decided(ds ...citriage.Decision) {
	for _, d := range ds {
		r.j.Logf("roadmap: watch: %s", d.Line)
		r.j.Event(trace.Event{Type: trace.TypeCheckRun, Step: "watch", Command: "PR check " + d.Check, ExitCode: 1,
			Outcome: d.Outcome, Reason: string(d.Class)})
	}
}

// dispatchCI starts the configured CI workflows on the work branch: pushes
// made with GITHUB_TOKEN start no workflow run, a workflow_dispatch does,
// and its check runs attach to the branch's head.
func (r *runner) dispatchCI(ctx context.Context) error {
	for _, wf := range r.o.CIWorkflows {
		d, err := r.o.GitHub.DispatchWorkflow(ctx, wf, r.branch, nil)
		if err != nil {
			return err
		}
		line := fmt.Sprintf("no check had reported on %s: dispatched %s on %s", short(r.head), wf, r.branch)
		if d.RunID != 0 {
			line += fmt.Sprintf(" (run %d)", d.RunID)
		}
		r.ci.Note(line)
		r.j.Logf("roadmap: watch: %s", line)
		r.j.Event(trace.Event{Type: trace.TypeCheckRun, Step: "watch", Command: "dispatch " + wf, Outcome: "dispatched"})
	}
	return nil
}

// noCI ends the watch when no check reported on the head: ready only when
// the configuration allows it (implement.ready_without_ci), else the item
// asks a person, and the PR stays a draft.
func (r *runner) noCI(ctx context.Context, waited time.Duration) ending {
	r.j.Event(trace.Event{Type: trace.TypeCheckRun, Step: "watch", Command: "PR checks", Outcome: "no_ci"})
	v := r.ci.NoCI(citriage.NoCI{Head: r.head, PR: r.pr.Number, Waited: waited, ReadyWithoutCI: r.o.ReadyWithoutCI, NoCIPath: r.o.NoCIPath})
	line := fmt.Sprintf("no check reported on %s in %s", short(r.head), waited)
	if v.Kind == citriage.None {
		r.j.Logf("roadmap: watch: %s; implement.ready_without_ci allows ready without CI", line)
	} else {
		r.j.Logf("roadmap: watch: %s; the PR is not marked ready without CI", line)
	}
	end, _ := r.ciEnding(ctx, v)
	return end
}
