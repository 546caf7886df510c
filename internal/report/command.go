package report

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/recordstore"
	"github.com/roadmap-dev/roadmap/internal/report/command"
	"github.com/roadmap-dev/roadmap/internal/report/decide"
)

// The actions of a person's commands (internal/report/command).
const (
	// ActionDismiss: a person dismissed review findings; the item goes on
	// when none is left standing.
	ActionDismiss Action = "dismiss"
	// ActionRetry: a person restarted a stopped item; its next Job was
	// dispatched.
	ActionRetry Action = "retry"
)

// handlers carry out each verb a person gives, after their access is
// checked and the record read: one row per verb of internal/report/command.
var handlers = map[command.Verb]func(r *reporter, ctx context.Context, c command.Command, who, role string) error{
	command.Stop:    (*reporter).personStop,
	command.Retry:   (*reporter).personRetry,
	command.Dismiss: (*reporter).personDismiss,
}

// command carries out a person's command. Only a person with write access
// (asked of GitHub, never taken from the event) may give one; anyone else's
// is ignored, and the log says so.
func (r *reporter) command(ctx context.Context, c command.Command, who string) error {
	handle, ok := handlers[c.Verb]
	if !ok {
		return fmt.Errorf("command %q: report has no handler for it", c.Verb)
	}
	role, err := r.o.GitHub.Permission(ctx, who)
	if err != nil {
		return fmt.Errorf("check %s's access: %w", who, err)
	}
	if !slices.Contains(writeRoles, role) {
		r.out.Action = ActionNone
		r.out.Reason = r.o.Mask(fmt.Sprintf("%s has %s access; only a person with write access can %s the item", who, role, c.Verb))
		r.logf("report: issue #%d: command %q ignored: %s", r.o.Issue, c.Verb, r.out.Reason)
		return nil
	}
	if err := r.read(ctx); err != nil {
		return err
	}
	return handle(r, ctx, c, who, role)
}

// personDismiss closes review findings in the record's ledger
// (implement.review): the review never raises them again. When none is left
// standing at the reviewed head and the item stopped on them
// (review_blocked), the next Job is dispatched as for a retry: it finds the
// review passed at that head and marks the PR ready when CI passes.
func (r *reporter) personDismiss(ctx context.Context, c command.Command, who, role string) error {
	ids := c.IDs
	ledger, _ := r.rec.Review()
	var done, unknown []string
	for _, id := range ids {
		open := slices.ContainsFunc(ledger.Open, func(f record.OpenFinding) bool { return f.ID == id })
		if _, closed := ledger.IsClosed(id); !open && !closed {
			unknown = append(unknown, id)
			continue
		}
		ledger.Close(id, "dismissed by "+who)
		done = append(done, id)
	}
	if len(done) == 0 {
		r.out.Action = ActionNone
		r.out.Reason = r.o.Mask(fmt.Sprintf("no finding of the record's review has the id %s", strings.Join(unknown, ", ")))
		r.logf("report: issue #%d: command \"dismiss\" ignored: %s", r.o.Issue, r.out.Reason)
		return nil
	}
	class, _ := r.rec.Failure()
	res, _ := r.rec.Result()
	goesOn := class == string(failure.ReviewBlocked) && res == record.ResultStopped && len(ledger.Open) == 0
	var ch record.Changes
	ch.SetReview(ledger)
	if goesOn {
		// The stop's hand-off is the findings: the next Job must not
		// repair what a person dismissed.
		ch.Delete(record.KeyImplementCheckLog)
	}
	view := func(*record.Record) record.View {
		return record.View{RunURL: r.o.RunURL, Doing: r.o.Mask(fmt.Sprintf("%s dismissed review finding %s", who, strings.Join(done, ", ")))}
	}
	if err := recordstore.New(r.o.GitHub).Write(ctx, r.o.Issue, &r.rc,
		func(*record.Record) (record.Changes, error) { return ch, nil }, view); err != nil {
		return fmt.Errorf("write issue %d dismiss: %w", r.o.Issue, err)
	}
	r.out.Action = ActionDismiss
	r.out.Reason = r.o.Mask(fmt.Sprintf("%s (%s access) dismissed review finding %s", who, role, strings.Join(done, ", ")))
	if len(unknown) > 0 {
		r.out.Reason += r.o.Mask("; no finding has the id " + strings.Join(unknown, ", "))
	}
	r.logf("report: issue #%d: %s", r.o.Issue, r.out.Reason)
	if !goesOn {
		return nil
	}
	// Nothing stands: the item goes on, as a person's retry would.
	reason := r.out.Reason
	if err := r.personRetry(ctx, c, who, role); err != nil {
		return err
	}
	if r.out.Action == ActionRetry {
		r.out.Reason = reason + "; no finding stands, so the item goes on from its last mark"
	}
	return nil
}

// personStop stops the item for good: item.stopped_by in the record (every
// report after it leaves the item where it is: a Job running now, or one a
// person cancels, is not continued), the stop comment, the stopped label,
// and the labels that would resume it (an answer, the day's wake) removed.
func (r *reporter) personStop(ctx context.Context, c command.Command, who, role string) error {
	via := c.Via
	if by, ok := r.rec.StoppedBy(); ok && by != "" {
		r.out.Action, r.out.Stopped = ActionNone, true
		r.out.Reason = r.o.Mask(fmt.Sprintf("the item is already stopped by %s", by))
		r.logf("report: issue #%d: %s", r.o.Issue, r.out.Reason)
		return nil
	}
	r.out.Action, r.out.Stopped, r.out.Step = ActionStop, true, "person"
	r.out.Reason = r.o.Mask(fmt.Sprintf("%s (%s access) stopped the item with %s", who, role, via))
	var ch record.Changes
	ch.SetStoppedBy(who)
	view := func(*record.Record) record.View {
		return record.View{RunURL: r.o.RunURL, Doing: r.o.Mask(fmt.Sprintf("stopped by %s; a comment `/roadmap retry` restarts it from its last mark", who))}
	}
	if err := recordstore.New(r.o.GitHub).Write(ctx, r.o.Issue, &r.rc,
		func(*record.Record) (record.Changes, error) { return ch, nil }, view); err != nil {
		return fmt.Errorf("write issue %d stop: %w", r.o.Issue, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### roadmap stopped this item: %s stopped it\n\n", inline(who))
	fmt.Fprintf(&b, "%s (%s access) stopped the item with %s. No Job continues it: a Job running now ends its step, and its report does not dispatch another (cancel its run to end it sooner).\n\n",
		inline(who), role, via)
	fmt.Fprintf(&b, "To restart it from its last mark, comment `/roadmap retry` (a person with write access).\n")
	if err := r.comment(ctx, MarkerStop, b.String()); err != nil {
		return fmt.Errorf("post the stop comment: %w", err)
	}
	if err := r.o.GitHub.AddLabels(ctx, r.o.Issue, r.o.Labels.Stopped); err != nil {
		return err
	}
	if err := r.removeLabels(ctx, r.o.Labels.NeedsInput, r.o.Labels.Waiting); err != nil {
		return err
	}
	r.logf("report: issue #%d: %s", r.o.Issue, r.out.Reason)
	return nil
}

// personRetry restarts a stopped item from its last mark: item.stopped_by
// cleared, the stop and stopped labels removed, and the next Job dispatched
// (stage's when the item stopped in stage). The Jobs cap does not refuse a
// person's retry; the continuations after it count against it again.
func (r *reporter) personRetry(ctx context.Context, _ command.Command, who, role string) error {
	by, held := r.rec.StoppedBy()
	res, _ := r.rec.Result()
	st, _ := r.rec.StageState()
	is, err := r.readIssue(ctx)
	if err != nil {
		return err
	}
	labelled := slices.Contains(is.Labels, r.o.Labels.Stopped) || slices.Contains(is.Labels, r.o.Labels.Stop)
	if !held && res != record.ResultStopped && st != "stopped" && !labelled {
		r.out.Action = ActionNone
		r.out.Reason = "the item is not stopped: nothing to retry"
		r.logf("report: issue #%d: command \"retry\" ignored: %s", r.o.Issue, r.out.Reason)
		return nil
	}
	if r.o.Workflow == "" || r.o.Ref == "" {
		return inputErr(errors.New("retry: report needs the workflow file and ref to dispatch the item's next Job"))
	}
	n, _ := r.rec.Attempt()
	for _, l := range mustJobs(r.rec) {
		// A killed Job's line (report wrote it) may be past the attempt.
		n = max(n, l.Job)
	}
	if n == 0 && st != "" && st != decide.StageStaged {
		// The item never left stage: its stage Job goes on.
		r.stage = true
		lines, _ := r.rec.StageJobs()
		for _, l := range lines {
			n = max(n, l.Job)
		}
	}
	r.job = n
	r.out.Job = n
	if held {
		var ch record.Changes
		ch.Delete(record.KeyItemStoppedBy)
		view := func(cur *record.Record) record.View {
			return record.View{RunURL: r.o.RunURL, Doing: r.o.Mask(fmt.Sprintf("restarted by %s (stopped by %s); the next Job resumes from the last mark", who, by))}
		}
		if err := recordstore.New(r.o.GitHub).Write(ctx, r.o.Issue, &r.rc,
			func(*record.Record) (record.Changes, error) { return ch, nil }, view); err != nil {
			return fmt.Errorf("write issue %d retry: %w", r.o.Issue, err)
		}
	}
	if err := r.removeLabels(ctx, r.o.Labels.Stop, r.o.Labels.Stopped); err != nil {
		return err
	}
	if err := r.continuation(ctx); err != nil {
		return err
	}
	r.out.Action = ActionRetry
	r.out.Reason = r.o.Mask(fmt.Sprintf("%s (%s access) restarted the item from its last mark", who, role))
	r.logf("report: issue #%d: %s", r.o.Issue, r.out.Reason)
	return nil
}
