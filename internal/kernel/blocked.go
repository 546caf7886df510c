package kernel

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/blockers"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/trace"
	"github.com/roadmap-dev/roadmap/internal/tracker"
)

// BlockerOptions are the configuration of the check a Job makes at its
// start: whether the issues the item waits for are met (docs/tracker.md,
// "Blockers").
type BlockerOptions struct {
	// Label is put on an item that waits (labels.blocked); "" turns the
	// check off.
	Label string
	// Met says when a blocker is met (blockers.not_planned_met).
	Met blockers.Options
}

// Blocked is what a Job that must wait for its blockers found: it ends
// before any model call, with no mark and no number.
type Blocked struct {
	Verdict blockers.Verdict
	// Refs are the references the item waits for ("#12, acme/lib#4"):
	// item.blocked_by.
	Refs string
	// Reason is the ending's reason: "waiting for #12, acme/lib#4: …".
	Reason string
}

// Blockers reads whether the item's blockers are met, once the lease is
// held and the issue read: GitHub's issue dependencies (BlockedBy, one
// request; none when the issue read says nothing blocks it) and the
// references a person wrote in the body (blockers.FromBody) that BlockedBy
// did not return, whose states are read in one GraphQL query. A GitHub
// without issue dependencies leaves the body's alone. At most two counted
// requests for the reads.
//
// Not met: the item gets BlockerOptions.Label (unless the issue read shows
// it already) and item.blocked_by in one record write whose comment says
// what it waits for and why each refused reference can never be met (the
// store writes nothing when the comment says so already); the returned
// Blocked ends the Job. Met: a label and an item.blocked_by an
// earlier Job left are taken off (no request when there are none).
func (j *Job) Blockers(ctx context.Context) (*Blocked, error) {
	o := j.O
	if o.Blockers.Label == "" {
		return nil, nil
	}
	states, err := tracker.BlockerStates(ctx, o.GitHub, j.Issue,
		tracker.BlockerRead{NoDependencies: j.Issue.DependenciesKnown && j.Issue.BlockedByTotal == 0})
	if err != nil {
		return nil, err
	}
	item := blockers.Ref{Repo: o.GitHub.FullName(), Number: o.Issue}
	v := blockers.Decide(item, states, o.Blockers.Met)
	labelled := slices.Contains(j.Issue.Labels, o.Blockers.Label)
	if v.Met {
		return nil, j.unblock(ctx, labelled)
	}
	b := blockedBy(v, o.Blockers.Met)
	j.Logf("roadmap: issue #%d: blocked by %s", o.Issue, b.detail)
	if !labelled {
		if err := o.GitHub.AddLabels(ctx, o.Issue, o.Blockers.Label); err != nil {
			return nil, fmt.Errorf("label issue %d %s: %w", o.Issue, o.Blockers.Label, err)
		}
	}
	j.Doing = b.Reason
	if b.why != "" {
		j.Doing += ". " + b.why
	}
	err = j.store().Write(ctx, o.Issue, &j.RC, func(*record.Record) (record.Changes, error) {
		var ch record.Changes
		ch.SetBlockedBy(b.Refs)
		return ch, nil
	}, j.View)
	if err != nil {
		return nil, fmt.Errorf("issue %d: write item.blocked_by: %w", o.Issue, err)
	}
	j.Rec = j.RC.Record
	return &b.Blocked, nil
}

// unblock takes off what an earlier Job that waited left: the label (the
// issue read shows it) and item.blocked_by (the record read shows it).
func (j *Job) unblock(ctx context.Context, labelled bool) error {
	o := j.O
	if labelled {
		if err := o.GitHub.RemoveLabel(ctx, o.Issue, o.Blockers.Label); err != nil {
			return fmt.Errorf("remove %s from issue %d: %w", o.Blockers.Label, o.Issue, err)
		}
	}
	was, set := j.Rec.BlockedBy()
	if !set {
		return nil
	}
	err := j.store().Write(ctx, o.Issue, &j.RC, func(*record.Record) (record.Changes, error) {
		var ch record.Changes
		ch.Delete(record.KeyItemBlockedBy)
		return ch, nil
	}, j.View)
	if err != nil {
		return fmt.Errorf("issue %d: clear item.blocked_by: %w", o.Issue, err)
	}
	j.Rec = j.RC.Record
	j.Logf("roadmap: issue #%d waited for %s: its blockers are met", o.Issue, was)
	return nil
}

// blockedText is a Blocked with the log's detail and the record comment's
// reasons for the references that can never be met.
type blockedText struct {
	Blocked
	detail string // "#12 (open), #5 (closed as not planned)"
	why    string // "#7 is a pull request, not an issue: …"
}

// blockedBy says a verdict that is not met in words: the references the
// item waits for, the log's detail and the reasons a person reads.
func blockedBy(v blockers.Verdict, o blockers.Options) blockedText {
	var refs, detail, why []string
	for _, r := range v.Waiting {
		state := " (open)"
		if slices.Contains(v.Unmerged, r) {
			state = " (closed, its pull request not merged)"
			why = append(why, blockers.UnmergedWhy(r))
		}
		refs, detail = append(refs, r.String()), append(detail, r.String()+state)
	}
	if !o.NotPlannedMet {
		for _, r := range v.NotPlanned {
			refs, detail = append(refs, r.String()), append(detail, r.String()+" (closed as not planned)")
			why = append(why, fmt.Sprintf("%s was closed as not planned or as a duplicate: it counts as met only with blockers.not_planned_met.", r))
		}
	}
	for _, p := range v.Refused {
		refs, detail = append(refs, p.Ref.String()), append(detail, p.Ref.String()+" (refused)")
		why = append(why, p.Why)
	}
	list := strings.Join(refs, ", ")
	return blockedText{
		Blocked: Blocked{Verdict: v, Refs: list,
			Reason: fmt.Sprintf("waiting for %s: stage and implement start when they are closed as completed", list)},
		detail: strings.Join(detail, ", "), why: strings.Join(why, " "),
	}
}

// Wait ends a Job its blockers hold (Blockers): the trace, the log's typed
// line (class blocked) and the lease given back. It returns the reason.
func (j *Job) Wait(ctx context.Context, b *Blocked) string {
	j.Event(trace.Event{Type: trace.TypePhase, Phase: trace.PhaseYielded, Step: "start", Reason: b.Reason, Outcome: string(failure.Blocked)})
	j.Command("notice", failure.TypedLine(failure.ResultYielded, failure.Blocked, b.Reason))
	j.Release(ctx)
	return b.Reason
}
