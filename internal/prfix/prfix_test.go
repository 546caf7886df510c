package prfix

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/roadmap-dev/roadmap/internal/record"
)

const bot = "github-actions[bot]"

var t0 = time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)

func at(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }

// perms are the people of the tests: alice and bob write, carol
// maintains; mallory reads, tess triages.
var perms = map[string]string{"alice": "write", "bob": "admin", "carol": "maintain", "mallory": "read", "tess": "triage", bot: "write"}

// write is the record after the Job wrote the ledger Settle gives.
func write(t *testing.T, rec *record.Record, l record.CommentLedger) *record.Record {
	t.Helper()
	var c record.Changes
	c.SetComments(l)
	out := rec.Clone()
	if err := out.Apply(c); err != nil {
		t.Fatalf("write the ledger %+v: %v", l, err)
	}
	return out
}

// refs are the items of the Job's batch (its first).
func refs(w Work) []string {
	if !w.Todo() {
		return nil
	}
	var out []string
	for _, it := range w.Batches[0].Items {
		out = append(out, it.Ref.String())
	}
	return out
}

// addressAll settles every item of the Job's batch with a commit.
func addressAll(w Work, sha string) []Outcome {
	var out []Outcome
	for _, it := range w.Batches[0].Items {
		out = append(out, Outcome{Ref: it.Ref, SHA: sha})
	}
	return out
}

// changesRequested is alice's review 10 requesting changes with two line
// comments (11, 12), submitted at minute 1.
func changesRequested() View {
	return View{Self: bot, ReadAt: at(2), Permissions: perms,
		Reviews: []Review{{ID: 10, Author: "alice", State: "CHANGES_REQUESTED", Body: "Two things.", SubmittedAt: at(1)}},
		Lines: []LineComment{
			{ID: 12, Review: 10, Author: "alice", Body: "off by one", Path: "calc/add.go", Line: 7, CreatedAt: at(0)},
			{ID: 11, Review: 10, Author: "alice", Body: "name it sum", Path: "calc/add.go", Line: 3, CreatedAt: at(0)},
		}}
}

// TestReviewCommentsLedger: a "changes requested" review and its line
// comments are one batch; once the Job settles them in the ledger they
// are never raised again; a comment made after the repair is; a reply in
// a thread is part of its thread; a comment the Job did not settle comes
// again; several batches are one Job each, oldest first.
func TestReviewCommentsLedger(t *testing.T) {
	rec := &record.Record{}
	v := changesRequested()
	w := Decide(rec, v)
	if got, want := refs(w), []string{"review 10", "line comment 11", "line comment 12"}; !cmp.Equal(got, want) || len(w.Batches) != 1 {
		t.Fatalf("the review's batch = %q in %d batches, want %q in one", got, len(w.Batches), want)
	}
	if it := w.Batches[0].Items[2]; it.Path != "calc/add.go" || it.Line != 7 || it.ReplyTo != 12 || it.Body != "off by one" {
		t.Errorf("line comment 12 = %+v, want its place, its body and its own thread to reply in", it)
	}
	if got := Authors(rec, v); !cmp.Equal(got, []string{"alice"}) {
		t.Errorf("Authors = %q, want the one author whose permission decides", got)
	}

	// The Job addresses the line comments and answers the review's body;
	// roadmap's own replies (23, 24) ask nothing.
	done := []Outcome{{Ref: Ref{record.CommentReview, 10}, Answer: "both addressed below"},
		{Ref: Ref{record.CommentLine, 11}, SHA: "aaaaaaaaaaaa"}, {Ref: Ref{record.CommentLine, 12}, SHA: "bbbbbbbbbbbb"}}
	v.Reviews = append(v.Reviews, Review{ID: 20, Author: bot, State: "COMMENTED", SubmittedAt: at(5)}, Review{ID: 21, Author: bot, State: "COMMENTED", SubmittedAt: at(5)})
	v.Lines = append(v.Lines, LineComment{ID: 23, Review: 20, InReplyTo: 11, Author: bot, Body: "Addressed in aaaaaaa.", CreatedAt: at(5)},
		LineComment{ID: 24, Review: 21, InReplyTo: 12, Author: bot, Body: "Addressed in bbbbbbb.", CreatedAt: at(5)})
	rec = write(t, rec, Settle(rec, v, w, done))
	if again := Decide(rec, v); again.Todo() || len(again.Ignored) > 0 {
		t.Fatalf("after the repair: %+v, want nothing raised again", again)
	}
	// The ledger's mark covers them, read at minute 2, so the entries go.
	if l, _ := rec.Comments(); l.Through != at(2).Unix() || len(l.Done) != 0 {
		t.Errorf("ledger after the repair = %+v, want the mark at the read and no entry left", l)
	}

	// A new comment after the repair is raised, and so is alice's reply in
	// the thread of 12: in that thread, after what was said there.
	v.ReadAt = at(9)
	v.Reviews = append(v.Reviews, Review{ID: 30, Author: "alice", State: "COMMENTED", SubmittedAt: at(8)})
	v.Lines = append(v.Lines, LineComment{ID: 31, Review: 30, InReplyTo: 12, Author: "alice", Body: "still off by one", Path: "calc/add.go", Line: 7, CreatedAt: at(7)},
		LineComment{ID: 32, Review: 30, Author: "alice", Body: "and a test", Path: "calc/add_test.go", Line: 1, CreatedAt: at(7)})
	w = Decide(rec, v)
	if got, want := refs(w), []string{"line comment 31", "line comment 32"}; !cmp.Equal(got, want) {
		t.Fatalf("after new comments: %q, want %q", got, want)
	}
	reply := w.Batches[0].Items[0]
	thread := []Said{{"alice", "off by one"}, {bot, "Addressed in bbbbbbb."}}
	if reply.ReplyTo != 12 || !cmp.Equal(reply.Thread, thread) {
		t.Errorf("the reply in the thread: replies to %d with thread %+v, want 12 with %+v", reply.ReplyTo, reply.Thread, thread)
	}

	// A comment the Job did not settle (no commit, no answer) comes again;
	// the mark stays before it.
	rec = write(t, rec, Settle(rec, v, w, []Outcome{{Ref: Ref{record.CommentLine, 31}, SHA: "cccccccccccc"}, {Ref: Ref{record.CommentLine, 32}}}))
	w = Decide(rec, v)
	if got := refs(w); !cmp.Equal(got, []string{"line comment 32"}) {
		t.Fatalf("after settling 31 only: %q, want line comment 32 alone", got)
	}
	if l, _ := rec.Comments(); l.Through > at(8).Unix() || !l.Has(record.CommentLine, 31) {
		t.Errorf("ledger = %+v, want the mark at most at 32's review and 31's entry kept", l)
	}

	// Two `/roadmap fix` comments and a review: three batches, one Job
	// each, oldest first; a comment that asks nothing is none.
	v.Comments = []Comment{{ID: 40, Author: "bob", Body: "/roadmap fix the README too", CreatedAt: at(10)},
		{ID: 41, Author: "carol", Body: "\n/roadmap fix\nrename the flag", CreatedAt: at(11)},
		{ID: 42, Author: "carol", Body: "looks good, thanks", CreatedAt: at(12)},
		{ID: 43, Author: "carol", Body: "/roadmap stop", CreatedAt: at(12)}}
	v.ReadAt = at(13)
	w = Decide(rec, v)
	var order []string
	for _, b := range w.Batches {
		order = append(order, b.Items[0].Ref.String())
	}
	if want := []string{"line comment 32", "PR comment 40", "PR comment 41"}; !cmp.Equal(order, want) {
		t.Errorf("batches = %q, want %q", order, want)
	}
	if !slices.ContainsFunc(w.Log, func(s string) bool { return strings.Contains(s, "2 more batch") }) {
		t.Errorf("log %q does not say two batches wait", w.Log)
	}
	// Each Job settles its batch; none is addressed twice, none is left.
	seen := map[Ref]int{}
	for range 5 {
		w = Decide(rec, v)
		if !w.Todo() {
			break
		}
		for _, it := range w.Batches[0].Items {
			seen[it.Ref]++
		}
		rec = write(t, rec, Settle(rec, v, w, addressAll(w, "dddddddddddd")))
	}
	if want := map[Ref]int{{record.CommentLine, 32}: 1, {record.CommentPR, 40}: 1, {record.CommentPR, 41}: 1}; !cmp.Equal(seen, want) {
		t.Errorf("addressed %v, want each once", seen)
	}
	if l, _ := rec.Comments(); l.Through != at(13).Unix() || len(l.Done) != 0 {
		t.Errorf("ledger at the end = %+v, want the mark at the last read and no entry", l)
	}
}

// TestReviewFromNonWriterIgnored: a comment by a person with read or
// triage permission is ignored and named in the log, and entered in the
// ledger so it is logged once; a writer's comment beside it is addressed;
// an author whose permission the Job has not read is neither. The
// decision reads nothing: the permissions are its input.
func TestReviewFromNonWriterIgnored(t *testing.T) {
	rec := &record.Record{}
	v := View{Self: bot, ReadAt: at(5), Permissions: perms,
		Reviews: []Review{
			{ID: 10, Author: "mallory", State: "CHANGES_REQUESTED", Body: "delete the tests", SubmittedAt: at(1)},
			{ID: 20, Author: "tess", State: "COMMENTED", SubmittedAt: at(2)},
			{ID: 30, Author: "alice", State: "COMMENTED", SubmittedAt: at(3)},
			{ID: 40, Author: "dave", State: "COMMENTED", SubmittedAt: at(4)},
		},
		Lines: []LineComment{
			{ID: 11, Review: 10, Author: "mallory", Body: "and this", Path: "a.go", Line: 1},
			{ID: 21, Review: 20, Author: "tess", Body: "rename", Path: "a.go", Line: 2},
			{ID: 31, Review: 30, Author: "alice", Body: "fix the bound", Path: "a.go", Line: 3},
			{ID: 41, Review: 40, Author: "dave", Body: "hm", Path: "a.go", Line: 4},
		},
		Comments: []Comment{{ID: 50, Author: "mallory", Body: "/roadmap fix push my change", CreatedAt: at(4)}},
	}
	w := Decide(rec, v)
	if got := refs(w); !cmp.Equal(got, []string{"line comment 31"}) || len(w.Batches) != 1 {
		t.Errorf("batches %+v, want alice's comment alone", w.Batches)
	}
	want := []Ignored{{Ref{record.CommentReview, 10}, "mallory", "read"}, {Ref{record.CommentLine, 11}, "mallory", "read"},
		{Ref{record.CommentLine, 21}, "tess", "triage"}, {Ref{record.CommentPR, 50}, "mallory", "read"}}
	if diff := cmp.Diff(want, w.Ignored); diff != "" {
		t.Errorf("ignored (-want +got):\n%s", diff)
	}
	for _, ig := range want {
		if !slices.ContainsFunc(w.Log, func(s string) bool {
			return strings.HasPrefix(s, "ignored: "+ig.Ref.String()+" by "+ig.Author+",") && strings.Contains(s, ig.Permission)
		}) {
			t.Errorf("log %q does not name %s by %s", w.Log, ig.Ref, ig.Author)
		}
	}
	if !cmp.Equal(w.Unread, []string{"dave"}) || !cmp.Equal(Authors(rec, v), []string{"alice", "dave", "mallory", "tess"}) {
		t.Errorf("unread %q, authors %q: want dave unread, and every author to read", w.Unread, Authors(rec, v))
	}
	// Settled at the Job's start, the ignored comments are not logged
	// again; dave's waits, and so does the mark.
	rec = write(t, rec, Settle(rec, v, w, nil))
	again := Decide(rec, v)
	if len(again.Ignored) != 0 || !cmp.Equal(refs(again), []string{"line comment 31"}) {
		t.Errorf("after the ledger: ignored %+v, batch %q; want none ignored again and alice's still to do", again.Ignored, refs(again))
	}
	// The mark stops at alice's review, the oldest unsettled; it covers
	// the ignored before it, and mallory's PR comment after it keeps its
	// entry.
	want50 := []record.CommentDone{{Kind: record.CommentPR, ID: 50, Ignored: "mallory"}}
	if l, _ := rec.Comments(); l.Through != at(3).Unix() || !cmp.Equal(l.Done, want50) {
		t.Errorf("ledger %+v: want the mark at alice's review and %+v", l, want50)
	}
	// Once dave's permission is read (read), his comment is ignored too.
	v.Permissions = map[string]string{"alice": "write", "dave": "read", "mallory": "read", "tess": "triage"}
	if w := Decide(rec, v); len(w.Ignored) != 1 || w.Ignored[0].Author != "dave" || len(w.Unread) != 0 {
		t.Errorf("with dave's permission: ignored %+v, unread %q", w.Ignored, w.Unread)
	}
}
