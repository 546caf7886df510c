package dashboard

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/roadmap-dev/roadmap/internal/github"
)

// KeepOptions say what one update of the dashboard brings in.
type KeepOptions struct {
	GitHub *github.Client
	// Issue is the dashboard issue.
	Issue int
	// Lines replace their items' lines (report: its item's; the refresh:
	// every item whose record it read).
	Lines []Line
	// Refreshed: the lines are the refresh's, read from every record.
	Refreshed bool
	// Evals, when not nil, replaces the Evals section whole (`roadmap
	// dashboard eval`); nil keeps the one the body holds.
	Evals *Evals
	// Done are commands carried out: their boxes are shown clear again.
	Done []Command
	Now  time.Time
	// DayBudgetUSD is the day's budget shown (0: none).
	DayBudgetUSD float64
	Rules        Rules
}

// Kept is what an update did.
type Kept struct {
	// Wrote: the body changed and was written.
	Wrote bool `json:"wrote"`
	// Requests are the counted GitHub requests the update made.
	Requests int      `json:"requests"`
	Fired    []string `json:"fired,omitempty"`
	Resolved []string `json:"resolved,omitempty"`
	// Ticked are the boxes ticked in the body as read (commands waiting).
	Ticked []Command `json:"ticked,omitempty"`
	// Problem says why the state block read was not used (it is rebuilt).
	Problem string `json:"problem,omitempty"`
}

// Keep brings the dashboard up to date: one read of the issue (conditional:
// a 304 when this Client read it before and nobody changed it), the lines
// merged into its state, the alerts brought in line (a comment posted for
// each that fires, edited in place for each that clears), and one write of
// the body, only when the rendered body differs from the one read. The
// requests line and the refresh's time alone never cause a write: they are
// brought up to date when the body is written for another reason.
func Keep(ctx context.Context, o KeepOptions) (out Kept, err error) {
	if o.GitHub == nil || o.Issue <= 0 {
		return out, errors.New("keep the dashboard: a GitHub client and the dashboard issue are required")
	}
	if err := o.Evals.check(); err != nil {
		return out, fmt.Errorf("the eval results: %w", err)
	}
	before := o.GitHub.Requests()
	defer func() { out.Requests = o.GitHub.Requests().Sub(before).Counted() }()
	is, err := o.GitHub.Issue(ctx, o.Issue)
	if err != nil {
		return out, fmt.Errorf("read the dashboard issue %d: %w", o.Issue, err)
	}
	if !slices.Contains(is.Labels, Label) {
		// A wrong number in the workflows must not replace a person's issue.
		return out, fmt.Errorf("issue %d is not the dashboard: it has no %s label (roadmap init opens the dashboard issue and names it in the workflows)", o.Issue, Label)
	}
	st, perr := Parse(is.Body)
	if perr != nil && !errors.Is(perr, ErrNoState) {
		out.Problem = perr.Error()
	}
	for _, l := range o.Lines {
		st.Upsert(l)
	}
	if o.Evals != nil {
		st.Evals = o.Evals
	}
	st.Prune(o.Now)

	ch := st.applyAlerts(st.conditions(o.Rules, o.Now, o.DayBudgetUSD), o.Now)
	var alertErr error
	for _, i := range ch.resolve {
		a := st.Alerts[i]
		out.Resolved = append(out.Resolved, a.Key)
		if a.Comment == 0 {
			continue
		}
		if _, err := o.GitHub.EditComment(ctx, a.Comment, alertBody(a, o.Rules.Owners)); err != nil && !errors.Is(err, github.ErrNotFound) {
			alertErr = errors.Join(alertErr, fmt.Errorf("resolve alert %s: %w", a.Key, err))
		}
	}
	for _, i := range ch.fire {
		a := &st.Alerts[i]
		out.Fired = append(out.Fired, a.Key)
		cm, err := o.GitHub.CreateComment(ctx, o.Issue, alertBody(*a, o.Rules.Owners))
		if err != nil {
			// Left with no comment: the next update posts it.
			alertErr = errors.Join(alertErr, fmt.Errorf("post alert %s: %w", a.Key, err))
			continue
		}
		a.Comment = cm.ID
	}

	out.Ticked = Ticked(is.Body)
	pending := slices.DeleteFunc(slices.Clone(out.Ticked), func(c Command) bool { return slices.Contains(o.Done, c) })
	v := View{Now: o.Now, DayBudgetUSD: o.DayBudgetUSD, Ticked: pending}
	if Render(st, v) == is.Body {
		return out, alertErr
	}
	// Like the requests line, the refresh's time is written only with a
	// change: an hourly refresh that finds nothing new costs no write.
	if o.Refreshed {
		st.Refreshed = o.Now.UTC().Truncate(time.Second)
	}
	if u, ok := o.GitHub.RateUsed("core"); ok {
		st.Rate = &Rate{Used: u.Used, Limit: u.Limit, At: o.Now.UTC().Truncate(time.Minute)}
	}
	if err := o.GitHub.UpdateIssueBody(ctx, o.Issue, Render(st, v)); err != nil {
		return out, errors.Join(fmt.Errorf("write the dashboard issue %d: %w", o.Issue, err), alertErr)
	}
	out.Wrote = true
	return out, alertErr
}
