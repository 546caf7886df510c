package recordstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// Pointer keeps which comment is an issue's record outside GitHub's comment
// lists: a Job's kernel keeps it in a git ref of the repository
// (kernel.RecordPointer). GitHub's lists are eventually consistent and cost
// one request per 100 comments; a ref is read and moved under the remote's
// lock, and reading it costs no GitHub API request. So a Job handed no
// comment id finds its record by the pointer (one GET of the comment,
// whatever the issue's comments number), and a create is checked against
// the pointer instead of against a list that may leave the record out.
//
// What a pointer holds is untrusted (anyone who can push may move a ref):
// the comment it names is read and checked like any id a Job is handed
// (roadmap's identity, a record block, this issue), and a pointer that names
// anything else is passed over for the list.
type Pointer interface {
	// Load is the comment id the pointer holds for issue n (0: none) and
	// its version, which Save takes back ("" when there is none).
	Load(ctx context.Context, n int) (id int64, version string, err error)
	// Save points issue n's pointer at id if it is still at version, and
	// returns its new version; ErrPointerMoved when it is not (another
	// writer saved first).
	Save(ctx context.Context, n int, id int64, version string) (string, error)
}

// ErrPointerMoved is Pointer.Save refused: the pointer is not at the
// version the writer read.
var ErrPointerMoved = errors.New("the record pointer moved")

// WithPointer is s reading and keeping its records' pointer p.
func (s *Store) WithPointer(p Pointer) *Store {
	c := *s
	c.pointer = p
	return &c
}

// byPointer reads the record the pointer names: found is false when there is
// no pointer, it names no comment, or the comment is not issue n's record.
func (s *Store) byPointer(ctx context.Context, n int) (rc RecordComment, found bool, err error) {
	if s.pointer == nil {
		return RecordComment{}, false, nil
	}
	id, ver, err := s.pointer.Load(ctx, n)
	if err != nil {
		// The pointer is a shortcut, never the only way: the list finds
		// the record without it.
		s.gh.Recovered(github.Recovery{Kind: RecoverPointer, Endpoint: fmt.Sprintf("issue %d record", n), Attempt: 1,
			Reason: "read the record pointer: " + err.Error()})
		return RecordComment{version: "", pointerDown: true}, false, nil
	}
	if id == 0 {
		return RecordComment{version: ver}, false, nil
	}
	got, ok, err := s.byID(ctx, n, id)
	if err != nil {
		return RecordComment{}, false, err
	}
	got.version = ver
	return got, ok, nil
}

// byID reads comment id as issue n's record: ok is false when it is gone
// or is not roadmap's record of issue n.
func (s *Store) byID(ctx context.Context, n int, id int64) (RecordComment, bool, error) {
	cm, err := s.gh.GetComment(ctx, id)
	switch {
	case err == nil && s.own(cm) && record.HasBlock(cm.Body) && (cm.Issue == n || cm.Issue == 0):
		rec, repair, perr := readBlock(cm.Body, !s.readOnly)
		if perr != nil {
			return RecordComment{}, false, fmt.Errorf("read issue %d record comment %d: %w", n, id, perr)
		}
		return RecordComment{ID: id, Record: rec, repair: repair}, true, nil
	case err != nil && !errors.Is(err, github.ErrNotFound):
		return RecordComment{}, false, fmt.Errorf("read issue %d record comment %d: %w", n, id, err)
	}
	return RecordComment{}, false, nil
}

// keepPointer points issue n's pointer at rc, the record a list found or a
// create made, when it names something else. It is best effort: a pointer
// left behind costs the next fresh reader a list, never a second record.
// It reports the comment the pointer holds when another writer's save came
// first (moved), for the create's check, and whether the pointer names rc
// now (kept).
func (s *Store) keepPointer(ctx context.Context, n int, rc *RecordComment) (other int64, moved, kept bool) {
	if s.pointer == nil || rc.ID == 0 || rc.pointerDown {
		return 0, false, false
	}
	ver, err := s.pointer.Save(ctx, n, rc.ID, rc.version)
	switch {
	case err == nil:
		rc.version = ver
		return 0, false, true
	case errors.Is(err, ErrPointerMoved):
		id, ver, lerr := s.pointer.Load(ctx, n)
		switch {
		case lerr != nil:
			err = errors.Join(err, lerr)
		case id == rc.ID:
			rc.version = ver
			return 0, false, true
		case id != 0:
			return id, true, false
		default:
			// Moved to none (a person deleted the ref): point it here.
			nv, serr := s.pointer.Save(ctx, n, rc.ID, ver)
			if serr == nil {
				rc.version = nv
				return 0, false, true
			}
			err = errors.Join(err, serr)
		}
	}
	s.gh.Recovered(github.Recovery{Kind: RecoverPointer, Endpoint: fmt.Sprintf("issue %d record", n), Attempt: 1,
		Reason: "keep the record pointer: " + err.Error()})
	return 0, false, false
}

// RecoverPointer is the recovery line of a record pointer that could not be
// read or kept: the store found or checked the record by listing instead.
const RecoverPointer = "record_pointer"

// lookBeforeCreate is the one more look before a record comment is made. With
// a pointer it is the pointer: a record another writer made since is named
// there, read by its id, whatever the lists show. Without one (or when it
// could not be read) the comments are listed again; after a list of the
// writer's own (rc.looked) that is a conditional list, free when nothing
// changed.
func (s *Store) lookBeforeCreate(ctx context.Context, n int, rc *RecordComment) (RecordComment, error) {
	if s.pointer != nil && !rc.pointerDown {
		found, ok, err := s.byPointer(ctx, n)
		if err != nil {
			return RecordComment{}, err
		}
		rc.version, rc.pointerDown = found.version, found.pointerDown
		if ok || !found.pointerDown {
			return found, nil
		}
	}
	return s.find(ctx, n, 1)
}

// checkCreate is the check after rc was created. With a pointer, the
// pointer is moved to rc from the version the look before read: of two
// writers that both created a record, exactly one moves it, and the other
// merges its record into the one the pointer names and neutralises its own.
// Without a pointer (or when it could not be kept) the comments are listed
// once (afterCreate).
func (s *Store) checkCreate(ctx context.Context, n int, rc *RecordComment) error {
	if s.pointer == nil || rc.pointerDown {
		return s.afterCreate(ctx, n, rc)
	}
	other, moved, kept := s.keepPointer(ctx, n, rc)
	switch {
	case kept:
		return nil
	case !moved:
		// The pointer could not be kept: the list checks instead.
		return s.afterCreate(ctx, n, rc)
	}
	theirs, ok, err := s.byID(ctx, n, other)
	if err != nil {
		return err
	}
	if !ok {
		// The pointer names no record (a deleted comment): ours is it.
		// Best effort, as keepPointer.
		if _, ver, err := s.pointer.Load(ctx, n); err == nil {
			if nv, err := s.pointer.Save(ctx, n, rc.ID, ver); err == nil {
				rc.version = nv
			}
		}
		return nil
	}
	ours, err := record.RenderComment(rc.Record)
	if err != nil {
		return err
	}
	tb, err := record.RenderComment(theirs.Record)
	if err != nil {
		return err
	}
	found, err := from(n, []github.Comment{
		{ID: other, Author: s.gh.Identity(), Body: tb, Issue: n},
		{ID: rc.ID, Author: s.gh.Identity(), Body: ours, Issue: n},
	}, s.gh.Identity(), true)
	if err != nil {
		return err
	}
	if err := s.reconcile(ctx, n, &found); err != nil {
		return err
	}
	rc.ID, rc.Record, rc.listed, rc.Merged = found.ID, found.Record, false, found.Merged
	return nil
}
