package github

import (
	"context"
	"fmt"

	gogithub "github.com/google/go-github/v66/github"
)

// LabelledIssues lists the open issues with label, oldest first (by
// number), at most 100: one request. Pull requests, which the endpoint also
// lists, are left out.
//
// GitHub API docs: https://docs.github.com/rest/issues/issues#list-repository-issues
func (c *Client) LabelledIssues(ctx context.Context, label string) ([]Issue, error) {
	list, _, err := c.gh.Issues.ListByRepo(c.ctx(ctx), c.owner, c.repo, &gogithub.IssueListByRepoOptions{
		State: "open", Labels: []string{label}, Sort: "created", Direction: "asc",
		ListOptions: gogithub.ListOptions{PerPage: 100},
	})
	if err = c.fail(err); err != nil {
		return nil, fmt.Errorf("list the issues labelled %s: %w", label, err)
	}
	var out []Issue
	for _, is := range list {
		if is.IsPullRequest() {
			continue
		}
		out = append(out, toIssue(is))
	}
	return out, nil
}
