package prfix

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/record"
)

// Review is one review of the PR, as GitHub lists it.
type Review struct {
	ID     int64
	Author string
	// State is APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED or PENDING.
	State       string
	Body        string
	SubmittedAt time.Time
}

// LineComment is a review comment on a line (or a file) of the PR's diff.
type LineComment struct {
	ID int64
	// Review is the review it was submitted in.
	Review int64
	// InReplyTo is the thread's first comment; 0 for that first comment.
	InReplyTo int64
	Author    string
	Body      string
	Path      string
	Line      int
	CreatedAt time.Time
}

// Comment is a comment on the PR's conversation.
type Comment struct {
	ID        int64
	Author    string
	Body      string
	CreatedAt time.Time
}

// View is what the PR shows, read at the start of a repair Job.
type View struct {
	// Self is the login roadmap writes as: its own comments and replies
	// ask nothing.
	Self string
	// ReadAt is when the lists were read: Settle moves the ledger's mark
	// up to it when nothing before it is left.
	ReadAt   time.Time
	Reviews  []Review
	Lines    []LineComment
	Comments []Comment
	// Permissions are the authors' roles on the repository, as
	// github.Client.Permission reads them (admin, maintain, write, triage,
	// read, none). Authors says whose the Job must read.
	Permissions map[string]string
}

// Ref names one comment: its kind (record.CommentReview, CommentLine,
// CommentPR) and its id.
type Ref struct {
	Kind string
	ID   int64
}

func (r Ref) String() string {
	switch r.Kind {
	case record.CommentReview:
		return fmt.Sprintf("review %d", r.ID)
	case record.CommentLine:
		return fmt.Sprintf("line comment %d", r.ID)
	}
	return fmt.Sprintf("PR comment %d", r.ID)
}

// Said is one earlier comment of a thread.
type Said struct {
	Author string
	Body   string
}

// Item is one comment the repair Job addresses or answers.
type Item struct {
	Ref    Ref
	Author string
	Body   string
	// Path and Line are where a line comment is (Line 0: on the file).
	Path string
	Line int
	// Thread is what was said before it in its thread, oldest first: a
	// reply is read in its thread.
	Thread []Said
	// ReplyTo is the thread's first comment, where the reply naming the
	// commit goes (replies to replies are not GitHub's); 0 for a review's
	// body or a PR comment, answered by a comment on the PR.
	ReplyTo int64
}

// Batch is one repair Job's work: a review with its line comments (a
// "changes requested" review and the comments on lines it holds are one
// batch), or one `/roadmap fix` comment.
type Batch struct {
	// Review is the review the batch is; 0 for a PR comment.
	Review int64
	Items  []Item
	at     time.Time
}

// Ignored is a comment whose author has no write access: it is logged and
// entered in the ledger, never addressed.
type Ignored struct {
	Ref        Ref
	Author     string
	Permission string
}

// Work is the decision: the batches to address, oldest first (the Job
// addresses the first; each other is the next Job's), the comments
// ignored, the authors whose permission is not known yet (their comments
// are neither addressed nor ignored), and the log lines that say so.
type Work struct {
	Batches []Batch
	Ignored []Ignored
	Unread  []string
	Log     []string
}

// Todo reports whether a repair Job has a batch to address.
func (w Work) Todo() bool { return len(w.Batches) > 0 }

// Outcome is what the Job did with one item: addressed it by a commit
// (SHA), or answered it with a reason because the agent disagrees. An
// item with neither is not settled and comes again.
type Outcome struct {
	Ref    Ref
	SHA    string
	Answer string
}

// fixVerb is the word after "/roadmap" that asks for a fix in a comment.
const fixVerb = "fix"

// AsksFix reports whether a comment's first non-blank line is
// "/roadmap fix", alone or followed by what to fix.
func AsksFix(body string) bool {
	for line := range strings.SplitSeq(body, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		return len(f) >= 2 && f[0] == "/roadmap" && f[1] == fixVerb
	}
	return false
}

// writer reports whether a role may ask roadmap for work.
func writer(role string) bool {
	return role == "admin" || role == "maintain" || role == "write"
}

// candidate is a comment that asks for work, whoever wrote it.
type candidate struct {
	item  Item
	batch int64 // the review; 0 for a PR comment
	at    time.Time
}

// candidates are the comments of v that ask for work, by anyone but
// roadmap: a "changes requested" review's body, a review body or PR
// comment that is `/roadmap fix …`, and every line comment of a review
// that is neither pending nor dismissed.
func candidates(v View) []candidate {
	self := func(login string) bool { return login == "" || strings.EqualFold(login, v.Self) }
	reviews := map[int64]Review{}
	var out []candidate
	for _, r := range v.Reviews {
		reviews[r.ID] = r
		asks := r.State == "CHANGES_REQUESTED" && strings.TrimSpace(r.Body) != "" ||
			(r.State == "COMMENTED" || r.State == "APPROVED") && AsksFix(r.Body)
		if asks && !self(r.Author) {
			out = append(out, candidate{item: Item{Ref: Ref{record.CommentReview, r.ID}, Author: r.Author, Body: r.Body},
				batch: r.ID, at: r.SubmittedAt})
		}
	}
	for _, lc := range v.Lines {
		r, known := reviews[lc.Review]
		if self(lc.Author) || known && (r.State == "PENDING" || r.State == "DISMISSED") {
			continue
		}
		root := lc.ID
		if lc.InReplyTo != 0 {
			root = lc.InReplyTo
		}
		it := Item{Ref: Ref{record.CommentLine, lc.ID}, Author: lc.Author, Body: lc.Body, Path: lc.Path, Line: lc.Line, ReplyTo: root}
		for _, o := range v.Lines {
			if o.ID < lc.ID && (o.ID == root || o.InReplyTo == root) {
				it.Thread = append(it.Thread, Said{Author: o.Author, Body: o.Body})
			}
		}
		at := lc.CreatedAt
		if known && !r.SubmittedAt.IsZero() {
			at = r.SubmittedAt // a comment of a review is seen once the review is submitted
		}
		out = append(out, candidate{item: it, batch: lc.Review, at: at})
	}
	for _, c := range v.Comments {
		if AsksFix(c.Body) && !self(c.Author) {
			out = append(out, candidate{item: Item{Ref: Ref{record.CommentPR, c.ID}, Author: c.Author, Body: c.Body}, at: c.CreatedAt})
		}
	}
	return out
}

// settled reports whether the ledger covers c: an entry of its own, or a
// time before the ledger's mark.
func settled(l record.CommentLedger, c candidate) bool {
	return l.Has(c.item.Ref.Kind, c.item.Ref.ID) || !c.at.IsZero() && c.at.Unix() < l.Through
}

// role is login's role in perms ("" when not read).
func role(perms map[string]string, login string) string {
	for k, v := range perms {
		if strings.EqualFold(k, login) {
			return v
		}
	}
	return ""
}

// Decide says what a repair Job does, from the PR as v shows it and the
// comment ledger in rec: every comment the ledger does not cover, by a
// person with write, maintain or admin permission, is addressed, in
// batches; one by anyone else is ignored and logged; one whose author's
// permission v does not give waits for it (Authors).
func Decide(rec *record.Record, v View) Work {
	l, _ := rec.Comments()
	var w Work
	for _, c := range candidates(v) {
		if settled(l, c) {
			continue
		}
		it := c.item
		switch p := role(v.Permissions, it.Author); {
		case p == "":
			if !slices.Contains(w.Unread, it.Author) {
				w.Unread = append(w.Unread, it.Author)
			}
			w.Log = append(w.Log, fmt.Sprintf("not yet: %s by %s waits for their permission to be read", it.Ref, it.Author))
		case !writer(p):
			w.Ignored = append(w.Ignored, Ignored{Ref: it.Ref, Author: it.Author, Permission: p})
			w.Log = append(w.Log, fmt.Sprintf("ignored: %s by %s, whose permission is %s: only write, maintain or admin asks roadmap for a fix", it.Ref, it.Author, p))
		default:
			w.Batches = add(w.Batches, c)
		}
	}
	slices.SortStableFunc(w.Batches, func(a, b Batch) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return cmpInt(a.Items[0].Ref.ID, b.Items[0].Ref.ID)
	})
	if len(w.Batches) > 0 {
		b := w.Batches[0]
		what := fmt.Sprintf("review %d", b.Review)
		if b.Review == 0 {
			what = b.Items[0].Ref.String()
		}
		w.Log = append(w.Log, fmt.Sprintf("repair: %s by %s, %d comment(s)", what, b.Items[0].Author, len(b.Items)))
		if n := len(w.Batches) - 1; n > 0 {
			w.Log = append(w.Log, fmt.Sprintf("waiting: %d more batch(es), one Job each", n))
		}
	}
	slices.Sort(w.Unread)
	return w
}

// add puts c in its review's batch (a PR comment is a batch of its own),
// the review's body first, then its line comments by id.
func add(bs []Batch, c candidate) []Batch {
	i := slices.IndexFunc(bs, func(b Batch) bool { return c.batch != 0 && b.Review == c.batch })
	if i < 0 {
		return append(bs, Batch{Review: c.batch, Items: []Item{c.item}, at: c.at})
	}
	b := &bs[i]
	b.Items = append(b.Items, c.item)
	slices.SortStableFunc(b.Items, func(x, y Item) int {
		if (x.Ref.Kind == record.CommentReview) != (y.Ref.Kind == record.CommentReview) {
			if x.Ref.Kind == record.CommentReview {
				return -1
			}
			return 1
		}
		return cmpInt(x.Ref.ID, y.Ref.ID)
	})
	if c.at.Before(b.at) {
		b.at = c.at
	}
	return bs
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Authors are the people whose permission the Job reads before Decide:
// the authors of the comments the ledger does not cover.
func Authors(rec *record.Record, v View) []string {
	v.Permissions = nil
	return Decide(rec, v).Unread
}

// Settle is the comment ledger to write after the Job (or at its start,
// with no outcome, for the comments w ignored): the ledger in rec with
// w's ignored comments and the outcomes entered, then its mark moved up to
// the oldest comment still unsettled (or to when v was read, when none
// is), and the entries the mark covers dropped. A comment made visible
// after the read is never under the mark.
func Settle(rec *record.Record, v View, w Work, done []Outcome) record.CommentLedger {
	l, _ := rec.Comments()
	l.Done = slices.Clone(l.Done)
	enter := func(d record.CommentDone) {
		if !l.Has(d.Kind, d.ID) {
			l.Done = append(l.Done, d)
		}
	}
	for _, ig := range w.Ignored {
		enter(record.CommentDone{Kind: ig.Ref.Kind, ID: ig.Ref.ID, Ignored: ig.Author})
	}
	for _, o := range done {
		switch {
		case o.SHA != "":
			enter(record.CommentDone{Kind: o.Ref.Kind, ID: o.Ref.ID, SHA: record.SHA(o.SHA)})
		case strings.TrimSpace(o.Answer) != "":
			enter(record.CommentDone{Kind: o.Ref.Kind, ID: o.Ref.ID, Answered: strings.Join(strings.Fields(o.Answer), " ")})
		}
	}
	cands := candidates(v)
	mark := l.Through
	if !v.ReadAt.IsZero() {
		mark = max(mark, v.ReadAt.Unix())
	}
	for _, c := range cands {
		if settled(l, c) {
			continue
		}
		if c.at.IsZero() {
			mark = l.Through // a comment with no time cannot be placed: the mark stays
			break
		}
		mark = max(l.Through, min(mark, c.at.Unix()))
	}
	l.Through = mark
	l.Done = slices.DeleteFunc(l.Done, func(d record.CommentDone) bool {
		i := slices.IndexFunc(cands, func(c candidate) bool { return c.item.Ref == Ref{d.Kind, d.ID} })
		return i < 0 || !cands[i].at.IsZero() && cands[i].at.Unix() < mark
	})
	return l
}
