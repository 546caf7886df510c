package report

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/roadmap-dev/roadmap/internal/claims"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/recordstore"
)

// ClaimWaiters lists the items waiting for issue's claims: the open issues
// with label (claims.Label: one list request) whose record says
// item.waiting_for: issue (one record read each). An item waiting for
// another issue is left for that one's end.
func ClaimWaiters(ctx context.Context, gh *github.Client, label string, issue int) ([]WaitingItem, error) {
	issues, err := gh.LabelledIssues(ctx, label)
	if err != nil {
		return nil, err
	}
	var out []WaitingItem
	for _, is := range issues {
		if is.Number == issue {
			continue
		}
		rc, err := recordstore.New(gh).Read(ctx, is.Number, 0)
		if err != nil {
			return out, fmt.Errorf("issue %d: %w", is.Number, err)
		}
		if n, ok := rc.Record.WaitingFor(); !ok || n != issue {
			continue
		}
		out = append(out, waitingFrom(is.Number, rc))
	}
	return out, nil
}

// wakeClaimWaiters dispatches the next Job of each item that waited for
// this one's claims, and takes its waiting label off so a second end (a
// re-run of report) does not dispatch it again. Cost: one list, a record read
// per labelled issue, a dispatch and a label removal per waiter; none beyond the issue read
// the end's labels already make when no item put claims.WaitedLabel on it.
func (r *reporter) wakeClaimWaiters(ctx context.Context) {
	if r.o.Workflow == "" || r.o.Ref == "" {
		r.logf("report: issue #%d: no workflow to dispatch on: the items waiting for its claims are not woken", r.o.Issue)
		return
	}
	is, err := r.readIssue(ctx)
	if err != nil {
		r.logf("report: issue #%d: read its labels for the items waiting for its claims: %v", r.o.Issue, err)
		return
	}
	if !slices.Contains(is.Labels, claims.WaitedLabel) {
		return // no item waited for this one: nothing to list
	}
	waiters, err := ClaimWaiters(ctx, r.o.GitHub, claims.Label, r.o.Issue)
	if err != nil {
		r.logf("report: issue #%d: list the items waiting for its claims: %v", r.o.Issue, err)
	}
	for _, it := range waiters {
		if it.StoppedBy != "" {
			r.logf("report: issue #%d waited for #%d's claims and was stopped by %s: not woken", it.Issue, r.o.Issue, it.StoppedBy)
			continue
		}
		inputs := map[string]any{"issue": strconv.Itoa(it.Issue), "attempt": strconv.Itoa(it.Attempt)}
		if it.recordComment != 0 {
			inputs["record-comment"] = strconv.FormatInt(it.recordComment, 10)
		}
		res, err := r.dispatch(ctx, inputs)
		if err != nil {
			r.logf("report: issue #%d waited for #%d's claims; its dispatch failed: %v", it.Issue, r.o.Issue, err)
			continue
		}
		if err := r.o.GitHub.RemoveLabel(ctx, it.Issue, claims.Label); err != nil {
			r.logf("report: issue #%d: dispatched run %d, then: %v", it.Issue, res.RunID, err)
		}
		r.out.Woken = append(r.out.Woken, it.Issue)
		r.logf("report: issue #%d waited for #%d's claims: dispatched Job %d (run %d)", it.Issue, r.o.Issue, it.Attempt, res.RunID)
	}
	if err == nil {
		if rerr := r.o.GitHub.RemoveLabel(ctx, r.o.Issue, claims.WaitedLabel); rerr != nil {
			r.logf("report: issue #%d: remove %s: %v", r.o.Issue, claims.WaitedLabel, rerr)
		}
	}
}
