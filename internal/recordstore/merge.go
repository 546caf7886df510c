package recordstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// RecoverRecordMerged is the recovery line (github.Recovery's Kind) of a
// duplicate record comment merged into the item's record and neutralised.
const RecoverRecordMerged = "merge_record"

// noReconcileKey marks a context inside a reconcile: the writes it makes
// do not reconcile again.
type noReconcileKey struct{}

// afterCreate lists issue n's comments once after rc was created: when an
// older record comment than ours exists (another writer's first write that
// no list showed us), ours is merged into it and neutralised, and rc becomes
// it.
func (s *Store) afterCreate(ctx context.Context, n int, rc *RecordComment) error {
	comments, err := s.gh.Comments(ctx, n)
	if err != nil {
		return fmt.Errorf("list the comments after creating the record comment %d: %w", rc.ID, err)
	}
	if !slices.ContainsFunc(comments, func(cm github.Comment) bool { return cm.ID == rc.ID }) {
		// The list does not show ours yet: it holds the older ones, if
		// any; ours is merged by its id.
		body, _ := record.RenderComment(rc.Record)
		comments = append(comments, github.Comment{ID: rc.ID, Author: s.gh.Identity(), Body: body, Issue: n})
	}
	found, err := from(n, comments, s.gh.Identity(), true)
	if err != nil || len(found.Merged) == 0 {
		return err
	}
	if err := s.reconcile(ctx, n, &found); err != nil {
		return err
	}
	rc.ID, rc.Record, rc.listed, rc.Merged = found.ID, found.Record, false, found.Merged
	return nil
}

// mergeInto writes change, made from no record, into found, a record the
// writer did not know of: the record ours would have been is merged into
// found (merge), written there, and rc becomes found.
func (s *Store) mergeInto(ctx context.Context, n int, rc *RecordComment, found RecordComment,
	change func(cur *record.Record) (record.Changes, error), view func(cur *record.Record) record.View) error {
	empty, _ := record.Parse("")
	_, ours, err := s.recordBody(n, empty, change, view)
	if err != nil {
		return err
	}
	theirs, err := record.RenderComment(found.Record)
	if err != nil {
		return fmt.Errorf("write issue %d record: %w", n, err)
	}
	merged, err := mergeComments([]github.Comment{{ID: found.ID, Body: theirs}, {Body: ours, UpdatedAt: time.Unix(1, 0)}}, true)
	if err != nil {
		return fmt.Errorf("write issue %d record: merge into comment %d: %w", n, found.ID, err)
	}
	body, err := record.RenderComment(merged)
	if err != nil {
		return fmt.Errorf("write issue %d record: %w", n, err)
	}
	got, err := s.gh.EditComment(github.NoResend(ctx), found.ID, body)
	if err != nil {
		return fmt.Errorf("write issue %d record: merge into comment %d: %w", n, found.ID, err)
	}
	rb, err := record.Parse(got.Body)
	if err != nil {
		return fmt.Errorf("write issue %d record: read-back of comment %d: %w", n, found.ID, err)
	}
	s.gh.Recovered(github.Recovery{Kind: RecoverRecordMerged, Endpoint: fmt.Sprintf("issue %d record", n), Attempt: 1,
		Reason: fmt.Sprintf("a first write found record comment %d it had not read: merged into it", found.ID)})
	rc.ID, rc.Record, rc.listed = found.ID, rb, false
	return nil
}

// reconcile writes out's record, the merge of several record comments
// (From), into the oldest, out.ID, and rewrites each other one (out.Merged)
// to a short note pointing at it, with no record block: readers and writers
// then find one record. A read-only store merges only what it returns.
func (s *Store) reconcile(ctx context.Context, n int, out *RecordComment) error {
	if s.readOnly || ctx.Value(noReconcileKey{}) != nil {
		return nil
	}
	ctx = context.WithValue(ctx, noReconcileKey{}, true)
	body, err := record.RenderComment(out.Record)
	if err != nil {
		return fmt.Errorf("merge issue %d record comments: %w", n, err)
	}
	got, err := s.gh.EditComment(github.NoResend(ctx), out.ID, body)
	if err != nil {
		return fmt.Errorf("merge issue %d record comments into %d: %w", n, out.ID, err)
	}
	if rb, perr := record.Parse(got.Body); perr == nil {
		out.Record = rb
	}
	for _, id := range out.Merged {
		note := fmt.Sprintf("**roadmap** · this comment was a second record of this item; "+
			"roadmap merged it into its record, comment %d (spend summed, marks by the latest), and keeps one record.", out.ID)
		if _, err := s.gh.EditComment(ctx, id, note); err != nil && !errors.Is(err, github.ErrNotFound) {
			return fmt.Errorf("neutralise issue %d duplicate record comment %d: %w", n, id, err)
		}
		s.gh.Recovered(github.Recovery{Kind: RecoverRecordMerged, Endpoint: fmt.Sprintf("issue %d record", n), Attempt: 1,
			Reason: fmt.Sprintf("record comment %d duplicated %d: merged into %d and neutralised", id, out.ID, out.ID)})
	}
	out.listed = false
	return nil
}

// mergeComments parses record comments (oldest first) and merges them;
// with salvage, a block a person broke merges as far as it reads (the
// oldest's repair is said on the issue: find).
func mergeComments(recs []github.Comment, salvage bool) (*record.Record, error) {
	parsed := make([]*record.Record, len(recs))
	for i, cm := range recs {
		rec, _, err := readBlock(cm.Body, salvage)
		if err != nil {
			return nil, fmt.Errorf("comment %d: %w", cm.ID, err)
		}
		parsed[i] = rec
	}
	return merge(recs, parsed)
}

// merge is one record out of several record comments of one issue (oldest
// first): the spend and the estimated calls summed (each record counted
// its own calls), the Jobs' lines joined (by Job number, the latest line
// of a Job kept), and every other key by the comment updated last that
// holds it; the visible part is the oldest's. Nothing a record holds is
// dropped.
func merge(recs []github.Comment, parsed []*record.Record) (*record.Record, error) {
	order := make([]int, len(recs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return recs[order[a]].UpdatedAt.Before(recs[order[b]].UpdatedAt) })
	vals := map[record.Key]string{}
	var (
		spend     record.Spend
		estimated int
		jobs      = map[record.Key][]record.JobOutcome{}
	)
	for _, i := range order {
		r := parsed[i]
		for _, k := range r.Keys() {
			vals[k], _ = r.Raw(k)
		}
		if sp, ok := r.Spend(); ok {
			spend = spend.Add(sp)
		}
		estimated += r.SpendEstimated()
		if js, ok := r.Jobs(); ok {
			for _, j := range js {
				jobs[record.KeyImplementJobs] = record.WithJob(jobs[record.KeyImplementJobs], j)
			}
		}
		if js, ok := r.StageJobs(); ok {
			for _, j := range js {
				jobs[record.KeyStageJobs] = record.WithJob(jobs[record.KeyStageJobs], j)
			}
		}
	}
	var ch record.Changes
	if _, ok := vals[record.KeyImplementSpend]; ok {
		ch.SetSpend(spend)
	}
	if _, ok := vals[record.KeyImplementSpendEstimated]; ok {
		ch.SetSpendEstimated(estimated)
	}
	if js, ok := jobs[record.KeyImplementJobs]; ok {
		ch.SetJobs(js)
	}
	if js, ok := jobs[record.KeyStageJobs]; ok {
		ch.SetStageJobs(js)
	}
	summed, _ := record.Parse("")
	if err := summed.Apply(ch); err != nil {
		return nil, err
	}
	for _, k := range summed.Keys() {
		vals[k], _ = summed.Raw(k)
	}
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, string(k))
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(parsed[0].Text())
	if t := parsed[0].Text(); t != "" && !strings.HasSuffix(t, "\n") {
		b.WriteString("\n")
	}
	b.WriteString("<!-- roadmap:record v1\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\n", k, vals[record.Key(k)])
	}
	b.WriteString("-->\n")
	return record.Parse(b.String())
}
