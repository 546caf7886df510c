package explain

import (
	"context"
	"errors"
	"fmt"

	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/inputerr"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/recordstore"
)

// issueReader is what Explain reads: GitHub (*github.Client) or a saved
// state (*savedState).
type issueReader interface {
	Issue(ctx context.Context, n int) (github.Issue, error)
	Record(ctx context.Context, n int, id int64) (recordstore.RecordComment, error)
	Identity() string
}

// live reads GitHub: the record through the store, which never writes for
// explain (a duplicate is merged only in what it returns).
type live struct {
	*github.Client
	store *recordstore.Store
}

func (l live) Record(ctx context.Context, n int, id int64) (recordstore.RecordComment, error) {
	return l.store.Read(ctx, n, id)
}

// InputError is a failure the caller can fix: an issue that does not exist
// or has no record, a trace file that does not read. The verb exits 2 on it
// and 3 on anything else.
type InputError = inputerr.Error

func inputErrorf(format string, args ...any) error {
	return &InputError{Err: fmt.Errorf(format, args...)}
}

// Options says what to explain and where to read it.
type Options struct {
	Issue int
	// GitHub reads the issue and its record comment; nil (and no State)
	// explains from the trace file alone (offline, no record).
	GitHub *github.Client
	// State reads the issue and its comments from a saved fake GitHub
	// state instead (a kept demo's): the state file, or a directory holding
	// StateFile. It wins over GitHub.
	State string
	// Repository names the repository in messages ("owner/repo").
	Repository string
	// Trace adds the record's bounded trace copy; TraceFile reads the events
	// from a JSONL artifact instead.
	Trace     bool
	TraceFile string
}

// Explain reads what ran for an issue: the issue once (its title), its
// comments once (the record is roadmap's own comment, DESIGN §3; a record
// block in the body is not read), and nothing else from GitHub. The note is
// for a person (stderr): set when a trace was asked for and there is none.
func Explain(ctx context.Context, o Options) (out Output, note string, err error) {
	var fromFile *Traced
	if o.TraceFile != "" {
		if fromFile, err = ReadTraceFile(o.TraceFile); err != nil {
			return Output{}, "", &InputError{Err: err}
		}
	}
	var gh issueReader
	switch {
	case o.State != "":
		st, err := readState(o.State)
		if err != nil {
			return Output{}, "", &InputError{Err: err}
		}
		gh = st
	case o.GitHub != nil:
		gh = live{o.GitHub, recordstore.ReadOnly(o.GitHub)}
	}
	if gh == nil {
		if fromFile == nil {
			return Output{}, "", inputErrorf("no repository to read and no trace file: pass -R OWNER/REPO, --state DIR or --trace-file FILE")
		}
		out = Output{Issue: o.Issue, Jobs: []Job{}, Trace: fromFile,
			Waits: Waits{What: "not read: no repository or saved state was given, so the record was not read (this is the trace file alone)"}}
		return out, "", nil
	}
	is, err := gh.Issue(ctx, o.Issue)
	if err != nil {
		if errors.Is(err, github.ErrNotFound) {
			return Output{}, "", inputErrorf("issue #%d not found in %s", o.Issue, o.Repository)
		}
		return Output{}, "", err
	}
	rc, err := gh.Record(ctx, o.Issue, 0)
	if err != nil {
		return Output{}, "", &InputError{Err: err}
	}
	rec := rc.Record
	if len(rec.Keys()) == 0 {
		why := "nothing has run for it"
		if record.HasBlock(is.Body) || len(rc.Ignored) > 0 {
			// Say so, or a record written before it moved into roadmap's
			// comment (or a forged one) reads as an item nothing ran for.
			why += fmt.Sprintf(" (a record block in the issue body or in a comment not by %s is ignored: the record is roadmap's own comment)", gh.Identity())
		}
		return Output{}, "", inputErrorf("issue #%d has no roadmap record: %s", o.Issue, why)
	}
	out = FromRecord(o.Issue, is.Title, rec)
	switch {
	case fromFile != nil:
		out.Trace = fromFile
	case o.Trace:
		if out.Trace, err = RecordTrace(rec); err != nil {
			return Output{}, "", inputErrorf("issue #%d: %w", o.Issue, err)
		}
		if out.Trace == nil {
			note = fmt.Sprintf("issue #%d has no trace in its record (implement.trace or stage.trace): no Job has written its last mark yet; a killed Job's trace is in its artifact (--trace-file)", o.Issue)
		}
	}
	return out, note, nil
}
