package githubfake

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	gogithub "github.com/google/go-github/v66/github"
)

// productOps are the REST operations roadmap calls (internal/github, through
// go-github v66), by the description's method and path. GraphQL is not in the
// REST description; TestGraphQL covers the one mutation.
var productOps = []specOp{
	{"GET", "/repos/{owner}/{repo}/issues/{issue_number}"},                       // Issues.Get
	{"PATCH", "/repos/{owner}/{repo}/issues/{issue_number}"},                     // Issues.Edit
	{"GET", "/repos/{owner}/{repo}/issues/{issue_number}/comments"},              // Issues.ListComments
	{"POST", "/repos/{owner}/{repo}/issues/{issue_number}/comments"},             // Issues.CreateComment
	{"GET", "/repos/{owner}/{repo}/issues/comments/{comment_id}"},                // Issues.GetComment
	{"PATCH", "/repos/{owner}/{repo}/issues/comments/{comment_id}"},              // Issues.EditComment
	{"POST", "/repos/{owner}/{repo}/issues/{issue_number}/labels"},               // Issues.AddLabelsToIssue
	{"DELETE", "/repos/{owner}/{repo}/issues/{issue_number}/labels/{name}"},      // Issues.RemoveLabelForIssue
	{"GET", "/repos/{owner}/{repo}/collaborators/{username}/permission"},         // Repositories.GetPermissionLevel
	{"POST", "/repos/{owner}/{repo}/pulls"},                                      // PullRequests.Create
	{"GET", "/repos/{owner}/{repo}/pulls"},                                       // PullRequests.List
	{"GET", "/repos/{owner}/{repo}/pulls/{pull_number}"},                         // PullRequests.Get
	{"PATCH", "/repos/{owner}/{repo}/pulls/{pull_number}"},                       // PullRequests.Edit
	{"POST", "/repos/{owner}/{repo}/statuses/{sha}"},                             // Repositories.CreateStatus
	{"GET", "/repos/{owner}/{repo}/commits/{ref}/status"},                        // Repositories.GetCombinedStatus
	{"GET", "/repos/{owner}/{repo}/commits/{ref}/check-runs"},                    // Checks.ListCheckRunsForRef
	{"POST", "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches"}, // NewRequest+Do (return_run_details)
	{"GET", "/repos/{owner}/{repo}/actions/runs/{run_id}/jobs"},                  // Actions.ListWorkflowJobs
	{"GET", "/repos/{owner}/{repo}/check-runs/{check_run_id}/annotations"},       // Checks.ListCheckRunAnnotations
	{"GET", "/repos/{owner}/{repo}/actions/jobs/{job_id}/logs"},                  // Actions.GetWorkflowJobLogs
	{"GET", "/repos/{owner}/{repo}"},                                             // Repositories.Get (roadmap init)
	{"GET", "/repos/{owner}/{repo}/actions/permissions/workflow"},                // NewRequest+Do (roadmap init)
	{"GET", "/repos/{owner}/{repo}/labels"},                                      // Issues.ListLabels (init)
	{"POST", "/repos/{owner}/{repo}/labels"},                                     // Issues.CreateLabel (init)
	{"GET", "/repos/{owner}/{repo}/actions/jobs/{job_id}"},                       // Actions.GetWorkflowJobByID
	{"POST", "/repos/{owner}/{repo}/actions/runs/{run_id}/rerun-failed-jobs"},    // Actions.RerunFailedJobsByID
	{"GET", "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs"},        // Actions.ListWorkflowRunsByFileName
	{"GET", "/repos/{owner}/{repo}/issues/comments"},                             // Issues.ListComments with number 0 (roadmap metrics)
	{"GET", "/repos/{owner}/{repo}/issues/{issue_number}/sub_issues"},            // NewRequest+Do (tracker status)
	// The tracker only reads sub-issues; tests and people link them. The
	// fake serves linking too, held to the description like the rest.
	{"POST", "/repos/{owner}/{repo}/issues/{issue_number}/sub_issues"},
	{"DELETE", "/repos/{owner}/{repo}/issues/{issue_number}/sub_issue"},
	// People merge and review pull requests in tests (issue 47): held to
	// the description like the rest.
	{"PUT", "/repos/{owner}/{repo}/pulls/{pull_number}/merge"},
	{"POST", "/repos/{owner}/{repo}/pulls/{pull_number}/comments"},
	{"GET", "/repos/{owner}/{repo}/pulls/{pull_number}/comments"},
	{"POST", "/repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies"},
	{"POST", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews"},
	{"GET", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews"},
	{"GET", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}/comments"},
	// Issue dependencies (issue 48): the product lists an issue's
	// blockers (NewRequest+Do); tests and people add, remove and list
	// the other way.
	{"GET", "/repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by"},
	{"POST", "/repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by"},
	{"DELETE", "/repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by/{issue_id}"},
	{"GET", "/repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocking"},
}

// bodyExceptions are request bodies the description's schema rejects but its
// own prose, and GitHub, accept: the fake accepts them too, on this word.
var bodyExceptions = []struct {
	op   specOp
	form *regexp.Regexp
	why  string
}{{
	specOp{"POST", "/repos/{owner}/{repo}/issues/{issue_number}/labels"},
	regexp.MustCompile(`^\s*\[\s*"`), // a bare, non-empty array of names
	`the operation's description: "You can also pass an array of labels directly" (go-github v66 sends that form)`,
}, {
	specOp{"POST", "/repos/{owner}/{repo}/pulls/{pull_number}/comments"},
	regexp.MustCompile(`"in_reply_to"`), // a reply: body and in_reply_to only
	`the in_reply_to property: "When specified, all parameters other than body in the request body are ignored" (go-github v66's CreateCommentInReplyTo sends that form)`,
}}

// exchange is one request and answer seen on the wire.
type wireExchange struct {
	method, path string
	reqBody      []byte
	status       int
	header       http.Header
	body         []byte
}

// recorder is a RoundTripper that keeps every exchange, so the test checks
// what went over HTTP, whichever client sent it.
type recorder struct {
	mu   sync.Mutex
	next http.RoundTripper
	log  []wireExchange
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var reqBody []byte
	if req.Body != nil {
		reqBody, _ = io.ReadAll(req.Body)
		req.Body.Close()
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(reqBody))
	}
	resp, err := r.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	r.mu.Lock()
	r.log = append(r.log, wireExchange{method: req.Method, path: req.URL.EscapedPath(), reqBody: reqBody,
		status: resp.StatusCode, header: resp.Header.Clone(), body: body})
	r.mu.Unlock()
	return resp, nil
}

func (r *recorder) take() []wireExchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.log
	r.log = nil
	return out
}

// apiEnv is one fake with the real go-github client and a raw client, both
// through the recorder.
type apiEnv struct {
	h   *harness
	rec *recorder
	gh  *gogithub.Client
	hc  *http.Client
	ctx context.Context
}

func newAPIEnv(t *testing.T, o Options) *apiEnv {
	h := newHarness(t, o)
	rec := &recorder{next: http.DefaultTransport}
	hc := &http.Client{Transport: rec, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	gh := gogithub.NewClient(hc).WithAuthToken(tok)
	gh, err := gh.WithEnterpriseURLs(h.srv.URL+"/", h.srv.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	gh.BaseURL.Path = "/" // WithEnterpriseURLs adds /api/v3/
	return &apiEnv{h: h, rec: rec, gh: gh, hc: hc, ctx: context.Background()}
}

// raw sends one request as written, with the token unless tokn is given.
func (e *apiEnv) raw(t *testing.T, method, path, body string, hdr ...string) int {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.h.srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := e.hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// etag is the ETag of the last exchange.
func (e *apiEnv) lastETag() string {
	e.rec.mu.Lock()
	defer e.rec.mu.Unlock()
	if len(e.rec.log) == 0 {
		return ""
	}
	return e.rec.log[len(e.rec.log)-1].header.Get("ETag")
}

// must fails the test when a go-github call fails: must(t)(e.gh.Issues.Get(…)).
func must(t *testing.T) func(any, *gogithub.Response, error) {
	return func(_ any, _ *gogithub.Response, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
}

const (
	headSHA  = "4a7c1e0b9d3f2a6e8c5b1d0f7e9a3c2b4d6f8e0a"
	otherSHA = "0123456789abcdef0123456789abcdef01234567"
)

// apiCase drives one operation through the statuses the product relies on.
type apiCase struct {
	op       specOp
	opts     Options
	statuses []int // every one must be seen
	drive    func(t *testing.T, e *apiEnv)
}

var apiCases = []apiCase{
	{op: productOps[0], statuses: []int{200, 304, 404, 401, 403}, drive: func(t *testing.T, e *apiEnv) {
		n := e.h.f.CreateIssue(Issue{Title: "item", Body: "record", Labels: []string{"roadmap"}, Author: "alice"})
		must(t)(e.gh.Issues.Get(e.ctx, "acme", "widgets", n))
		e.raw(t, "GET", fmt.Sprintf("/repos/acme/widgets/issues/%d", n), "", "If-None-Match", e.lastETag())
		e.raw(t, "GET", "/repos/acme/widgets/issues/999", "")
		e.raw(t, "GET", fmt.Sprintf("/repos/acme/widgets/issues/%d", n), "", "Authorization", "Bearer wrong")
		e.h.f.SetRateLimitUsed(tok, "core", 1000)
		e.raw(t, "GET", fmt.Sprintf("/repos/acme/widgets/issues/%d", n), "")
	}},
	{op: productOps[1], statuses: []int{200, 403, 404, 422}, drive: func(t *testing.T, e *apiEnv) {
		n := e.h.f.CreateIssue(Issue{Title: "item"})
		body := "the record"
		must(t)(e.gh.Issues.Edit(e.ctx, "acme", "widgets", n, &gogithub.IssueRequest{Body: &body}))
		p := fmt.Sprintf("/repos/acme/widgets/issues/%d", n)
		for _, b := range []string{
			`{"title": 42}`, `{"body": null}`, `{"state": "closed", "state_reason": "not_planned"}`,
			`{"state": "open", "state_reason": null}`, `{"labels": []}`, `{"unknown_field": 1}`, `{}`,
			`{"state_reason": "bogus"}`, `{"state": "merged"}`, `{"title": true}`, `{"body": 7}`, `{"labels": "bug"}`,
			`{"body": "` + strings.Repeat("x", maxBody+1) + `"}`,
		} {
			e.raw(t, "PATCH", p, b)
		}
		e.raw(t, "PATCH", "/repos/acme/widgets/issues/999", `{"body": "x"}`)
		e.h.f.AddToken("ro", "reader", true)
		e.raw(t, "PATCH", p, `{"body": "y"}`, "Authorization", "Bearer ro")
	}},
	{op: productOps[2], statuses: []int{200, 304, 404}, drive: func(t *testing.T, e *apiEnv) {
		n := e.h.f.CreateIssue(Issue{Title: "item"})
		for i := range 3 {
			e.h.f.AddComment(n, "alice", fmt.Sprintf("comment %d", i))
		}
		opts := &gogithub.IssueListCommentsOptions{ListOptions: gogithub.ListOptions{PerPage: 2}}
		_, resp, err := e.gh.Issues.ListComments(e.ctx, "acme", "widgets", n, opts)
		if err != nil || resp.NextPage != 2 {
			t.Fatalf("first page: next %v, %v", resp, err)
		}
		opts.Page = 2
		must(t)(e.gh.Issues.ListComments(e.ctx, "acme", "widgets", n, opts))
		e.raw(t, "GET", fmt.Sprintf("/repos/acme/widgets/issues/%d/comments?per_page=2&page=2", n), "", "If-None-Match", e.lastETag())
		e.raw(t, "GET", "/repos/acme/widgets/issues/999/comments", "")
	}},
	{op: productOps[3], statuses: []int{201, 404, 422}, drive: func(t *testing.T, e *apiEnv) {
		n := e.h.f.CreateIssue(Issue{Title: "item"})
		body := "<!-- roadmap:report -->\nhello"
		must(t)(e.gh.Issues.CreateComment(e.ctx, "acme", "widgets", n, &gogithub.IssueComment{Body: &body}))
		p := fmt.Sprintf("/repos/acme/widgets/issues/%d/comments", n)
		for _, b := range []string{`{"body": "x", "extra": true}`, `{}`, `{"body": 5}`, `{"body": null}`,
			`{"body": "` + strings.Repeat("x", maxBody+1) + `"}`} {
			e.raw(t, "POST", p, b)
		}
		e.raw(t, "POST", "/repos/acme/widgets/issues/999/comments", `{"body": "x"}`)
	}},
	{op: productOps[3], opts: Options{SecondaryPerMinute: 1}, statuses: []int{201, 403}, drive: secondaryLimited},
	{op: productOps[3], opts: Options{SecondaryPerMinute: 1, SecondaryLimit: Secondary403}, statuses: []int{201, 403}, drive: secondaryLimited},
	{op: productOps[3], opts: Options{SecondaryPerMinute: 1, SecondaryLimit: Secondary429}, statuses: []int{201, 429}, drive: secondaryLimited},
	{op: productOps[4], statuses: []int{200, 404}, drive: func(t *testing.T, e *apiEnv) {
		n := e.h.f.CreateIssue(Issue{Title: "item"})
		id, _ := e.h.f.AddComment(n, "alice", "hi")
		must(t)(e.gh.Issues.GetComment(e.ctx, "acme", "widgets", id))
		e.raw(t, "GET", "/repos/acme/widgets/issues/comments/1", "")
	}},
	{op: productOps[5], statuses: []int{200, 404, 422}, drive: func(t *testing.T, e *apiEnv) {
		n := e.h.f.CreateIssue(Issue{Title: "item"})
		id, _ := e.h.f.AddComment(n, "github-actions[bot]", "old")
		body := "new"
		must(t)(e.gh.Issues.EditComment(e.ctx, "acme", "widgets", id, &gogithub.IssueComment{Body: &body}))
		p := fmt.Sprintf("/repos/acme/widgets/issues/comments/%d", id)
		for _, b := range []string{`{}`, `{"body": []}`, `{"body": "x", "other": 1}`} {
			e.raw(t, "PATCH", p, b)
		}
		e.raw(t, "PATCH", "/repos/acme/widgets/issues/comments/1", `{"body": "x"}`)
	}},
	{op: productOps[6], statuses: []int{200, 404, 422}, drive: func(t *testing.T, e *apiEnv) {
		n := e.h.f.CreateIssue(Issue{Title: "item"})
		must(t)(e.gh.Issues.AddLabelsToIssue(e.ctx, "acme", "widgets", n, []string{"roadmap", "roadmap:stopped"}))
		p := fmt.Sprintf("/repos/acme/widgets/issues/%d/labels", n)
		for _, b := range []string{
			`{"labels": ["bug"]}`, `{"labels": [{"name": "question"}]}`, `{"labels": ["a", {"name": "b", "suggest": false}]}`,
			`{"labels": []}`, `[]`, `{"labels": [{"color": "ffffff"}]}`, `{"labels": [7]}`, `{"labels": "bug"}`,
			`{"labels": ["` + strings.Repeat("l", 51) + `"]}`,
		} {
			e.raw(t, "POST", p, b)
		}
		e.raw(t, "POST", "/repos/acme/widgets/issues/999/labels", `{"labels": ["x"]}`)
	}},
	{op: productOps[7], statuses: []int{200, 404}, drive: func(t *testing.T, e *apiEnv) {
		n := e.h.f.CreateIssue(Issue{Title: "item", Labels: []string{"roadmap", "roadmap:needs input"}})
		if _, err := e.gh.Issues.RemoveLabelForIssue(e.ctx, "acme", "widgets", n, "roadmap:needs%20input"); err != nil {
			t.Fatal(err)
		}
		e.raw(t, "DELETE", fmt.Sprintf("/repos/acme/widgets/issues/%d/labels/absent", n), "")
	}},
	{op: productOps[8], statuses: []int{200}, drive: func(t *testing.T, e *apiEnv) {
		e.h.f.SetPermission("alice", "maintain")
		for _, u := range []string{"alice", "stranger"} {
			must(t)(e.gh.Repositories.GetPermissionLevel(e.ctx, "acme", "widgets", u))
		}
	}},
	{op: productOps[9], statuses: []int{201, 422}, drive: func(t *testing.T, e *apiEnv) {
		title, head, base, body := "roadmap: item 1", "roadmap/1", "main", "Closes #1"
		pr := &gogithub.NewPullRequest{Title: &title, Head: &head, Base: &base, Body: &body, Draft: gogithub.Bool(true)}
		must(t)(e.gh.PullRequests.Create(e.ctx, "acme", "widgets", pr))
		e.gh.PullRequests.Create(e.ctx, "acme", "widgets", pr) // a second from the same head
		for _, b := range []string{`{"head": "b2", "base": "main", "title": "t", "maintainer_can_modify": true}`,
			`{"head": "b3", "title": "t"}`, `{"head": "b4", "base": "main", "title": "t", "draft": "yes"}`} {
			e.raw(t, "POST", "/repos/acme/widgets/pulls", b)
		}
	}},
	{op: productOps[10], statuses: []int{200, 304}, drive: func(t *testing.T, e *apiEnv) {
		e.h.f.CreatePullRequest("roadmap/1", "main", "one", "body", true)
		e.h.f.CreatePullRequest("roadmap/2", "main", "two", "", false)
		opts := &gogithub.PullRequestListOptions{State: "open", Head: "acme:roadmap/1", ListOptions: gogithub.ListOptions{PerPage: 100}}
		must(t)(e.gh.PullRequests.List(e.ctx, "acme", "widgets", opts))
		e.raw(t, "GET", "/repos/acme/widgets/pulls?head=acme%3Aroadmap%2F1&per_page=100&state=open", "", "If-None-Match", e.lastETag())
		must(t)(e.gh.PullRequests.List(e.ctx, "acme", "widgets", &gogithub.PullRequestListOptions{State: "all"}))
	}},
	{op: productOps[11], statuses: []int{200, 304, 404}, drive: func(t *testing.T, e *apiEnv) {
		n := e.h.f.CreatePullRequest("roadmap/1", "main", "one", "body", true)
		must(t)(e.gh.PullRequests.Get(e.ctx, "acme", "widgets", n))
		e.raw(t, "GET", fmt.Sprintf("/repos/acme/widgets/pulls/%d", n), "", "If-None-Match", e.lastETag())
		e.raw(t, "GET", "/repos/acme/widgets/pulls/999", "")
	}},
	{op: productOps[12], statuses: []int{200, 404, 422}, drive: func(t *testing.T, e *apiEnv) {
		n := e.h.f.CreatePullRequest("roadmap/1", "main", "one", "body", true)
		title := "roadmap: item 1 (3 of 3 groups)"
		must(t)(e.gh.PullRequests.Edit(e.ctx, "acme", "widgets", n, &gogithub.PullRequest{Title: &title}))
		p := fmt.Sprintf("/repos/acme/widgets/pulls/%d", n)
		for _, b := range []string{`{"state": "draft"}`, `{"title": 1}`, `{"maintainer_can_modify": false}`} {
			e.raw(t, "PATCH", p, b)
		}
		e.raw(t, "PATCH", "/repos/acme/widgets/pulls/999", `{"title": "x"}`)
	}},
	{op: productOps[13], statuses: []int{201, 422}, drive: func(t *testing.T, e *apiEnv) {
		e.h.f.AddCommit(headSHA)
		st := &gogithub.RepoStatus{State: gogithub.String("failure"), Context: gogithub.String("roadmap/checks"),
			Description: gogithub.String("2 of 3 checks failed"), TargetURL: gogithub.String("https://example.com/run/1")}
		must(t)(e.gh.Repositories.CreateStatus(e.ctx, "acme", "widgets", headSHA, st))
		p := "/repos/acme/widgets/statuses/" + headSHA
		for _, b := range []string{`{"state": "pending"}`, `{"state": "success", "target_url": null, "description": null}`,
			`{"state": "done"}`, `{"context": "x"}`, `{"state": "error", "description": "` + strings.Repeat("d", 141) + `"}`} {
			e.raw(t, "POST", p, b)
		}
		// A SHA no commit has: GitHub answers 422, not 201.
		if _, resp, err := e.gh.Repositories.CreateStatus(e.ctx, "acme", "widgets", otherSHA, st); err == nil || resp.StatusCode != 422 {
			t.Errorf("a status on a SHA no commit has: %v, want 422", err)
		}
	}},
	{op: productOps[14], statuses: []int{200, 304, 422}, drive: func(t *testing.T, e *apiEnv) {
		e.h.f.AddStatus(headSHA, "roadmap/checks", "pending", "running")
		e.h.f.AddStatus(headSHA, "ci", "success", "")
		must(t)(e.gh.Repositories.GetCombinedStatus(e.ctx, "acme", "widgets", headSHA, &gogithub.ListOptions{PerPage: 100}))
		e.raw(t, "GET", "/repos/acme/widgets/commits/"+headSHA+"/status?per_page=100", "", "If-None-Match", e.lastETag())
		e.raw(t, "GET", "/repos/acme/widgets/commits/"+otherSHA+"/status", "")
	}},
	{op: productOps[15], statuses: []int{200}, drive: func(t *testing.T, e *apiEnv) {
		e.h.f.AddCheckRun(headSHA, CheckRun{Name: "test", Status: "completed", Conclusion: "failure"})
		e.h.f.AddCheckRun(headSHA, CheckRun{Name: "lint", Status: "in_progress"})
		must(t)(e.gh.Checks.ListCheckRunsForRef(e.ctx, "acme", "widgets", headSHA,
			&gogithub.ListCheckRunsOptions{ListOptions: gogithub.ListOptions{PerPage: 100}}))
	}},
	{op: productOps[16], statuses: []int{200, 204, 404, 422}, drive: func(t *testing.T, e *apiEnv) {
		e.h.f.AddWorkflow("roadmap.yml")
		p := "/repos/acme/widgets/actions/workflows/roadmap.yml/dispatches"
		// What internal/github sends, through go-github.
		body := map[string]any{"ref": "main", "inputs": map[string]any{"issue": "7", "attempt": "2"}, "return_run_details": true}
		req, err := e.gh.NewRequest("POST", p[1:], body)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.gh.Do(e.ctx, req, &map[string]any{}); err != nil {
			t.Fatal(err)
		}
		many := map[string]string{}
		for i := range 26 {
			many[strconv.Itoa(i)] = "v"
		}
		tooMany, _ := json.Marshal(map[string]any{"ref": "main", "inputs": many})
		for _, b := range []string{`{"ref": "main"}`, `{"ref": "main", "inputs": {"n": 1}, "return_run_details": false}`,
			`{}`, `{"ref": 3}`, `{"ref": "main", "return_run_details": "yes"}`, string(tooMany),
		} {
			e.raw(t, "POST", p, b)
		}
		if st := e.raw(t, "POST", p, `{"ref": "no-such-branch"}`); st != 422 {
			t.Errorf("dispatch on a ref the repository lacks: %d, want 422", st)
		}
		if st := e.raw(t, "POST", "/repos/acme/widgets/actions/workflows/absent.yml/dispatches", `{"ref": "main"}`); st != 404 {
			t.Errorf("dispatch of a workflow the repository lacks: %d, want 404", st)
		}
	}},
	{op: productOps[17], statuses: []int{200, 404}, drive: func(t *testing.T, e *apiEnv) {
		run := e.h.f.AddRun(Run{WorkflowFile: "roadmap.yml", HeadBranch: "main", Conclusion: "failure"})
		e.h.f.AddJob(run, Job{Name: "implement", Status: "completed", Conclusion: "failure", StartedAt: t0,
			Steps: []Step{{Number: 1, Name: "Set up job", Status: "completed", Conclusion: "success"}, {Number: 2, Name: "roadmap", Status: "completed", Conclusion: "failure"}}})
		e.h.f.AddJob(run, Job{Name: "report", Status: "in_progress", StartedAt: t0})
		must(t)(e.gh.Actions.ListWorkflowJobs(e.ctx, "acme", "widgets", run,
			&gogithub.ListWorkflowJobsOptions{Filter: "latest", ListOptions: gogithub.ListOptions{PerPage: 100}}))
		e.raw(t, "GET", "/repos/acme/widgets/actions/runs/1/jobs", "")
	}},
	{op: productOps[18], statuses: []int{200, 404}, drive: func(t *testing.T, e *apiEnv) {
		run := e.h.f.AddRun(Run{WorkflowFile: "roadmap.yml"})
		job, _ := e.h.f.AddJob(run, Job{Name: "implement", Status: "completed", Conclusion: "failure",
			Annotations: []string{"The runner has received a shutdown signal.", "Process completed with exit code 1."}})
		_, resp, err := e.gh.Checks.ListCheckRunAnnotations(e.ctx, "acme", "widgets", job, &gogithub.ListOptions{PerPage: 1})
		if err != nil || resp.NextPage != 2 {
			t.Fatalf("annotations: %v %v", resp, err)
		}
		e.raw(t, "GET", "/repos/acme/widgets/check-runs/1/annotations", "")
	}},
	{op: productOps[19], statuses: []int{302, 404}, drive: func(t *testing.T, e *apiEnv) {
		run := e.h.f.AddRun(Run{WorkflowFile: "roadmap.yml"})
		done, _ := e.h.f.AddJob(run, Job{Name: "implement", Status: "completed", Conclusion: "success", Log: "spend: 1\n"})
		running, _ := e.h.f.AddJob(run, Job{Name: "report", Status: "in_progress"})
		if _, _, err := e.gh.Actions.GetWorkflowJobLogs(e.ctx, "acme", "widgets", done, 1); err != nil {
			t.Fatal(err)
		}
		e.raw(t, "GET", fmt.Sprintf("/repos/acme/widgets/actions/jobs/%d/logs", running), "")
	}},
	{op: productOps[20], statuses: []int{200, 404}, drive: func(t *testing.T, e *apiEnv) {
		must(t)(e.gh.Repositories.Get(e.ctx, "acme", "widgets"))
		e.raw(t, "GET", "/repos/acme/gadgets", "")
	}},
	{op: productOps[21], statuses: []int{200}, drive: func(t *testing.T, e *apiEnv) {
		// go-github v66 has no method for it; the product sends NewRequest+Do.
		e.raw(t, "GET", "/repos/acme/widgets/actions/permissions/workflow", "")
		e.h.f.SetWorkflowPermissions("write", true)
		e.raw(t, "GET", "/repos/acme/widgets/actions/permissions/workflow", "")
	}},
	{op: productOps[22], statuses: []int{200}, drive: func(t *testing.T, e *apiEnv) {
		must(t)(e.gh.Issues.ListLabels(e.ctx, "acme", "widgets", &gogithub.ListOptions{PerPage: 100}))
	}},
	{op: productOps[23], statuses: []int{201, 422}, drive: func(t *testing.T, e *apiEnv) {
		must(t)(e.gh.Issues.CreateLabel(e.ctx, "acme", "widgets", &gogithub.Label{Name: gogithub.String("roadmap:implement"),
			Color: gogithub.String("0e8a16"), Description: gogithub.String("implement this issue")}))
		e.raw(t, "POST", "/repos/acme/widgets/labels", `{"name": "roadmap:implement", "color": "0e8a16"}`)
	}},
	{op: productOps[24], statuses: []int{200, 404}, drive: func(t *testing.T, e *apiEnv) {
		e.h.f.ScriptCI("ci.yml", CIJob{Name: "test", Outcomes: []CIOutcome{{Conclusion: "failure", Log: "FAIL\n"}}})
		run, err := e.h.f.StartCI("ci.yml", "main")
		if err != nil {
			t.Fatal(err)
		}
		jobs, _, err := e.gh.Actions.ListWorkflowJobs(e.ctx, "acme", "widgets", run, &gogithub.ListWorkflowJobsOptions{})
		if err != nil || len(jobs.Jobs) != 1 {
			t.Fatalf("jobs of the CI run: %v, %v", jobs, err)
		}
		j, _, err := e.gh.Actions.GetWorkflowJobByID(e.ctx, "acme", "widgets", jobs.Jobs[0].GetID())
		if err != nil {
			t.Fatal(err)
		}
		if j.GetRunAttempt() != 1 || j.GetConclusion() != "failure" {
			t.Errorf("job = attempt %d, %s; want attempt 1, failure", j.GetRunAttempt(), j.GetConclusion())
		}
		e.raw(t, "GET", "/repos/acme/widgets/actions/jobs/1", "")
	}},
	{op: productOps[25], statuses: []int{201, 403, 404}, drive: func(t *testing.T, e *apiEnv) {
		e.h.f.ScriptCI("ci.yml", CIJob{Name: "test", Outcomes: []CIOutcome{
			{Conclusion: "failure", Log: "npm ERR! code ECONNRESET\n"}, {Conclusion: "success", Duration: time.Hour}}})
		run, err := e.h.f.StartCI("ci.yml", "main")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.gh.Actions.RerunFailedJobsByID(e.ctx, "acme", "widgets", run); err != nil {
			t.Fatal(err)
		}
		// The re-run is still in progress: a second one is refused.
		e.raw(t, "POST", fmt.Sprintf("/repos/acme/widgets/actions/runs/%d/rerun-failed-jobs", run), "")
		e.raw(t, "POST", "/repos/acme/widgets/actions/runs/1/rerun-failed-jobs", "")
	}},
	{op: productOps[26], statuses: []int{200, 404}, drive: func(t *testing.T, e *apiEnv) {
		e.h.f.AddWorkflow("roadmap.yml")
		e.h.f.AddRun(Run{WorkflowFile: "roadmap.yml", HeadBranch: "main", Event: "issues", Status: "completed", Conclusion: "success", CreatedAt: t0})
		e.raw(t, "POST", "/repos/acme/widgets/actions/workflows/roadmap.yml/dispatches", `{"ref": "main", "inputs": {"issue": "7"}}`)
		// What internal/github asks, through go-github.
		must(t)(e.gh.Actions.ListWorkflowRunsByFileName(e.ctx, "acme", "widgets", "roadmap.yml", &gogithub.ListWorkflowRunsOptions{
			Event: "workflow_dispatch", Created: ">=" + t0.Format(time.RFC3339), ListOptions: gogithub.ListOptions{PerPage: 100}}))
		e.raw(t, "GET", "/repos/acme/widgets/actions/workflows/roadmap.yml/runs?per_page=1", "")
		e.raw(t, "GET", "/repos/acme/widgets/actions/workflows/absent.yml/runs", "")
	}},
	{op: productOps[27], statuses: []int{200, 304, 422}, drive: func(t *testing.T, e *apiEnv) {
		a := e.h.f.CreateIssue(Issue{Title: "one"})
		b := e.h.f.CreateIssue(Issue{Title: "two"})
		for i := range 3 {
			e.h.f.AddComment(a, "github-actions[bot]", fmt.Sprintf("record %d", i))
			e.h.f.AddComment(b, "alice", fmt.Sprintf("comment %d", i))
		}
		// What internal/github asks, through go-github: number 0 is the
		// repository-wide list.
		opts := &gogithub.IssueListCommentsOptions{Sort: gogithub.String("updated"), Direction: gogithub.String("desc"),
			Since: &t0, ListOptions: gogithub.ListOptions{PerPage: 4}}
		_, resp, err := e.gh.Issues.ListComments(e.ctx, "acme", "widgets", 0, opts)
		if err != nil || resp.NextPage != 2 {
			t.Fatalf("first page: next %v, %v", resp, err)
		}
		opts.Page = 2
		must(t)(e.gh.Issues.ListComments(e.ctx, "acme", "widgets", 0, opts))
		e.raw(t, "GET", "/repos/acme/widgets/issues/comments?direction=desc&page=2&per_page=4&since="+t0.Format(time.RFC3339)+"&sort=updated",
			"", "If-None-Match", e.lastETag())
		e.raw(t, "GET", "/repos/acme/widgets/issues/comments?sort=size", "")
		e.raw(t, "GET", "/repos/acme/widgets/issues/comments?since=yesterday", "")
	}},
	{op: productOps[28], statuses: []int{200, 304, 404}, drive: func(t *testing.T, e *apiEnv) {
		parent := e.h.f.CreateIssue(Issue{Title: "tracker"})
		for i := range 3 {
			child := e.h.f.CreateIssue(Issue{Title: fmt.Sprintf("child %d", i)})
			if err := e.h.f.AddSubIssue(parent, child); err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				e.h.f.CloseIssue(child, "not_planned")
			}
		}
		// What internal/github sends: per_page=100, through go-github.
		req, err := e.gh.NewRequest("GET", fmt.Sprintf("repos/acme/widgets/issues/%d/sub_issues?per_page=2", parent), nil)
		if err != nil {
			t.Fatal(err)
		}
		var page []*gogithub.Issue
		resp, err := e.gh.Do(e.ctx, req, &page)
		if err != nil || resp.NextPage != 2 || len(page) != 2 {
			t.Fatalf("first page of sub-issues: %d issues, next %v, %v", len(page), resp, err)
		}
		p := fmt.Sprintf("/repos/acme/widgets/issues/%d/sub_issues?per_page=2&page=2", parent)
		e.raw(t, "GET", p, "")
		e.raw(t, "GET", p, "", "If-None-Match", e.lastETag())
		e.raw(t, "GET", "/repos/acme/widgets/issues/999/sub_issues", "")
	}},
	{op: productOps[29], statuses: []int{201, 404, 422}, drive: func(t *testing.T, e *apiEnv) {
		parent := e.h.f.CreateIssue(Issue{Title: "tracker"})
		child := e.h.f.CreateIssue(Issue{Title: "child"})
		is, _ := e.h.f.Issue(child)
		p := fmt.Sprintf("/repos/acme/widgets/issues/%d/sub_issues", parent)
		if st := e.raw(t, "POST", p, fmt.Sprintf(`{"sub_issue_id": %d}`, is.ID)); st != 201 {
			t.Errorf("add a sub-issue by its id: %d, want 201", st)
		}
		// The id as a string, as `gh api -f` sends it: 422 on GitHub.
		other := e.h.f.CreateIssue(Issue{Title: "other"})
		ois, _ := e.h.f.Issue(other)
		if st := e.raw(t, "POST", p, fmt.Sprintf(`{"sub_issue_id": "%d"}`, ois.ID)); st != 422 {
			t.Errorf("a string sub_issue_id: %d, want 422", st)
		}
		for _, b := range []string{`{}`, `{"sub_issue_id": 1, "replace_parent": "yes"}`,
			fmt.Sprintf(`{"sub_issue_id": %d}`, is.ID), // already a sub-issue of it
		} {
			e.raw(t, "POST", p, b)
		}
		// A cycle: the parent under its own child.
		pis, _ := e.h.f.Issue(parent)
		if st := e.raw(t, "POST", fmt.Sprintf("/repos/acme/widgets/issues/%d/sub_issues", child), fmt.Sprintf(`{"sub_issue_id": %d}`, pis.ID)); st != 422 {
			t.Errorf("a cycle: %d, want 422", st)
		}
		// Moving a sub-issue to another parent needs replace_parent.
		q := fmt.Sprintf("/repos/acme/widgets/issues/%d/sub_issues", other)
		if st := e.raw(t, "POST", q, fmt.Sprintf(`{"sub_issue_id": %d}`, is.ID)); st != 422 {
			t.Errorf("a second parent without replace_parent: %d, want 422", st)
		}
		if st := e.raw(t, "POST", q, fmt.Sprintf(`{"sub_issue_id": %d, "replace_parent": true}`, is.ID)); st != 201 {
			t.Errorf("replace_parent: %d, want 201", st)
		}
		// GitHub's limit: 100 sub-issues a parent; the 101st is 422.
		full := e.h.f.CreateIssue(Issue{Title: "full"})
		for i := range 100 {
			if err := e.h.f.AddSubIssue(full, e.h.f.CreateIssue(Issue{Title: fmt.Sprintf("c%d", i)})); err != nil {
				t.Fatal(err)
			}
		}
		extra, _ := e.h.f.Issue(e.h.f.CreateIssue(Issue{Title: "one too many"}))
		if st := e.raw(t, "POST", fmt.Sprintf("/repos/acme/widgets/issues/%d/sub_issues", full), fmt.Sprintf(`{"sub_issue_id": %d}`, extra.ID)); st != 422 {
			t.Errorf("a 101st sub-issue: %d, want 422", st)
		}
		e.raw(t, "POST", p, `{"sub_issue_id": 999999}`)
		e.raw(t, "POST", "/repos/acme/widgets/issues/999/sub_issues", fmt.Sprintf(`{"sub_issue_id": %d}`, is.ID))
	}},
	{op: productOps[30], statuses: []int{200, 404, 422}, drive: func(t *testing.T, e *apiEnv) {
		parent := e.h.f.CreateIssue(Issue{Title: "tracker"})
		child := e.h.f.CreateIssue(Issue{Title: "child"})
		e.h.f.AddSubIssue(parent, child)
		is, _ := e.h.f.Issue(child)
		p := fmt.Sprintf("/repos/acme/widgets/issues/%d/sub_issue", parent)
		if st := e.raw(t, "DELETE", p, fmt.Sprintf(`{"sub_issue_id": %d}`, is.ID)); st != 200 {
			t.Errorf("remove a sub-issue: %d, want 200", st)
		}
		if got, _ := e.h.f.Issue(parent); len(got.SubIssues) != 0 {
			t.Errorf("after the remove, sub-issues %v, want none", got.SubIssues)
		}
		e.raw(t, "DELETE", p, fmt.Sprintf(`{"sub_issue_id": %d}`, is.ID)) // no longer a sub-issue: 404
		e.raw(t, "DELETE", p, `{"sub_issue_id": "x"}`)
	}},
	{op: productOps[31], statuses: []int{200, 403, 404, 405, 409, 422}, drive: func(t *testing.T, e *apiEnv) {
		n := e.h.f.CreatePullRequest("roadmap/1", "main", "one", "", false)
		draft := e.h.f.CreatePullRequest("roadmap/2", "main", "two", "", true)
		e.h.f.AddToken("ro", "reader", true)
		e.raw(t, "PUT", fmt.Sprintf("/repos/acme/widgets/pulls/%d/merge", n), `{}`, "Authorization", "Bearer ro")
		e.raw(t, "PUT", fmt.Sprintf("/repos/acme/widgets/pulls/%d/merge", n), `{"sha": "`+otherSHA+`"}`)
		e.raw(t, "PUT", fmt.Sprintf("/repos/acme/widgets/pulls/%d/merge", n), `{"merge_method": "octopus"}`)
		e.raw(t, "PUT", fmt.Sprintf("/repos/acme/widgets/pulls/%d/merge", draft), `{}`)
		must(t)(e.gh.PullRequests.Merge(e.ctx, "acme", "widgets", n, "the change", &gogithub.PullRequestOptions{MergeMethod: "rebase"}))
		e.raw(t, "PUT", "/repos/acme/widgets/pulls/999/merge", "")
	}},
	{op: productOps[32], statuses: []int{201, 422}, drive: func(t *testing.T, e *apiEnv) {
		n := e.h.f.CreatePullRequest("roadmap/1", "main", "one", "", false)
		sha := e.h.f.headSHAOf(n)
		c := &gogithub.PullRequestComment{Body: gogithub.String("why?"), Path: gogithub.String("a.go"), Line: gogithub.Int(2),
			StartLine: gogithub.Int(1), Side: gogithub.String("RIGHT"), CommitID: gogithub.String(sha)}
		root, _, err := e.gh.PullRequests.CreateComment(e.ctx, "acme", "widgets", n, c)
		if err != nil {
			t.Fatal(err)
		}
		must(t)(e.gh.PullRequests.CreateCommentInReplyTo(e.ctx, "acme", "widgets", n, "because", root.GetID()))
		p := fmt.Sprintf("/repos/acme/widgets/pulls/%d/comments", n)
		for _, b := range []string{`{"body": "x", "path": "a.go", "commit_id": "` + sha + `", "subject_type": "file"}`,
			`{"body": "x", "path": "a.go"}`, `{"body": "x", "path": "a.go", "line": 1, "commit_id": "` + otherSHA + `"}`,
			`{"body": "x", "path": "a.go", "line": "1", "commit_id": "` + sha + `"}`, `{"path": "a.go"}`} {
			e.raw(t, "POST", p, b)
		}
	}},
	{op: productOps[33], statuses: []int{200, 304}, drive: func(t *testing.T, e *apiEnv) {
		n := e.h.f.CreatePullRequest("roadmap/1", "main", "one", "", false)
		p := fmt.Sprintf("/repos/acme/widgets/pulls/%d/comments", n)
		e.raw(t, "POST", p, `{"body": "x", "path": "a.go", "line": 3, "commit_id": "`+e.h.f.headSHAOf(n)+`"}`)
		e.raw(t, "POST", p, `{"body": "y", "path": "a.go", "commit_id": "`+e.h.f.headSHAOf(n)+`", "subject_type": "file"}`)
		must(t)(e.gh.PullRequests.ListComments(e.ctx, "acme", "widgets", n, nil))
		e.raw(t, "GET", p, "", "If-None-Match", e.lastETag())
	}},
	{op: productOps[34], statuses: []int{201, 404}, drive: func(t *testing.T, e *apiEnv) {
		n := e.h.f.CreatePullRequest("roadmap/1", "main", "one", "", false)
		root, _, err := e.gh.PullRequests.CreateComment(e.ctx, "acme", "widgets", n, &gogithub.PullRequestComment{
			Body: gogithub.String("why?"), Path: gogithub.String("a.go"), Line: gogithub.Int(2), CommitID: gogithub.String(e.h.f.headSHAOf(n))})
		if err != nil {
			t.Fatal(err)
		}
		e.raw(t, "POST", fmt.Sprintf("/repos/acme/widgets/pulls/%d/comments/%d/replies", n, root.GetID()), `{"body": "because"}`)
		e.raw(t, "POST", fmt.Sprintf("/repos/acme/widgets/pulls/%d/comments/999/replies", n), `{"body": "x"}`)
	}},
	{op: productOps[35], statuses: []int{200, 422}, drive: func(t *testing.T, e *apiEnv) {
		n := e.h.f.CreatePullRequest("roadmap/1", "main", "one", "", false)
		e.h.f.AddToken("alice-tok", "alice", false)
		p := fmt.Sprintf("/repos/acme/widgets/pulls/%d/reviews", n)
		e.raw(t, "POST", p, `{"event": "REQUEST_CHANGES", "body": "see", "comments": [{"path": "a.go", "line": 2, "body": "here"}]}`, "Authorization", "Bearer alice-tok")
		for _, b := range []string{`{"event": "COMMENT"}`, `{"comments": [{"path": "a.go"}]}`, `{"event": "MERGE"}`, `{}`, `{}`} {
			e.raw(t, "POST", p, b)
		}
	}},
	{op: productOps[36], statuses: []int{200}, drive: func(t *testing.T, e *apiEnv) {
		n := e.h.f.CreatePullRequest("roadmap/1", "main", "one", "", false)
		e.raw(t, "POST", fmt.Sprintf("/repos/acme/widgets/pulls/%d/reviews", n), `{"event": "COMMENT", "body": "ok"}`)
		must(t)(e.gh.PullRequests.ListReviews(e.ctx, "acme", "widgets", n, nil))
	}},
	{op: productOps[37], statuses: []int{200, 404}, drive: func(t *testing.T, e *apiEnv) {
		n := e.h.f.CreatePullRequest("roadmap/1", "main", "one", "", false)
		r, _, err := e.gh.PullRequests.CreateReview(e.ctx, "acme", "widgets", n, &gogithub.PullRequestReviewRequest{Event: gogithub.String("COMMENT"),
			Body: gogithub.String("see"), Comments: []*gogithub.DraftReviewComment{{Path: gogithub.String("a.go"), Line: gogithub.Int(4), Body: gogithub.String("here")}}})
		if err != nil {
			t.Fatal(err)
		}
		must(t)(e.gh.PullRequests.ListReviewComments(e.ctx, "acme", "widgets", n, r.GetID(), nil))
		e.raw(t, "GET", fmt.Sprintf("/repos/acme/widgets/pulls/%d/reviews/999/comments", n), "")
	}},
	{op: productOps[38], statuses: []int{200, 304, 404}, drive: func(t *testing.T, e *apiEnv) {
		n := e.h.f.CreateIssue(Issue{Title: "blocked"})
		for i := range 3 {
			b := e.h.f.CreateIssue(Issue{Title: fmt.Sprintf("blocker %d", i)})
			if err := e.h.f.AddBlockedBy(n, b); err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				e.h.f.CloseIssue(b, "completed")
			}
		}
		// What internal/github sends, through go-github (per_page=100).
		req, err := e.gh.NewRequest("GET", fmt.Sprintf("repos/acme/widgets/issues/%d/dependencies/blocked_by?per_page=2", n), nil)
		if err != nil {
			t.Fatal(err)
		}
		var page []*gogithub.Issue
		resp, err := e.gh.Do(e.ctx, req, &page)
		if err != nil || resp.NextPage != 2 || len(page) != 2 || page[0].GetState() != "closed" {
			t.Fatalf("first page of blockers: %d issues, next %v, %v", len(page), resp, err)
		}
		p := fmt.Sprintf("/repos/acme/widgets/issues/%d/dependencies/blocked_by?per_page=2&page=2", n)
		e.raw(t, "GET", p, "")
		e.raw(t, "GET", p, "", "If-None-Match", e.lastETag())
		e.raw(t, "GET", "/repos/acme/widgets/issues/999/dependencies/blocked_by", "")
	}},
	{op: productOps[39], statuses: []int{201, 404, 422}, drive: func(t *testing.T, e *apiEnv) {
		n := e.h.f.CreateIssue(Issue{Title: "blocked"})
		b, _ := e.h.f.Issue(e.h.f.CreateIssue(Issue{Title: "blocker"}))
		self, _ := e.h.f.Issue(n)
		p := fmt.Sprintf("/repos/acme/widgets/issues/%d/dependencies/blocked_by", n)
		if st := e.raw(t, "POST", p, fmt.Sprintf(`{"issue_id": %d}`, b.ID)); st != 201 {
			t.Errorf("add a blocker by its id: %d, want 201", st)
		}
		for what, body := range map[string]string{
			"the same blocker twice": fmt.Sprintf(`{"issue_id": %d}`, b.ID),
			"the issue itself":       fmt.Sprintf(`{"issue_id": %d}`, self.ID),
			"a string id":            fmt.Sprintf(`{"issue_id": "%d"}`, b.ID),
			"no id":                  `{}`,
		} {
			if st := e.raw(t, "POST", p, body); st != 422 {
				t.Errorf("%s: %d, want 422", what, st)
			}
		}
		// A cycle other than the one-issue one is not refused: the
		// blocker blocked by the issue it blocks.
		if st := e.raw(t, "POST", fmt.Sprintf("/repos/acme/widgets/issues/%d/dependencies/blocked_by", b.Number),
			fmt.Sprintf(`{"issue_id": %d}`, self.ID)); st != 201 {
			t.Errorf("a two-issue cycle: %d, want 201", st)
		}
		// GitHub's limit: 50 blockers an issue; the 51st is 422.
		full := e.h.f.CreateIssue(Issue{Title: "full"})
		for i := range 50 {
			if err := e.h.f.AddBlockedBy(full, e.h.f.CreateIssue(Issue{Title: fmt.Sprintf("b%d", i)})); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.h.f.AddBlockedBy(full, n); err == nil {
			t.Error("AddBlockedBy: a 51st blocker was accepted")
		}
		if st := e.raw(t, "POST", fmt.Sprintf("/repos/acme/widgets/issues/%d/dependencies/blocked_by", full), fmt.Sprintf(`{"issue_id": %d}`, b.ID)); st != 422 {
			t.Errorf("a 51st blocker: %d, want 422", st)
		}
		if st := e.raw(t, "POST", p, `{"issue_id": 999999}`); st != 404 {
			t.Errorf("an id no issue has: %d, want 404", st)
		}
		e.raw(t, "POST", "/repos/acme/widgets/issues/999/dependencies/blocked_by", fmt.Sprintf(`{"issue_id": %d}`, b.ID))
	}},
	{op: productOps[40], statuses: []int{200, 404}, drive: func(t *testing.T, e *apiEnv) {
		n := e.h.f.CreateIssue(Issue{Title: "blocked"})
		b := e.h.f.CreateIssue(Issue{Title: "blocker"})
		e.h.f.AddBlockedBy(n, b)
		bis, _ := e.h.f.Issue(b)
		p := fmt.Sprintf("/repos/acme/widgets/issues/%d/dependencies/blocked_by/%d", n, bis.ID)
		if st := e.raw(t, "DELETE", p, ""); st != 200 {
			t.Errorf("remove a blocker: %d, want 200", st)
		}
		if got, _ := e.h.f.Issue(n); len(got.BlockedBy) != 0 {
			t.Errorf("after the remove, blocked by %v, want none", got.BlockedBy)
		}
		e.raw(t, "DELETE", p, "") // no longer a blocker: 404
		e.raw(t, "DELETE", fmt.Sprintf("/repos/acme/widgets/issues/%d/dependencies/blocked_by/999999", n), "")
	}},
	{op: productOps[41], statuses: []int{200, 404}, drive: func(t *testing.T, e *apiEnv) {
		b := e.h.f.CreateIssue(Issue{Title: "blocker"})
		for i := range 2 {
			if err := e.h.f.AddBlockedBy(e.h.f.CreateIssue(Issue{Title: fmt.Sprintf("blocked %d", i)}), b); err != nil {
				t.Fatal(err)
			}
		}
		e.raw(t, "GET", fmt.Sprintf("/repos/acme/widgets/issues/%d/dependencies/blocking", b), "")
		e.raw(t, "GET", "/repos/acme/widgets/issues/999/dependencies/blocking", "")
	}},
}

// secondaryLimited makes a second comment inside a minute hit the secondary
// limit, in whichever form the fake was configured to answer.
func secondaryLimited(t *testing.T, e *apiEnv) {
	n := e.h.f.CreateIssue(Issue{Title: "item"})
	p := fmt.Sprintf("/repos/acme/widgets/issues/%d/comments", n)
	e.raw(t, "POST", p, `{"body": "one"}`)
	e.raw(t, "POST", p, `{"body": "two"}`)
}

// TestFakeOpenAPI holds the fake to GitHub's REST description (the pinned
// @octokit/openapi): for each operation the product calls, it drives the
// fake through the statuses the product relies on and checks every request
// body against the operation's request schema (the fake must refuse what
// the schema rejects and must not refuse as invalid what it accepts), every
// answer's body against the response schema for its status (fields the
// schema does not name are errors too), the documented headers, and the
// headers GitHub sends on every answer.
func TestFakeOpenAPI(t *testing.T) {
	doc := loadDescription(t, productOps)
	covered := map[specOp]bool{}
	for _, tc := range apiCases {
		covered[tc.op] = true
		name := tc.op.method + " " + tc.op.path
		if tc.opts.SecondaryLimit != 0 || tc.opts.SecondaryPerMinute != 0 {
			name += fmt.Sprintf(" secondary limit %s", tc.opts.SecondaryLimit)
		}
		t.Run(name, func(t *testing.T) {
			e := newAPIEnv(t, tc.opts)
			tc.drive(t, e)
			seen := map[int]bool{}
			for _, x := range e.rec.take() {
				if strings.HasPrefix(x.path, "/_logs/") {
					continue // the log blob is storage, not the API
				}
				op, ok := matchOp(x.method, x.path)
				if !ok {
					t.Errorf("%s %s: not an operation the product uses", x.method, x.path)
					continue
				}
				if op != tc.op {
					continue
				}
				seen[x.status] = true
				for _, p := range checkExchange(doc, op, x) {
					t.Errorf("%s %s → %d: %s", x.method, x.path, x.status, p)
				}
			}
			for _, st := range tc.statuses {
				if !seen[st] {
					t.Errorf("the drive never produced a %d", st)
				}
			}
		})
	}
	for _, op := range productOps {
		if !covered[op] {
			t.Errorf("%s %s: no case", op.method, op.path)
		}
	}
}

var opPatterns = func() map[specOp]*regexp.Regexp {
	out := map[specOp]*regexp.Regexp{}
	for _, op := range productOps {
		re := regexp.QuoteMeta(op.path)
		re = regexp.MustCompile(`\\\{ref\\\}`).ReplaceAllString(re, `.+`)
		re = regexp.MustCompile(`\\\{\w+\\\}`).ReplaceAllString(re, `[^/]+`)
		out[op] = regexp.MustCompile("^" + re + "$")
	}
	return out
}()

// matchOp finds the product operation of a request path. Literal segments
// beat parameters (issues/comments/{id} before issues/{n}/…).
func matchOp(method, path string) (specOp, bool) {
	var best specOp
	found := false
	for op, re := range opPatterns {
		if op.method != method || !re.MatchString(path) {
			continue
		}
		if !found || strings.Count(op.path, "{") < strings.Count(best.path, "{") {
			best, found = op, true
		}
	}
	return best, found
}

var requestIDRE = regexp.MustCompile(`^[0-9A-F]{4}:[0-9A-F]{4,6}:[0-9A-F]{6,8}:[0-9A-F]{6,8}:[0-9A-F]{8}$`)

// checkExchange lists what in one exchange disagrees with the description.
func checkExchange(doc *openapi3.T, op specOp, x wireExchange) []string {
	var problems []string
	o := doc.Paths.Find(op.path).GetOperation(op.method)

	// Headers GitHub sends on every API answer.
	if !requestIDRE.MatchString(x.header.Get("X-GitHub-Request-Id")) {
		problems = append(problems, fmt.Sprintf("x-github-request-id %q", x.header.Get("X-GitHub-Request-Id")))
	}
	if x.status != http.StatusUnauthorized {
		for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Used", "X-RateLimit-Reset", "X-RateLimit-Resource"} {
			if x.header.Get(h) == "" {
				problems = append(problems, "no "+h)
			}
		}
	}

	// The request body against the request schema.
	if len(bytes.TrimSpace(x.reqBody)) > 0 && o.RequestBody != nil {
		schema := o.RequestBody.Value.Content.Get("application/json").Schema.Value
		var v any
		specErr := json.Unmarshal(x.reqBody, &v)
		if specErr == nil {
			specErr = schema.VisitJSON(v, openapi3.VisitAsRequest(), openapi3.MultiErrors())
		}
		refusedInvalid := x.status == http.StatusBadRequest ||
			(x.status == http.StatusUnprocessableEntity && strings.HasPrefix(message(x.body), "Invalid request."))
		switch {
		case specErr == nil && refusedInvalid:
			problems = append(problems, fmt.Sprintf("refuses as invalid a body the description accepts: %.200s", x.reqBody))
		case specErr != nil && x.status < 400:
			if why := exception(op, x.reqBody); why != "" {
				break
			}
			problems = append(problems, fmt.Sprintf("accepts a body the description rejects (%s): %.200s", firstLine(specErr), x.reqBody))
		}
	}

	// The answer against the response for its status.
	resp := o.Responses.Status(x.status)
	var schema *openapi3.Schema
	switch {
	case resp != nil:
		if mt := resp.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
			schema = mt.Schema.Value
		}
		for name, h := range resp.Value.Headers {
			got := x.header.Get(name)
			if got == "" && (name == "Location" || h.Value.Required) {
				problems = append(problems, "no "+name+" header, which the description documents for this status")
			}
		}
	case x.status == http.StatusNotModified:
		// Every conditional GET may answer 304; few operations list it.
	case x.status == http.StatusUnprocessableEntity:
		schema = doc.Components.Schemas["validation-error"].Value
	case x.status >= 400:
		schema = doc.Components.Schemas["basic-error"].Value
	default:
		problems = append(problems, "a status the description does not document for this operation")
	}
	switch {
	case schema == nil && len(x.body) > 0:
		problems = append(problems, fmt.Sprintf("a body where the description has none: %.100s", x.body))
	case schema != nil:
		var v any
		if err := json.Unmarshal(x.body, &v); err != nil {
			problems = append(problems, fmt.Sprintf("body is not JSON: %v", err))
			break
		}
		if err := schema.VisitJSON(v, openapi3.VisitAsResponse(), openapi3.MultiErrors()); err != nil {
			problems = append(problems, "body: "+firstLines(err, 5))
		}
		if x.status < 300 {
			for _, f := range undeclared(schema, v, "") {
				problems = append(problems, "field the schema does not have: "+f)
			}
		}
	}
	return problems
}

// undeclared lists the fields of v that schema does not name anywhere
// (properties of any branch of allOf, oneOf, anyOf), where the schema does
// not allow other properties explicitly. GitHub's schemas leave
// additionalProperties unset, which JSON Schema reads as "anything goes";
// the fake is held to the fields GitHub documents instead.
func undeclared(s *openapi3.Schema, v any, at string) []string {
	if s == nil {
		return nil
	}
	var out []string
	switch v := v.(type) {
	case map[string]any:
		props := map[string]*openapi3.Schema{}
		open := false
		var collect func(s *openapi3.Schema)
		collect = func(s *openapi3.Schema) {
			for k, p := range s.Properties {
				if props[k] == nil {
					props[k] = p.Value
				}
			}
			if s.AdditionalProperties.Has != nil && *s.AdditionalProperties.Has || s.AdditionalProperties.Schema != nil {
				open = true
			}
			for _, list := range []openapi3.SchemaRefs{s.AllOf, s.OneOf, s.AnyOf} {
				for _, b := range list {
					collect(b.Value)
				}
			}
		}
		collect(s)
		if open || len(props) == 0 {
			return nil
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p, ok := props[k]
			if !ok {
				out = append(out, at+"."+k)
				continue
			}
			out = append(out, undeclared(p, v[k], at+"."+k)...)
		}
	case []any:
		items := s.Items
		if items == nil {
			for _, list := range []openapi3.SchemaRefs{s.AllOf, s.OneOf, s.AnyOf} {
				for _, b := range list {
					if b.Value.Items != nil {
						items = b.Value.Items
					}
				}
			}
		}
		if items == nil {
			return nil
		}
		seen := map[string]bool{}
		for _, e := range v {
			for _, f := range undeclared(items.Value, e, at+"[]") {
				if !seen[f] {
					seen[f] = true
					out = append(out, f)
				}
			}
		}
	}
	return out
}

func exception(op specOp, body []byte) string {
	for _, ex := range bodyExceptions {
		if ex.op == op && ex.form.Match(body) {
			return ex.why
		}
	}
	return ""
}

func message(body []byte) string {
	var m struct {
		Message string `json:"message"`
	}
	json.Unmarshal(body, &m)
	return m.Message
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

func firstLines(err error, n int) string {
	var keep []string
	for _, l := range strings.Split(err.Error(), "\n") {
		if strings.HasPrefix(l, "Error at") && len(keep) < n {
			keep = append(keep, l)
		}
	}
	if len(keep) == 0 {
		return firstLine(err)
	}
	return strings.Join(keep, " | ")
}
