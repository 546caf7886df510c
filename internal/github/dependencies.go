package github

import (
	"context"
	"errors"
	"fmt"
)

// Dependency is an issue that blocks another (GitHub's issue dependencies,
// "blocked by").
type Dependency struct {
	// ID is the issue's id (what the dependency endpoints take), not its
	// number.
	ID     int64
	Number int
	// Repo is "owner/name": a blocker may be in another repository.
	Repo  string
	Title string
	State string // open or closed
	// StateReason is completed, not_planned, duplicate, reopened, or "".
	StateReason string
	// PullRequest: the blocker is a pull request, not an issue; Merged:
	// a merged one.
	PullRequest bool
	Merged      bool
}

// ErrDependenciesUnavailable is what BlockedBy returns, with an empty list,
// when GitHub answers the dependency endpoint 404: a GitHub without issue
// dependencies (an older GitHub Enterprise Server), the feature off, or no
// issue n. It is not "no blockers", which is an empty list and no error.
var ErrDependenciesUnavailable = errors.New("issue dependencies are not available")

// BlockedBy lists the issues issue n is blocked by, in GitHub's order: one
// request per 100 (GitHub lets an issue have 50 blockers, so one), each
// conditional, so an unchanged list is a free 304. Each blocker carries its
// state, so none is read again.
//
// GitHub API docs: https://docs.github.com/rest/issues/issue-dependencies#list-dependencies-an-issue-is-blocked-by
func (c *Client) BlockedBy(ctx context.Context, n int) ([]Dependency, error) {
	list, err := c.issueList(ctx, fmt.Sprintf("issues/%d/dependencies/blocked_by", n))
	if errors.Is(err, ErrNotFound) {
		return []Dependency{}, fmt.Errorf("list the blockers of issue %d: %w", n, ErrDependenciesUnavailable)
	}
	if err != nil {
		return nil, fmt.Errorf("list the blockers of issue %d: %w", n, err)
	}
	out := make([]Dependency, 0, len(list))
	for _, w := range list {
		repo := repoOf(w)
		if repo == "" {
			repo = c.FullName()
		}
		out = append(out, Dependency{ID: w.ID, Number: w.Number, Repo: repo, Title: w.Title, State: w.State,
			StateReason: w.StateReason, PullRequest: w.PullRequest != nil,
			Merged: w.merged()})
	}
	return out, nil
}
