package stage

import (
	"context"
	"slices"
)

// wake takes an item that waited for the day's budget out of the wait when
// a stage Job of it starts, whatever started it: the waiting label goes
// (one request, only when it is there), so roadmap wake does not dispatch
// it again.
func (r *runner) wake(ctx context.Context) {
	l := r.o.WaitingLabel
	if l == "" || !slices.Contains(r.j.Issue.Labels, l) {
		return
	}
	if err := r.o.GitHub.RemoveLabel(ctx, r.o.Issue, l); err != nil {
		r.j.Logf("roadmap: remove the %s label: %v", l, err)
		return
	}
	r.j.Logf("roadmap: issue #%d waited for the day's budget: this stage Job takes it out of the wait (%s removed)", r.o.Issue, l)
}
