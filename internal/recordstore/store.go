// Package recordstore is the one way to an item's record (docs/record.md):
// it finds roadmap's record comment on the issue, reads it, writes it with
// the precondition protocol (GitHub has no compare-and-swap on a comment),
// merges a person's edit made during a write, and keeps one record comment
// per issue: a duplicate (two first writes, or a list that left the record
// out) is merged into the oldest and neutralised. The GitHub client only
// gets, lists, creates and edits comments; nothing else writes a record
// comment (TestRecordOnlyThroughStore in internal/deptest).
package recordstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/record"
)

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
	// Merged names the duplicate record comments merged into this one when
	// it was read (docs/record.md, one record).
	Merged []int64
	// listed: the comment was last read in a list, not by its id, so the
	// next read lists again (a free 304 when nothing changed) rather than
	// pay for a first GET of the comment.
	listed bool
	// looked: the issue's comments were listed for this record and none
	// held one; the look before a create is then a conditional list.
	looked bool
	// version is the record pointer's version as last read or saved ("":
	// none, or no pointer); pointerDown: the pointer could not be read,
	// so the store does without it (Pointer).
	version     string
	pointerDown bool
	// Dropped are the lines of a broken record block the last repair of
	// this record dropped (a person's edit that did not read): a reader
	// whose key was among them can say why it lacks it.
	Dropped []record.Unread
	// repair: the comment's record block was broken (a person's edit) and
	// Record is what the store salvaged of it (record.Salvage); the write
	// that lands the repaired block says so on the issue (repair.go).
	repair *record.Salvaged
}

// Client is what the store asks of GitHub: comments got, listed, created
// and edited (*github.Client), and the client's own lock, clock, masks and
// recovery log.
type Client interface {
	GetComment(ctx context.Context, id int64) (github.Comment, error)
	Comments(ctx context.Context, n int) ([]github.Comment, error)
	CreateComment(ctx context.Context, n int, body string) (github.Comment, error)
	EditComment(ctx context.Context, id int64, body string) (github.Comment, error)
	// UpsertMarkerComment keeps the one comment that says what the store
	// repaired (RepairMarker).
	UpsertMarkerComment(ctx context.Context, n int, marker, body string) (github.Comment, error)
	Identity() string
	LockIssue(n int) func()
	Sleep(ctx context.Context, d time.Duration) error
	Recovered(r github.Recovery)
	Mask(s string) string
}

// Store reads and writes issues' records through a GitHub client.
type Store struct {
	gh Client
	// readOnly: a duplicate found is merged in what Read returns, never
	// written (explain, a check on a PR).
	readOnly bool
	// pointer, when set, keeps which comment is each issue's record
	// (pointer.go).
	pointer Pointer
}

// New is the store of the records gh's repository holds.
func New(gh Client) *Store { return &Store{gh: gh} }

// ReadOnly is a store that never writes: duplicates are merged only in what
// Read returns.
func ReadOnly(gh Client) *Store { return &Store{gh: gh, readOnly: true} }

// Identity is the login roadmap writes as.
func (s *Store) Identity() string { return s.gh.Identity() }

func (s *Store) own(cm github.Comment) bool { return strings.EqualFold(cm.Author, s.gh.Identity()) }

// Read reads issue n's record comment. With the comment's id (a job output
// handed to the next job) it reads that comment, a conditional GET; without
// it, or when that comment is gone or is not roadmap's record, it reads the
// comment the record pointer names (Pointer), and without one it lists the
// comments and takes the oldest comment by the Client's identity that holds
// a record block. A list that holds no record is read once more before the
// store says there is none: GitHub's lists are eventually consistent, and a
// Job that misses its record would start one with spend 0. Two record
// comments are merged into the older (reconcile). Marker comments by anyone
// else are named in Ignored.
func (s *Store) Read(ctx context.Context, n int, id int64) (RecordComment, error) {
	out, err := s.read(ctx, n, id)
	if err != nil || out.repair == nil || s.readOnly {
		return out, err
	}
	// A block a person broke: the repaired block is written now, so no
	// reader after this one meets the break (repair.go).
	if err := s.Write(ctx, n, &out, func(*record.Record) (record.Changes, error) { return record.Changes{}, nil }, nil); err != nil {
		return RecordComment{}, fmt.Errorf("repair issue %d record: %w", n, err)
	}
	return out, nil
}

func (s *Store) read(ctx context.Context, n int, id int64) (RecordComment, error) {
	if id > 0 {
		rc, ok, err := s.byID(ctx, n, id)
		if err != nil || ok {
			return rc, err
		}
		// Deleted (a person reset the item), or not the record: look for it.
	}
	pointed, ok, err := s.byPointer(ctx, n)
	if err != nil || ok {
		return pointed, err
	}
	out, err := s.find(ctx, n, 2)
	if err != nil {
		return out, err
	}
	out.version, out.pointerDown = pointed.version, pointed.pointerDown
	if out.ID != 0 && !s.readOnly {
		// A record the pointer did not name (made before there was one, or
		// a pointer left behind): the next fresh reader finds it by it.
		s.keepPointer(ctx, n, &out)
	}
	return out, nil
}

// find lists issue n's comments, at most looks times while none holds a
// record, and reconciles duplicates.
func (s *Store) find(ctx context.Context, n, looks int) (RecordComment, error) {
	var (
		comments []github.Comment
		err      error
	)
	for look := 0; look < looks; look++ {
		if comments, err = s.gh.Comments(ctx, n); err != nil {
			return RecordComment{}, fmt.Errorf("find issue %d record comment: %w", n, err)
		}
		if len(records(comments, s.gh.Identity())) > 0 {
			break
		}
	}
	out, err := from(n, comments, s.gh.Identity(), !s.readOnly)
	if err != nil {
		return out, err
	}
	out.listed, out.looked = out.ID != 0, out.ID == 0
	if len(out.Merged) > 0 {
		if err := s.reconcile(ctx, n, &out); err != nil {
			return RecordComment{}, err
		}
		if out.repair != nil && !s.readOnly && ctx.Value(noReconcileKey{}) == nil {
			// The merge wrote the oldest's block whole again: a repair.
			s.announce(ctx, n, &out)
		}
	}
	return out, nil
}

// NoRecord is the record of an issue that has no comment at all: nothing
// to look for, so nothing to list. The first write creates the comment.
func NoRecord() RecordComment {
	rec, _ := record.Parse("")
	return RecordComment{Record: rec}
}

// From picks issue n's record from its comments, oldest first: the oldest
// comment by identity that holds a record block. When several comments by
// identity hold one, the record is their merge (merge: spend summed, marks
// by the latest) in the oldest, and Merged names the others; Read writes
// the merge and neutralises them. Record blocks and roadmap
// markers in comments by anyone else are named in Ignored. Read applies it
// to the comments it lists; a reader of comments kept elsewhere (a saved
// demo state) applies it too, so both find the same record.
//
// From reads a broken record block as Parse does: an error that names the
// line. The writing store salvages it instead (repair.go).
func From(n int, comments []github.Comment, identity string) (RecordComment, error) {
	return from(n, comments, identity, false)
}

// from is From; with salvage, a broken record block is salvaged
// (readBlock) and RecordComment.repair says so.
func from(n int, comments []github.Comment, identity string, salvage bool) (RecordComment, error) {
	out := RecordComment{}
	for _, cm := range comments {
		if !record.HasBlock(cm.Body) {
			if m := github.MarkerName(cm.Body); m != "" && !strings.EqualFold(cm.Author, identity) {
				out.Ignored = append(out.Ignored, fmt.Sprintf("a `%s` marker in comment %d by `%s`, who is not roadmap's identity (%s): roadmap writes its own",
					m, cm.ID, cm.Author, identity))
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
		rec, repair, perr := readBlock(cm.Body, salvage)
		if perr != nil {
			return RecordComment{}, fmt.Errorf("read issue %d record comment %d: %w", n, cm.ID, perr)
		}
		out.ID, out.Record, out.repair = cm.ID, rec, repair
	}
	if out.ID == 0 {
		out.Record, _ = record.Parse("")
	}
	if recs := records(comments, identity); len(recs) > 1 {
		merged, err := mergeComments(recs, salvage)
		if err != nil {
			return RecordComment{}, fmt.Errorf("merge issue %d record comments: %w", n, err)
		}
		out.Record = merged
		for _, cm := range recs[1:] {
			out.Merged = append(out.Merged, cm.ID)
		}
	}
	return out, nil
}

// records are the comments by identity that hold a record block, oldest
// first (the order GitHub lists them in).
func records(comments []github.Comment, identity string) []github.Comment {
	var out []github.Comment
	for _, cm := range comments {
		if record.HasBlock(cm.Body) && strings.EqualFold(cm.Author, identity) {
			out = append(out, cm)
		}
	}
	return out
}

// DroppedKey is the error of the line naming k that the last repair of the
// record dropped ("" when none did).
func (rc RecordComment) DroppedKey(k record.Key) string {
	for _, u := range rc.Dropped {
		if u.Key == k && u.Err != nil {
			return u.Err.Error()
		}
	}
	return ""
}
