package githubfake

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const tok = "ghs_test"

var t0 = time.Date(2099, 3, 1, 12, 0, 0, 0, time.UTC)

type harness struct {
	f     *Fake
	srv   *httptest.Server
	clock *ManualClock
}

func newHarness(t *testing.T, o Options) *harness {
	t.Helper()
	clock := NewManualClock(t0)
	o.Clock = clock
	if o.Token == "" {
		o.Token = tok
	}
	if o.Owner == "" {
		o.Owner, o.Repo = "acme", "widgets"
	}
	f := New(o)
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return &harness{f: f, srv: srv, clock: clock}
}

// do sends one request; hdr is key, value pairs.
func (h *harness) do(t *testing.T, method, path, body string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, h.srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, data
}

func decode[T any](t *testing.T, data []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
	return v
}

func TestPagination(t *testing.T) {
	h := newHarness(t, Options{})
	for i := 1; i <= 7; i++ {
		h.f.CreateIssue(Issue{Title: fmt.Sprintf("Issue %d", i)})
	}
	type page struct {
		numbers []int
		rels    []string
	}
	get := func(q string) page {
		resp, data := h.do(t, "GET", "/repos/acme/widgets/issues"+q, "")
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %s", q, resp.StatusCode, data)
		}
		var p page
		for _, is := range decode[[]map[string]any](t, data) {
			p.numbers = append(p.numbers, int(is["number"].(float64)))
		}
		for _, m := range regexp.MustCompile(`<([^>]+)>; rel="(\w+)"`).FindAllStringSubmatch(resp.Header.Get("Link"), -1) {
			if !strings.HasPrefix(m[1], h.srv.URL+"/repositories/1000/issues?") {
				t.Errorf("link URL %s: want the /repositories/{id} form", m[1])
			}
			p.rels = append(p.rels, m[2])
		}
		return p
	}
	for _, tc := range []struct {
		q    string
		want page
	}{
		{"?per_page=3", page{[]int{7, 6, 5}, []string{"next", "last"}}},
		{"?per_page=3&page=2", page{[]int{4, 3, 2}, []string{"prev", "next", "last", "first"}}},
		{"?per_page=3&page=3", page{[]int{1}, []string{"prev", "first"}}},
		{"", page{[]int{7, 6, 5, 4, 3, 2, 1}, nil}},
		{"?per_page=1000", page{[]int{7, 6, 5, 4, 3, 2, 1}, nil}},
		{"?per_page=3&page=9", page{nil, []string{"prev", "first"}}},
	} {
		t.Run(tc.q, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, get(tc.q), cmp.AllowUnexported(page{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	// The Link URLs are served.
	resp, _ := h.do(t, "GET", "/repos/acme/widgets/issues?per_page=3", "")
	next := regexp.MustCompile(`<([^>]+)>; rel="next"`).FindStringSubmatch(resp.Header.Get("Link"))[1]
	resp, data := h.do(t, "GET", strings.TrimPrefix(next, h.srv.URL), "")
	if resp.StatusCode != 200 || len(decode[[]any](t, data)) != 3 {
		t.Errorf("next page: %d %s", resp.StatusCode, data)
	}
	// 100 is the most a page holds.
	for i := 0; i < 150; i++ {
		h.f.AddComment(1, "bob", fmt.Sprintf("c%d", i))
	}
	_, data = h.do(t, "GET", "/repos/acme/widgets/issues/1/comments?per_page=500", "")
	if got := len(decode[[]any](t, data)); got != 100 {
		t.Errorf("per_page=500 gave %d comments, want 100", got)
	}
	_, data = h.do(t, "GET", "/repos/acme/widgets/issues/1/comments", "")
	if got := len(decode[[]any](t, data)); got != 30 {
		t.Errorf("default page: %d comments, want 30", got)
	}
}

// TestRepoComments holds the repository-wide comment list to GitHub's
// description: ascending id by default, sort and direction (ignored without
// sort), since keeps what was updated at or after it, each comment naming
// its issue in issue_url.
func TestRepoComments(t *testing.T) {
	h := newHarness(t, Options{})
	a := h.f.CreateIssue(Issue{Title: "a"})
	b := h.f.CreateIssue(Issue{Title: "b"})
	c1, _ := h.f.AddComment(a, "github-actions[bot]", "one")
	h.clock.Advance(time.Hour)
	c2, _ := h.f.AddComment(b, "alice", "two")
	h.clock.Advance(time.Hour)
	c3, _ := h.f.AddComment(a, "alice", "three")
	h.clock.Advance(time.Hour)
	mid := h.clock.Now().UTC()
	h.f.EditComment(c1, func(string) string { return "one, edited" }) // c1 now updated last
	list := func(q string) []int64 {
		t.Helper()
		resp, data := h.do(t, "GET", "/repos/acme/widgets/issues/comments"+q, "")
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %s", q, resp.StatusCode, data)
		}
		var ids []int64
		for _, cm := range decode[[]map[string]any](t, data) {
			ids = append(ids, int64(cm["id"].(float64)))
			if cm["id"].(float64) == float64(c2) && cm["issue_url"] != fmt.Sprintf("%s/repos/acme/widgets/issues/%d", h.srv.URL, b) {
				t.Errorf("comment %d issue_url = %v, want issue %d's", c2, cm["issue_url"], b)
			}
		}
		return ids
	}
	for _, tc := range []struct {
		q    string
		want []int64
	}{
		{"", []int64{c1, c2, c3}},
		{"?direction=desc", []int64{c1, c2, c3}}, // ignored without sort
		{"?sort=created&direction=desc", []int64{c3, c2, c1}},
		{"?sort=updated&direction=desc", []int64{c1, c3, c2}},
		{"?sort=updated", []int64{c2, c3, c1}},
		{"?sort=updated&direction=desc&since=" + url.QueryEscape(mid.Format(time.RFC3339)), []int64{c1}},
		{"?since=" + url.QueryEscape(mid.Add(-time.Hour).Format(time.RFC3339)), []int64{c1, c3}},
		{"?sort=updated&direction=desc&per_page=2&page=2", []int64{c2}},
	} {
		t.Run(tc.q, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, list(tc.q)); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
		})
	}
	for _, q := range []string{"?sort=size", "?sort=updated&direction=up", "?since=yesterday"} {
		if resp, _ := h.do(t, "GET", "/repos/acme/widgets/issues/comments"+q, ""); resp.StatusCode != 422 {
			t.Errorf("GET %s: %d, want 422", q, resp.StatusCode)
		}
	}
}

func TestConditionalRequests(t *testing.T) {
	h := newHarness(t, Options{})
	n := h.f.CreateIssue(Issue{Title: "t", Body: "one"})
	path := fmt.Sprintf("/repos/acme/widgets/issues/%d", n)
	resp, _ := h.do(t, "GET", path, "")
	etag := resp.Header.Get("ETag")
	if !regexp.MustCompile(`^"[0-9a-f]{32}"$`).MatchString(etag) {
		t.Fatalf("ETag %q", etag)
	}
	remaining := resp.Header.Get("X-RateLimit-Remaining")
	for _, inm := range []string{etag, "W/" + etag, `"other", ` + etag} {
		resp, data := h.do(t, "GET", path, "", "If-None-Match", inm)
		if resp.StatusCode != 304 || len(data) != 0 {
			t.Errorf("If-None-Match %s: %d %q, want an empty 304", inm, resp.StatusCode, data)
		}
		if got := resp.Header.Get("X-RateLimit-Remaining"); got != remaining {
			t.Errorf("a 304 used the budget: remaining %s, was %s", got, remaining)
		}
	}
	// A write's ETag is not the GET's: it cannot make the next read free.
	resp, _ = h.do(t, "PATCH", path, `{"title":"t2"}`)
	if resp, _ := h.do(t, "GET", path, "", "If-None-Match", resp.Header.Get("ETag")); resp.StatusCode != 200 {
		t.Errorf("GET with the ETag of a PATCH answer: %d, want 200", resp.StatusCode)
	}
	resp, _ = h.do(t, "GET", path, "")
	etag = resp.Header.Get("ETag")
	h.f.SetIssueBody(n, "alice", "two")
	resp, data := h.do(t, "GET", path, "", "If-None-Match", etag)
	if resp.StatusCode != 200 || resp.Header.Get("ETag") == etag || decode[map[string]any](t, data)["body"] != "two" {
		t.Errorf("after an edit: %d etag %s body %s", resp.StatusCode, resp.Header.Get("ETag"), data)
	}
}

func TestUpdatedAtMovesOnEveryWrite(t *testing.T) {
	h := newHarness(t, Options{})
	n := h.f.CreateIssue(Issue{Title: "t"})
	path := fmt.Sprintf("/repos/acme/widgets/issues/%d", n)
	var last string
	for i := range 5 { // the clock does not move: updated_at must anyway
		_, data := h.do(t, "PATCH", path, fmt.Sprintf(`{"body":"v%d"}`, i))
		got := decode[map[string]any](t, data)["updated_at"].(string)
		if got <= last {
			t.Errorf("write %d: updated_at %s, previous %s", i, got, last)
		}
		last = got
	}
}

func TestPrimaryBudget(t *testing.T) {
	h := newHarness(t, Options{RateLimit: 2})
	var resp *http.Response
	for i := range 2 {
		resp, _ = h.do(t, "GET", "/repos/acme/widgets/labels", "", "X-Try", strconv.Itoa(i))
		if resp.StatusCode != 200 {
			t.Fatalf("request %d: %d", i, resp.StatusCode)
		}
	}
	want := map[string]string{"X-Ratelimit-Limit": "2", "X-Ratelimit-Remaining": "0", "X-Ratelimit-Used": "2",
		"X-Ratelimit-Resource": "core", "X-Ratelimit-Reset": strconv.FormatInt(t0.Add(time.Hour).Unix(), 10)}
	for k, v := range want {
		if got := resp.Header.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	resp, data := h.do(t, "GET", "/repos/acme/widgets/labels", "")
	if resp.StatusCode != 403 || resp.Header.Get("X-RateLimit-Remaining") != "0" || !strings.Contains(string(data), "API rate limit exceeded") {
		t.Errorf("over the budget: %d %s", resp.StatusCode, data)
	}
	h.clock.Advance(time.Hour)
	resp, _ = h.do(t, "GET", "/repos/acme/widgets/labels", "")
	if resp.StatusCode != 200 || resp.Header.Get("X-RateLimit-Remaining") != "1" {
		t.Errorf("after the reset: %d remaining %s", resp.StatusCode, resp.Header.Get("X-RateLimit-Remaining"))
	}
}

func TestSecondaryLimit(t *testing.T) {
	h := newHarness(t, Options{SecondaryPerMinute: 3})
	n := h.f.CreateIssue(Issue{Title: "t"})
	path := fmt.Sprintf("/repos/acme/widgets/issues/%d/comments", n)
	for i := range 3 {
		h.clock.Advance(10 * time.Second)
		if resp, data := h.do(t, "POST", path, `{"body":"x"}`); resp.StatusCode != 201 {
			t.Fatalf("comment %d: %d %s", i, resp.StatusCode, data)
		}
	}
	// Reads are not content creation.
	if resp, _ := h.do(t, "GET", path, ""); resp.StatusCode != 200 {
		t.Errorf("read under the secondary limit: %d", resp.StatusCode)
	}
	resp, data := h.do(t, "POST", path, `{"body":"x"}`)
	if resp.StatusCode != 403 || !strings.Contains(string(data), "secondary rate limit") {
		t.Fatalf("fourth comment in a minute: %d %s", resp.StatusCode, data)
	}
	// The first comment was at +10s, now is +30s: one is allowed at +70s.
	if got := resp.Header.Get("Retry-After"); got != "40" {
		t.Errorf("Retry-After %q, want 40", got)
	}
	h.clock.Advance(40 * time.Second)
	if resp, _ := h.do(t, "POST", path, `{"body":"x"}`); resp.StatusCode != 201 {
		t.Errorf("after retry-after: %d", resp.StatusCode)
	}
	if got := len(h.f.Comments(n)); got != 4 {
		t.Errorf("%d comments, want 4 (the limited one was not created)", got)
	}
}

// TestSecondaryLimitForms checks the three answers GitHub documents for the
// secondary limit: 403 with retry-after, 403 without it, 429.
func TestSecondaryLimitForms(t *testing.T) {
	for _, tc := range []struct {
		form       SecondaryLimit
		status     int
		retryAfter string
	}{{Secondary403RetryAfter, 403, "60"}, {Secondary403, 403, ""}, {Secondary429, 429, "60"}} {
		t.Run(tc.form.String(), func(t *testing.T) {
			h := newHarness(t, Options{SecondaryPerMinute: 1, SecondaryLimit: tc.form})
			n := h.f.CreateIssue(Issue{Title: "t"})
			path := fmt.Sprintf("/repos/acme/widgets/issues/%d/comments", n)
			h.do(t, "POST", path, `{"body":"x"}`)
			resp, data := h.do(t, "POST", path, `{"body":"x"}`)
			if resp.StatusCode != tc.status || !strings.Contains(string(data), "secondary rate limit") {
				t.Fatalf("%d %s, want %d", resp.StatusCode, data, tc.status)
			}
			if got := resp.Header.Get("Retry-After"); got != tc.retryAfter {
				t.Errorf("Retry-After %q, want %q", got, tc.retryAfter)
			}
			if resp.Header.Get("X-RateLimit-Remaining") == "0" {
				t.Errorf("remaining 0: a secondary limit leaves the primary budget alone")
			}
		})
	}
}

func TestValidation(t *testing.T) {
	h := newHarness(t, Options{})
	n := h.f.CreateIssue(Issue{Title: "t"})
	long := strings.Repeat("é", 65537)
	ok := strings.Repeat("é", 65536)
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		want                     string
	}{
		{"issue body at the limit", "PATCH", fmt.Sprintf("/repos/acme/widgets/issues/%d", n), `{"body":"` + ok + `"}`, 200, ""},
		{"issue body over", "PATCH", fmt.Sprintf("/repos/acme/widgets/issues/%d", n), `{"body":"` + long + `"}`, 422,
			`{"resource":"Issue","code":"custom","field":"body","message":"body is too long (maximum is 65536 characters)"}`},
		{"comment over", "POST", fmt.Sprintf("/repos/acme/widgets/issues/%d/comments", n), `{"body":"` + long + `"}`, 422,
			`{"resource":"IssueComment","code":"unprocessable","field":"data","message":"Body is too long (maximum is 65536 characters)"}`},
		{"label color", "POST", "/repos/acme/widgets/labels", `{"name":"x","color":"invalid"}`, 422,
			`{"resource":"Label","code":"invalid","field":"color"}`},
		{"status on a SHA no commit has", "POST", "/repos/acme/widgets/statuses/" + strings.Repeat("ab", 20), `{"state":"success"}`, 422, ""},
		{"bogus state_reason", "PATCH", fmt.Sprintf("/repos/acme/widgets/issues/%d", n), `{"state":"closed","state_reason":"bogus"}`, 422, ""},
		{"no labels", "POST", fmt.Sprintf("/repos/acme/widgets/issues/%d/labels", n), `{"labels":[]}`, 422, ""},
		{"numeric title", "PATCH", fmt.Sprintf("/repos/acme/widgets/issues/%d", n), `{"title":42}`, 200, ""},
		{"long label", "POST", fmt.Sprintf("/repos/acme/widgets/issues/%d/labels", n), `["` + strings.Repeat("l", 51) + `"]`, 422,
			`{"resource":"Label","code":"invalid","field":"name"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, data := h.do(t, tc.method, tc.path, tc.body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %.200s", resp.StatusCode, tc.status, data)
			}
			if tc.want == "" {
				return
			}
			got := decode[struct {
				Message string            `json:"message"`
				Errors  []json.RawMessage `json:"errors"`
				Doc     string            `json:"documentation_url"`
			}](t, data)
			if got.Message != "Validation Failed" || len(got.Errors) != 1 || got.Doc == "" {
				t.Fatalf("body %s", data)
			}
			if diff := cmp.Diff(decode[map[string]any](t, []byte(tc.want)), decode[map[string]any](t, got.Errors[0])); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAuthAndNotFound(t *testing.T) {
	h := newHarness(t, Options{})
	h.f.AddToken("ro", "reader", true)
	n := h.f.CreateIssue(Issue{Title: "t"})
	for _, tc := range []struct {
		name, method, path, auth string
		status                   int
	}{
		{"bad token", "GET", "/repos/acme/widgets/labels", "Bearer nope", 401},
		{"no token", "GET", "/repos/acme/widgets/labels", "", 401},
		{"read-only token reads", "GET", "/repos/acme/widgets/labels", "token ro", 200},
		{"read-only token writes", "POST", fmt.Sprintf("/repos/acme/widgets/issues/%d/labels", n), "Bearer ro", 403},
		{"other repository", "GET", "/repos/acme/gadgets/issues/1", "Bearer " + tok, 404},
		{"unknown issue", "GET", "/repos/acme/widgets/issues/999", "Bearer " + tok, 404},
		{"unknown route", "GET", "/repos/acme/widgets/wiki", "Bearer " + tok, 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, h.srv.URL+tc.path, strings.NewReader(`["x"]`))
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Errorf("status %d, want %d: %s", resp.StatusCode, tc.status, data)
			}
			if tc.status >= 400 && decode[map[string]any](t, data)["message"] == nil {
				t.Errorf("error body without a message: %s", data)
			}
		})
	}
	if got := h.f.Labels(n); len(got) != 0 {
		t.Errorf("the read-only token added labels %v", got)
	}
}

func TestJobLogRedirect(t *testing.T) {
	h := newHarness(t, Options{})
	run := h.f.AddRun(Run{})
	id, _ := h.f.AddJob(run, Job{Name: "j", Conclusion: "failure", Log: "line 1\nline 2\n"})
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	logURL := func() string {
		req, _ := http.NewRequest("GET", fmt.Sprintf("%s/repos/acme/widgets/actions/jobs/%d/logs", h.srv.URL, id), nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 302 {
			t.Fatalf("status %d, want 302", resp.StatusCode)
		}
		return resp.Header.Get("Location")
	}
	get := func(u string) (int, string) {
		resp, err := http.Get(u) // no token: the blob URL needs none
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(data)
	}
	u := logURL()
	if !strings.HasPrefix(u, h.srv.URL+"/_logs/") {
		t.Fatalf("Location %s", u)
	}
	if st, body := get(u); st != 200 || body != "line 1\nline 2\n" {
		t.Errorf("first use: %d %q", st, body)
	}
	if st, _ := get(u); st != 404 {
		t.Errorf("second use: %d, want 404 (one-time URL)", st)
	}
	u = logURL()
	h.clock.Advance(61 * time.Second)
	if st, _ := get(u); st != 404 {
		t.Errorf("after a minute: %d, want 404 (expired)", st)
	}
}

func TestDispatch(t *testing.T) {
	h := newHarness(t, Options{})
	h.f.AddWorkflow("ci.yml")
	resp, data := h.do(t, "POST", "/repos/acme/widgets/actions/workflows/ci.yml/dispatches",
		`{"ref":"main","inputs":{"issue":"7"},"return_run_details":true}`)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d %s", resp.StatusCode, data)
	}
	got := decode[map[string]any](t, data)
	runs := h.f.Runs()
	if len(runs) != 1 || got["workflow_run_id"] != float64(runs[0].ID) || got["run_url"] == nil || got["html_url"] == nil {
		t.Errorf("answer %s, runs %+v", data, runs)
	}
	if resp, _ := h.do(t, "POST", "/repos/acme/widgets/actions/workflows/ci.yml/dispatches", `{"ref":"main"}`); resp.StatusCode != 204 {
		t.Errorf("without return_run_details: %d, want 204", resp.StatusCode)
	}
	if resp, _ := h.do(t, "POST", "/repos/acme/widgets/actions/workflows/ci.yml/dispatches", `{}`); resp.StatusCode != 422 {
		t.Errorf("without ref: %d, want 422", resp.StatusCode)
	}
	// GitHub runs nothing for a workflow file or a ref it does not have.
	if resp, _ := h.do(t, "POST", "/repos/acme/widgets/actions/workflows/absent.yml/dispatches", `{"ref":"main"}`); resp.StatusCode != 404 {
		t.Errorf("absent workflow: %d, want 404", resp.StatusCode)
	}
	if resp, data := h.do(t, "POST", "/repos/acme/widgets/actions/workflows/ci.yml/dispatches", `{"ref":"nope"}`); resp.StatusCode != 422 ||
		!strings.Contains(string(data), "No ref found for: nope") {
		t.Errorf("absent ref: %d %s, want 422", resp.StatusCode, data)
	}
	if d := h.f.Dispatches(); len(d) != 2 || d[0].Inputs["issue"] != "7" {
		t.Errorf("dispatches %+v", d)
	}
}

// TestRunName: a dispatched run's display_title in the runs list is the
// workflow's run-name with the dispatch's inputs put in, as GitHub evaluates
// a run-name like "roadmap #${{ inputs.issue }}"; without a run-name, or
// when it comes out blank, it is the workflow's name.
func TestRunName(t *testing.T) {
	h := newHarness(t, Options{})
	h.f.AddWorkflow("caller.yml", "plain.yml")
	h.f.SetRunName("caller.yml", "roadmap #{issue} {phase}")
	h.f.SetRunName("blank.yml", "{absent}  ")
	h.f.AddWorkflow("blank.yml")
	dispatch := func(file, inputs string) {
		t.Helper()
		if resp, data := h.do(t, "POST", "/repos/acme/widgets/actions/workflows/"+file+"/dispatches",
			`{"ref":"main","inputs":`+inputs+`}`); resp.StatusCode != 204 {
			t.Fatalf("dispatch %s: %d %s", file, resp.StatusCode, data)
		}
	}
	dispatch("caller.yml", `{"issue":"7","phase":"stage"}`)
	dispatch("caller.yml", `{"issue":12,"attempt":"3"}`)
	dispatch("plain.yml", `{"issue":"7"}`)
	dispatch("blank.yml", `{}`)
	seeded := h.f.AddRun(Run{WorkflowFile: "caller.yml", Event: "issues", DisplayTitle: "roadmap #9 labeled"})
	titles := func(file string) []string {
		t.Helper()
		resp, data := h.do(t, "GET", "/repos/acme/widgets/actions/workflows/"+file+"/runs", "")
		if resp.StatusCode != 200 {
			t.Fatalf("list %s: %d %s", file, resp.StatusCode, data)
		}
		var out []string
		for _, r := range decode[struct {
			Runs []struct {
				DisplayTitle string `json:"display_title"`
			} `json:"workflow_runs"`
		}](t, data).Runs {
			out = append(out, r.DisplayTitle)
		}
		return out
	}
	// Newest first; a number input is written as GitHub writes it; an
	// input the dispatch did not send is empty.
	if diff := cmp.Diff([]string{"roadmap #9 labeled", "roadmap #12 ", "roadmap #7 stage"}, titles("caller.yml")); diff != "" {
		t.Errorf("caller.yml titles (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"plain"}, titles("plain.yml")); diff != "" {
		t.Errorf("a workflow without a run-name (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"blank"}, titles("blank.yml")); diff != "" {
		t.Errorf("a blank run-name (-want +got):\n%s", diff)
	}
	for _, r := range h.f.Runs() {
		if r.ID == seeded && r.DisplayTitle != "roadmap #9 labeled" {
			t.Errorf("the seeded run's title %q", r.DisplayTitle)
		}
	}

	// The run-name is state: a fake loaded from a save gives the next
	// dispatch the same title.
	path := filepath.Join(t.TempDir(), "state.json")
	if err := h.f.Save(path); err != nil {
		t.Fatal(err)
	}
	if err := h.f.Load(path); err != nil {
		t.Fatal(err)
	}
	dispatch("caller.yml", `{"issue":"8","phase":"implement"}`)
	if got := titles("caller.yml")[0]; got != "roadmap #8 implement" {
		t.Errorf("after a load: %q, want %q", got, "roadmap #8 implement")
	}
}

func TestFaults(t *testing.T) {
	h := newHarness(t, Options{})
	n := h.f.CreateIssue(Issue{Title: "t"})
	path := fmt.Sprintf("/repos/acme/widgets/issues/%d", n)
	h.f.AddFault(Rule{Method: "GET", Path: "/repos/*/*/issues/*", Call: 2, Status: 502})
	h.f.AddFault(Rule{Method: "PATCH", Path: "re:^/repos/acme/widgets/issues/\\d+$", Call: 1, ApplyThenFail: true, Status: 500})
	h.f.AddFault(Rule{Method: "PATCH", Path: "/repos/**", Call: 2, Drop: true})

	var got []int
	for range 3 {
		resp, _ := h.do(t, "GET", path, "")
		got = append(got, resp.StatusCode)
	}
	if diff := cmp.Diff([]int{200, 502, 200}, got); diff != "" {
		t.Errorf("GET statuses (-want +got):\n%s", diff)
	}
	resp, _ := h.do(t, "PATCH", path, `{"body":"landed"}`)
	if is, _ := h.f.Issue(n); resp.StatusCode != 500 || is.Body != "landed" {
		t.Errorf("apply then fail: status %d, body %q; want 500 and the write applied", resp.StatusCode, is.Body)
	}
	req, _ := http.NewRequest("PATCH", h.srv.URL+path, strings.NewReader(`{"body":"dropped"}`))
	req.Header.Set("Authorization", "Bearer "+tok)
	if _, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req); err == nil {
		t.Error("dropped connection: no error")
	}
	if is, _ := h.f.Issue(n); is.Body != "landed" {
		t.Errorf("a dropped (not applied) write changed the body to %q", is.Body)
	}
	var faults []string
	for _, r := range h.f.Requests() {
		faults = append(faults, r.Fault)
	}
	if diff := cmp.Diff([]string{"", "status 502", "", "apply then status 500", "drop"}, faults); diff != "" {
		t.Errorf("logged faults (-want +got):\n%s", diff)
	}
	if got := h.f.CountByEndpoint()["PATCH /repos/{owner}/{repo}/issues/{n}"]; got != 2 {
		t.Errorf("PATCH count %d, want 2", got)
	}
}

func TestGraphQL(t *testing.T) {
	h := newHarness(t, Options{})
	n := h.f.CreatePullRequest("b", "main", "T", "", true)
	is, _ := h.f.Issue(n)
	q := func(query, id string) map[string]any {
		body, _ := json.Marshal(map[string]any{"query": query, "variables": map[string]any{"input": map[string]any{"pullRequestId": id}}})
		resp, data := h.do(t, "POST", "/graphql", string(body))
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		return decode[map[string]any](t, data)
	}
	const m = `mutation($input:MarkPullRequestReadyForReviewInput!){markPullRequestReadyForReview(input: $input){pullRequest{isDraft,number}}}`
	got := q(m, is.Pull.NodeID)
	want := map[string]any{"data": map[string]any{"markPullRequestReadyForReview": map[string]any{"pullRequest": map[string]any{"isDraft": false, "number": float64(n)}}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if is, _ := h.f.Issue(n); is.Pull.Draft {
		t.Error("still a draft")
	}
	if got := q(m, "PR_nope"); got["errors"] == nil {
		t.Errorf("unknown node: %v", got)
	}
	if got := q(`mutation($input:MarkPullRequestReadyForReviewInput!){markPullRequestReadyForReview(input: $input){pullRequest{secret}}}`, is.Pull.NodeID); got["errors"] == nil {
		t.Errorf("unknown field: %v", got)
	}
	if got := q(`query{viewer{login}}`, ""); got["errors"] == nil {
		t.Errorf("unsupported query: %v", got)
	}

	// The body and ready in one document, as the product sends them.
	n2 := h.f.CreatePullRequest("c", "main", "T", "old body", true)
	is2, _ := h.f.Issue(n2)
	body, _ := json.Marshal(map[string]any{
		"query": `mutation($body:UpdatePullRequestInput!$input:MarkPullRequestReadyForReviewInput!){updatePullRequest(input: $body){pullRequest{id}}markPullRequestReadyForReview(input: $input){pullRequest{isDraft}}}`,
		"variables": map[string]any{"input": map[string]any{"pullRequestId": is2.Pull.NodeID},
			"body": map[string]any{"pullRequestId": is2.Pull.NodeID, "body": "Closes #1."}}})
	resp, data := h.do(t, "POST", "/graphql", string(body))
	got2 := decode[map[string]any](t, data)
	want2 := map[string]any{"data": map[string]any{
		"updatePullRequest":             map[string]any{"pullRequest": map[string]any{"id": is2.Pull.NodeID}},
		"markPullRequestReadyForReview": map[string]any{"pullRequest": map[string]any{"isDraft": false}}}}
	if diff := cmp.Diff(want2, got2); resp.StatusCode != 200 || diff != "" {
		t.Errorf("two mutations in one document: status %d (-want +got):\n%s", resp.StatusCode, diff)
	}
	if is2, _ := h.f.Issue(n2); is2.Body != "Closes #1." || is2.Pull.Draft {
		t.Errorf("after the document: body %q, draft %v; want the new body, not a draft", is2.Body, is2.Pull.Draft)
	}
}

func TestSaveLoad(t *testing.T) {
	h := newHarness(t, Options{})
	n := h.f.CreateIssue(Issue{Title: "t", Body: "b", Labels: []string{"x"}})
	h.f.AddComment(n, "bob", "hi")
	h.f.SetPermission("bob", "write")
	run := h.f.AddRun(Run{WorkflowFile: "w.yml"})
	h.f.AddJob(run, Job{Name: "j", Log: "log"})
	h.do(t, "POST", "/repos/acme/widgets/actions/workflows/w.yml/dispatches", `{"ref":"main","inputs":{"a":"b"}}`)
	path := filepath.Join(t.TempDir(), "state.json")
	if err := h.f.Save(path); err != nil {
		t.Fatal(err)
	}
	g := New(Options{Owner: "acme", Repo: "widgets", Clock: h.clock})
	if err := g.Load(path); err != nil {
		t.Fatal(err)
	}
	a, _ := h.f.Issue(n)
	b, _ := g.Issue(n)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("issue after load (-saved +loaded):\n%s", diff)
	}
	if diff := cmp.Diff(h.f.Comments(n), g.Comments(n)); diff != "" {
		t.Errorf("comments (-saved +loaded):\n%s", diff)
	}
	if diff := cmp.Diff(h.f.Dispatches(), g.Dispatches()); diff != "" {
		t.Errorf("dispatches (-saved +loaded):\n%s", diff)
	}
	// New numbers continue after the loaded ones.
	if m := g.CreateIssue(Issue{Title: "next"}); m != n+1 {
		t.Errorf("next issue %d, want %d", m, n+1)
	}
}

func TestConcurrentUse(t *testing.T) {
	h := newHarness(t, Options{RateLimit: 100000, SecondaryPerMinute: 100000, SecondaryPerHour: 100000})
	n := h.f.CreateIssue(Issue{Title: "t"})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				h.do(t, "POST", fmt.Sprintf("/repos/acme/widgets/issues/%d/comments", n), fmt.Sprintf(`{"body":"g%d-%d"}`, g, i))
				h.do(t, "GET", fmt.Sprintf("/repos/acme/widgets/issues/%d", n), "")
				h.f.SetIssueBody(n, "alice", fmt.Sprintf("g%d", g))
				h.f.Requests()
			}
		}()
	}
	wg.Wait()
	if got := len(h.f.Comments(n)); got != 160 {
		t.Errorf("%d comments, want 160", got)
	}
}

func TestGitRemoteHeads(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	remote := filepath.Join(dir, "remote.git")
	work := filepath.Join(dir, "work")
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(git, args...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("init", "--bare", "-q", remote)
	run("init", "-q", "-b", "main", work)
	run("-C", work, "commit", "-q", "--allow-empty", "-m", "one")
	run("-C", work, "push", "-q", remote, "main:main", "main:roadmap/issue-1")
	first := run("-C", work, "rev-parse", "HEAD")

	h := newHarness(t, Options{GitRemote: remote})
	if resp, data := h.do(t, "POST", "/repos/acme/widgets/pulls", `{"title":"t","head":"nope","base":"main"}`); resp.StatusCode != 422 {
		t.Errorf("PR from a branch the remote lacks: %d %s", resp.StatusCode, data)
	}
	resp, data := h.do(t, "POST", "/repos/acme/widgets/pulls", `{"title":"t","head":"roadmap/issue-1","base":"main","draft":true}`)
	if resp.StatusCode != 201 {
		t.Fatalf("create PR: %d %s", resp.StatusCode, data)
	}
	n := int(decode[map[string]any](t, data)["number"].(float64))
	head := func() string {
		_, data := h.do(t, "GET", fmt.Sprintf("/repos/acme/widgets/pulls/%d", n), "")
		return decode[map[string]any](t, data)["head"].(map[string]any)["sha"].(string)
	}
	if got := head(); got != first {
		t.Errorf("head.sha %s, want %s", got, first)
	}
	run("-C", work, "commit", "-q", "--allow-empty", "-m", "two")
	run("-C", work, "push", "-q", remote, "HEAD:roadmap/issue-1")
	second := run("-C", work, "rev-parse", "HEAD")
	if got := head(); got != second {
		t.Errorf("after a push: head.sha %s, want %s", got, second)
	}
	// Statuses by branch name land on the pushed commit.
	h.f.AddStatus(second, "ci", "success", "")
	_, data = h.do(t, "GET", "/repos/acme/widgets/commits/roadmap/issue-1/status", "")
	if got := decode[map[string]any](t, data); got["sha"] != second || got["state"] != "success" {
		t.Errorf("combined status by branch: %v", got)
	}
}

func TestFaultDelay(t *testing.T) {
	h := newHarness(t, Options{})
	h.f.AddFault(Rule{Method: "GET", Path: "/repos/*/*/labels", Call: 1, Delay: 5 * time.Second})
	req, _ := http.NewRequest("GET", h.srv.URL+"/repos/acme/widgets/labels", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	if _, err := (&http.Client{Timeout: 100 * time.Millisecond}).Do(req); err == nil {
		t.Error("a client with a shorter timeout than the delay got an answer")
	}
	if resp, _ := h.do(t, "GET", "/repos/acme/widgets/labels", ""); resp.StatusCode != 200 {
		t.Errorf("the next call: %d", resp.StatusCode)
	}
}

// TestTokenNameLogged: two tokens acting as one login (two runs' GITHUB_TOKEN)
// are told apart in the request log by their identities' names, and the
// token itself is logged nowhere.
func TestTokenNameLogged(t *testing.T) {
	h := newHarness(t, Options{})
	n := h.f.CreateIssue(Issue{Title: "one"})
	run1, run2 := "ghs_run1Token000000000000000000000000000", "ghs_run2Token000000000000000000000000000"
	h.f.AddIdentity(run1, Identity{Login: "github-actions[bot]", Kind: WorkflowToken, Name: "run 1"})
	h.f.AddIdentity(run2, Identity{Login: "github-actions[bot]", Kind: WorkflowToken, Name: "run 2"})
	for _, tk := range []string{run1, run2, tok} {
		req, _ := http.NewRequest("GET", fmt.Sprintf("%s/repos/acme/widgets/issues/%d", h.srv.URL, n), nil)
		req.Header.Set("Authorization", "Bearer "+tk)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	var got []string
	for _, r := range h.f.Requests() {
		got = append(got, r.Login+"/"+r.TokenName)
		if data, _ := json.Marshal(r); strings.Contains(string(data), "Token0000") {
			t.Errorf("the log holds a token: %s", data)
		}
	}
	if diff := cmp.Diff([]string{"github-actions[bot]/run 1", "github-actions[bot]/run 2", "github-actions[bot]/"}, got); diff != "" {
		t.Errorf("logins/token names (-want +got):\n%s", diff)
	}
}
