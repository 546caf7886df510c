package recordstore

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/redact"
)

const testToken = "ghs_fakeinstallationtoken000000000000000"

// t0 is well past the real date so go-github's own rate-limit check, which
// reads the real clock, would refuse requests if it were not bypassed.
var t0 = time.Date(2099, 3, 1, 12, 0, 0, 0, time.UTC)

var ctx = context.Background()

const sha1 = "1111111111111111111111111111111111111111"

// env is a fake GitHub over HTTP, a Client on it and the store on that
// Client: the record store's world.
type env struct {
	fake  *githubfake.Fake
	srv   *httptest.Server
	clock *githubfake.ManualClock
	c     *github.Client
	s     *Store
}

func newEnv(t *testing.T, fo githubfake.Options, tweak ...func(*github.Options)) *env {
	t.Helper()
	clock := githubfake.NewManualClock(t0)
	if fo.Token == "" {
		fo.Token = testToken
	}
	if fo.Owner == "" {
		fo.Owner, fo.Repo = "acme", "widgets"
	}
	fo.Clock = clock
	fake := githubfake.New(fo)
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	e := &env{fake: fake, srv: srv, clock: clock}
	e.c = e.client(t, tweak...)
	e.s = New(e.c)
	return e
}

// client returns another Client on the same fake (another process, as far
// as GitHub can tell).
func (e *env) client(t *testing.T, tweak ...func(*github.Options)) *github.Client {
	t.Helper()
	opts := github.Options{
		BaseURL: e.srv.URL + "/", Token: testToken, Owner: "acme", Repo: "widgets",
		// No keep-alive: Go's transport resends an idempotent request on a
		// reused connection the server dropped, which the accounting cannot
		// see (docs/github.md); fresh connections keep the counts exact.
		HTTPClient: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}},
		Masker:     redact.New(redact.Config{}), Clock: e.clock,
	}
	for _, f := range tweak {
		f(&opts)
	}
	c, err := github.New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

// count returns how many requests the fake logged for an endpoint.
func (e *env) count(endpoint string) int { return e.fake.CountByEndpoint()[endpoint] }
