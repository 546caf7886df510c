package recordstore

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// ItemRecord is one item's record as found in the repository-wide comment
// list: the record comment of issue Issue.
type ItemRecord struct {
	Issue     int
	CommentID int64
	// Record is the comment parsed; nil when Problem is set.
	Record *record.Record
	// UpdatedAt is when the comment last changed (GitHub's updated_at).
	UpdatedAt time.Time
	// Problem says why the record comment does not parse. The reader of
	// one issue repairs it (Store.Read); a reader of every item reports it
	// and goes on with the others.
	Problem string
}

// Lister is what Records asks of GitHub: the repository's comments updated
// since a time (*github.Client).
type Lister interface {
	RepoComments(ctx context.Context, since time.Time, keep func(github.Comment) bool) ([]github.Comment, error)
	Identity() string
}

// Records reads the record of every item whose record comment changed at
// or after since (every item for a zero since), with the repository-wide
// comment list: one request per 100 comments updated since then, a free 304
// for a page that has not changed (the dashboard and metrics read this way).
//
// A comment is a record by the rule the store applies to one issue's
// comments: written by roadmap's identity and holding a record block; a
// record block in anyone else's comment is not a record. When an issue has
// two record comments, the older is its record, the one the store merges
// into (of those the list returned: a duplicate not updated since since is
// not seen). The issue is the comment's issue_url's. Read only: a record
// that does not parse is reported in Problem, never repaired from here.
func Records(ctx context.Context, gh Lister, since time.Time) ([]ItemRecord, error) {
	identity := gh.Identity()
	comments, err := gh.RepoComments(ctx, since, func(c github.Comment) bool {
		return strings.EqualFold(c.Author, identity) && c.Issue > 0 && record.HasBlock(c.Body)
	})
	if err != nil {
		return nil, err
	}
	oldest := map[int]github.Comment{}
	for _, c := range comments {
		if o, ok := oldest[c.Issue]; !ok || c.CreatedAt.Before(o.CreatedAt) || c.CreatedAt.Equal(o.CreatedAt) && c.ID < o.ID {
			oldest[c.Issue] = c
		}
	}
	out := make([]ItemRecord, 0, len(oldest))
	for n, c := range oldest {
		ir := ItemRecord{Issue: n, CommentID: c.ID, UpdatedAt: c.UpdatedAt}
		if rec, err := record.Parse(c.Body); err != nil {
			ir.Problem = fmt.Sprintf("issue %d record comment %d: %v", n, c.ID, err)
		} else {
			ir.Record = rec
		}
		out = append(out, ir)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Issue < out[j].Issue })
	return out, nil
}
