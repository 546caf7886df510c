package github

import (
	"context"
	"fmt"

	gogithub "github.com/google/go-github/v66/github"
)

// The writes the dashboard issue needs (internal/dashboard): its body, the
// issue itself (roadmap init) and the alert comments, found again by id.

// RateUsed is the primary limit of resource ("core" for REST, "graphql")
// as GitHub's last answer to this Client gave it; false before any answer
// carried the headers.
func (c *Client) RateUsed(resource string) (RateUse, bool) { return c.limits.used(resource) }

// UpdateIssueBody replaces issue n's body with body, masked first. The
// answer is kept as the issue's representation, so a read right after it
// costs what GitHub charges for one (a write's ETag is not the GET's).
func (c *Client) UpdateIssueBody(ctx context.Context, n int, body string) error {
	body = c.mask(body)
	if tooLong(body) {
		return fmt.Errorf("update issue %d body: %w", n, ErrTooLong)
	}
	unlock := c.lockIssue(n)
	defer unlock()
	_, _, err := c.gh.Issues.Edit(c.ctx(ctx), c.owner, c.repo, n, &gogithub.IssueRequest{Body: &body})
	if err = c.fail(err); err != nil {
		return fmt.Errorf("update issue %d body: %w", n, err)
	}
	return nil
}

// CreateIssue opens an issue with the labels (created by GitHub when the
// repository lacks them), title and body masked.
func (c *Client) CreateIssue(ctx context.Context, title, body string, labels []string) (Issue, error) {
	title, body = c.mask(title), c.mask(body)
	if tooLong(body) {
		return Issue{}, fmt.Errorf("create issue %q: %w", title, ErrTooLong)
	}
	req := &gogithub.IssueRequest{Title: &title, Body: &body}
	if len(labels) > 0 {
		req.Labels = &labels
	}
	is, _, err := c.gh.Issues.Create(c.ctx(ctx), c.owner, c.repo, req)
	if err = c.fail(err); err != nil {
		return Issue{}, fmt.Errorf("create issue %q: %w", title, err)
	}
	return toIssue(is), nil
}

// CreateComment adds a comment to issue n, masked.
func (c *Client) CreateComment(ctx context.Context, n int, body string) (Comment, error) {
	body = c.mask(body)
	if tooLong(body) {
		return Comment{}, fmt.Errorf("comment on issue %d: %w", n, ErrTooLong)
	}
	cm, _, err := c.gh.Issues.CreateComment(c.ctx(ctx), c.owner, c.repo, n, &gogithub.IssueComment{Body: &body})
	if err = c.fail(err); err != nil {
		return Comment{}, fmt.Errorf("comment on issue %d: %w", n, err)
	}
	return toComment(cm), nil
}

// EditComment replaces comment id's body, masked. ErrNotFound: the comment
// is gone (a person deleted it).
func (c *Client) EditComment(ctx context.Context, id int64, body string) (Comment, error) {
	body = c.mask(body)
	if tooLong(body) {
		return Comment{}, fmt.Errorf("edit comment %d: %w", id, ErrTooLong)
	}
	cm, _, err := c.gh.Issues.EditComment(c.ctx(ctx), c.owner, c.repo, id, &gogithub.IssueComment{Body: &body})
	if err = c.fail(err); err != nil {
		return Comment{}, fmt.Errorf("edit comment %d: %w", id, err)
	}
	return toComment(cm), nil
}
