package implement

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/f2p"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/gates"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/kernel"
	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/review"
	"github.com/roadmap-dev/roadmap/internal/strength"
	"github.com/roadmap-dev/roadmap/internal/trace"
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
		r.strengthFailed = true
		return false, "roadmap: test strength could not be measured: " + o.Mask(err.Error()), nil
	}
	gs := record.GroupStrength{Group: g.Number, Generated: rep.Generated, Killed: rep.Killed, Survived: rep.Survived,
		NotCovered: rep.NotCovered, TimedOut: rep.TimedOut, Score: rep.Score}
	passed, why := strengthVerdict(rep)
	if why != "" {
		gs.Score, gs.Unmeasured = 0, why
	}
	r.strengths = upsertStrength(r.strengths, gs)
	r.lastStrength = rep
	r.j.Event(trace.Event{Type: trace.TypePhase, Phase: trace.PhaseStrength, Group: g.Number, Step: groupStep(g),
		Duration: o.Clock.Now().Sub(start), Outcome: strengthOutcome(gs, passed), Reason: o.Mask(rep.Reason)})
	r.j.Logf("roadmap: group %d: test strength: %s", g.Number, strengthLine(gs))
	if passed {
		r.strengthFailed = false
		return true, "", nil
	}
	r.strengthFailed = true
	r.j.Command("error", fmt.Sprintf("roadmap: test strength: group %d: %s", g.Number, rep.Reason))
	return false, strengthTask(rep), nil
}

// strengthTask is the repair instruction of a weak group: the survivors as
// diffs, or, when none survived (nothing covered, every mutant timed out),
// what the tests miss.
func strengthTask(rep strength.Report) string {
	if task := rep.RepairTask(5); task != "" {
		return task
	}
	return fmt.Sprintf("The group's tests do not measure its change: %s. Add tests that run the changed lines and check what they do, quickly enough to finish within the time budget of a mutant's run.", rep.Reason)
}

// strengthVerdict is whether a group's measurement lets it pass, and, when
// no score stands for it, why. Nothing this group changed could be mutated
// (no Go code, only lines with nothing to mutate), or no mutant made for it
// builds (the mutation's limit, which no test the agent adds can lift): the
// group is not measured and goes on, and says so. Mutants that built and
// that no test ran (not covered), or that all timed out, never pass.
func strengthVerdict(rep strength.Report) (bool, string) {
	switch {
	case rep.Generated == 0:
		return true, unmeasured(rep)
	case rep.Errors == rep.Generated:
		return true, fmt.Sprintf("none of the %d mutants of its changed lines builds", rep.Errors)
	}
	return rep.Passed, ""
}

// unmeasured says why a group has no score.
func unmeasured(rep strength.Report) string {
	var parts []string
	if len(rep.Unsupported) > 0 {
		parts = append(parts, "mutation is not yet available for "+strings.Join(languagesOf(rep.Unsupported), ", "))
	}
	if rep.Skipped > 0 {
		parts = append(parts, fmt.Sprintf("%d changed lines with nothing to mutate", rep.Skipped))
	}
	if len(parts) == 0 {
		return "no changed line of Go code"
	}
	return strings.Join(parts, "; ")
}

// languagesOf names the file types of unsupported files, each once.
func languagesOf(files []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range files {
		ext := f
		if i := strings.LastIndexByte(f, '.'); i >= 0 {
			ext = f[i:]
		}
		if !seen[ext] {
			seen[ext] = true
			out = append(out, ext)
		}
	}
	sort.Strings(out)
	return out
}

func upsertStrength(gs []record.GroupStrength, g record.GroupStrength) []record.GroupStrength {
	for i := range gs {
		if gs[i].Group == g.Group {
			gs[i] = g
			return gs
		}
	}
	return append(gs, g)
}

func strengthOutcome(g record.GroupStrength, passed bool) string {
	switch {
	case g.Unmeasured != "":
		return "unmeasured"
	case passed:
		return "passed"
	}
	return "failed"
}

// strengthLine is a group's strength in the words of the log and the PR
// comment.
func strengthLine(g record.GroupStrength) string {
	if g.Unmeasured != "" {
		return "not measured: " + g.Unmeasured
	}
	return fmt.Sprintf("score %.2f: %d mutants, %d killed, %d survived, %d not covered, %d timed out",
		g.Score, g.Generated, g.Killed, g.Survived, g.NotCovered, g.TimedOut)
}

// strengthRows is every group's strength: the record's (earlier Jobs), with
// this Job's measurements over them.
func (r *runner) strengthRows() []record.GroupStrength {
	rows, _ := r.j.Rec.Strength()
	for _, g := range r.strengths {
		rows = upsertStrength(rows, g)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Group < rows[j].Group })
	return rows
}

// strengthEnding is a group's stop when its last failing round was the test
// strength, not a check.
func (r *runner) strengthEnding(g plan.Group, rounds int) ending {
	rep := r.lastStrength
	reason := fmt.Sprintf("group %d: test strength %.2f under the floor %.2f (%d mutants: %d killed, %d survived, %d timed out) after %d rounds",
		g.Number, rep.Score, r.o.Strength.Floor, rep.Generated, rep.Killed, rep.Survived, rep.TimedOut, rounds)
	if rep.Reason != "" && rep.Measured() == 0 || rep.TimedOut == rep.Measured() {
		reason = fmt.Sprintf("group %d: %s (after %d rounds)", g.Number, rep.Reason, rounds)
	}
	return ending{result: record.ResultStopped, class: failure.TestsWeak, step: groupStep(g), reason: reason,
		checkLog: strengthTask(rep)}
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
	ledger, _ := r.j.Rec.Review()
	if r.ledger != nil {
		ledger = *r.ledger
	}
	if ledger.PassedAt(record.SHA(r.head)) {
		r.j.Logf("roadmap: the review passed at %s already (implement.review); not reviewing it again", short(r.head))
		r.reviewed = r.head
		return ending{}, true
	}
	if end, ok := r.checkTime(ctx, "review"); !ok {
		return end, false
	}
	defer r.j.Section("roadmap: review at %s", short(r.head))()
	r.j.Doing = fmt.Sprintf("reviewing the diff at %s", short(r.head))
	diff, err := o.Repo.Diff(ctx, o.Remote+"/"+o.Base)
	if err != nil {
		return r.fail(ctx, "review", err), false
	}
	closed := map[string]string{}
	for _, c := range ledger.Closed {
		closed[c.ID] = c.Why
	}
	in := review.Input{Dir: r.workdir, Diff: diff, Plan: planText(change), Acceptance: gates.AcceptanceCriteria(r.j.Issue.Body),
		Tests: headCommands(change, nil), Closed: closed}
	start := o.Clock.Now()
	res, err := review.Run(ctx, review.Options{Config: r.j.AgentConfig(o.Review.Models), MaxFindings: o.Review.MaxFindings}, in)
	r.j.Event(trace.Event{Type: trace.TypePhase, Phase: trace.PhaseReview, Step: "review", Duration: o.Clock.Now().Sub(start),
		Outcome: string(res.Status), Attempt: round + 1})
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
	r.reviewRes = &res
	blocking := res.Blocking()
	// The blocking findings of the review before this one that this one
	// does not raise were repaired: never raised again.
	for _, f := range ledger.Open {
		if !containsFinding(blocking, f.ID) {
			ledger.Close(f.ID, review.Repaired)
		}
	}
	ledger.SHA, ledger.Open = record.SHA(r.head), nil
	for _, f := range blocking {
		ledger.Open = append(ledger.Open, record.OpenFinding{ID: f.ID, File: f.File, Line: f.Start, Title: f.Title})
	}
	r.ledger = &ledger
	var ch record.Changes
	ch.SetReview(ledger)
	r.pending.Merge(ch) // rides on the next mark: the watch's or the Job's last
	r.j.Logf("roadmap: review at %s: %d findings, %d blocking (%d dropped, %d refuted)", short(r.head), len(res.Findings), len(blocking), len(res.Dropped), res.Refuted)
	if len(blocking) == 0 {
		r.reviewed = r.head
		return ending{}, true
	}
	task := review.RepairTask(blocking)
	if round >= o.Review.Rounds {
		ids := make([]string, len(blocking))
		for i, f := range blocking {
			ids[i] = fmt.Sprintf("%s %s:%d", f.ID, f.File, f.Start)
		}
		r.j.Command("error", fmt.Sprintf("roadmap: review: %d blocking findings stand at %s: %s", len(blocking), short(r.head), strings.Join(ids, ", ")))
		return ending{result: record.ResultStopped, class: failure.ReviewBlocked, step: "review", checkLog: task,
			reason: fmt.Sprintf("%d blocking finding(s) of the review stand at %s after %d repair round(s): %s; /roadmap dismiss ID or a fix and /roadmap retry",
				len(blocking), short(r.head), round, strings.Join(ids, ", "))}, false
	}
	return ending{result: record.ResultStopped, class: failure.ReviewBlocked, step: "review", checkLog: task,
		reason: fmt.Sprintf("%d blocking finding(s) of the review at %s", len(blocking), short(r.head)), repairable: true}, false
}

func containsFinding(fs []review.Finding, id string) bool {
	for _, f := range fs {
		if f.ID == id {
			return true
		}
	}
	return false
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

// qualityLines are the PR comment's review findings and test strength.
func (r *runner) qualityLines() string {
	var b strings.Builder
	if rows := r.strengthRows(); len(rows) > 0 {
		b.WriteString("\nTest strength (mutants on each group's changed, covered lines):\n\n")
		b.WriteString("| group | mutants | killed | survived | not covered | timed out | score |\n|---|---|---|---|---|---|---|\n")
		for _, g := range rows {
			if g.Unmeasured != "" {
				fmt.Fprintf(&b, "| %d | — | — | — | — | — | not measured: %s |\n", g.Group, oneLine(g.Unmeasured))
				continue
			}
			fmt.Fprintf(&b, "| %d | %d | %d | %d | %d | %d | %.2f |\n", g.Group, g.Generated, g.Killed, g.Survived, g.NotCovered, g.TimedOut, g.Score)
		}
		if r.strengthFailed && len(r.lastStrength.Mutants) > 0 {
			b.WriteString("\nSurviving mutants, each a change the tests did not notice:\n\n")
			b.WriteString(r.lastStrength.RepairTask(3))
			b.WriteString("\n")
		}
	}
	if r.reviewRes != nil {
		fmt.Fprintf(&b, "\nReview at %s: %d finding(s), %d blocking.\n", short(r.ledgerSHA()), len(r.reviewRes.Findings), len(r.reviewRes.Blocking()))
		if len(r.reviewRes.Findings) > 0 {
			b.WriteString("\n")
			b.WriteString(r.reviewRes.Table())
			b.WriteString("\nA person with write access dismisses a finding with `/roadmap dismiss ID` on the issue; it is never raised again.\n")
		}
	}
	return b.String()
}

func (r *runner) ledgerSHA() string {
	if r.ledger != nil {
		return string(r.ledger.SHA)
	}
	return r.head
}

// markReady marks the PR ready with body. With the review on, only at the
// head the review passed at, read by GitHub in the same mutation: a push
// after the review (a person's, another writer's) puts the PR back to a
// draft and the Job yields, and the next Job checks and reviews that head.
func (r *runner) markReady(ctx context.Context, body string) (ending, bool) {
	o := r.o
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
	if r.reviewed == "" || r.reviewed != r.head {
		return ending{result: record.ResultStopped, class: failure.Unknown, step: "mark ready",
			reason: fmt.Sprintf("the head %s was not reviewed (the review passed at %q): not marked ready", short(r.head), short(r.reviewed))}, false
	}
	err := o.GitHub.MarkReadyAtHead(ctx, r.pr, body, r.reviewed)
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
