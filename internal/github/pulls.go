package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	gogithub "github.com/google/go-github/v66/github"
	"github.com/shurcooL/githubv4"
)

// PullRequest is a pull request as the product sees it.
type PullRequest struct {
	Number  int
	NodeID  string // the GraphQL id, for MarkReady
	HeadRef string
	HeadSHA string
	BaseRef string
	Title   string
	Body    string
	Draft   bool
	State   string // open or closed
	URL     string // the page a person opens
}

func toPR(p *gogithub.PullRequest) PullRequest {
	return PullRequest{
		Number: p.GetNumber(), NodeID: p.GetNodeID(),
		HeadRef: p.GetHead().GetRef(), HeadSHA: p.GetHead().GetSHA(), BaseRef: p.GetBase().GetRef(),
		Title: p.GetTitle(), Body: p.GetBody(), Draft: p.GetDraft(), State: p.GetState(), URL: p.GetHTMLURL(),
	}
}

// CreateDraftPR opens a draft pull request from head into base, with title
// and body masked. When head already has an open pull request — made by an
// earlier Job, or by this call's lost first attempt — that one is returned:
// a create whose answer is lost is followed by a lookup, never by a blind
// second create.
//
// GitHub API docs: https://docs.github.com/rest/pulls/pulls#create-a-pull-request
func (c *Client) CreateDraftPR(ctx context.Context, head, base, title, body string) (PullRequest, error) {
	title, body = c.mask(title), c.mask(body)
	if tooLong(body) {
		return PullRequest{}, fmt.Errorf("create draft pull request for %s: %w", head, ErrTooLong)
	}
	var why error
	for attempt := 1; attempt <= 3; attempt++ {
		p, _, err := c.gh.PullRequests.Create(c.ctx(ctx), c.owner, c.repo, &gogithub.NewPullRequest{
			Title: &title, Head: &head, Base: &base, Body: &body, Draft: gogithub.Bool(true),
		})
		err = c.fail(err)
		if err == nil {
			return toPR(p), nil
		}
		var se *StatusError
		exists := errors.As(err, &se) && se.Status == http.StatusUnprocessableEntity &&
			strings.Contains(strings.Join(se.Errors, " "), "already exists")
		if !exists && !Indeterminate(err) {
			return PullRequest{}, fmt.Errorf("create draft pull request for %s: %w", head, err)
		}
		pr, found, ferr := c.FindPR(ctx, head)
		if ferr != nil {
			return PullRequest{}, fmt.Errorf("create draft pull request for %s: %w (and looking it up: %v)", head, err, ferr)
		}
		if found {
			return pr, nil
		}
		why = err
		if c.sleep(ctx, backoff(attempt-1)) != nil {
			break
		}
	}
	return PullRequest{}, fmt.Errorf("create draft pull request for %s: %w", head, why)
}

// FindPR returns the open pull request whose head is the branch head, and
// whether there is one.
//
// GitHub API docs: https://docs.github.com/rest/pulls/pulls#list-pull-requests
func (c *Client) FindPR(ctx context.Context, head string) (PullRequest, bool, error) {
	list, _, err := c.gh.PullRequests.List(c.ctx(ctx), c.owner, c.repo, &gogithub.PullRequestListOptions{
		State: "open", Head: c.owner + ":" + head, ListOptions: gogithub.ListOptions{PerPage: 100},
	})
	if err != nil {
		return PullRequest{}, false, fmt.Errorf("find pull request for %s: %w", head, c.fail(err))
	}
	for _, p := range list {
		if p.GetHead().GetRef() == head {
			return toPR(p), true, nil
		}
	}
	return PullRequest{}, false, nil
}

// PR reads pull request n (a conditional GET).
//
// GitHub API docs: https://docs.github.com/rest/pulls/pulls#get-a-pull-request
func (c *Client) PR(ctx context.Context, n int) (PullRequest, error) {
	p, _, err := c.gh.PullRequests.Get(c.ctx(ctx), c.owner, c.repo, n)
	if err != nil {
		return PullRequest{}, fmt.Errorf("get pull request %d: %w", n, c.fail(err))
	}
	return toPR(p), nil
}

// UpdatePR sets pull request n's title and body, masked; an empty string
// leaves that field as it is.
//
// GitHub API docs: https://docs.github.com/rest/pulls/pulls#update-a-pull-request
func (c *Client) UpdatePR(ctx context.Context, n int, title, body string) (PullRequest, error) {
	var upd gogithub.PullRequest
	if title != "" {
		upd.Title = gogithub.String(c.mask(title))
	}
	if body != "" {
		upd.Body = gogithub.String(c.mask(body))
		if tooLong(*upd.Body) {
			return PullRequest{}, fmt.Errorf("update pull request %d: %w", n, ErrTooLong)
		}
	}
	if upd.Title == nil && upd.Body == nil {
		return c.PR(ctx, n)
	}
	var out PullRequest
	err := c.again(ctx, func() error {
		p, _, err := c.gh.PullRequests.Edit(c.ctx(ctx), c.owner, c.repo, n, &upd)
		if err == nil {
			out = toPR(p)
		}
		return c.fail(err)
	})
	if err != nil {
		return PullRequest{}, fmt.Errorf("update pull request %d: %w", n, err)
	}
	return out, nil
}

// MarkReady takes pull request pr out of draft with the GraphQL mutation
// markPullRequestReadyForReview (REST has no way to). pr.NodeID is used when
// set, else the pull request is read to learn it.
//
// GitHub API docs: https://docs.github.com/graphql/reference/mutations#markpullrequestreadyforreview
func (c *Client) MarkReady(ctx context.Context, pr PullRequest) error {
	return c.MarkReadyWithBody(ctx, pr, "")
}

// MarkReadyWithBody is MarkReady that also sets the pull request's body
// (masked), in the same request: one GraphQL document holding
// updatePullRequest, then markPullRequestReadyForReview (GitHub runs a
// document's mutations in order). An empty body leaves the body as it is.
//
// GitHub API docs: https://docs.github.com/graphql/reference/mutations#updatepullrequest
func (c *Client) MarkReadyWithBody(ctx context.Context, pr PullRequest, body string) error {
	return c.markReady(ctx, pr, body, "")
}

// HeadMovedError says a pull request's head was another commit than the one
// the caller checked and reviewed when GitHub marked it ready; it was put back
// to a draft.
type HeadMovedError struct {
	PR        int
	Want, Got string
}

func (e *HeadMovedError) Error() string {
	return fmt.Sprintf("pull request %d: its head is %s, not the reviewed %s: put back to a draft", e.PR, e.Got, e.Want)
}

// MarkReadyAtHead is MarkReadyWithBody for exactly head: the mutation
// answers with the pull request's head as GitHub saw it when it marked it
// ready, in the same request. When that is another commit (a push landed
// after the head was checked and reviewed), the pull request is converted
// back to a draft (convertPullRequestToDraft) and *HeadMovedError returned.
// The happy path costs no request more than MarkReadyWithBody.
//
// GitHub API docs: https://docs.github.com/graphql/reference/mutations#convertpullrequesttodraft
func (c *Client) MarkReadyAtHead(ctx context.Context, pr PullRequest, body, head string) error {
	if head == "" {
		return fmt.Errorf("mark pull request %d ready: no head to mark it ready at", pr.Number)
	}
	return c.markReady(ctx, pr, body, head)
}

// readyPayload is what the mark-ready mutation asks of the pull request.
type readyPayload struct {
	PullRequest struct {
		IsDraft githubv4.Boolean
		// HeadRefOid is the head when the mutation ran (asked always: a
		// field costs nothing).
		HeadRefOid githubv4.GitObjectID
	}
}

func (c *Client) markReady(ctx context.Context, pr PullRequest, body, head string) error {
	id := pr.NodeID
	if id == "" {
		p, err := c.PR(ctx, pr.Number)
		if err != nil {
			return fmt.Errorf("mark pull request %d ready: %w", pr.Number, err)
		}
		id = p.NodeID
	}
	body = c.mask(body)
	if tooLong(body) {
		return fmt.Errorf("mark pull request %d ready: body: %w", pr.Number, ErrTooLong)
	}
	var payload readyPayload
	input := githubv4.MarkPullRequestReadyForReviewInput{PullRequestID: githubv4.ID(id)}
	var err error
	if body == "" {
		var m struct {
			MarkPullRequestReadyForReview readyPayload `graphql:"markPullRequestReadyForReview(input: $input)"`
		}
		err = c.again(ctx, func() error {
			return c.fail(c.gql.Mutate(c.ctx(ctx), &m, input, nil))
		})
		payload = m.MarkPullRequestReadyForReview
	} else {
		var m struct {
			UpdatePullRequest struct {
				PullRequest struct {
					ID githubv4.ID
				}
			} `graphql:"updatePullRequest(input: $body)"`
			MarkPullRequestReadyForReview readyPayload `graphql:"markPullRequestReadyForReview(input: $input)"`
		}
		b := githubv4.String(body)
		vars := map[string]any{"body": githubv4.UpdatePullRequestInput{PullRequestID: githubv4.ID(id), Body: &b}}
		err = c.again(ctx, func() error {
			return c.fail(c.gql.Mutate(c.ctx(ctx), &m, input, vars))
		})
		payload = m.MarkPullRequestReadyForReview
	}
	if err != nil {
		return fmt.Errorf("mark pull request %d ready: %w", pr.Number, err)
	}
	if payload.PullRequest.IsDraft {
		return fmt.Errorf("mark pull request %d ready: GitHub still reports it as a draft", pr.Number)
	}
	if got := string(payload.PullRequest.HeadRefOid); head != "" && got != head {
		if err := c.toDraft(ctx, id); err != nil {
			return fmt.Errorf("mark pull request %d ready: its head is %s, not %s, and putting it back to a draft failed: %w", pr.Number, got, head, err)
		}
		return &HeadMovedError{PR: pr.Number, Want: head, Got: got}
	}
	return nil
}

// MarkDraft converts pull request pr back to a draft (a repair Job before
// it pushes onto a ready PR: the PR is ready again only at the new,
// reviewed head). pr.NodeID is used when set, else the pull request is read
// to learn it.
//
// GitHub API docs: https://docs.github.com/graphql/reference/mutations#convertpullrequesttodraft
func (c *Client) MarkDraft(ctx context.Context, pr PullRequest) error {
	id := pr.NodeID
	if id == "" {
		p, err := c.PR(ctx, pr.Number)
		if err != nil {
			return fmt.Errorf("convert pull request %d to a draft: %w", pr.Number, err)
		}
		id = p.NodeID
	}
	if err := c.toDraft(ctx, id); err != nil {
		return fmt.Errorf("convert pull request %d to a draft: %w", pr.Number, err)
	}
	return nil
}

// toDraft converts a pull request back to a draft.
func (c *Client) toDraft(ctx context.Context, id string) error {
	var m struct {
		ConvertPullRequestToDraft struct {
			PullRequest struct {
				IsDraft githubv4.Boolean
			}
		} `graphql:"convertPullRequestToDraft(input: $input)"`
	}
	return c.again(ctx, func() error {
		return c.fail(c.gql.Mutate(c.ctx(ctx), &m, githubv4.ConvertPullRequestToDraftInput{PullRequestID: githubv4.ID(id)}, nil))
	})
}
