package github

import (
	"context"
	"fmt"
	"net/http"
	"time"

	gogithub "github.com/google/go-github/v66/github"
)

// The reads and the write of a repair Job: what people said on the PR in
// reviews and on lines, and roadmap's reply in a line comment's thread.

// Review is one review of a pull request.
type Review struct {
	ID     int64
	Author string
	// State is APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED or
	// PENDING (a pending review is listed to its author only).
	State       string
	Body        string
	CommitID    string
	SubmittedAt time.Time
}

// ReviewComment is a review comment on a line (or a file) of a pull
// request's diff.
type ReviewComment struct {
	ID int64
	// Review is the review it was submitted in.
	Review int64
	// InReplyTo is the first comment of its thread; 0 for that one.
	InReplyTo int64
	Author    string
	Body      string
	Path      string
	// Line is the line of the diff's side it is on; 0 on a file.
	Line      int
	CommitID  string
	CreatedAt time.Time
}

func toReviewComment(rc *gogithub.PullRequestComment) ReviewComment {
	return ReviewComment{ID: rc.GetID(), Review: rc.GetPullRequestReviewID(), InReplyTo: rc.GetInReplyTo(),
		Author: rc.GetUser().GetLogin(), Body: rc.GetBody(), Path: rc.GetPath(), Line: rc.GetLine(),
		CommitID: rc.GetCommitID(), CreatedAt: rc.GetCreatedAt().Time}
}

// Feedback is what people said on a pull request, as a repair Job reads
// it: the reviews, the review comments on lines and the comments on the
// conversation, and ReadAt, when the first list was read (the server's
// Date, else the Client's clock): everything visible before it is in the
// lists.
type Feedback struct {
	ReadAt   time.Time
	Reviews  []Review
	Lines    []ReviewComment
	Comments []Comment
}

// Feedback reads pull request n's reviews, review comments and comments,
// every page of each: three requests for a PR with up to 100 of each.
func (c *Client) Feedback(ctx context.Context, n int) (Feedback, error) {
	fb := Feedback{ReadAt: c.clock.Now().UTC()}
	var err error
	if fb.Reviews, err = c.reviews(ctx, n, &fb.ReadAt); err != nil {
		return Feedback{}, err
	}
	if fb.Lines, err = c.ReviewComments(ctx, n); err != nil {
		return Feedback{}, err
	}
	if fb.Comments, err = c.Comments(ctx, n); err != nil {
		return Feedback{}, err
	}
	return fb, nil
}

// Reviews lists pull request n's reviews in the order they were made
// (all pages).
//
// GitHub API docs: https://docs.github.com/rest/pulls/reviews#list-reviews-for-a-pull-request
func (c *Client) Reviews(ctx context.Context, n int) ([]Review, error) {
	return c.reviews(ctx, n, nil)
}

// reviews lists the reviews; readAt, when given, is set to the server's
// Date of the first page when it has one.
func (c *Client) reviews(ctx context.Context, n int, readAt *time.Time) ([]Review, error) {
	opts := &gogithub.ListOptions{PerPage: 100}
	var out []Review
	for {
		page, resp, err := c.gh.PullRequests.ListReviews(c.ctx(ctx), c.owner, c.repo, n, opts)
		if err != nil {
			return nil, fmt.Errorf("list reviews of pull request %d: %w", n, c.fail(err))
		}
		if readAt != nil && opts.Page == 0 {
			if d, err := http.ParseTime(resp.Header.Get("Date")); err == nil {
				*readAt = d.UTC()
			}
		}
		for _, r := range page {
			out = append(out, Review{ID: r.GetID(), Author: r.GetUser().GetLogin(), State: r.GetState(), Body: r.GetBody(),
				CommitID: r.GetCommitID(), SubmittedAt: r.GetSubmittedAt().Time})
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

// ReviewComments lists pull request n's review comments of submitted
// reviews, by ascending id (all pages): each thread's first comment and
// its replies.
//
// GitHub API docs: https://docs.github.com/rest/pulls/comments#list-review-comments-on-a-pull-request
func (c *Client) ReviewComments(ctx context.Context, n int) ([]ReviewComment, error) {
	opts := &gogithub.PullRequestListCommentsOptions{ListOptions: gogithub.ListOptions{PerPage: 100}}
	var out []ReviewComment
	for {
		page, resp, err := c.gh.PullRequests.ListComments(c.ctx(ctx), c.owner, c.repo, n, opts)
		if err != nil {
			return nil, fmt.Errorf("list review comments of pull request %d: %w", n, c.fail(err))
		}
		for _, rc := range page {
			out = append(out, toReviewComment(rc))
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

// ReplyToReviewComment replies, masked, in the thread of review comment
// id of pull request n: id must be a thread's first comment (GitHub has
// no replies to replies). ErrNotFound: no such comment on the PR, or a
// reply. The reply is not resent on an answer that was lost: a second
// reply would say the same twice in the thread.
//
// GitHub API docs: https://docs.github.com/rest/pulls/comments#create-a-reply-for-a-review-comment
func (c *Client) ReplyToReviewComment(ctx context.Context, n int, id int64, body string) (ReviewComment, error) {
	body = c.mask(body)
	if tooLong(body) {
		return ReviewComment{}, fmt.Errorf("reply to review comment %d: %w", id, ErrTooLong)
	}
	u := fmt.Sprintf("repos/%s/%s/pulls/%d/comments/%d/replies", c.owner, c.repo, n, id)
	req, err := c.gh.NewRequest(http.MethodPost, u, struct {
		Body string `json:"body"`
	}{body})
	if err != nil {
		return ReviewComment{}, fmt.Errorf("reply to review comment %d: %w", id, err)
	}
	var rc gogithub.PullRequestComment
	if _, err := c.gh.Do(c.ctx(ctx), req, &rc); err != nil {
		return ReviewComment{}, fmt.Errorf("reply to review comment %d: %w", id, c.fail(err))
	}
	return toReviewComment(&rc), nil
}
