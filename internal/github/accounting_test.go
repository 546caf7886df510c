package github

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/roadmap-dev/roadmap/internal/githubfake"
)

func TestEndpointOf(t *testing.T) {
	for _, tc := range []struct{ method, path, want string }{
		{"GET", "/repos/o/r/issues/12", "GET /repos/{owner}/{repo}/issues/{n}"},
		{"PATCH", "/repos/o/r/issues/comments/99", "PATCH /repos/{owner}/{repo}/issues/comments/{id}"},
		{"GET", "/repos/o/r/issues/12/comments", "GET /repos/{owner}/{repo}/issues/{n}/comments"},
		{"DELETE", "/repos/o/r/issues/3/labels/roadmap%3Astage", "DELETE /repos/{owner}/{repo}/issues/{n}/labels/{name}"},
		{"GET", "/repos/o/r/commits/feature/x/status", "GET /repos/{owner}/{repo}/commits/{ref}/status"},
		{"GET", "/repos/o/r/commits/" + sha1 + "/check-runs", "GET /repos/{owner}/{repo}/commits/{ref}/check-runs"},
		{"POST", "/repos/o/r/actions/workflows/x.yml/dispatches", "POST /repos/{owner}/{repo}/actions/workflows/{workflow}/dispatches"},
		{"GET", "/repos/o/r/actions/jobs/5/logs", "GET /repos/{owner}/{repo}/actions/jobs/{job_id}/logs"},
		{"POST", "/graphql", "POST /graphql"},
		{"GET", "/repos/o/r/git/commits/" + sha1, "GET /repos/{owner}/{repo}/git/commits/{sha}"},
		{"GET", "/repositories/1000/issues", "GET /repositories/{n}/issues"},
	} {
		if got := endpointOf(tc.method, tc.path); got != tc.want {
			t.Errorf("endpointOf(%s %s) = %q, want %q", tc.method, tc.path, got, tc.want)
		}
	}
}

func TestAccounting(t *testing.T) {
	e := newEnv(t, githubfake.Options{})
	n := e.fake.CreateIssue(githubfake.Issue{Title: "t"})
	start := e.c.Requests()
	e.c.Issue(ctx, n)                   // read
	e.c.Issue(ctx, n)                   // 304
	e.c.AddLabels(ctx, n, "a")          // write
	e.c.Issue(ctx, n)                   // read (labels changed the issue)
	e.c.RemoveLabel(ctx, n, "not-here") // write (404 is fine)
	got := e.c.Requests().Sub(start)
	want := Accounting{Reads: 2, Writes: 2, NotModified: 1, ByEndpoint: map[string]EndpointCount{
		"GET /repos/{owner}/{repo}/issues/{n}":                  {Reads: 2, NotModified: 1},
		"POST /repos/{owner}/{repo}/issues/{n}/labels":          {Writes: 1},
		"DELETE /repos/{owner}/{repo}/issues/{n}/labels/{name}": {Writes: 1},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Accounting (-want +got):\n%s", diff)
	}
	if got.Total() != 5 || got.Counted() != 4 {
		t.Errorf("Total %d Counted %d; want 5 and 4", got.Total(), got.Counted())
	}
	// The fake saw the same requests the client counted.
	var fakeTotal int
	for _, c := range e.fake.CountByEndpoint() {
		fakeTotal += c
	}
	if fakeTotal != got.Total() {
		t.Errorf("the fake logged %d requests, the client counted %d", fakeTotal, got.Total())
	}
}

// FuzzRateLimited feeds the rate-limit reader headers and bodies nobody here
// controls: it must not panic, and any wait it asks for is bounded.
func FuzzRateLimited(f *testing.F) {
	f.Add(403, "0", "4102444800", "", `{"message":"API rate limit exceeded"}`, false)
	f.Add(429, "", "", "30", ``, false)
	f.Add(403, "12", "", "", `{"message":"You have exceeded a secondary rate limit","documentation_url":"x#about-secondary-rate-limits"}`, false)
	f.Add(200, "0", "4102444800", "", `{"errors":[{"type":"RATE_LIMITED"}]}`, true)
	f.Add(403, "5", "", "Wed, 21 Oct 2099 07:28:00 GMT", `not json`, false)
	f.Fuzz(func(t *testing.T, status int, remaining, reset, retry, body string, graphql bool) {
		clock := githubfake.NewManualClock(t0)
		tr := &transport{clock: clock, limits: &limits{}}
		resp := &http.Response{StatusCode: status, Header: http.Header{}, Body: io.NopCloser(bytes.NewReader([]byte(body)))}
		resp.Header.Set("X-RateLimit-Remaining", remaining)
		resp.Header.Set("X-RateLimit-Reset", reset)
		resp.Header.Set("Retry-After", retry)
		resource := "core"
		if graphql {
			resource = "graphql"
		}
		rl, ok := tr.rateLimited(resp, resource, 3)
		if !ok {
			return
		}
		if rl.wait < 0 || rl.wait > time.Hour+time.Second {
			t.Fatalf("wait %v", rl.wait)
		}
		rest, _ := io.ReadAll(resp.Body)
		if string(rest) != body {
			t.Fatalf("body not put back: %q, want %q", rest, body)
		}
		_ = tr.wait(context.Background(), 0)
	})
}
