package report

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/event"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/recordstore"
	"github.com/roadmap-dev/roadmap/internal/report/command"
	"github.com/roadmap-dev/roadmap/internal/report/decide"
)

// ResumeOptions are the inputs of Resume: the issue_comment event and where
// to dispatch the continuation.
type ResumeOptions struct {
	GitHub *github.Client
	Event  *event.Event
	// Workflow and Ref name the implement workflow a continuation dispatches.
	Workflow string
	Ref      string
	MaxJobs  int
	Labels   Labels
	Mask     func(string) string
	Log      io.Writer
}

// writeRoles are the repository roles whose reply answers a question.
var writeRoles = []string{"admin", "maintain", "write"}

// Resume handles a comment on an item waiting for a person's answer. A reply
// from a person with write access to the repository (admin, maintain, write:
// asked of GitHub, not taken from the event's author_association) becomes
// implement.answer, the needs-input label is removed and a continuation is
// dispatched. Anything else — a bot, roadmap's own comments, an edit, an
// issue that is not waiting, a person without write access — is ignored:
// nothing is written and nothing dispatched (Action none, with the reason).
func Resume(ctx context.Context, o ResumeOptions) (Outcome, error) {
	ev := o.Event
	switch {
	case o.GitHub == nil:
		return Outcome{}, inputErr(errors.New("resume: a GitHub client is required"))
	case o.Mask == nil:
		return Outcome{}, inputErr(errors.New("resume: a masker is required"))
	case ev == nil || (ev.Name != "issue_comment" && ev.Name != "issues"):
		return Outcome{}, inputErr(errors.New("resume: the event is not an issue_comment or an issues event"))
	case ev.Name == "issues" && ev.Issue <= 0:
		return Outcome{}, inputErr(errors.New("resume: the issues event has no issue"))
	case ev.Name == "issue_comment" && (ev.Issue <= 0 || ev.Comment == nil):
		return Outcome{}, inputErr(errors.New("resume: the issue_comment event has no issue or no comment"))
	}
	ro := Options{Issue: ev.Issue, GitHub: o.GitHub, Workflow: o.Workflow, Ref: o.Ref, MaxJobs: o.MaxJobs,
		Labels: o.Labels, Mask: o.Mask, Log: o.Log, RunID: ev.RunID}
	if err := ro.defaults(); err != nil {
		return Outcome{}, inputErr(err)
	}
	before := o.GitHub.Requests()
	r := &reporter{o: ro}
	r.out.Issue = ev.Issue
	err := r.resume(ctx, ev)
	r.out.Requests = o.GitHub.Requests().Sub(before).Counted()
	return r.out, err
}

func (r *reporter) ignore(format string, args ...any) error {
	r.out.Action = ActionNone
	r.out.Reason = r.o.Mask(fmt.Sprintf(format, args...))
	r.logf("report: issue #%d: reply ignored: %s", r.o.Issue, r.out.Reason)
	return nil
}

func (r *reporter) resume(ctx context.Context, ev *event.Event) error {
	if ev.Name == "issues" {
		// The stop label, set by a person.
		cmd, ok := command.Label(ev.Label, r.o.Labels.Stop)
		if ev.Action != "labeled" || !ok {
			return r.ignore("the issues event is not the %s label added", r.o.Labels.Stop)
		}
		if ev.Actor == "" || strings.HasSuffix(ev.Actor, "[bot]") {
			return r.ignore("the %s label was added by a bot (%s)", r.o.Labels.Stop, ev.Actor)
		}
		return r.command(ctx, cmd, ev.Actor)
	}
	c := ev.Comment
	switch {
	case ev.Action != "" && ev.Action != "created":
		return r.ignore("the comment was %s, not created", ev.Action)
	case c.AuthorIsBot || strings.HasSuffix(c.Author, "[bot]"):
		return r.ignore("the comment is by a bot (%s)", c.Author)
	case strings.Contains(c.Body, "<!-- roadmap:"):
		return r.ignore("the comment is roadmap's own")
	case strings.TrimSpace(c.Body) == "":
		return r.ignore("the comment is empty")
	}
	if cmd, ok := command.Parse(c.Body); ok {
		return r.command(ctx, cmd, c.Author)
	}
	is, err := r.readIssue(ctx)
	if err != nil {
		return err
	}
	if !slices.Contains(is.Labels, r.o.Labels.NeedsInput) {
		return r.ignore("the item is not waiting for an answer (no %s label)", r.o.Labels.NeedsInput)
	}
	if err := r.read(ctx); err != nil {
		return err
	}
	if q, _ := r.rec.Question(); q == "" {
		return r.ignore("the item has the %s label but its record holds no question", r.o.Labels.NeedsInput)
	}
	role, err := r.o.GitHub.Permission(ctx, c.Author)
	if err != nil {
		return fmt.Errorf("check %s's access: %w", c.Author, err)
	}
	if !slices.Contains(writeRoles, role) {
		return r.ignore("%s has %s access; only a person with write access answers", c.Author, role)
	}

	n, _ := r.rec.Attempt()
	if st, _ := r.rec.StageState(); st == "returned" {
		// The question is the stage planner's (implement runs only on a
		// staged plan): the answer resumes stage.
		r.stage = true
		lines, _ := r.rec.StageJobs()
		n = 0
		for _, l := range lines {
			n = max(n, l.Job)
		}
	}
	r.job, r.end.Result = n, record.ResultReturned
	r.out.Job, r.out.Result, r.out.Class = n, string(record.ResultReturned), failure.NeedsInput
	if r.d = decide.Answered(c.Author, role, n, r.o.MaxJobs); r.d.Action == ActionStop {
		r.out.Class, r.out.Action, r.out.Reason = r.d.Class, ActionStop, r.o.Mask(r.d.Reason)
		if err := r.write(ctx); err != nil {
			return err
		}
		if r.stage {
			return r.stageStop(ctx)
		}
		return r.stop(ctx)
	}
	if r.o.Workflow == "" || r.o.Ref == "" {
		return inputErr(errors.New("resume: report needs the implement workflow file and ref to dispatch the continuation"))
	}
	var ch record.Changes
	ch.SetAnswer(c.Body)
	if err := recordstore.New(r.o.GitHub).Write(ctx, r.o.Issue, &r.rc,
		func(*record.Record) (record.Changes, error) { return ch, nil }, r.view); err != nil {
		return fmt.Errorf("write issue %d answer: %w", r.o.Issue, err)
	}
	if err := r.removeLabels(ctx, r.o.Labels.NeedsInput); err != nil {
		return err
	}
	// The record says it resumed; what follows is the continuation's.
	r.d.Action = ActionContinue
	r.out.Reason = r.o.Mask(r.d.Reason)
	if err := r.continuation(ctx); err != nil {
		return err
	}
	r.out.Action = ActionResume
	r.logf("report: issue #%d: %s", r.o.Issue, r.out.Reason)
	return nil
}
