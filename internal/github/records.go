package github

import (
	"context"
	"fmt"
	"sort"
	"time"

	gogithub "github.com/google/go-github/v66/github"

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
	// one issue fails on it (ReadRecord); a reader of every item reports it
	// and goes on with the others.
	Problem string
}

// Records reads the record of every item whose record comment changed at
// or after since (every item for a zero since), with GitHub's
// repository-wide comment list: one request per 100 comments updated since
// then, newest first. Each list page is a conditional GET, so a page that
// has not changed since this Client last read it is a free 304.
//
// A comment is a record by the rule RecordFrom applies to one issue's
// comments: written by the Client's identity and holding a record block; a
// record block in anyone else's comment is not a record. When an issue has
// two record comments by roadmap, the oldest is its record, as RecordFrom
// picks — of those the list returned: a duplicate not updated since since
// is not seen. The issue is read from the comment's issue_url.
//
// GitHub keeps listing while comments change: a comment updated while the
// pages are read moves to the front, so it can be seen twice (kept once) or,
// rarely, not at all; the next read finds it.
//
// GitHub API docs: https://docs.github.com/rest/issues/comments#list-issue-comments-for-a-repository
func (c *Client) Records(ctx context.Context, since time.Time) ([]ItemRecord, error) {
	opts := &gogithub.IssueListCommentsOptions{
		Sort: gogithub.String("updated"), Direction: gogithub.String("desc"),
		ListOptions: gogithub.ListOptions{PerPage: 100},
	}
	if !since.IsZero() {
		s := since.UTC().Truncate(time.Second)
		opts.Since = &s
	}
	type found struct {
		cm      *gogithub.IssueComment
		created time.Time
	}
	oldest := map[int]found{}
	seen := map[int64]bool{}
	for {
		// Number 0 is the repository-wide list in go-github.
		page, resp, err := c.gh.Issues.ListComments(c.ctx(ctx), c.owner, c.repo, 0, opts)
		if err = c.fail(err); err != nil {
			return nil, fmt.Errorf("list the repository's comments: %w", err)
		}
		for _, cm := range page {
			if seen[cm.GetID()] || !c.ownComment(cm) || !record.HasBlock(cm.GetBody()) {
				continue
			}
			seen[cm.GetID()] = true
			n := issueOf(cm)
			if n <= 0 {
				continue
			}
			f := found{cm: cm, created: cm.GetCreatedAt().Time}
			if o, ok := oldest[n]; !ok || f.created.Before(o.created) ||
				(f.created.Equal(o.created) && cm.GetID() < o.cm.GetID()) {
				oldest[n] = f
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	out := make([]ItemRecord, 0, len(oldest))
	for n, f := range oldest {
		ir := ItemRecord{Issue: n, CommentID: f.cm.GetID(), UpdatedAt: f.cm.GetUpdatedAt().Time}
		rec, err := record.Parse(f.cm.GetBody())
		if err != nil {
			ir.Problem = fmt.Sprintf("issue %d record comment %d: %v", n, ir.CommentID, err)
		} else {
			ir.Record = rec
		}
		out = append(out, ir)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Issue < out[j].Issue })
	return out, nil
}
