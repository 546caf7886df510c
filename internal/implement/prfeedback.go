package implement

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/git"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/prfix"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/trace"
	"github.com/roadmap-dev/roadmap/internal/verdict"
)

// A person's review (docs/review.md): a repair Job answers what a person
// with write access asked of the PR, one batch a Job (internal/prfix
// decides which), before the head's checks. Each comment of the batch is an
// agent step at the head and a commit, or, when the agent disagrees and
// changes nothing, an answer with its reason; the comment ledger is marked
// before the reply is posted, so a Job killed in between never addresses a
// comment twice. The new head is then checked, measured and reviewed as
// any head, and the PR is ready again only there.

// feedbackStep is the step label of a comment's agent step.
const feedbackStep = "review comment"

// feedbackDue reports whether this Job reads the PR's feedback: a Job a
// person's review or /roadmap fix started, or any Job of an item whose
// record holds a comment ledger (a repair Job's continuation finds the
// comments it left there).
func (r *runner) feedbackDue() bool {
	if r.pr.Number == 0 {
		return false
	}
	if r.o.Feedback {
		return true
	}
	_, has := r.j.Rec.Comments()
	return has
}

// answerFeedback reads what people said on the PR, decides with prfix and
// addresses the first batch at the head. It ends the loop only when a step
// does (a kill, a failure, no time).
func (r *runner) answerFeedback(ctx context.Context, change *plan.Change) (ending, bool) {
	if !r.feedbackDue() {
		return ending{}, true
	}
	o := r.o
	const step = "read the PR's feedback"
	fb, err := o.GitHub.Feedback(ctx, r.pr.Number)
	if err != nil {
		return r.fail(ctx, step, err), false
	}
	v := feedbackView(o.GitHub.Identity(), fb)
	for _, login := range prfix.Authors(r.j.Rec, v) {
		p, err := o.GitHub.Permission(ctx, login)
		if err != nil {
			return r.fail(ctx, step, err), false
		}
		v.Permissions[login] = p
	}
	w := prfix.Decide(r.j.Rec, v)
	for _, line := range w.Log {
		r.j.Logf("roadmap: review: %s", line)
	}
	if !w.Todo() {
		if len(w.Ignored) > 0 {
			// Logged once: the ignored comments ride on the next mark.
			var ch record.Changes
			ch.SetComments(prfix.Settle(r.j.Rec, v, w, nil))
			r.pending.Merge(ch)
		}
		return ending{}, true
	}
	batch := w.Batches[0]
	defer r.j.Section("roadmap: a person's review: %d comment(s)", len(batch.Items))()
	var done []prfix.Outcome
	drafted := false
	for _, it := range batch.Items {
		out, end, ok := r.addressComment(ctx, change, it, &drafted)
		if !ok {
			return end, false
		}
		done = append(done, out)
		// The ledger first, then the reply: a Job killed between them has
		// settled the comment, and no later Job addresses it again.
		var ch record.Changes
		ch.SetComments(prfix.Settle(r.j.Rec, v, w, done))
		if out.SHA != "" {
			ch.SetSHA(record.SHA(out.SHA))
			ch.SetPublishedSHA(record.SHA(out.SHA))
		}
		if err := r.mark(ctx, ch); err != nil {
			return r.fail(ctx, "mark review comment", err), false
		}
		if err := r.reply(ctx, it, out); err != nil {
			return r.fail(ctx, "reply", err), false
		}
	}
	r.ci.Note(fmt.Sprintf("answered %d comment(s) of %s", len(batch.Items), batchName(batch)))
	return ending{}, true
}

// addressComment is one comment's agent step at the head, with its repair
// rounds against every verify command and the configured checks, then a
// commit and a push. A step that changed nothing is the agent's answer: it
// disagrees, and its summary is the reason.
func (r *runner) addressComment(ctx context.Context, change *plan.Change, it prfix.Item, drafted *bool) (prfix.Outcome, ending, bool) {
	o := r.o
	outcome := prfix.Outcome{Ref: it.Ref}
	if end, ok := r.checkTime(ctx, feedbackStep); !ok {
		return outcome, end, false
	}
	r.j.Doing = fmt.Sprintf("answering %s by %s", it.Ref, it.Author)
	r.j.Logf("roadmap: review: %s by %s", it.Ref, it.Author)
	cmds := headCommands(change, o.CheckCommands)
	last := lastPlanGroup(change, r.lastGroup)
	check := func(ctx context.Context) (bool, string, error) {
		r.ready.Round()
		rep, err := r.runChecks(ctx, plan.Group{}, cmds)
		if err != nil || !rep.Passed || !o.Strength.On || last.Number == 0 {
			return rep.Passed, rep.Log, err
		}
		// The comment's change is committed in the last group (its
		// trailer): its tests are measured with that group's, as a
		// group's are (quality.go).
		return r.strengthCheck(ctx, last)
	}
	start := o.Clock.Now()
	out, err := agent.RunWithRepair(ctx, r.j.AgentConfig(o.Models),
		agent.Step{Task: commentTask(change, it), Context: r.stepContext(ctx, change, change.Tasks)}, check, o.RepairRounds)
	r.ranAs("implementer", out.Model)
	r.j.Event(trace.Event{Type: trace.TypePhase, Phase: trace.PhaseAgent, Step: feedbackStep,
		Duration: o.Clock.Now().Sub(start), Attempt: out.Attempts, Outcome: string(out.Status)})
	if err == nil && out.Status == agent.StatusChecksFailed && r.ready.StrengthFailed() {
		return outcome, r.strengthEnding(last, out.Attempts), false
	}
	if end, ok := r.agentEnded(ctx, out, err, feedbackStep, "after a review comment", ""); !ok {
		return outcome, end, false
	}
	if err := r.keepPlan(ctx, change, feedbackStep); err != nil {
		return outcome, r.fail(ctx, feedbackStep, err), false
	}
	changed, err := o.Repo.HasChanges(ctx)
	if err != nil {
		return outcome, r.fail(ctx, "commit", err), false
	}
	if !changed {
		outcome.Answer = o.Mask(out.Summary)
		if strings.TrimSpace(outcome.Answer) == "" {
			outcome.Answer = "the agent changed nothing and gave no reason"
		}
		r.j.Logf("roadmap: review: %s answered, not changed: %s", it.Ref, verdict.OneLine(outcome.Answer))
		return outcome, ending{}, true
	}
	sha, err := o.Repo.CommitGroup(ctx, max(r.lastGroup, 1), git.Message{
		Subject: fmt.Sprintf("roadmap: answer %s by %s", it.Ref, it.Author),
		Body:    o.Mask(out.Summary),
		Issue:   o.Issue,
	})
	if err != nil {
		return outcome, r.fail(ctx, "commit", err), false
	}
	r.head = sha
	r.j.Event(trace.Event{Type: trace.TypePhase, Phase: trace.PhaseCommit, Step: feedbackStep})
	if !*drafted {
		// The PR is ready again only at the new, reviewed head: a draft
		// until the watch marks it ready there.
		if err := o.GitHub.MarkDraft(ctx, r.pr); err != nil {
			return outcome, r.fail(ctx, "pull request", err), false
		}
		*drafted = true
	}
	if end, ok := r.push(ctx, plan.Group{}); !ok {
		return outcome, end, false
	}
	outcome.SHA = sha
	r.j.Logf("roadmap: review: %s addressed in %s", it.Ref, short(sha))
	return outcome, ending{}, true
}

// lastPlanGroup is the plan's group numbered n, else its last (the zero
// group for a plan with none).
func lastPlanGroup(change *plan.Change, n int) plan.Group {
	gs := change.Tasks.Groups
	for _, g := range gs {
		if g.Number == n {
			return g
		}
	}
	if len(gs) == 0 {
		return plan.Group{}
	}
	return gs[len(gs)-1]
}

// reply answers a comment where its author reads it: in the thread of a
// line comment, on the PR for a review's body or a /roadmap fix comment.
func (r *runner) reply(ctx context.Context, it prfix.Item, out prfix.Outcome) error {
	body := replyText(it, out)
	if it.ReplyTo != 0 {
		_, err := r.o.GitHub.ReplyToReviewComment(ctx, r.pr.Number, it.ReplyTo, body)
		return err
	}
	_, err := r.o.GitHub.CreateComment(ctx, r.pr.Number, body)
	return err
}

// replyText names the commit that addressed the comment, or gives the
// agent's reason for changing nothing.
func replyText(it prfix.Item, out prfix.Outcome) string {
	to := "@" + it.Author
	if it.ReplyTo == 0 {
		to += " (" + it.Ref.String() + ")"
	}
	if out.SHA != "" {
		return fmt.Sprintf("%s addressed in %s by roadmap.", to, out.SHA)
	}
	return fmt.Sprintf("%s roadmap changed nothing for this comment: %s", to, out.Answer)
}

// commentTask is the instruction of one comment's agent step.
func commentTask(change *plan.Change, it prfix.Item) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Every task group of the plan %q is done and the PR was ready. A maintainer, %s, reviewed it; address their %s:\n\n", change.ID, it.Author, it.Ref)
	if it.Path != "" {
		where := it.Path
		if it.Line > 0 {
			where = fmt.Sprintf("%s, line %d", it.Path, it.Line)
		}
		fmt.Fprintf(&b, "On %s:\n", where)
	}
	for _, s := range it.Thread {
		fmt.Fprintf(&b, "> (earlier in the thread, %s) %s\n", s.Author, oneQuote(s.Body))
	}
	fmt.Fprintf(&b, "> %s\n\n", oneQuote(it.Body))
	b.WriteString("Change the code as the comment asks, keeping every group's behaviour; the verify commands of all groups must pass:\n")
	for _, g := range change.Tasks.Groups {
		for _, c := range g.VerifyCommands() {
			fmt.Fprintf(&b, "- group %d: `%s`\n", g.Number, c)
		}
	}
	b.WriteString("\nWhen they pass, call finish with a one-line summary. If you disagree with the comment, change nothing and ")
	b.WriteString("call finish with your reason: it is the reply. Do not edit tasks.md.")
	return b.String()
}

// oneQuote is a comment's text as one quoted block.
func oneQuote(s string) string {
	return strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n> ")
}

// batchName names a batch in the PR comment's note.
func batchName(b prfix.Batch) string {
	if b.Review != 0 {
		return fmt.Sprintf("review %d", b.Review)
	}
	return b.Items[0].Ref.String()
}

// feedbackView is what the PR shows, as prfix reads it.
func feedbackView(self string, fb github.Feedback) prfix.View {
	v := prfix.View{Self: self, ReadAt: fb.ReadAt, Permissions: map[string]string{}}
	for _, rv := range fb.Reviews {
		v.Reviews = append(v.Reviews, prfix.Review{ID: rv.ID, Author: rv.Author, State: rv.State, Body: rv.Body, SubmittedAt: rv.SubmittedAt})
	}
	for _, lc := range fb.Lines {
		v.Lines = append(v.Lines, prfix.LineComment{ID: lc.ID, Review: lc.Review, InReplyTo: lc.InReplyTo, Author: lc.Author,
			Body: lc.Body, Path: lc.Path, Line: lc.Line, CreatedAt: lc.CreatedAt})
	}
	for _, c := range fb.Comments {
		v.Comments = append(v.Comments, prfix.Comment{ID: c.ID, Author: c.Author, Body: c.Body, CreatedAt: createdAt(c)})
	}
	return v
}

// createdAt is when a PR comment was made (its last edit when GitHub gave
// no creation time).
func createdAt(c github.Comment) time.Time {
	if c.CreatedAt.IsZero() {
		return c.UpdatedAt
	}
	return c.CreatedAt
}
