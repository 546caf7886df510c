package github

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/redact"
)

const testToken = "ghs_fakeinstallationtoken000000000000000"

// t0 is well past the real date so go-github's own rate-limit check, which
// reads the real clock, would refuse requests if it were not bypassed.
var t0 = time.Date(2099, 3, 1, 12, 0, 0, 0, time.UTC)

type env struct {
	fake  *githubfake.Fake
	srv   *httptest.Server
	clock *githubfake.ManualClock
	c     *Client
}

// newEnv starts a fake GitHub over HTTP and a Client on it sharing one
// manual clock. tweak may change the client's options before New.
func newEnv(t *testing.T, fo githubfake.Options, tweak ...func(*Options)) *env {
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
	// The repository has the commit and the workflows the tests name.
	fake.AddCommit(sha1)
	fake.AddWorkflow("roadmap-implement.yml", "w.yml")
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	e := &env{fake: fake, srv: srv, clock: clock}
	e.c = e.client(t, tweak...)
	return e
}

// client returns another Client on the same fake (another process, as far
// as GitHub can tell).
func (e *env) client(t *testing.T, tweak ...func(*Options)) *Client {
	t.Helper()
	opts := Options{
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
	c, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

// count returns how many requests the fake logged for an endpoint.
func (e *env) count(endpoint string) int { return e.fake.CountByEndpoint()[endpoint] }

var ctx = context.Background()

// The record helpers below stand in for internal/record: a block at the end
// of the body holding "key: value" lines. String operations only; the real
// record package is wired in by the lead.

const (
	blockOpen  = "<!-- roadmap:record v1"
	blockClose = "-->"
)

// splitRecord returns the person's text and the record's lines.
func splitRecord(body string) (text string, lines []string) {
	i := strings.Index(body, blockOpen)
	if i < 0 {
		return body, nil
	}
	text = body[:i]
	inner := strings.TrimPrefix(body[i:], blockOpen)
	inner, _, _ = strings.Cut(inner, blockClose)
	for _, l := range strings.Split(inner, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return text, lines
}

func joinRecord(text string, lines []string) string {
	if len(lines) == 0 {
		return text
	}
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return text + blockOpen + "\n" + strings.Join(lines, "\n") + "\n" + blockClose + "\n"
}

// setKey is an idempotent merge: it sets key to value inside the block and
// leaves the person's text byte for byte.
func setKey(key, value string) func(string) (string, error) {
	return func(body string) (string, error) {
		text, lines := splitRecord(body)
		want := key + ": " + value
		for i, l := range lines {
			if k, _, _ := strings.Cut(l, ":"); k == key {
				if l == want {
					return body, nil
				}
				lines[i] = want
				return joinRecord(text, lines), nil
			}
		}
		return joinRecord(text, append(lines, want)), nil
	}
}

func hasKey(key, value string) func(string) bool {
	return func(body string) bool {
		_, lines := splitRecord(body)
		for _, l := range lines {
			if l == key+": "+value {
				return true
			}
		}
		return false
	}
}

// personText returns the text outside the record block.
func personText(body string) string {
	text, _ := splitRecord(body)
	return text
}

// withPersonText replaces the text outside the block, keeping the block:
// what a person does when they edit the description.
func withPersonText(body, text string) string {
	i := strings.Index(body, blockOpen)
	if i < 0 {
		return text
	}
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return text + body[i:]
}
