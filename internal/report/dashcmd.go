package report

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/clock"
	"github.com/roadmap-dev/roadmap/internal/dashboard"
	"github.com/roadmap-dev/roadmap/internal/event"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/items"
	"github.com/roadmap-dev/roadmap/internal/ledger"
	"github.com/roadmap-dev/roadmap/internal/redact"
	"github.com/roadmap-dev/roadmap/internal/report/command"
)

// DashboardEditOptions are the inputs of DashboardEdit: the issues.edited
// event of the dashboard issue, and what a command it carries needs.
type DashboardEditOptions struct {
	GitHub    *github.Client
	Event     *event.Event
	Dashboard int
	// Workflow and Ref name the workflow a retried or woken item's Job is
	// dispatched on.
	Workflow  string
	Ref       string
	MaxJobs   int
	Labels    Labels
	DayBudget ledger.Budget
	Alerts    dashboard.Rules
	Clock     Clock
	Mask      func(string) string
	Log       io.Writer
}

// BoxOutcome is what one ticked box did.
type BoxOutcome struct {
	dashboard.Command
	Action Action `json:"action"`
	Reason string `json:"reason,omitempty"`
	RunID  int64  `json:"run_id,omitempty"`
}

// DashboardEditOutcome is what DashboardEdit found and did; `roadmap report
// --json` prints it for the dashboard's edits.
type DashboardEditOutcome struct {
	Editor string       `json:"editor"`
	Role   string       `json:"role,omitempty"`
	Boxes  []BoxOutcome `json:"boxes"`
	// Ignored says why no box was carried out, when none was.
	Ignored   string          `json:"ignored,omitempty"`
	Dashboard *dashboard.Kept `json:"dashboard,omitempty"`
	Requests  int             `json:"requests"`
}

// DashboardEdit carries out the boxes ticked on the dashboard (an edit of
// its body starts the run: issues, edited). The person who edited it is the
// event's sender; only a person GitHub says has write access (admin,
// maintain, write) is obeyed, whatever the body says. Each box is the same
// command a comment gives: retry and stop through report's own command
// path, wake now by dispatching the waiting item at once. The dashboard is
// then written with the boxes clear (and the commanded items' lines as
// their records now say); a non-writer's ticks are cleared and nothing else
// changes.
func DashboardEdit(ctx context.Context, o DashboardEditOptions) (out DashboardEditOutcome, err error) {
	ev := o.Event
	switch {
	case o.GitHub == nil || o.Mask == nil:
		return out, inputErr(errors.New("dashboard commands: a GitHub client and a masker are required"))
	case ev == nil || ev.Name != "issues" || ev.Action != "edited" || o.Dashboard <= 0 || ev.Issue != o.Dashboard:
		return out, inputErr(errors.New("dashboard commands: the event is not an edit of the dashboard issue"))
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	o.Labels.defaults()
	before := o.GitHub.Requests()
	defer func() { out.Requests = o.GitHub.Requests().Sub(before).Counted() }()
	logf := func(format string, args ...any) { fmt.Fprintln(o.Log, o.Mask(fmt.Sprintf(format, args...))) }
	out.Editor, out.Boxes = ev.Actor, []BoxOutcome{}

	is, err := o.GitHub.Issue(ctx, o.Dashboard)
	if err != nil {
		return out, fmt.Errorf("read the dashboard issue %d: %w", o.Dashboard, err)
	}
	ticked := dashboard.Ticked(is.Body)
	if len(ticked) == 0 {
		out.Ignored = "no box is ticked"
		logf("report: dashboard #%d edited by %s: %s", o.Dashboard, ev.Actor, out.Ignored)
		return out, nil
	}
	keep := func(lines []dashboard.Line) error {
		kept, err := dashboard.Keep(ctx, dashboard.KeepOptions{GitHub: o.GitHub, Issue: o.Dashboard, Lines: lines,
			Done: ticked, Now: o.Clock.Now(), DayBudgetUSD: o.DayBudget.USD, Rules: o.Alerts})
		out.Dashboard = &kept
		return err
	}
	if ev.Actor == "" || strings.HasSuffix(ev.Actor, "[bot]") {
		out.Ignored = fmt.Sprintf("the edit is by a bot (%q): boxes are a person's commands", ev.Actor)
		logf("report: dashboard #%d: %d box(es) ignored: %s", o.Dashboard, len(ticked), out.Ignored)
		return out, keep(nil)
	}
	role, err := o.GitHub.Permission(ctx, ev.Actor)
	if err != nil {
		return out, fmt.Errorf("check %s's access: %w", ev.Actor, err)
	}
	out.Role = role
	if !slices.Contains(writeRoles, role) {
		out.Ignored = fmt.Sprintf("%s has %s access; only a person with write access can give a command", ev.Actor, role)
		logf("report: dashboard #%d: %d box(es) ignored and cleared: %s", o.Dashboard, len(ticked), out.Ignored)
		return out, keep(nil)
	}
	var lines []dashboard.Line
	clean := func(s string) string {
		return redact.NeutraliseIn(o.Mask(s), o.GitHub.ServerHost(), o.GitHub.FullName())
	}
	for _, c := range ticked {
		b := BoxOutcome{Command: c}
		var rec *reporter
		cmd, isCmd := command.Box(c.Verb)
		switch {
		case isCmd:
			ro := Options{Issue: c.Issue, GitHub: o.GitHub, Workflow: o.Workflow, Ref: o.Ref, MaxJobs: o.MaxJobs,
				Labels: o.Labels, Clock: o.Clock, Mask: o.Mask, Log: o.Log}
			if err := ro.defaults(); err != nil {
				return out, inputErr(err)
			}
			rec = &reporter{o: ro}
			rec.out.Issue = c.Issue
			if err := rec.command(ctx, cmd, ev.Actor); err != nil {
				return out, fmt.Errorf("dashboard box %s #%d: %w", c.Verb, c.Issue, err)
			}
			b.Action, b.Reason, b.RunID = rec.out.Action, rec.out.Reason, rec.out.DispatchedRunID
		case c.Verb == dashboard.CmdWake:
			b.Action, b.Reason, b.RunID, err = wakeNow(ctx, o, c.Issue)
			if err != nil {
				return out, err
			}
		}
		logf("report: dashboard #%d: %s's %s box for #%d → %s%s", o.Dashboard, ev.Actor, c.Verb, c.Issue, b.Action, suffixReason(b.Reason))
		out.Boxes = append(out.Boxes, b)
		// The record as the command left it (its write's read-back).
		if rec != nil && rec.rc.Record != nil {
			lines = append(lines, dashboard.LineOf(items.Of(c.Issue, "", rec.rc.Record), o.Clock.Now(), clean))
		}
	}
	return out, keep(lines)
}

// wakeNow dispatches an item waiting for the day's budget at once (the
// person takes the day's budget on themselves): the item must carry the
// waiting label and not be stopped.
func wakeNow(ctx context.Context, o DashboardEditOptions, n int) (Action, string, int64, error) {
	is, err := o.GitHub.Issue(ctx, n)
	if err != nil {
		return "", "", 0, fmt.Errorf("wake #%d: read the issue: %w", n, err)
	}
	if !slices.Contains(is.Labels, o.Labels.Waiting) {
		return ActionNone, fmt.Sprintf("#%d does not wait for the day's budget (no %s label)", n, o.Labels.Waiting), 0, nil
	}
	it, err := waitingItem(ctx, o.GitHub, n)
	if err != nil {
		return "", "", 0, err
	}
	if it.StoppedBy != "" {
		return ActionNone, fmt.Sprintf("#%d was stopped by %s; retry it instead", n, it.StoppedBy), 0, nil
	}
	run, err := wakeOne(ctx, WakeOptions{GitHub: o.GitHub, Workflow: o.Workflow, Ref: o.Ref, Labels: o.Labels}, it)
	if err != nil {
		return "", "", 0, err
	}
	return ActionContinue, "woken now by a person, whatever the day's budget says", run, nil
}
