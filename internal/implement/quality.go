package implement

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/f2p"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/gates"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/kernel"
	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/ready"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/review"
	"github.com/roadmap-dev/roadmap/internal/strength"
	"github.com/roadmap-dev/roadmap/internal/trace"
	"github.com/roadmap-dev/roadmap/internal/unidiff"
)

// Quality before ready (docs/review.md, docs/strength.md): the test strength
// of each group's changed lines, inside the group's repair rounds, and the
// independent review of the whole diff at the head, with its own repair
// rounds, before the watch may mark the PR ready.

// ReviewOptions is the review before ready. No Models: no review.
type ReviewOptions struct {
	// Models is the reviewer's ladder (review.model): its first tier is
	// another than the implementer starts on.
	Models []agent.Tier
	// Named says the configuration named the reviewer (review.model): it
	// is used as named. Otherwise a reviewer on the model whose step last
	// changed the head gives way to another model of the ladder when there
	// is one (reviewerTiers).
	Named bool
	// MaxFindings bounds the blocking findings one review raises.
	MaxFindings int
	// Rounds bounds the repair rounds blocking findings get.
	Rounds int
}

func (o ReviewOptions) on() bool { return len(o.Models) > 0 }

// StrengthOptions is the test strength of each group.
type StrengthOptions struct {
	On bool
	// Floor is the least score a group passes with.
	Floor float64
	// Timeout bounds one mutant's run (0: the package's default).
	Timeout time.Duration
	// MaxMutants bounds the mutants of one group (0: the default).
	MaxMutants int
}

// strengthCheck measures the tests of group g on its changed lines: the
// work tree against HEAD, the commit before the group (the agent never
// commits). It is the last check of the group's repair rounds: survivors go
// back to the agent as "add a test that fails on this mutant". A group that
// changed no line of Go code with something to mutate is not measured, and
// says so; a group that did and where no mutant ran, or every one timed out,
// never passes.
func (r *runner) strengthCheck(ctx context.Context, g plan.Group) (bool, string, error) {
	o := r.o
	tests := g.VerifyCommands()
	start := o.Clock.Now()
	// The group's change is measured from the tree before it, as its
	// fail-to-pass is (f2p.BeforeGroup): a WIP commit an earlier Job left
	// in the group belongs to its change.
	base := "HEAD"
	if span, err := f2p.BeforeGroup(ctx, o.Repo, o.Remote+"/"+o.Base, "HEAD", g.Number); err == nil {
		base = span.Before
	}
	rep, err := strength.Run(ctx, strength.Options{Dir: r.workdir, Base: base, Tests: tests, Runner: o.CheckRunner, Split: o.Split,
		Timeout: o.Strength.Timeout, MaxMutants: o.Strength.MaxMutants, Mask: o.Mask,
		Progress: func(s string) { r.j.Logf("roadmap: group %d: test strength: %s", g.Number, s) }}, o.Strength.Floor)
	if err != nil {
		if ctx.Err() != nil {
			return false, "", err
		}
		// The unmutated tests fail, or git could not say what changed:
		// the agent sees why, as it sees a failing check.
		return false, r.ready.Unmeasurable(o.Mask(err.Error())), nil
	}
	m := r.ready.Strength(g.Number, rep)
	r.j.Event(trace.Event{Type: trace.TypePhase, Phase: trace.PhaseStrength, Group: g.Number, Step: groupStep(g),
		Duration: o.Clock.Now().Sub(start), Outcome: m.Outcome, Reason: o.Mask(rep.Reason)})
	r.j.Logf("roadmap: group %d: test strength: %s", g.Number, m.Line)
	if m.Passed {
		return true, "", nil
	}
	r.j.Command("error", fmt.Sprintf("roadmap: test strength: group %d: %s", g.Number, rep.Reason))
	return false, m.Task, nil
}

// strengthEnding is a group's stop when its last failing round was the test
// strength, not a check.
func (r *runner) strengthEnding(g plan.Group, rounds int) ending {
	return endingOf(groupStep(g), r.ready.StrengthStop(g.Number, rounds, r.o.Strength.Floor))
}

// reviewerTiers are the reviewer's tiers by rule: review.model's or the
// default (the ladder's last), unless it is the model whose agent step last
// changed the head in this Job and the configuration did not name it; then
// the highest tier of the ladder on another model, so the diff is judged
// by another model whenever the ladder offers one.
func (r *runner) reviewerTiers() []agent.Tier {
	v := r.o.Review.Models
	if r.o.Review.Named || v[0].Name != r.roles.judged {
		return v
	}
	for i := len(r.o.Models) - 1; i >= 0; i-- {
		if r.o.Models[i].Name != r.roles.judged {
			return r.o.Models[i : i+1]
		}
	}
	return v
}

// reviewHead reviews the diff at r.head before the watch. A head the
// record's ledger says passed already is not reviewed again. Blocking
// findings end with the repair task as the check log while rounds remain
// (atHead repairs and reviews again); past them the item stops
// (review_blocked), the findings in the record and the PR comment.
func (r *runner) reviewHead(ctx context.Context, change *plan.Change, round int) (ending, bool) {
	o := r.o
	if !o.Review.on() {
		return ending{}, true
	}
	recorded, _ := r.j.Rec.Review()
	ledger := r.ready.Ledger(recorded)
	if r.ready.PassedAt(ledger, r.head) {
		r.j.Logf("roadmap: the review passed at %s already (implement.review); not reviewing it again", short(r.head))
		return ending{}, true
	}
	if end, ok := r.checkTime(ctx, "review"); !ok {
		return end, false
	}
	defer r.j.Section("roadmap: review at %s", short(r.head))()
	r.j.Doing = fmt.Sprintf("reviewing the diff at %s", short(r.head))
	r.showProgress(ctx)
	diff, err := o.Repo.Diff(ctx, o.Remote+"/"+o.Base)
	if err != nil {
		return r.fail(ctx, "review", err), false
	}
	closed := map[string]string{}
	for _, c := range ledger.Closed {
		closed[c.ID] = c.Why
	}
	in := review.Input{Dir: r.workdir, Diff: diff, Plan: planText(change), Acceptance: gates.AcceptanceCriteria(r.j.Issue.Body),
		Tests: headCommands(change, nil), Closed: closed, Instructions: r.reviewInstructions(ctx, diff)}
	start := o.Clock.Now()
	tiers := r.reviewerTiers()
	r.j.Logf("roadmap: the reviewer runs on %s (the head's last agent step on %s)", tiers[0].Name, firstSet(r.roles.judged, "no model of this Job"))
	res, err := review.Run(ctx, review.Options{Config: r.j.AgentConfig(tiers), MaxFindings: o.Review.MaxFindings}, in)
	if err == nil {
		r.ranAs("reviewer", tiers[0].Name)
	}
	r.j.Event(trace.Event{Type: trace.TypePhase, Phase: trace.PhaseReview, Step: "review", Duration: o.Clock.Now().Sub(start),
		Outcome: string(res.Status), Attempt: round + 1, Model: tiers[0].Name})
	if err != nil {
		if ctx.Err() != nil {
			return ending{result: record.ResultYielded, class: failure.Killed, step: "review", reason: kernel.Signalled}, false
		}
		return r.fail(ctx, "review", err), false
	}
	switch res.Status {
	case agent.StatusFinished:
	case agent.StatusBudgetExhausted:
		return ending{result: record.ResultStopped, class: failure.BudgetExhausted, step: "review", reason: res.Reason}, false
	case agent.StatusModelError:
		if ctx.Err() != nil {
			return ending{result: record.ResultYielded, class: failure.Killed, step: "review", reason: kernel.Signalled}, false
		}
		return r.classEnding(failure.ClassifyError(errors.New(res.Reason)), "review", "reviewer: "+res.Reason), false
	default:
		return ending{result: record.ResultStopped, class: failure.Unknown, step: "review", reason: fmt.Sprintf("the review ended with %s: %s", res.Status, res.Reason)}, false
	}
	ledger, fail, ok := r.ready.Review(r.head, ledger, res, round, o.Review.Rounds)
	var ch record.Changes
	ch.SetReview(ledger)
	r.pending.Merge(ch) // rides on the next mark: the watch's or the Job's last
	blocking := res.Blocking()
	r.j.Logf("roadmap: review at %s: %d findings, %d blocking (%d dropped, %d refuted)", short(r.head), len(res.Findings), len(blocking), len(res.Dropped), res.Refuted)
	if ok {
		return ending{}, true
	}
	if !fail.Repairable {
		r.j.Command("error", fmt.Sprintf("roadmap: review: %d blocking findings stand at %s: %s", len(blocking), short(r.head), ready.Standing(blocking)))
	}
	return endingOf("review", fail), false
}

// planText is the plan's proposal and tasks, as the reviewer reads them.
func planText(change *plan.Change) string {
	var b strings.Builder
	for _, name := range []string{"proposal.md", "tasks.md"} {
		if data, err := change.ReadFile(name); err == nil {
			fmt.Fprintf(&b, "## %s\n\n%s\n\n", name, data)
		}
	}
	return b.String()
}

// markReady marks the PR ready with body. With the review on, only at the
// head the review passed at, read by GitHub in the same mutation: a push
// after the review (a person's, another writer's) puts the PR back to a
// draft and the Job yields, and the next Job checks and reviews that head.
func (r *runner) markReady(ctx context.Context, body string) (ending, bool) {
	o := r.o
	// Never ready on a closed PR or issue (people.go).
	if end, ok := r.people(ctx, "mark ready"); !ok {
		return end, false
	}
	// Never ready on a stale base: the base's tip, read once more now, is
	// the one the merged check passed on (merged.go).
	if end, ok := r.baseStill(ctx); !ok {
		return end, false
	}
	if !o.Review.on() {
		if err := o.GitHub.MarkReadyWithBody(ctx, r.pr, body); err != nil {
			return r.fail(ctx, "mark ready", err), false
		}
		return ending{}, true
	}
	reviewed := r.ready.Reviewed()
	if reviewed == "" || reviewed != r.head {
		return ending{result: record.ResultStopped, class: failure.Unknown, step: "mark ready",
			reason: fmt.Sprintf("the head %s was not reviewed (the review passed at %q): not marked ready", short(r.head), short(reviewed))}, false
	}
	err := o.GitHub.MarkReadyAtHead(ctx, r.pr, body, reviewed)
	var moved *github.HeadMovedError
	if errors.As(err, &moved) {
		r.ci.Note(fmt.Sprintf("not marked ready: the PR's head moved to %s after the review of %s", short(moved.Got), short(moved.Want)))
		r.j.Logf("roadmap: %v; the next Job checks and reviews the new head", moved)
		return ending{result: record.ResultYielded, step: "mark ready",
			reason: fmt.Sprintf("the PR's head moved to %s after the review of %s; the next Job checks and reviews it", short(moved.Got), short(moved.Want))}, false
	}
	if err != nil {
		return r.fail(ctx, "mark ready", err), false
	}
	return ending{}, true
}

// reviewInstructions are the repository's instructions (from the base
// commit) for the files the diff changes: the reviewer's section.
func (r *runner) reviewInstructions(ctx context.Context, diff string) string {
	var paths []string
	for _, f := range unidiff.Parse(diff) {
		paths = append(paths, f.Path())
	}
	return r.instr.Text(ctx, paths)
}

// firstSet is the first of s that is not "".
func firstSet(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
