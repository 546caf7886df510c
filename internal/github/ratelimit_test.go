package github

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/roadmap-dev/roadmap/internal/githubfake"
)

const secondaryBody = `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`

func statuses(reqs []githubfake.LoggedRequest) []int {
	var out []int
	for _, r := range reqs {
		out = append(out, r.Status)
	}
	return out
}

func TestPrimaryRateLimit(t *testing.T) {
	t.Run("cool-down after the last request of the window", func(t *testing.T) {
		e := newEnv(t, githubfake.Options{RateLimit: 3})
		for i := range 3 {
			if _, err := e.c.Permission(ctx, fmt.Sprintf("u%d", i)); err != nil {
				t.Fatal(err)
			}
		}
		// The third answer said remaining 0, reset t0+1h. The next call must
		// wait without sending anything, then go out after the reset.
		reset := t0.Add(time.Hour)
		if _, err := e.c.Permission(ctx, "u3"); err != nil {
			t.Fatalf("after the reset: %v", err)
		}
		reqs := e.fake.Requests()
		if diff := cmp.Diff([]int{200, 200, 200, 200}, statuses(reqs)); diff != "" {
			t.Errorf("statuses (-want +got):\n%s", diff)
		}
		if last := reqs[3].Time; last.Before(reset) {
			t.Errorf("the fourth request went out at %s, before the reset %s", last, reset)
		}
		if diff := cmp.Diff([]time.Duration{time.Hour + time.Second}, e.clock.Sleeps()); diff != "" {
			t.Errorf("waits (-want +got):\n%s", diff)
		}
	})
	t.Run("403 with remaining 0 waits until the reset, then resumes", func(t *testing.T) {
		e := newEnv(t, githubfake.Options{RateLimit: 10})
		e.fake.SetRateLimitUsed(testToken, "core", 10)
		if _, err := e.c.Permission(ctx, "u"); err != nil {
			t.Fatalf("Permission: %v", err)
		}
		reqs := e.fake.Requests()
		if diff := cmp.Diff([]int{403, 200}, statuses(reqs)); diff != "" {
			t.Errorf("statuses (-want +got):\n%s", diff)
		}
		if reqs[1].Time.Before(t0.Add(time.Hour)) {
			t.Errorf("retried at %s, during the cool-down", reqs[1].Time)
		}
	})
	t.Run("GraphQL's 200 RATE_LIMITED", func(t *testing.T) {
		e := newEnv(t, githubfake.Options{RateLimit: 10})
		n := e.fake.CreatePullRequest("b", "main", "T", "", true)
		pr, err := e.c.PR(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		e.fake.SetRateLimitUsed(testToken, "graphql", 10)
		if err := e.c.MarkReady(ctx, pr); err != nil {
			t.Fatalf("MarkReady: %v", err)
		}
		if got := e.count("POST /graphql"); got != 2 {
			t.Errorf("GraphQL requests %d, want 2 (limited, then after the reset)", got)
		}
		if is, _ := e.fake.Issue(n); is.Pull.Draft {
			t.Error("still a draft")
		}
	})
}

func TestSecondaryRateLimit(t *testing.T) {
	t.Run("retry-after is waited exactly", func(t *testing.T) {
		e := newEnv(t, githubfake.Options{SecondaryPerMinute: 2})
		for i := range 3 {
			if err := e.c.CreateStatus(ctx, sha1, fmt.Sprintf("c%d", i), "success", "", ""); err != nil {
				t.Fatalf("status %d: %v", i, err)
			}
		}
		if diff := cmp.Diff([]int{201, 201, 403, 201}, statuses(e.fake.Requests())); diff != "" {
			t.Errorf("statuses (-want +got):\n%s", diff)
		}
		// Both earlier writes were at t0, so one more is allowed at t0+60s.
		if diff := cmp.Diff([]time.Duration{time.Minute}, e.clock.Sleeps()); diff != "" {
			t.Errorf("waits (-want +got):\n%s", diff)
		}
	})
	t.Run("without retry-after: at least a minute, then doubling", func(t *testing.T) {
		e := newEnv(t, githubfake.Options{})
		for _, call := range []int{1, 2} {
			e.fake.AddFault(githubfake.Rule{Method: "POST", Path: "/repos/*/*/statuses/*", Call: call, Status: 403, Body: secondaryBody})
		}
		if err := e.c.CreateStatus(ctx, sha1, "c", "success", "", ""); err != nil {
			t.Fatalf("CreateStatus: %v", err)
		}
		if diff := cmp.Diff([]time.Duration{time.Minute, 2 * time.Minute}, e.clock.Sleeps()); diff != "" {
			t.Errorf("waits (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]int{403, 403, 201}, statuses(e.fake.Requests())); diff != "" {
			t.Errorf("statuses (-want +got):\n%s", diff)
		}
	})
	t.Run("bounded", func(t *testing.T) {
		e := newEnv(t, githubfake.Options{})
		e.fake.AddFault(githubfake.Rule{Method: "POST", Path: "/repos/*/*/statuses/*", Status: 403, Body: secondaryBody})
		err := e.c.CreateStatus(ctx, sha1, "c", "success", "", "")
		var rl *RateLimitError
		if !errors.As(err, &rl) || !rl.Secondary {
			t.Fatalf("err = %v, want a secondary *RateLimitError", err)
		}
		if got := len(e.fake.Requests()); got != maxSecondaryWaits+1 {
			t.Errorf("%d requests, want %d", got, maxSecondaryWaits+1)
		}
	})
}

func TestRateLimitPastDeadline(t *testing.T) {
	deadline := func(o *Options) { o.Deadline = t0.Add(10 * time.Minute) }
	t.Run("primary", func(t *testing.T) {
		e := newEnv(t, githubfake.Options{RateLimit: 5}, deadline)
		e.fake.SetRateLimitUsed(testToken, "core", 5)
		_, err := e.c.Issue(ctx, 1)
		var rl *RateLimitError
		if !errors.As(err, &rl) {
			t.Fatalf("err = %v, want *RateLimitError", err)
		}
		if rl.Secondary || rl.Wait != time.Hour+time.Second || !rl.Reset.Equal(t0.Add(time.Hour+time.Second)) {
			t.Errorf("got %+v; want a primary limit with a wait of 1h1s", rl)
		}
		if n := len(e.fake.Requests()); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
		if s := e.clock.Sleeps(); len(s) != 0 {
			t.Errorf("slept %v before giving up", s)
		}
		// The cool-down is remembered: the next call sends nothing.
		_, err = e.c.Issue(ctx, 1)
		if !errors.As(err, &rl) || len(e.fake.Requests()) != 1 {
			t.Errorf("second call: %v after %d requests; want a *RateLimitError and no request", err, len(e.fake.Requests()))
		}
	})
	t.Run("secondary retry-after", func(t *testing.T) {
		e := newEnv(t, githubfake.Options{}, deadline)
		e.fake.AddFault(githubfake.Rule{Method: "POST", Path: "/repos/*/*/statuses/*", Status: 403, Body: secondaryBody,
			Headers: map[string]string{"Retry-After": "900"}})
		err := e.c.CreateStatus(ctx, sha1, "c", "success", "", "")
		var rl *RateLimitError
		if !errors.As(err, &rl) || !rl.Secondary || rl.Wait != 15*time.Minute {
			t.Fatalf("err = %v; want a secondary *RateLimitError with a 15m wait", err)
		}
		if n := len(e.fake.Requests()); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
	})
}

func TestPlain403NotRetried(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(e *env) *Client
		want  int
	}{
		{"403 without rate-limit markers", func(e *env) *Client {
			e.fake.AddFault(githubfake.Rule{Method: "POST", Path: "/repos/*/*/issues/*/labels", Status: 403,
				Body: `{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest"}`})
			return e.c
		}, 403},
		{"read-only token", func(e *env) *Client {
			e.fake.AddToken("ghs_readonly", "github-actions[bot]", true)
			return e.client(t, func(o *Options) { o.Token = "ghs_readonly" })
		}, 403},
		{"bad token", func(e *env) *Client {
			return e.client(t, func(o *Options) { o.Token = "ghp_wrong" })
		}, 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, githubfake.Options{})
			n := e.fake.CreateIssue(githubfake.Issue{Title: "t"})
			c := tc.setup(e)
			err := c.AddLabels(ctx, n, "x")
			var ae *AuthError
			if !errors.As(err, &ae) || ae.Status != tc.want {
				t.Fatalf("err = %v, want *AuthError %d", err, tc.want)
			}
			if Transient(err) {
				t.Error("an auth error is transient")
			}
			if got := len(e.fake.Requests()); got != 1 {
				t.Errorf("%d requests, want 1 (no retry)", got)
			}
			if s := e.clock.Sleeps(); len(s) != 0 {
				t.Errorf("waited %v", s)
			}
		})
	}
}

func TestTransientRetries(t *testing.T) {
	t.Run("GET 502 twice, then ok", func(t *testing.T) {
		e := newEnv(t, githubfake.Options{})
		n := e.fake.CreateIssue(githubfake.Issue{Title: "t"})
		e.fake.AddFault(githubfake.Rule{Method: "GET", Path: "/repos/*/*/issues/*", Call: 1, Status: 502})
		e.fake.AddFault(githubfake.Rule{Method: "GET", Path: "/repos/*/*/issues/*", Call: 2, Drop: true})
		if _, err := e.c.Issue(ctx, n); err != nil {
			t.Fatalf("Issue: %v", err)
		}
		if diff := cmp.Diff([]time.Duration{time.Second, 2 * time.Second}, e.clock.Sleeps()); diff != "" {
			t.Errorf("backoff (-want +got):\n%s", diff)
		}
		if got := e.c.Requests().Reads; got != 3 {
			t.Errorf("counted %d reads, want 3 attempts", got)
		}
	})
	t.Run("GET 5xx to the end", func(t *testing.T) {
		e := newEnv(t, githubfake.Options{})
		e.fake.AddFault(githubfake.Rule{Method: "GET", Path: "/repos/**", Status: 503})
		_, err := e.c.Issue(ctx, 1)
		var se *StatusError
		if !errors.As(err, &se) || se.Status != 503 || !Transient(err) || Indeterminate(err) {
			t.Fatalf("err = %v; want a transient, determinate 503", err)
		}
		if got := len(e.fake.Requests()); got != maxTransientRetries+1 {
			t.Errorf("%d attempts, want %d", got, maxTransientRetries+1)
		}
	})
	t.Run("POST is not retried", func(t *testing.T) {
		e := newEnv(t, githubfake.Options{})
		e.fake.AddFault(githubfake.Rule{Method: "POST", Path: "/repos/**", Status: 502})
		_, err := e.c.DispatchWorkflow(ctx, "w.yml", "main", nil)
		if !Transient(err) || !Indeterminate(err) {
			t.Errorf("err = %v; want transient and indeterminate", err)
		}
		if got := len(e.fake.Requests()); got != 1 {
			t.Errorf("%d attempts, want 1", got)
		}
	})
	t.Run("POST connection dropped", func(t *testing.T) {
		e := newEnv(t, githubfake.Options{})
		e.fake.AddFault(githubfake.Rule{Method: "POST", Path: "/repos/**", Drop: true})
		_, err := e.c.DispatchWorkflow(ctx, "w.yml", "main", nil)
		var te *TransportError
		if !errors.As(err, &te) || !Indeterminate(err) {
			t.Errorf("err = %v; want an indeterminate *TransportError", err)
		}
		if got := len(e.fake.Requests()); got != 1 {
			t.Errorf("%d attempts, want 1", got)
		}
	})
}

// TestGoGitHubRateCheckBypassed pins the context key that turns off
// go-github's own pre-request rate check, which reads the real clock: with
// the test clock in 2099, go-github would refuse the second request.
func TestGoGitHubRateCheckBypassed(t *testing.T) {
	e := newEnv(t, githubfake.Options{RateLimit: 1})
	if _, err := e.c.Permission(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(2 * time.Hour) // past the reset on the test clock, not on the real one
	if _, err := e.c.Permission(ctx, "b"); err != nil {
		t.Fatalf("after the reset: %v", err)
	}
	if got := len(e.fake.Requests()); got != 2 {
		t.Errorf("%d requests reached the fake, want 2", got)
	}
	if s := e.clock.Sleeps(); len(s) != 0 {
		t.Errorf("waited %v although the reset had passed", s)
	}
}

var _ = http.StatusOK
