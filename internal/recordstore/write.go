package recordstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// maxRecordAttempts bounds the read-merge-write rounds of Write.
const maxRecordAttempts = 3

// Write changes issue n's record comment with the record write protocol
// (GitHub has no compare-and-swap on a comment):
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
// With rc.ID 0 the comment is created, after one more look for it (the
// issue's comments listed again): a record a list left out is written
// where it is, never beside it. After a create the comments are listed once
// more; a record comment older than ours (another writer's first write)
// takes ours merged in, and ours is neutralised (one record). A create
// whose answer is lost is never blindly repeated: the comments are listed
// again and the one that landed is used. A 404 for the comment is looked
// into the same way: the record is found among roadmap's own comments, and
// only when none holds one is a comment created. rc is updated with the
// comment's id and record as written.
func (s *Store) Write(ctx context.Context, n int, rc *RecordComment,
	change func(cur *record.Record) (record.Changes, error), view func(cur *record.Record) record.View) error {
	unlock := s.gh.LockIssue(n)
	defer unlock()
	if err := s.write(ctx, n, rc, change, view); err != nil {
		return err
	}
	if rc.repair != nil {
		s.announce(ctx, n, rc)
	}
	return nil
}

func (s *Store) write(ctx context.Context, n int, rc *RecordComment,
	change func(cur *record.Record) (record.Changes, error), view func(cur *record.Record) record.View) error {
	var (
		why error
		// known is the record as this Client last read or wrote it; a read
		// that differs shows someone else's edit since.
		known = rc.Record
		// contended: someone else edited the comment during this write,
		// so it is checked once more after the PATCH.
		contended bool
		waits     int
		// lookedAgain: the look before a create was made.
		lookedAgain bool
	)
	// read reads the comment for a write; gone is a 404 (looked into by the
	// caller), any other error fails the write.
	read := func() (body string, cur *record.Record, gone bool, err error) {
		cm, err := s.readComment(ctx, n, rc)
		switch {
		case errors.Is(err, github.ErrNotFound):
			return "", nil, true, nil
		case err != nil:
			return "", nil, false, fmt.Errorf("write issue %d record: read comment %d: %w", n, rc.ID, err)
		}
		body = cm.Body
		// A block a person broke is salvaged over the record as this
		// writer last knew it (repair.go); the write lands the repair.
		cur, sv, err := record.Salvage(body, known)
		if err != nil {
			return "", nil, false, fmt.Errorf("write issue %d record: read comment %d: %w", n, rc.ID, err)
		}
		rc.repair = nil
		if sv.Broken() {
			rc.repair = &sv
		}
		return body, cur, false, nil
	}
rounds:
	for attempt := 1; attempt <= maxRecordAttempts; attempt++ {
		if rc.ID == 0 && !lookedAgain {
			// One more look before a record comment is made: a list that
			// left the record out, or another writer's first write.
			// After a list of its own (rc.looked) it is a conditional
			// list: free when nothing changed.
			lookedAgain = true
			found, err := s.lookBeforeCreate(ctx, n, rc)
			if err != nil {
				return fmt.Errorf("write issue %d record: look again before creating it: %w", n, err)
			}
			if found.ID != 0 {
				// A record this writer never read: its change was made
				// from no record, as a second first write's is. It is
				// merged in as that one would be (spend summed, marks by
				// ours, the latest), never written over it.
				return s.mergeInto(ctx, n, rc, found, change, view)
			}
		}
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
				if ferr := s.refind(ctx, n, rc); ferr != nil {
					return fmt.Errorf("write issue %d record: comment %d answered 404, and finding it again: %w", n, rc.ID, ferr)
				}
				why = github.ErrNotFound
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
			if ch, body, err = s.recordBody(n, cur, change, view); err != nil {
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
				why = github.ErrNotFound
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
			got     github.Comment
			err     error
			created = rc.ID == 0
		)
		wctx := github.NoResend(ctx)
		if created {
			got, err = s.gh.CreateComment(wctx, n, body)
		} else {
			got, err = s.gh.EditComment(wctx, rc.ID, body)
		}
		if err != nil {
			var rl *github.RateLimitError
			if errors.As(err, &rl) && rl.Waited && waits < github.MaxRateLimitWaits {
				// The wait is over; the body it refused was built from a
				// read before it. Start over from a fresh read.
				waits++
				attempt--
				why = err
				continue
			}
			if errors.Is(err, github.ErrNotFound) && rc.ID != 0 {
				// As for the read: look for the record before making one.
				if ferr := s.refind(ctx, n, rc); ferr != nil {
					return fmt.Errorf("write issue %d record: comment %d answered 404, and finding it again: %w", n, rc.ID, ferr)
				}
				why = err
				s.gh.Recovered(github.Recovery{Kind: github.RecoverRecordReapply, Endpoint: fmt.Sprintf("issue %d record", n), Attempt: attempt + 1, Reason: "the comment is gone"})
				continue
			}
			if !github.Indeterminate(err) {
				return fmt.Errorf("write issue %d record: %w", n, err)
			}
			why = err
			if serr := s.gh.Sleep(ctx, github.Backoff(attempt-1)); serr != nil {
				return fmt.Errorf("write issue %d record: %w", n, err)
			}
			if created {
				// The create may have landed: find it rather than post a second one.
				found, ferr := s.find(ctx, n, 1)
				if ferr != nil {
					return fmt.Errorf("write issue %d record: create: %w (and finding it again: %v)", n, err, ferr)
				}
				rc.ID, rc.Record = found.ID, found.Record
			}
			s.gh.Recovered(github.Recovery{Kind: github.RecoverRecordReapply, Endpoint: fmt.Sprintf("issue %d record", n), Attempt: attempt + 1, Wait: github.Backoff(attempt - 1), Reason: "the write's answer was lost: " + err.Error()})
			continue
		}
		if !s.own(got) {
			return fmt.Errorf("write issue %d record: comment %d was written as %q, but roadmap's identity is %q: set the identity to the login the token writes as, or no later Job will trust the record",
				n, got.ID, got.Author, s.gh.Identity())
		}
		rb, perr := record.Parse(got.Body)
		rc.ID, rc.listed = got.ID, false
		if perr == nil && ch.Applied(rb) {
			rc.Record = rb
			if created {
				// The check after a create: another writer's first record
				// takes ours (one record).
				if err := s.checkCreate(ctx, n, rc); err != nil {
					return fmt.Errorf("write issue %d record: %w", n, err)
				}
				return nil
			}
			if !contended {
				return nil
			}
			// The check after: someone is editing the comment now. An edit
			// saved over ours (an editor opened before our PATCH) loses our
			// change; one that keeps it is theirs to keep.
			contended = false
			after, err := s.readComment(ctx, n, rc)
			if err != nil {
				return fmt.Errorf("write issue %d record: read comment %d after the write: %w", n, rc.ID, err)
			}
			ab, perr := record.Parse(after.Body)
			if after.Body == got.Body || (perr == nil && ch.Applied(ab)) {
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
		s.gh.Recovered(github.Recovery{Kind: github.RecoverRecordReapply, Endpoint: fmt.Sprintf("issue %d record", n), Attempt: attempt + 1, Reason: why.Error()})
	}
	return fmt.Errorf("write issue %d record: change not applied after %d rounds: %w", n, maxRecordAttempts, why)
}

// recordBody is the record comment cur becomes with change: the changes,
// masked before they are applied, and the comment rendered and masked.
func (s *Store) recordBody(n int, cur *record.Record, change func(cur *record.Record) (record.Changes, error),
	view func(cur *record.Record) record.View) (record.Changes, string, error) {
	ch, err := change(cur)
	if err != nil {
		return ch, "", fmt.Errorf("write issue %d record: %w", n, err)
	}
	ch = ch.Masked(s.gh.Mask)
	next := cur.Clone()
	if err := next.Apply(ch); err != nil {
		return ch, "", fmt.Errorf("write issue %d record: %w", n, err)
	}
	if view != nil {
		// nil keeps the text around the block as it is: a repair on a
		// read, which has no view of its own.
		next.SetView(view(next))
	}
	body, err := record.RenderComment(next)
	if err != nil {
		return ch, "", fmt.Errorf("write issue %d record: %w", n, err)
	}
	body = s.gh.Mask(body)
	if github.TooLong(body) {
		return ch, "", fmt.Errorf("write issue %d record: %w", n, github.ErrTooLong)
	}
	return ch, body, nil
}

// refind looks for issue n's record comment after GitHub answered 404 for
// the one rc names: it lists the comments once and takes the record there,
// the oldest by roadmap's identity (readers take the same one), or none. The
// next read of rc is from the list, so a comment GitHub lists is written
// where it is, never duplicated by a second record comment.
func (s *Store) refind(ctx context.Context, n int, rc *RecordComment) error {
	found, err := s.find(ctx, n, 1)
	if err != nil {
		return err
	}
	rc.ID, rc.Record, rc.listed, rc.looked = found.ID, found.Record, found.listed, found.looked
	if rc.ID == 0 {
		rc.Record = nil
	}
	return nil
}

// readComment reads the record comment for a write: by its id, or, when it
// was found in a list and not read or written by id since, by listing again
// (conditional: free when no comment changed).
func (s *Store) readComment(ctx context.Context, n int, rc *RecordComment) (github.Comment, error) {
	if rc.listed {
		list, err := s.gh.Comments(ctx, n)
		if err != nil {
			return github.Comment{}, err
		}
		for _, cm := range list {
			if cm.ID == rc.ID {
				return cm, nil
			}
		}
		return github.Comment{}, github.ErrNotFound
	}
	return s.gh.GetComment(ctx, rc.ID)
}
