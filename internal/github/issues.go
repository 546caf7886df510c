package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	gogithub "github.com/google/go-github/v66/github"
)

// Issue is an issue as the product sees it.
type Issue struct {
	Number    int
	Title     string
	Body      string
	State     string // open or closed
	Labels    []string
	Author    string
	UpdatedAt time.Time
	// Comments is how many comments the issue has, as GitHub counts them.
	Comments int
	// DependenciesKnown: GitHub said how many issues block this one
	// (issue_dependencies_summary), BlockedByTotal, open and closed. A
	// GitHub without issue dependencies says nothing: read BlockedBy to know.
	DependenciesKnown bool
	BlockedByTotal    int
	// SubIssues is how many native sub-issues the issue has
	// (sub_issues_summary.total, read by Issue; 0 when GitHub did not say).
	SubIssues int
}

// Comment is an issue comment.
type Comment struct {
	ID        int64
	Body      string
	Author    string
	CreatedAt time.Time
	UpdatedAt time.Time
	// Issue is the issue the comment is on, from its issue_url; 0 when
	// GitHub did not say.
	Issue int
}

func toIssue(is *gogithub.Issue) Issue {
	out := Issue{
		Number: is.GetNumber(), Title: is.GetTitle(), Body: is.GetBody(), State: is.GetState(),
		Author: is.GetUser().GetLogin(), UpdatedAt: is.GetUpdatedAt().Time, Comments: is.GetComments(),
	}
	for _, l := range is.Labels {
		out.Labels = append(out.Labels, l.GetName())
	}
	return out
}

func toComment(c *gogithub.IssueComment) Comment {
	return Comment{ID: c.GetID(), Body: c.GetBody(), Author: c.GetUser().GetLogin(), CreatedAt: c.GetCreatedAt().Time,
		UpdatedAt: c.GetUpdatedAt().Time, Issue: issueOf(c)}
}

// GetComment reads comment id. The read is conditional: when the comment
// has not changed since this Client last read it, GitHub answers 304 and
// the request is free. ErrNotFound: the comment is gone.
//
// GitHub API docs: https://docs.github.com/rest/issues/comments#get-an-issue-comment
func (c *Client) GetComment(ctx context.Context, id int64) (Comment, error) {
	cm, _, err := c.gh.Issues.GetComment(c.ctx(ctx), c.owner, c.repo, id)
	if err = c.fail(err); err != nil {
		return Comment{}, fmt.Errorf("get comment %d: %w", id, err)
	}
	return toComment(cm), nil
}

// Issue reads issue n. The read is conditional: when the issue has not
// changed since this Client last read or wrote it, GitHub answers 304 and
// the request is free.
//
// GitHub API docs: https://docs.github.com/rest/issues/issues#get-an-issue
func (c *Client) Issue(ctx context.Context, n int) (Issue, error) {
	req, err := c.gh.NewRequest(http.MethodGet, fmt.Sprintf("repos/%s/%s/issues/%d", c.owner, c.repo, n), nil)
	if err != nil {
		return Issue{}, err
	}
	// go-github v66's Issue has no issue_dependencies_summary.
	var w struct {
		gogithub.Issue
		Deps *struct {
			TotalBlockedBy int `json:"total_blocked_by"`
		} `json:"issue_dependencies_summary"`
		Subs *struct {
			Total int `json:"total"`
		} `json:"sub_issues_summary"`
	}
	if _, err := c.gh.Do(c.ctx(ctx), req, &w); err != nil {
		return Issue{}, fmt.Errorf("get issue %d: %w", n, c.fail(err))
	}
	is := toIssue(&w.Issue)
	if w.Deps != nil {
		is.DependenciesKnown, is.BlockedByTotal = true, w.Deps.TotalBlockedBy
	}
	if w.Subs != nil {
		is.SubIssues = w.Subs.Total
	}
	return is, nil
}

// Comments lists every comment of issue n, oldest first (all pages).
//
// GitHub API docs: https://docs.github.com/rest/issues/comments#list-issue-comments
func (c *Client) Comments(ctx context.Context, n int) ([]Comment, error) {
	list, err := c.listComments(ctx, n)
	if err != nil {
		return nil, fmt.Errorf("list comments of issue %d: %w", n, err)
	}
	out := make([]Comment, 0, len(list))
	for _, cm := range list {
		out = append(out, toComment(cm))
	}
	return out, nil
}

func (c *Client) listComments(ctx context.Context, n int) ([]*gogithub.IssueComment, error) {
	opts := &gogithub.IssueListCommentsOptions{ListOptions: gogithub.ListOptions{PerPage: 100}}
	var all []*gogithub.IssueComment
	for {
		page, resp, err := c.gh.Issues.ListComments(c.ctx(ctx), c.owner, c.repo, n, opts)
		if err != nil {
			return nil, c.fail(err)
		}
		all = append(all, page...)
		if resp.NextPage == 0 {
			return all, nil
		}
		opts.Page = resp.NextPage
	}
}

// hasLine reports whether body has a line equal to marker (spaces trimmed).
func hasLine(body, marker string) bool {
	for _, line := range strings.Split(body, "\n") {
		if strings.TrimSpace(line) == marker {
			return true
		}
	}
	return false
}

// UpsertMarkerComment keeps one comment on issue n identified by a marker
// line (an HTML comment such as "<!-- roadmap:status -->"): it updates that
// comment in place, or creates it when there is none. Only a comment by the
// Client's identity is roadmap's: one with the marker by anyone else is
// neither updated nor read (a token with write access could edit it, and
// would then write roadmap's text into someone else's comment), and
// roadmap makes its own. The comments are read once per Client (all pages)
// and the comment's id is remembered.
//
// body gets the marker as its first line when it lacks it, and is masked.
// An empty body, or "-", is refused: a comment that says nothing replaces
// one that did. A create whose answer is lost is never blindly repeated:
// the comments are read again and the one that landed is used.
//
// GitHub API docs: https://docs.github.com/rest/issues/comments#update-an-issue-comment
// and https://docs.github.com/rest/issues/comments#create-an-issue-comment
func (c *Client) UpsertMarkerComment(ctx context.Context, n int, marker, body string) (Comment, error) {
	marker = strings.TrimSpace(marker)
	if marker == "" || strings.Contains(marker, "\n") {
		return Comment{}, fmt.Errorf("upsert comment on issue %d: the marker must be one non-empty line", n)
	}
	if t := strings.TrimSpace(body); t == "" || t == "-" {
		return Comment{}, fmt.Errorf("upsert comment %s on issue %d: %w", marker, n, ErrEmptyComment)
	}
	if !hasLine(body, marker) {
		body = marker + "\n" + body
	}
	body = c.mask(body)
	if !hasLine(body, marker) {
		return Comment{}, fmt.Errorf("upsert comment %s on issue %d: masking removed the marker line", marker, n)
	}
	if tooLong(body) {
		return Comment{}, fmt.Errorf("upsert comment %s on issue %d: %w", marker, n, ErrTooLong)
	}
	unlock := c.lockIssue(-n) // comments have their own lock, apart from the body's
	defer unlock()
	key := markerKey{n, marker}
	c.mu.Lock()
	st, known := c.markers[key]
	none := c.uncommented[n]
	c.mu.Unlock()
	id := st.id
	if known && id != 0 && st.comment.Body == body {
		// Already there, as this Client last wrote it: nothing to spend.
		return st.comment, nil
	}
	if !known && !none {
		found, err := c.findMarker(ctx, n, marker)
		if err != nil {
			return Comment{}, fmt.Errorf("upsert comment %s on issue %d: find: %w", marker, n, err)
		}
		id = found.GetID()
		if found != nil && found.GetBody() == body {
			return c.remember(key, toComment(found)), nil
		}
	}
	var why error
	for attempt := 1; attempt <= 3; attempt++ {
		if id != 0 {
			cm, _, err := c.gh.Issues.EditComment(c.ctx(ctx), c.owner, c.repo, id, &gogithub.IssueComment{Body: &body})
			err = c.fail(err)
			switch {
			case err == nil:
				return c.remember(key, toComment(cm)), nil
			case errors.Is(err, ErrNotFound):
				id = 0 // deleted by someone: create it again
				continue
			case Indeterminate(err):
				// Setting a body is the same however often it lands: check, then go again.
				why = err
				if got, _, gerr := c.gh.Issues.GetComment(c.ctx(ctx), c.owner, c.repo, id); gerr == nil && got.GetBody() == body {
					return c.remember(key, toComment(got)), nil
				}
				if c.sleep(ctx, backoff(attempt-1)) != nil {
					return Comment{}, fmt.Errorf("upsert comment %s on issue %d: update: %w", marker, n, err)
				}
				continue
			default:
				return Comment{}, fmt.Errorf("upsert comment %s on issue %d: update: %w", marker, n, err)
			}
		}
		cm, _, err := c.gh.Issues.CreateComment(c.ctx(ctx), c.owner, c.repo, n, &gogithub.IssueComment{Body: &body})
		err = c.fail(err)
		if err == nil {
			return c.remember(key, toComment(cm)), nil
		}
		if !Indeterminate(err) {
			return Comment{}, fmt.Errorf("upsert comment %s on issue %d: create: %w", marker, n, err)
		}
		// The create may have landed: read the comments again rather than
		// post a second copy.
		why = err
		if c.sleep(ctx, backoff(attempt-1)) != nil {
			return Comment{}, fmt.Errorf("upsert comment %s on issue %d: create: %w", marker, n, err)
		}
		found, ferr := c.findMarker(ctx, n, marker)
		if ferr != nil {
			return Comment{}, fmt.Errorf("upsert comment %s on issue %d: create: %w (and finding it again: %v)", marker, n, err, ferr)
		}
		if found != nil {
			id = found.GetID()
			if found.GetBody() == body {
				return c.remember(key, toComment(found)), nil
			}
		}
	}
	return Comment{}, fmt.Errorf("upsert comment %s on issue %d: not written after 3 attempts: %w", marker, n, why)
}

// MarkerComment reads the comment UpsertMarkerComment keeps on issue n with
// marker: found is false when there is none. As there, only a comment by the
// Client's identity counts. The comments are listed once (all pages), and
// none when IssueState read the issue with no comment; a later upsert of
// the same marker lists them no more.
func (c *Client) MarkerComment(ctx context.Context, n int, marker string) (cm Comment, found bool, err error) {
	key := markerKey{n, strings.TrimSpace(marker)}
	c.mu.Lock()
	st, known := c.markers[key]
	none := c.uncommented[n]
	c.mu.Unlock()
	switch {
	case known:
		return st.comment, st.id != 0, nil
	case none:
		return Comment{}, false, nil
	}
	got, err := c.findMarker(ctx, n, key.marker)
	if err != nil {
		return Comment{}, false, fmt.Errorf("read comment %s on issue %d: %w", key.marker, n, err)
	}
	if got == nil {
		c.mu.Lock()
		c.markers[key] = markerState{}
		c.mu.Unlock()
		return Comment{}, false, nil
	}
	return c.remember(key, toComment(got)), true, nil
}

func (c *Client) remember(key markerKey, cm Comment) Comment {
	c.mu.Lock()
	c.markers[key] = markerState{id: cm.ID, comment: cm}
	c.mu.Unlock()
	return cm
}

// findMarker returns the oldest comment by the Client's identity with the
// marker line, or nil. A comment with the marker by anyone else is not
// roadmap's and is passed over.
func (c *Client) findMarker(ctx context.Context, n int, marker string) (*gogithub.IssueComment, error) {
	list, err := c.listComments(ctx, n)
	if err != nil {
		return nil, err
	}
	for _, cm := range list {
		if c.ownComment(cm) && hasLine(cm.GetBody(), marker) {
			return cm, nil
		}
	}
	return nil, nil
}

// MarkerName is the first roadmap marker line of body as a note names it
// (markerName), "" when body has none.
func MarkerName(body string) string {
	if m := markerOf(body); m != "" {
		return markerName(m)
	}
	return ""
}

// markerOf returns the first roadmap marker line of body ("<!-- roadmap:…
// -->" alone on a line, outside the record block), "" when it has none.
func markerOf(body string) string {
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "<!-- roadmap:") && strings.HasSuffix(line, "-->") {
			return line
		}
	}
	return ""
}

// markerName is a marker line as a note names it: its words, when they are
// short and plain (the line is anyone's text), else a generic name.
func markerName(marker string) string {
	name := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(marker, "<!--"), "-->"))
	if len(name) > 60 || strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:._= -") != "" {
		return "roadmap"
	}
	return name
}

// AddLabels adds labels to issue (or pull request) n; GitHub creates labels
// that do not exist yet. Adding is the same however often it lands, so a
// write whose answer was lost is simply sent again.
//
// GitHub API docs: https://docs.github.com/rest/issues/labels#add-labels-to-an-issue
func (c *Client) AddLabels(ctx context.Context, n int, labels ...string) error {
	if len(labels) == 0 {
		return nil
	}
	err := c.again(ctx, func() error {
		_, _, err := c.gh.Issues.AddLabelsToIssue(c.ctx(ctx), c.owner, c.repo, n, labels)
		return c.fail(err)
	})
	if err != nil {
		return fmt.Errorf("add labels %v to issue %d: %w", labels, n, err)
	}
	return nil
}

// RemoveLabel removes a label from issue n. A label that is not there is
// not an error (GitHub answers 404 for it).
//
// GitHub API docs: https://docs.github.com/rest/issues/labels#remove-a-label-from-an-issue
func (c *Client) RemoveLabel(ctx context.Context, n int, label string) error {
	_, err := c.gh.Issues.RemoveLabelForIssue(c.ctx(ctx), c.owner, c.repo, n, url.PathEscape(label))
	err = c.fail(err)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("remove label %q from issue %d: %w", label, n, err)
	}
	return nil
}

// CloseIssue closes issue n with reason (completed or not_planned). Closing
// a closed issue changes nothing, so a retry after a lost answer is safe.
// GitHub starts no workflow run for a close by GITHUB_TOKEN.
//
// GitHub API docs: https://docs.github.com/rest/issues/issues#update-an-issue
func (c *Client) CloseIssue(ctx context.Context, n int, reason string) error {
	state := "closed"
	_, _, err := c.gh.Issues.Edit(c.ctx(ctx), c.owner, c.repo, n, &gogithub.IssueRequest{State: &state, StateReason: &reason})
	if err = c.fail(err); err != nil {
		return fmt.Errorf("close issue %d: %w", n, err)
	}
	return nil
}

// Permission returns a user's role on the repository: admin, maintain,
// write, triage, read or none (a user GitHub does not know is none). It is
// how a reply to a needs-input question is checked for write access.
//
// GitHub API docs: https://docs.github.com/rest/collaborators/collaborators#get-repository-permissions-for-a-user
func (c *Client) Permission(ctx context.Context, user string) (string, error) {
	p, _, err := c.gh.Repositories.GetPermissionLevel(c.ctx(ctx), c.owner, c.repo, url.PathEscape(user))
	err = c.fail(err)
	if errors.Is(err, ErrNotFound) {
		return "none", nil
	}
	if err != nil {
		return "", fmt.Errorf("get permission of %s: %w", user, err)
	}
	if r := p.GetRoleName(); r != "" {
		return r, nil
	}
	if lvl := p.GetPermission(); lvl != "" {
		return lvl, nil
	}
	return "none", nil
}

// NewThread tells the Client that issue or PR n was just created by it and
// holds no comment with marker yet, so the first UpsertMarkerComment posts
// without listing the comments first.
func (c *Client) NewThread(n int, marker string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := markerKey{n, marker}
	if _, known := c.markers[key]; !known {
		c.markers[key] = markerState{}
	}
}
