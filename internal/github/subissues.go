package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// IssueRef names an issue: Repo is "owner/name" ("" is the Client's
// repository).
type IssueRef struct {
	Repo   string
	Number int
}

// IssueState is an issue as the tracker check reads it.
type IssueState struct {
	Repo   string // owner/name, always set
	Number int
	Title  string
	Body   string
	State  string // open or closed
	// StateReason is completed, not_planned, duplicate, reopened, or ""
	// (an issue closed before GitHub kept reasons has none).
	StateReason string
	// SubIssues is sub_issues_summary.total: how many native sub-issues it has.
	SubIssues int
	// Merged: the issue is a pull request a person merged
	// (pull_request.merged_at is set).
	Merged bool
	// Missing: GitHub answered that the issue does not exist or that the
	// token cannot see it (deleted, another repository, no access).
	Missing bool
	// ClosingPRs are the pull requests that close the issue when merged
	// (GraphQL's closedByPullRequestsReferences, closed ones included; at
	// most 10), and ClosingPRMerged whether one of them was merged. Read
	// by IssueStates only: the REST reads leave them empty.
	ClosingPRs      []int
	ClosingPRMerged bool
}

// FullName is the Client's repository as "owner/name".
func (c *Client) FullName() string { return c.owner + "/" + c.repo }

// issueWire is the part of GitHub's issue object the tracker and the
// blockers read; go-github v66's Issue has no sub_issues_summary.
type issueWire struct {
	ID            int64  `json:"id"`
	URL           string `json:"url"`
	HTMLURL       string `json:"html_url"`
	Number        int    `json:"number"`
	Title         string `json:"title"`
	Body          string `json:"body"`
	State         string `json:"state"`
	StateReason   string `json:"state_reason"`
	RepositoryURL string `json:"repository_url"`
	Comments      int    `json:"comments"`
	Summary       struct {
		Total int `json:"total"`
	} `json:"sub_issues_summary"`
	PullRequest *struct {
		MergedAt *string `json:"merged_at"`
	} `json:"pull_request"`
}

// repoOf is the repository an issue object is in, as "owner/name":
// repository_url is …/repos/{owner}/{name}, url …/repos/{owner}/{name}/issues/{n}
// and html_url https://{host}/{owner}/{name}/issues/{n} (a sub-issue or a
// blocker may be in another repository). "" when none of them reads.
func repoOf(w issueWire) string {
	if parts := strings.Split(strings.TrimRight(w.RepositoryURL, "/"), "/"); len(parts) >= 3 && parts[len(parts)-3] == "repos" {
		return parts[len(parts)-2] + "/" + parts[len(parts)-1]
	}
	for _, u := range []string{w.URL, w.HTMLURL} {
		parts := strings.Split(strings.TrimRight(u, "/"), "/")
		if k := len(parts); k >= 5 && (parts[k-2] == "issues" || parts[k-2] == "pull") && parts[k-4] != "" && parts[k-3] != "" {
			return parts[k-4] + "/" + parts[k-3]
		}
	}
	return ""
}

func (c *Client) toState(w issueWire) IssueState {
	repo := repoOf(w)
	if repo == "" {
		repo = c.FullName()
	}
	return IssueState{Repo: repo, Number: w.Number, Title: w.Title, Body: w.Body, State: w.State,
		StateReason: w.StateReason, SubIssues: w.Summary.Total,
		Merged: w.merged()}
}

// merged: the issue is a pull request a person merged.
func (w issueWire) merged() bool {
	return w.PullRequest != nil && w.PullRequest.MergedAt != nil && *w.PullRequest.MergedAt != ""
}

// IssueState reads issue n of the Client's repository with its sub-issue
// count. A missing issue is ErrNotFound.
//
// GitHub API docs: https://docs.github.com/rest/issues/issues#get-an-issue
func (c *Client) IssueState(ctx context.Context, n int) (IssueState, error) {
	req, err := c.gh.NewRequest(http.MethodGet, fmt.Sprintf("repos/%s/%s/issues/%d", c.owner, c.repo, n), nil)
	if err != nil {
		return IssueState{}, err
	}
	var w issueWire
	if _, err := c.gh.Do(c.ctx(ctx), req, &w); err != nil {
		return IssueState{}, fmt.Errorf("get issue %d: %w", n, c.fail(err))
	}
	if w.Number == n {
		// An issue with no comment has no marker comment: the first
		// UpsertMarkerComment on it creates one without listing.
		c.mu.Lock()
		c.uncommented[n] = w.Comments == 0
		c.mu.Unlock()
	}
	return c.toState(w), nil
}

// SubIssues lists the native sub-issues of issue n, in GitHub's order, all
// pages of 100: one request per 100 sub-issues. Each carries its state, so
// no child is read again.
//
// GitHub API docs: https://docs.github.com/rest/issues/sub-issues#list-sub-issues
func (c *Client) SubIssues(ctx context.Context, n int) ([]IssueState, error) {
	list, err := c.issueList(ctx, fmt.Sprintf("issues/%d/sub_issues", n))
	if err != nil {
		return nil, fmt.Errorf("list sub-issues of issue %d: %w", n, err)
	}
	var out []IssueState
	for _, w := range list {
		out = append(out, c.toState(w))
	}
	return out, nil
}

// issueList reads every page of 100 of a list of issue objects under the
// Client's repository (path is after repos/{owner}/{name}/): one request
// per 100. Each GET is conditional, so an unchanged page is a free 304.
func (c *Client) issueList(ctx context.Context, path string) ([]issueWire, error) {
	var out []issueWire
	for page := 1; ; {
		u := fmt.Sprintf("repos/%s/%s/%s?per_page=100&page=%d", c.owner, c.repo, path, page)
		req, err := c.gh.NewRequest(http.MethodGet, u, nil)
		if err != nil {
			return nil, err
		}
		var list []issueWire
		resp, err := c.gh.Do(c.ctx(ctx), req, &list)
		if err != nil {
			return nil, c.fail(err)
		}
		out = append(out, list...)
		if resp.NextPage == 0 || resp.NextPage <= page {
			return out, nil
		}
		page = resp.NextPage
	}
}

// statesPerQuery is how many issues one GraphQL query asks for.
const statesPerQuery = 100

// nameRE is what GitHub allows in an owner or repository name; a reference
// with anything else is never put into a query (the names come from
// untrusted issue bodies).
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$`)

// IssueStates reads the states of many issues with one GraphQL query per
// 100 (aliases: one per repository, one per issue), not one request each.
// An issue GitHub does not show (deleted, a pull request's number, another
// repository the token cannot see) comes back Missing. The answer has an
// entry for every ref, keyed by the ref with Repo filled in.
//
// GitHub API docs: https://docs.github.com/graphql/reference/objects#repository (issue)
func (c *Client) IssueStates(ctx context.Context, refs []IssueRef) (map[IssueRef]IssueState, error) {
	out := map[IssueRef]IssueState{}
	var todo []IssueRef
	for _, r := range refs {
		if r.Repo == "" {
			r.Repo = c.FullName()
		}
		if _, seen := out[r]; seen {
			continue
		}
		owner, name, _ := strings.Cut(r.Repo, "/")
		if r.Number <= 0 || !nameRE.MatchString(owner) || !nameRE.MatchString(name) {
			out[r] = IssueState{Repo: r.Repo, Number: r.Number, Missing: true}
			continue
		}
		out[r] = IssueState{} // placeholder: asked below
		todo = append(todo, r)
	}
	for len(todo) > 0 {
		batch := todo[:min(statesPerQuery, len(todo))]
		todo = todo[len(batch):]
		if err := c.issueStateBatch(ctx, batch, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// issueNode is the selection of each issue.
type issueNode struct {
	Number           int
	Title            string
	Body             string
	State            string
	StateReason      *string
	SubIssuesSummary struct {
		Total int
	}
	ClosedBy struct {
		Nodes []struct {
			Number int
			Merged bool
		}
	} `graphql:"closedByPullRequestsReferences(first: 10, includeClosedPrs: true)"`
}

// issueStateBatch builds the query's struct at run time: githubv4 writes a
// field's tag as its selection, so aliased fields need a type per query.
//
//	{home: repository(owner: "o", name: "r"){nameWithOwner}
//	 r0: repository(owner: "o", name: "r"){i12: issue(number: 12){…}}}
//
// home is always the Client's own repository: when it is null the query
// failed as a whole, not because an issue or a repository is missing.
// gqlTag is a struct tag whose graphql key is sel, quoted as tags need.
func gqlTag(sel string) reflect.StructTag {
	return reflect.StructTag("graphql:" + strconv.Quote(sel))
}

func (c *Client) issueStateBatch(ctx context.Context, batch []IssueRef, out map[IssueRef]IssueState) error {
	byRepo := map[string][]int{}
	for _, r := range batch {
		byRepo[r.Repo] = append(byRepo[r.Repo], r.Number)
	}
	repos := make([]string, 0, len(byRepo))
	for r := range byRepo {
		repos = append(repos, r)
	}
	sort.Strings(repos)
	nodeType := reflect.TypeOf(&issueNode{})
	home := reflect.StructOf([]reflect.StructField{{Name: "NameWithOwner", Type: reflect.TypeOf("")}})
	fields := []reflect.StructField{{Name: "Home", Type: reflect.PointerTo(home),
		Tag: gqlTag(fmt.Sprintf("home: repository(owner: %q, name: %q)", c.owner, c.repo))}}
	for i, repo := range repos {
		var issues []reflect.StructField
		for _, n := range byRepo[repo] {
			issues = append(issues, reflect.StructField{Name: fmt.Sprintf("I%d", n), Type: nodeType,
				Tag: gqlTag(fmt.Sprintf("i%d: issue(number: %d)", n, n))})
		}
		owner, name, _ := strings.Cut(repo, "/")
		fields = append(fields, reflect.StructField{Name: fmt.Sprintf("R%d", i), Type: reflect.PointerTo(reflect.StructOf(issues)),
			Tag: gqlTag(fmt.Sprintf("r%d: repository(owner: %q, name: %q)", i, owner, name))})
	}
	q := reflect.New(reflect.StructOf(fields))
	err := c.fail(c.gql.Query(c.ctx(ctx), q.Interface(), nil))
	v := q.Elem()
	if v.Field(0).IsNil() {
		if err == nil {
			err = errors.New("no data")
		}
		return fmt.Errorf("read the states of %d issues: %w", len(batch), err)
	}
	var rl *RateLimitError
	var te *TransportError
	if errors.As(err, &rl) || errors.As(err, &te) {
		return fmt.Errorf("read the states of %d issues: %w", len(batch), err)
	}
	// Any other error with data is GitHub's NOT_FOUND (or FORBIDDEN) for
	// the aliases that came back null.
	for i, repo := range repos {
		rv := v.Field(i + 1)
		for j, n := range byRepo[repo] {
			ref := IssueRef{Repo: repo, Number: n}
			if rv.IsNil() || rv.Elem().Field(j).IsNil() {
				out[ref] = IssueState{Repo: repo, Number: n, Missing: true}
				continue
			}
			node := rv.Elem().Field(j).Interface().(*issueNode)
			st := IssueState{Repo: repo, Number: n, Title: node.Title, Body: node.Body,
				State: strings.ToLower(node.State), SubIssues: node.SubIssuesSummary.Total}
			if node.StateReason != nil {
				st.StateReason = strings.ToLower(*node.StateReason)
			}
			for _, pr := range node.ClosedBy.Nodes {
				st.ClosingPRs = append(st.ClosingPRs, pr.Number)
				st.ClosingPRMerged = st.ClosingPRMerged || pr.Merged
			}
			out[ref] = st
		}
	}
	return nil
}
