package record

import (
	"fmt"
	"slices"
	"unicode/utf8"
)

// The comment ledger: what repair Jobs did with the comments people left
// on the item's PR (docs/review.md, "A person's review").

// Bounds of implement.comments, counted as written like every bounded key.
// The ledger stays small because it keeps only what its Through mark does
// not already cover (internal/prfix moves the mark past every settled
// comment); the bounds are for a PR with many comments in flight.
const (
	// MaxCommentsChars bounds implement.comments as written; the setter
	// drops the oldest ignored entries, then the answers' reasons, then
	// the oldest entries, to fit.
	MaxCommentsChars = 420
	// MaxCommentEntries bounds the entries implement.comments keeps; the
	// setter keeps the newest.
	MaxCommentEntries = 12
	// maxAnswer bounds an answer's reason as kept (the reply on the PR
	// carries the whole of it).
	maxAnswer = 60
	// shortSHA is how many hex digits of an addressing commit are kept.
	shortSHA = 12
)

// The kinds of comment a person leaves on a PR.
const (
	// CommentReview is a review's own body ("changes requested").
	CommentReview = "review"
	// CommentLine is a review comment on a line (or file) of the diff, a
	// thread's first comment or a reply in it.
	CommentLine = "line"
	// CommentPR is a comment on the PR's conversation.
	CommentPR = "pr"
)

// CommentLedger is implement.comments: every comment visible before
// Through (Unix seconds) is settled, and so is every comment in Done.
// A settled comment is never raised again.
type CommentLedger struct {
	Through int64         `json:"through,omitempty"`
	Done    []CommentDone `json:"done,omitempty"`
}

// CommentDone is one settled comment and how: addressed by a commit
// (SHA), answered with a reason because the agent disagreed (Answered),
// or ignored because its author has no write access (Ignored: the login).
// Exactly one of the three is set.
type CommentDone struct {
	Kind     string `json:"kind"`
	ID       int64  `json:"id"`
	SHA      SHA    `json:"sha,omitempty"`
	Answered string `json:"answered,omitempty"`
	Ignored  string `json:"ignored,omitempty"`
}

// Has reports whether the ledger holds an entry for comment id of kind.
func (l CommentLedger) Has(kind string, id int64) bool {
	return slices.ContainsFunc(l.Done, func(d CommentDone) bool { return d.Kind == kind && d.ID == id })
}

func (l CommentLedger) check() error {
	if l.Through < 0 || l.Through > MaxUnix {
		return fmt.Errorf("through %d: a time from 0 to %d (Unix seconds)", l.Through, MaxUnix)
	}
	if len(l.Done) > MaxCommentEntries {
		return fmt.Errorf("%d comments, at most %d", len(l.Done), MaxCommentEntries)
	}
	for _, d := range l.Done {
		if err := d.check(); err != nil {
			return err
		}
	}
	return nil
}

func (d CommentDone) check() error {
	switch d.Kind {
	case CommentReview, CommentLine, CommentPR:
	default:
		return fmt.Errorf("comment kind %q: review, line or pr", d.Kind)
	}
	if d.ID < 1 || d.ID > MaxRunID {
		return fmt.Errorf("%s comment id %d: from 1 to %d", d.Kind, d.ID, MaxRunID)
	}
	set := 0
	for _, s := range []string{string(d.SHA), d.Answered, d.Ignored} {
		if s != "" {
			set++
		}
	}
	if set != 1 {
		return fmt.Errorf("%s comment %d: exactly one of sha, answered and ignored", d.Kind, d.ID)
	}
	if d.SHA != "" {
		if _, err := ParseSHA(string(d.SHA)); err != nil {
			return fmt.Errorf("%s comment %d: %w", d.Kind, d.ID, err)
		}
	}
	return nil
}

// SetComments sets implement.comments, cut to its bounds: SHAs shortened,
// reasons and logins cut, the newest entries; then, until it fits, the
// oldest ignored entries go (an ignored comment is only ignored again),
// the answers' reasons are shortened to "disagreed", and the oldest
// entries go.
func (c *Changes) SetComments(l CommentLedger) {
	l.Done = slices.Clone(l.Done[max(0, len(l.Done)-MaxCommentEntries):])
	for i := range l.Done {
		d := &l.Done[i]
		d.SHA = SHA(cutRunes(string(d.SHA), shortSHA))
		d.Answered = cutRunes(d.Answered, maxAnswer)
		d.Ignored = cutRunes(d.Ignored, 40)
	}
	text := encodeJSON(l)
	fits := func() bool { return utf8.RuneCountInString(text) <= MaxCommentsChars }
	for i := 0; i < len(l.Done) && !fits(); {
		if l.Done[i].Ignored == "" {
			i++
			continue
		}
		l.Done = slices.Delete(l.Done, i, i+1)
		text = encodeJSON(l)
	}
	for i := range l.Done {
		if fits() {
			break
		}
		if l.Done[i].Answered != "" {
			l.Done[i].Answered = "disagreed"
			text = encodeJSON(l)
		}
	}
	for !fits() && len(l.Done) > 0 {
		l.Done = l.Done[1:]
		text = encodeJSON(l)
	}
	c.set(KeyImplementComments, text)
}
