package github

import (
	"context"
	"fmt"
	"time"

	gogithub "github.com/google/go-github/v66/github"
)

// RepoComments reads the repository's issue comments updated at or after
// since (every comment for a zero since) with GitHub's repository-wide
// comment list, newest first, and keeps those keep accepts: one request per
// 100 comments, each page a conditional GET (a page that has not changed
// since this Client last read it is a free 304). A comment listed twice
// (GitHub keeps listing while comments change: one updated meanwhile moves
// to the front) is kept once; one updated between pages may, rarely, be
// missed, and the next read finds it. Which of them are records is the
// record store's to say (recordstore.Records).
//
// GitHub API docs: https://docs.github.com/rest/issues/comments#list-issue-comments-for-a-repository
func (c *Client) RepoComments(ctx context.Context, since time.Time, keep func(Comment) bool) ([]Comment, error) {
	opts := &gogithub.IssueListCommentsOptions{
		Sort: gogithub.String("updated"), Direction: gogithub.String("desc"),
		ListOptions: gogithub.ListOptions{PerPage: 100},
	}
	if !since.IsZero() {
		s := since.UTC().Truncate(time.Second)
		opts.Since = &s
	}
	var out []Comment
	seen := map[int64]bool{}
	for {
		// Number 0 is the repository-wide list in go-github.
		page, resp, err := c.gh.Issues.ListComments(c.ctx(ctx), c.owner, c.repo, 0, opts)
		if err = c.fail(err); err != nil {
			return nil, fmt.Errorf("list the repository's comments: %w", err)
		}
		for _, cm := range page {
			if seen[cm.GetID()] {
				continue
			}
			seen[cm.GetID()] = true
			if co := toComment(cm); keep(co) {
				out = append(out, co)
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return out, nil
}
