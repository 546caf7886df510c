package implement

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/gates"
	"github.com/roadmap-dev/roadmap/internal/git"
	"github.com/roadmap-dev/roadmap/internal/instructions"
	"github.com/roadmap-dev/roadmap/internal/kernel"
	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// mark writes ch to the record in one write (the kernel's mark path adds
// the spend, the attempt and this Job's line of implement.jobs). The earlier
// stop's hand-off keys are cleared in the write after this Job's first mark,
// so a Job killed before its first mark leaves them for the next.
func (r *runner) mark(ctx context.Context, ch record.Changes) error {
	return r.write(ctx, ch, record.JobOutcome{})
}

func (r *runner) write(ctx context.Context, ch record.Changes, outcome record.JobOutcome) error {
	var all record.Changes
	first := r.j.Marks() == 0
	if !first && r.handoff.pending {
		all.Delete(record.KeyImplementCheckLog, record.KeyImplementConflict)
	}
	all.Merge(r.pending)
	all.Merge(ch)
	if outcome.Group == 0 {
		outcome.Group = r.lastGroup
	}
	if err := r.j.Mark(ctx, all, outcome); err != nil {
		return err
	}
	if !first {
		r.handoff.pending = false
	}
	r.pending = record.Changes{}
	return nil
}

// finish ends the Job: a WIP commit when work is left in the tree, the last
// mark with the typed result, the PR comment and the outputs. It runs on a
// fresh context when the Job's own was cancelled, within the grace the
// runner gives after SIGINT.
func (r *runner) finish(ctx context.Context, end ending) (Result, error) {
	o := r.o
	ctx, cancel := kernel.LastMarkContext(ctx)
	defer cancel()
	var ch record.Changes
	ch.SetResult(end.result)
	switch end.result {
	case record.ResultReady:
		ch.Delete(record.KeyImplementFailure, record.KeyImplementStopped, record.KeyImplementWIP)
		if r.handoff.kept.sha != "" {
			// Every group landed, the kept one too (a person may have
			// taken it in): its ref is done with.
			r.dropKept(ctx, r.handoff.kept.sha, "is not needed: every group landed")
		}
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
	if end.result != record.ResultReady && end.result != "" && !held(end) {
		if sha := r.wip(ctx); sha != "" {
			ch.SetWIP(record.SHA(sha))
			if r.handoff.kept.sha != "" {
				// The group started from the kept commit: the WIP commit
				// holds its work now (implement.wip deletes implement.kept).
				r.dropKept(ctx, r.handoff.kept.sha, "is in the WIP commit "+short(sha)+" now")
			}
		}
	}
	phase := map[record.Result]trace.Phase{record.ResultReady: trace.PhaseReady, record.ResultStopped: trace.PhaseStopped,
		record.ResultYielded: trace.PhaseYielded, record.ResultReturned: trace.PhaseReturned}[end.result]
	r.j.Event(trace.Event{Type: trace.TypePhase, Phase: phase, Step: end.step, Reason: end.reason, Outcome: string(end.class)})
	_, copyText := trace.Bound(o.Trace.Events(), trace.RecordLimit)
	ch.SetTrace([]byte(copyText))
	outcome := record.JobOutcome{Result: end.result, Failure: string(end.class)}
	res := Result{Result: end.result, Failure: string(end.class), Reason: end.reason, Group: r.lastGroup, HeadSHA: r.head,
		Spend: r.j.Total(), JobSpend: r.j.Spend, PR: r.pr.Number, Question: end.question, Attempt: r.j.Number}
	if end.result == record.ResultReady {
		res.CI = string(r.ci.CI)
	}
	if end.result != record.ResultReady {
		// The runner's own line: the classifier reads it first in this Job's log.
		level := map[record.Result]string{record.ResultStopped: "error", record.ResultYielded: "notice", record.ResultReturned: "warning"}[end.result]
		r.j.Command(level, failure.TypedLine(failure.Result(end.result), end.class, end.reason))
	}
	r.j.Doing = doing(end, r.pr.Number)
	werr := r.write(ctx, ch, outcome)
	if werr == nil && r.pr.Number != 0 {
		if _, err := o.GitHub.UpsertMarkerComment(ctx, r.pr.Number, o.Marker, r.comment(end)); err != nil {
			r.j.Logf("roadmap: update the PR comment: %v", err)
		}
		r.keepBody(ctx, end)
	}
	// After the last mark, the claims first: a waiter woken by this item's
	// report finds them gone.
	r.releaseClaims(ctx, end)
	// After the last mark: the next Job reads a record this one is done with.
	r.j.Release(ctx)
	res.RecordComment = r.j.RC.ID
	r.outputs(res)
	r.j.Logf("roadmap: Job %d ended %s%s; item spend %s", r.j.Number, end.result, suffix(end), kernel.SpendText(res.Spend))
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
	sha, err := r.o.Repo.CommitWIP(ctx, git.Message{Subject: fmt.Sprintf("roadmap: work in progress (Job %d)", r.j.Number), Issue: r.o.Issue})
	if err != nil || sha == "" {
		return ""
	}
	if err := r.o.Repo.Push(ctx, r.o.Remote, r.branch); err != nil {
		r.j.Logf("roadmap: push the WIP commit: %v", err)
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
		if held(end) {
			return heldDoing(end)
		}
		if end.class == failure.ClaimWait {
			// "waiting for #N: …": woken when #N gives its claims back.
			return end.reason
		}
		return fmt.Sprintf("yielded in %s%s; a continuation goes on", end.step, why)
	}
	return ""
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

// stepContext is the implementer's context: the plan's text and the
// repository's instructions for the files the tasks name (read from the
// base commit, so the agent's edits to them do not reach its prompts).
func (r *runner) stepContext(ctx context.Context, change *plan.Change, tasks *plan.Tasks) []agent.ContextPart {
	parts := groupContext(r.workdir, change)
	if text := r.instr.Text(ctx, gates.TaskPaths(tasks)); text != "" {
		// Above the proposal: how the project builds and tests is what a
		// step runs into first.
		parts = append(parts, agent.ContextPart{Name: instructions.Title, Text: text, Priority: 20})
	}
	return parts
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
