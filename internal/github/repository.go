package github

import (
	"context"
	"fmt"
	"net/http"

	gogithub "github.com/google/go-github/v66/github"
)

// Repository is what roadmap init reads about the repository.
type Repository struct {
	DefaultBranch string
	Private       bool
	HTMLURL       string
}

// Repository reads the repository.
// https://docs.github.com/rest/repos/repos#get-a-repository
func (c *Client) Repository(ctx context.Context) (Repository, error) {
	r, _, err := c.gh.Repositories.Get(c.ctx(ctx), c.owner, c.repo)
	if err = c.fail(err); err != nil {
		return Repository{}, fmt.Errorf("get repository %s/%s: %w", c.owner, c.repo, err)
	}
	return Repository{DefaultBranch: r.GetDefaultBranch(), Private: r.GetPrivate(), HTMLURL: r.GetHTMLURL()}, nil
}

// WorkflowPermissions is the repository's Actions setting "Workflow
// permissions".
type WorkflowPermissions struct {
	// Default is the GITHUB_TOKEN's default permissions: "read" or "write".
	Default string
	// CanApprove is "Allow GitHub Actions to create and approve pull
	// requests": without it a workflow's token cannot open a pull request.
	CanApprove bool
}

// WorkflowPermissions reads the Actions workflow permissions. The token needs
// administration read; a 403 comes back as *AuthError for the caller to
// report as unknown. go-github v66 has no method for it.
// https://docs.github.com/rest/actions/permissions#get-default-workflow-permissions-for-a-repository
func (c *Client) WorkflowPermissions(ctx context.Context) (WorkflowPermissions, error) {
	req, err := c.gh.NewRequest(http.MethodGet, fmt.Sprintf("repos/%s/%s/actions/permissions/workflow", c.owner, c.repo), nil)
	if err != nil {
		return WorkflowPermissions{}, err
	}
	var out struct {
		Default    string `json:"default_workflow_permissions"`
		CanApprove bool   `json:"can_approve_pull_request_reviews"`
	}
	if _, err := c.gh.Do(c.ctx(ctx), req, &out); err != nil {
		return WorkflowPermissions{}, fmt.Errorf("get workflow permissions: %w", c.fail(err))
	}
	return WorkflowPermissions{Default: out.Default, CanApprove: out.CanApprove}, nil
}

// LabelNames lists the repository's labels by name.
// https://docs.github.com/rest/issues/labels#list-labels-for-a-repository
func (c *Client) LabelNames(ctx context.Context) ([]string, error) {
	opts := &gogithub.ListOptions{PerPage: 100}
	var names []string
	for {
		page, resp, err := c.gh.Issues.ListLabels(c.ctx(ctx), c.owner, c.repo, opts)
		if err = c.fail(err); err != nil {
			return nil, fmt.Errorf("list labels: %w", err)
		}
		for _, l := range page {
			names = append(names, l.GetName())
		}
		if resp.NextPage == 0 {
			return names, nil
		}
		opts.Page = resp.NextPage
	}
}

// CreateLabel creates a repository label; color is six hex digits.
// https://docs.github.com/rest/issues/labels#create-a-label
func (c *Client) CreateLabel(ctx context.Context, name, color, description string) error {
	_, _, err := c.gh.Issues.CreateLabel(c.ctx(ctx), c.owner, c.repo,
		&gogithub.Label{Name: &name, Color: &color, Description: &description})
	if err = c.fail(err); err != nil {
		return fmt.Errorf("create label %q: %w", name, err)
	}
	return nil
}
