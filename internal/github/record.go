package github

import (
	"context"
	"errors"
	"fmt"
	"strings"

	gogithub "github.com/google/go-github/v66/github"

	"github.com/roadmap-dev/roadmap/internal/record"
)

// DefaultIdentity is the login GITHUB_TOKEN writes as.
const DefaultIdentity = "github-actions[bot]"

// RecordComment is an item's record as read from roadmap's own comment on the
// issue (DESIGN §3). Only a comment written by the Client's identity holds
// the record: GitHub lets only its author and people with write access edit
// it, so nobody else can change what roadmap does.
type RecordComment struct {
	// ID is the comment's id; 0 when the issue has no record comment yet.
	ID int64
	// Record is the comment parsed; empty (no keys) when ID is 0.
	Record *record.Record
	// Ignored names marker comments by anyone else, found when the comments
	// were listed: they are not the record and are reported in it.
	Ignored []string
	// listed: the comment was last read in a list, not by its id, so the
	// next read lists again (a free 304 when nothing changed) rather than
	// pay for a first GET of the comment.
	listed bool
}

// Identity is the login roadmap writes as: the record is read only from a
// comment by it.
func (c *Client) Identity() string { return c.identity }

func (c *Client) ownComment(cm *gogithub.IssueComment) bool {
	return strings.EqualFold(cm.GetUser().GetLogin(), c.identity)
}

// ReadRecord reads issue n's record comment. With the comment's id (a job
// output handed to the next job) it reads that comment, a conditional GET;
// without it, or when that comment is gone or is not roadmap's record, it
// lists the comments once and takes the oldest comment by the Client's
// identity that holds a record block. Marker comments by anyone else are
// named in Ignored.
//
// GitHub API docs: https://docs.github.com/rest/issues/comments#get-an-issue-comment
// and https://docs.github.com/rest/issues/comments#list-issue-comments
func (c *Client) ReadRecord(ctx context.Context, n int, id int64) (RecordComment, error) {
	if id > 0 {
		cm, _, err := c.gh.Issues.GetComment(c.ctx(ctx), c.owner, c.repo, id)
		err = c.fail(err)
		switch {
		case err == nil && c.ownComment(cm) && record.HasBlock(cm.GetBody()) && issueOf(cm) == n:
			rec, perr := record.Parse(cm.GetBody())
			if perr != nil {
				return RecordComment{}, fmt.Errorf("read issue %d record comment %d: %w", n, id, perr)
			}
			return RecordComment{ID: id, Record: rec}, nil
		case err != nil && !errors.Is(err, ErrNotFound):
			return RecordComment{}, fmt.Errorf("read issue %d record comment %d: %w", n, id, err)
		}
		// Deleted (a person reset the item), or not the record: look for it.
	}
	list, err := c.listComments(ctx, n)
	if err != nil {
		return RecordComment{}, fmt.Errorf("find issue %d record comment: %w", n, err)
	}
	comments := make([]Comment, 0, len(list))
	for _, cm := range list {
		comments = append(comments, toComment(cm))
	}
	out, err := RecordFrom(n, comments, c.identity)
	out.listed = out.ID != 0
	return out, err
}

// NoRecord is the record of an issue that has no comment at all: nothing
// to look for, so nothing to list. The first write creates the comment.
func NoRecord() RecordComment {
	rec, _ := record.Parse("")
	return RecordComment{Record: rec}
}

// RecordFrom picks issue n's record from its comments, oldest first: the
// oldest comment by identity that holds a record block. Record blocks and
// roadmap markers in comments by anyone else are named in Ignored. ReadRecord applies it to
// the comments it lists; a reader of comments kept elsewhere (a saved demo
// state) applies it too, so both find the same record.
func RecordFrom(n int, comments []Comment, identity string) (RecordComment, error) {
	out := RecordComment{}
	for _, cm := range comments {
		if !record.HasBlock(cm.Body) {
			if m := markerOf(cm.Body); m != "" && !strings.EqualFold(cm.Author, identity) {
				out.Ignored = append(out.Ignored, fmt.Sprintf("a `%s` marker in comment %d by `%s`, who is not roadmap's identity (%s): roadmap writes its own",
					markerName(m), cm.ID, cm.Author, identity))
			}
			continue
		}
		if !strings.EqualFold(cm.Author, identity) {
			out.Ignored = append(out.Ignored, fmt.Sprintf("a record block in comment %d by `%s`, who is not roadmap's identity (%s)",
				cm.ID, cm.Author, identity))
			continue
		}
		if out.ID != 0 {
			continue // the oldest is the record
		}
		rec, perr := record.Parse(cm.Body)
		if perr != nil {
			return RecordComment{}, fmt.Errorf("read issue %d record comment %d: %w", n, cm.ID, perr)
		}
		out.ID, out.Record = cm.ID, rec
	}
	if out.ID == 0 {
		out.Record, _ = record.Parse("")
	}
	return out, nil
}

// issueOf reads the issue number from a comment's issue_url; 0 when absent
// (then the id is trusted as given).
func issueOf(cm *gogithub.IssueComment) int {
	u := cm.GetIssueURL()
	i := strings.LastIndexByte(u, '/')
	if i < 0 {
		return 0
	}
	var n int
	if _, err := fmt.Sscanf(u[i+1:], "%d", &n); err != nil {
		return 0
	}
	return n
}

// maxRecordAttempts bounds the read-merge-write rounds of WriteRecord.
const maxRecordAttempts = 3

// maxRecordWaits bounds the rate-limit waits of one WriteRecord: as many as
// the transport would wait out for one request.
const maxRecordWaits = maxPrimaryWaits + maxSecondaryWaits

// WriteRecord changes issue n's record comment with the record write
// protocol (GitHub has no compare-and-swap on a comment):
//
//  1. read the comment (a conditional GET: free when unchanged since this
//     Client last read or wrote it);
//  2. change computes the edits from the record as it is now; they are
//     masked (record.Changes.Masked) before they are applied, so what is
//     written is exactly what the read-back is checked for; the comment is
//     rendered (the visible part by view, from the merged record);
//  3. read the comment again, conditionally, just before the PATCH (a free
//     304 when nothing changed): a change since step 1, a person's edit,
//     is merged by starting over from it;
//  4. PATCH the comment; GitHub's answer is the read-back. A PATCH refused
//     for a rate limit is not resent with the old body after the wait: the
//     write starts over from step 1, so an edit made during the wait is kept;
//  5. if the read-back lacks the change, or the PATCH failed in a way that
//     may or may not have landed, start over from a fresh read, at most
//     three rounds. When someone else edited the comment during this write,
//     it is read once more after the PATCH (the check after), and our change
//     is applied again on top of an edit that landed over it.
//
// What remains is the time from GitHub answering step 3 to it applying step
// 4, one round trip with no work in between: an edit that lands there is
// overwritten, and nothing GitHub answers shows it (docs/github.md).
//
// With rc.ID 0 the comment is created; a create whose answer is lost is
// never blindly repeated: the comments are listed again and the one that
// landed is used. A 404 for the comment is looked into the same way: the
// record is found among roadmap's own comments, and only when none holds one
// is a comment created. rc is updated with the comment's id and record as
// written.
//
// GitHub API docs: https://docs.github.com/rest/issues/comments#update-an-issue-comment
// and https://docs.github.com/rest/issues/comments#create-an-issue-comment
func (c *Client) WriteRecord(ctx context.Context, n int, rc *RecordComment,
	change func(cur *record.Record) (record.Changes, error), view func(cur *record.Record) record.View) error {
	unlock := c.lockIssue(n)
	defer unlock()
	var (
		why error
		// known is the record as this Client last read or wrote it; a read
		// that differs shows someone else's edit since.
		known = rc.Record
		// contended: someone else edited the comment during this write,
		// so it is checked once more after the PATCH.
		contended bool
		waits     int
	)
	// read reads the comment for a write; gone is a 404 (looked into by the
	// caller), any other error fails the write.
	read := func() (body string, cur *record.Record, gone bool, err error) {
		cm, err := c.readComment(ctx, n, rc)
		err = c.fail(err)
		switch {
		case errors.Is(err, ErrNotFound):
			return "", nil, true, nil
		case err != nil:
			return "", nil, false, fmt.Errorf("write issue %d record: read comment %d: %w", n, rc.ID, err)
		}
		body = cm.GetBody()
		if cur, err = record.Parse(body); err != nil {
			return "", nil, false, fmt.Errorf("write issue %d record: read comment %d: %w", n, rc.ID, err)
		}
		return body, cur, false, nil
	}
rounds:
	for attempt := 1; attempt <= maxRecordAttempts; attempt++ {
		cur, curBody := rc.Record, ""
		if rc.ID != 0 {
			body, rec, gone, err := read()
			switch {
			case err != nil:
				return err
			case gone && !rc.listed:
				// One 404 is not proof the comment is gone: look for it
				// among roadmap's own comments, and read it from there.
				// Only when none holds a record (a person deleted it) does
				// the item start a fresh one.
				if ferr := c.refind(ctx, n, rc); ferr != nil {
					return fmt.Errorf("write issue %d record: comment %d answered 404, and finding it again: %w", n, rc.ID, ferr)
				}
				why = ErrNotFound
				continue
			case gone:
				// Not in the list either: deleted by a person, the item
				// starts a fresh record.
				rc.ID, rc.Record, rc.listed = 0, nil, false
				cur = nil
			default:
				cur, curBody = rec, body
				if known != nil && !cur.Equal(known) {
					contended = true
				}
			}
		}
		if cur == nil {
			cur, _ = record.Parse("")
		}
		var (
			ch   record.Changes
			body string
		)
		for remerge := 0; ; remerge++ {
			var err error
			if ch, body, err = c.recordBody(n, cur, change, view); err != nil {
				return err
			}
			if rc.ID != 0 && body == curBody {
				rc.Record = cur
				return nil
			}
			if rc.ID == 0 || remerge == maxRecordAttempts {
				break
			}
			// The conditional read just before the PATCH (a free 304 when
			// nothing changed): the body was built from curBody, and an
			// edit since then is merged before anything is sent.
			again, rec, gone, err := read()
			switch {
			case err != nil:
				return err
			case gone:
				why = ErrNotFound
				continue rounds
			case again == curBody:
			default:
				contended = true
				cur, curBody = rec, again
				continue
			}
			break
		}
		var (
			got *gogithub.IssueComment
			err error
		)
		wctx := context.WithValue(c.ctx(ctx), noResendKey{}, true)
		if rc.ID == 0 {
			got, _, err = c.gh.Issues.CreateComment(wctx, c.owner, c.repo, n, &gogithub.IssueComment{Body: &body})
		} else {
			got, _, err = c.gh.Issues.EditComment(wctx, c.owner, c.repo, rc.ID, &gogithub.IssueComment{Body: &body})
		}
		if err = c.fail(err); err != nil {
			var rl *RateLimitError
			if errors.As(err, &rl) && rl.Waited && waits < maxRecordWaits {
				// The wait is over; the body it refused was built from a
				// read before it. Start over from a fresh read.
				waits++
				attempt--
				why = err
				continue
			}
			if errors.Is(err, ErrNotFound) && rc.ID != 0 {
				// As for the read: look for the record before making one.
				if ferr := c.refind(ctx, n, rc); ferr != nil {
					return fmt.Errorf("write issue %d record: comment %d answered 404, and finding it again: %w", n, rc.ID, ferr)
				}
				why = err
				c.recovered(Recovery{Kind: RecoverRecordReapply, Endpoint: fmt.Sprintf("issue %d record", n), Attempt: attempt + 1, Reason: "the comment is gone"})
				continue
			}
			if !Indeterminate(err) {
				return fmt.Errorf("write issue %d record: %w", n, err)
			}
			why = err
			if serr := c.sleep(ctx, backoff(attempt-1)); serr != nil {
				return fmt.Errorf("write issue %d record: %w", n, err)
			}
			if rc.ID == 0 {
				// The create may have landed: find it rather than post a second one.
				found, ferr := c.ReadRecord(ctx, n, 0)
				if ferr != nil {
					return fmt.Errorf("write issue %d record: create: %w (and finding it again: %v)", n, err, ferr)
				}
				rc.ID, rc.Record = found.ID, found.Record
			}
			c.recovered(Recovery{Kind: RecoverRecordReapply, Endpoint: fmt.Sprintf("issue %d record", n), Attempt: attempt + 1, Wait: backoff(attempt - 1), Reason: "the write's answer was lost: " + err.Error()})
			continue
		}
		if !c.ownComment(got) {
			return fmt.Errorf("write issue %d record: comment %d was written as %q, but roadmap's identity is %q: set the identity to the login the token writes as, or no later Job will trust the record",
				n, got.GetID(), got.GetUser().GetLogin(), c.identity)
		}
		rb, perr := record.Parse(got.GetBody())
		rc.ID, rc.listed = got.GetID(), false
		if perr == nil && ch.Applied(rb) {
			rc.Record = rb
			if !contended {
				return nil
			}
			// The check after: someone is editing the comment now. An edit
			// saved over ours (an editor opened before our PATCH) loses our
			// change; one that keeps it is theirs to keep.
			contended = false
			after, err := c.readComment(ctx, n, rc)
			if err = c.fail(err); err != nil {
				return fmt.Errorf("write issue %d record: read comment %d after the write: %w", n, rc.ID, err)
			}
			ab, perr := record.Parse(after.GetBody())
			if after.GetBody() == got.GetBody() || (perr == nil && ch.Applied(ab)) {
				if perr == nil {
					rc.Record = ab
				}
				return nil
			}
			known = rb
			why = errors.New("an edit saved after our write dropped the change")
			continue
		}
		why = errors.New("the read-back does not hold the change")
		if perr != nil {
			why = fmt.Errorf("the read-back does not parse: %w", perr)
		}
		c.recovered(Recovery{Kind: RecoverRecordReapply, Endpoint: fmt.Sprintf("issue %d record", n), Attempt: attempt + 1, Reason: why.Error()})
	}
	return fmt.Errorf("write issue %d record: change not applied after %d rounds: %w", n, maxRecordAttempts, why)
}

// recordBody is the record comment cur becomes with change: the changes,
// masked before they are applied, and the comment rendered and masked.
func (c *Client) recordBody(n int, cur *record.Record, change func(cur *record.Record) (record.Changes, error),
	view func(cur *record.Record) record.View) (record.Changes, string, error) {
	ch, err := change(cur)
	if err != nil {
		return ch, "", fmt.Errorf("write issue %d record: %w", n, err)
	}
	ch = ch.Masked(c.mask)
	next := cur.Clone()
	if err := next.Apply(ch); err != nil {
		return ch, "", fmt.Errorf("write issue %d record: %w", n, err)
	}
	next.SetView(view(next))
	body, err := record.RenderComment(next)
	if err != nil {
		return ch, "", fmt.Errorf("write issue %d record: %w", n, err)
	}
	body = c.mask(body)
	if tooLong(body) {
		return ch, "", fmt.Errorf("write issue %d record: %w", n, ErrTooLong)
	}
	return ch, body, nil
}

// refind looks for issue n's record comment after GitHub answered 404 for
// the one rc names: it lists the comments once and takes the record there,
// the oldest by roadmap's identity (readers take the same one), or none. The
// next read of rc is from the list, so a comment GitHub lists is written
// where it is, never duplicated by a second record comment.
func (c *Client) refind(ctx context.Context, n int, rc *RecordComment) error {
	found, err := c.ReadRecord(ctx, n, 0)
	if err != nil {
		return err
	}
	rc.ID, rc.Record, rc.listed = found.ID, found.Record, found.listed
	if rc.ID == 0 {
		rc.Record = nil
	}
	return nil
}

// readComment reads the record comment for a write: by its id, or, when it
// was found in a list and not read or written by id since, by listing again
// (conditional: free when no comment changed).
func (c *Client) readComment(ctx context.Context, n int, rc *RecordComment) (*gogithub.IssueComment, error) {
	if rc.listed {
		list, err := c.listComments(ctx, n)
		if err != nil {
			return nil, err
		}
		for _, cm := range list {
			if cm.GetID() == rc.ID {
				return cm, nil
			}
		}
		return nil, ErrNotFound
	}
	cm, _, err := c.gh.Issues.GetComment(c.ctx(ctx), c.owner, c.repo, rc.ID)
	return cm, err
}
