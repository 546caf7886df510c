package kernel

import (
	"context"
	"fmt"

	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/trace"
	"github.com/roadmap-dev/roadmap/internal/tracker"
)

// Tracker says whether the item is a tracker (docs/tracker.md, "Driving a
// tracker"), from the issue the Job read at its start: native sub-issues,
// or a task list of issue references. "" when it is not; otherwise what
// makes it one ("3 sub-issues"). A tracker's work is its sub-issues: its
// Job hands it to report (HandOver), which drives them.
func (j *Job) Tracker() string {
	return tracker.Kind(j.Issue.SubIssues, j.Issue.Body)
}

// HandOver ends a Job whose item is a tracker before anything else: no
// blocker read, no model call, no mark and no number. The trace, the log's
// typed line (class tracker) and the lease given back; it returns the
// reason.
func (j *Job) HandOver(ctx context.Context, kind string) string {
	reason := fmt.Sprintf("#%d is a tracker (%s): roadmap drives its sub-issues, not the tracker itself", j.O.Issue, kind)
	j.Logf("roadmap: issue %s", reason[1:])
	j.Event(trace.Event{Type: trace.TypePhase, Phase: trace.PhaseYielded, Step: "start", Reason: reason, Outcome: string(failure.Tracker)})
	j.Command("notice", failure.TypedLine(failure.ResultYielded, failure.Tracker, reason))
	j.Release(ctx)
	return reason
}
