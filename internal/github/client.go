package github

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/roadmap-dev/roadmap/internal/clock"

	gogithub "github.com/google/go-github/v66/github"
	"github.com/shurcooL/githubv4"
)

// Masker masks secrets in text (internal/redact's *Masker is one). Every
// text the Client writes to GitHub passes it.
type Masker interface {
	Mask(string) string
}

// Clock is the Client's time: every wait (rate limits, backoff) is slept on
// it, so tests wait without sleeping.
type Clock interface {
	Now() time.Time
	// Sleep waits d or until ctx is done.
	Sleep(ctx context.Context, d time.Duration) error
}

// Options configure a Client.
type Options struct {
	// BaseURL is the REST root, e.g. https://api.github.com/ or the fake's
	// URL (default https://api.github.com/).
	BaseURL string
	// GraphQLURL defaults to BaseURL + "graphql" (…/api/graphql on GHES).
	GraphQLURL string
	// Token is sent as a bearer token to the API hosts only (never to the
	// log download URLs GitHub redirects to).
	Token       string
	Owner, Repo string
	// HTTPClient supplies the base transport and the timeout of each
	// attempt (default: the default transport and 60 s).
	HTTPClient *http.Client
	// Masker is required: New fails without one, so no write can skip it.
	Masker Masker
	// Clock defaults to real time.
	Clock Clock
	// Identity is the login the token writes as (default
	// github-actions[bot], GITHUB_TOKEN's; a GitHub App's is "<slug>[bot]").
	// The record is read only from a comment by it.
	Identity string
	// Deadline is when the Job must be done, on Clock (zero: none). A
	// rate-limit wait that would pass it, or the context's deadline, returns
	// *RateLimitError instead of waiting.
	Deadline time.Time
	// OnRecovery, when set, hears each recovery branch the Client takes: a
	// retry, a rate-limit wait, a record change applied again
	// (LogRecoveries writes them to a log).
	OnRecovery func(Recovery)
	// NoRetry turns off the retries of transient failures (a fault suite
	// shows that its retry histories depend on them); nothing else sets it.
	NoRetry bool
}

// Client talks to one repository. It is safe for concurrent use.
type Client struct {
	owner, repo string
	gh          *gogithub.Client
	gql         *githubv4.Client
	logs        *http.Client
	rec         *recorder
	mask        func(string) string
	clock       Clock
	deadline    time.Time
	identity    string
	server      string // the server's host, as links to it are written
	recovered   func(Recovery)
	limits      *limits

	mu         sync.Mutex
	issueLocks map[int]*sync.Mutex
	markers    map[markerKey]markerState
	// uncommented are the issues read with no comment at all (IssueState):
	// a marker comment on one is made without a list to find it first.
	uncommented map[int]bool
}

type markerKey struct {
	issue  int
	marker string
}

// markerState is what the Client knows of a marker comment: its id and the
// body it last wrote or read there.
type markerState struct {
	id      int64
	comment Comment // as last written or read; zero when absent
}

// New returns a Client. It fails without a Masker, an owner or a repo.
func New(opts Options) (*Client, error) {
	if opts.Masker == nil {
		return nil, errors.New("github: Options.Masker is required (every write is masked)")
	}
	if opts.Owner == "" || opts.Repo == "" {
		return nil, errors.New("github: Options.Owner and Options.Repo are required")
	}
	if opts.BaseURL == "" {
		opts.BaseURL = "https://api.github.com/"
	}
	if !strings.HasSuffix(opts.BaseURL, "/") {
		opts.BaseURL += "/"
	}
	base, err := url.Parse(opts.BaseURL)
	if err != nil || base.Host == "" {
		return nil, fmt.Errorf("github: bad BaseURL %q", opts.BaseURL)
	}
	if opts.GraphQLURL == "" {
		if p, ok := strings.CutSuffix(base.Path, "/api/v3/"); ok {
			opts.GraphQLURL = base.Scheme + "://" + base.Host + p + "/api/graphql"
		} else {
			opts.GraphQLURL = opts.BaseURL + "graphql"
		}
	}
	gqlURL, err := url.Parse(opts.GraphQLURL)
	if err != nil || gqlURL.Host == "" {
		return nil, fmt.Errorf("github: bad GraphQLURL %q", opts.GraphQLURL)
	}
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.Identity == "" {
		opts.Identity = DefaultIdentity
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 60 * time.Second}
	}
	baseRT := hc.Transport
	if baseRT == nil {
		baseRT = http.DefaultTransport
	}
	c := &Client{
		owner: opts.Owner, repo: opts.Repo,
		rec: &recorder{}, mask: opts.Masker.Mask, clock: opts.Clock, deadline: opts.Deadline, identity: opts.Identity,
		issueLocks: map[int]*sync.Mutex{}, markers: map[markerKey]markerState{}, uncommented: map[int]bool{}, server: serverHost(base.Host),
	}
	c.recovered = func(r Recovery) {
		if opts.OnRecovery == nil {
			return
		}
		if r.Repository == "" {
			r.Repository = c.owner + "/" + c.repo
		}
		r.Request = c.mask(r.Request)
		opts.OnRecovery(r)
	}
	lim := &limits{}
	c.limits = lim
	api := &transport{
		base: baseRT, token: opts.Token,
		authHosts: map[string]bool{base.Host: true, gqlURL.Host: true},
		prefix:    strings.TrimSuffix(base.Path, "/"),
		rec:       c.rec, clock: opts.Clock, deadline: opts.Deadline, limits: lim,
		cache: &etagCache{max: 256}, retry: !opts.NoRetry, timeout: hc.Timeout, recovered: c.recovered,
	}
	// No Timeout on the clients above the transport: it would also bound
	// the rate-limit waits. The transport times each attempt instead.
	apiClient := &http.Client{Transport: api, CheckRedirect: hc.CheckRedirect, Jar: hc.Jar}
	gh := gogithub.NewClient(apiClient)
	gh.BaseURL = base
	gh.UserAgent = "roadmap"
	c.gh = gh
	gqlClient := &http.Client{Transport: graphqlStatus{api}}
	c.gql = githubv4.NewEnterpriseClient(opts.GraphQLURL, gqlClient)
	// Job logs are fetched from the URL GitHub redirects to: no token,
	// no rate limit, no overall timeout (the log is streamed; ctx bounds it).
	c.logs = &http.Client{Transport: &transport{
		base: baseRT, rec: c.rec, clock: opts.Clock, deadline: opts.Deadline, limits: &limits{}, unmetered: true,
	}}
	return c, nil
}

// ServerHost is the host of the GitHub server the Client talks to, as links
// to it are written in comments: github.com for api.github.com, SUB.ghe.com
// for api.SUB.ghe.com, and the API's own host for GitHub Enterprise Server
// (whose API is under /api/v3) and for a test server. Text placed in a
// comment may link there and nowhere else (redact.Neutralise).
func (c *Client) ServerHost() string { return c.server }

func serverHost(apiHost string) string {
	h := strings.ToLower(apiHost)
	switch {
	case h == "api.github.com":
		return "github.com"
	case strings.HasPrefix(h, "api.") && strings.HasSuffix(h, ".ghe.com"):
		return strings.TrimPrefix(h, "api.")
	}
	return h
}

// Requests returns what the Client has spent so far. Take one before a Job
// and Sub it from one after to get the Job's count.
func (c *Client) Requests() Accounting { return c.rec.snapshot() }

// bypassKey is go-github's (unexported) bypassRateLimitCheck context key,
// reached through the exported constant that follows it. go-github would
// otherwise refuse requests before a reset it computes with the real
// time.Now, which fights the injected Clock; our transport enforces the
// cool-down itself. TestGoGitHubRateCheckBypassed pins this.
const bypassKey = gogithub.SleepUntilPrimaryRateLimitResetWhenRateLimited - 1

func (c *Client) ctx(ctx context.Context) context.Context {
	return context.WithValue(ctx, bypassKey, true)
}

// fail turns go-github's errors into this package's typed errors.
func (c *Client) fail(err error) error {
	if err == nil {
		return nil
	}
	var (
		rl *RateLimitError
		te *TransportError
		ae *AuthError
		se *StatusError
	)
	switch {
	case errors.As(err, &rl):
		return rl
	case errors.As(err, &te):
		return te
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &se):
		return se
	}
	var er *gogithub.ErrorResponse
	if errors.As(err, &er) && er.Response != nil && er.Response.Request != nil {
		req := er.Response.Request
		ep := endpointOf(req.Method, strings.TrimPrefix(req.URL.Path, strings.TrimSuffix(c.gh.BaseURL.Path, "/")))
		status := er.Response.StatusCode
		if status == http.StatusUnauthorized || status == http.StatusForbidden {
			return &AuthError{Method: req.Method, Endpoint: ep, Status: status, Message: er.Message}
		}
		out := &StatusError{Method: req.Method, Endpoint: ep, Status: status, Message: er.Message}
		for _, e := range er.Errors {
			d := strings.Trim(e.Resource+"."+e.Field, ".")
			if e.Code != "" {
				d += " " + e.Code
			}
			if e.Message != "" {
				d += ": " + e.Message
			}
			out.Errors = append(out.Errors, strings.TrimSpace(d))
		}
		return out
	}
	return err
}

// LockIssue serialises this Client's read-merge-writes of one issue (its
// body, its record comment), so two goroutines of one Job never race each
// other's read-merge-write. It returns the unlock.
func (c *Client) LockIssue(n int) func() { return c.lockIssue(n) }

// Sleep waits d on the Client's clock, or fails at once when the wait would
// pass the Job's deadline.
func (c *Client) Sleep(ctx context.Context, d time.Duration) error { return c.sleep(ctx, d) }

// Recovered reports a recovery branch a caller's protocol took, as the
// transport reports its own (Options.OnRecovery).
func (c *Client) Recovered(r Recovery) { c.recovered(r) }

// Mask masks s as every body this Client writes is masked.
func (c *Client) Mask(s string) string { return c.mask(s) }

// TooLong reports whether body is over GitHub's limit on a comment.
func TooLong(body string) bool { return tooLong(body) }

// Backoff is the wait before retry n (0-based) of a write that may or may
// not have landed.
func Backoff(n int) time.Duration { return backoff(n) }

// NoResend marks ctx so that a write refused for a rate limit is not resent
// after the wait: it fails with a *RateLimitError with Waited set, and the
// caller, whose body was built from a read before the wait, reads again and
// rebuilds it (the record store's write protocol).
func NoResend(ctx context.Context) context.Context {
	return context.WithValue(ctx, noResendKey{}, true)
}

// MaxRateLimitWaits is how many rate-limit waits the transport would wait
// out for one request: a protocol that starts over after each bounds its
// rounds by it.
const MaxRateLimitWaits = maxPrimaryWaits + maxSecondaryWaits

func (c *Client) lockIssue(n int) func() {
	c.mu.Lock()
	m := c.issueLocks[n]
	if m == nil {
		m = &sync.Mutex{}
		c.issueLocks[n] = m
	}
	c.mu.Unlock()
	m.Lock()
	return m.Unlock
}

// again runs op and, when it fails indeterminately (a write that may have
// landed), runs it again: only for writes whose effect is the same however
// often they land (set a body, add a label, set a status).
func (c *Client) again(ctx context.Context, op func() error) error {
	var err error
	for attempt := 0; attempt <= 2; attempt++ {
		if err = op(); err == nil || !Indeterminate(err) {
			return err
		}
		if attempt < 2 && c.sleep(ctx, backoff(attempt)) != nil {
			return err
		}
	}
	return err
}

func (c *Client) sleep(ctx context.Context, d time.Duration) error {
	if pastDeadline(ctx, c.clock, c.deadline, d) {
		return errPastDeadline
	}
	return c.clock.Sleep(ctx, d)
}

// maxBody is GitHub's limit on issue, pull request and comment bodies.
const maxBody = 65536

func tooLong(s string) bool { return utf8.RuneCountInString(s) > maxBody }

// graphqlStatus turns a non-200 GraphQL answer into a typed error, which
// githubv4 would otherwise flatten into a string.
type graphqlStatus struct{ next http.RoundTripper }

func (g graphqlStatus) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := g.next.RoundTrip(req)
	if err != nil || resp.StatusCode == http.StatusOK {
		return resp, err
	}
	body := peek(resp, 1<<16)
	drain(resp)
	msg := strings.TrimSpace(string(body))
	var e struct {
		Message string `json:"message"`
	}
	if jsonErr := json.Unmarshal(body, &e); jsonErr == nil && e.Message != "" {
		msg = e.Message
	}
	ep := endpointOf(req.Method, "/graphql")
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return nil, &AuthError{Method: req.Method, Endpoint: ep, Status: resp.StatusCode, Message: msg}
	}
	return nil, &StatusError{Method: req.Method, Endpoint: ep, Status: resp.StatusCode, Message: msg}
}

// EnvTimeout names the environment variable that bounds each of roadmap's
// GitHub requests (a Go duration, 1s to 10m); unset is DefaultTimeout.
const EnvTimeout = "ROADMAP_GITHUB_TIMEOUT"

// DefaultTimeout bounds a GitHub request when ROADMAP_GITHUB_TIMEOUT is unset.
const DefaultTimeout = 60 * time.Second

// Timeout reads a ROADMAP_GITHUB_TIMEOUT value: "" is DefaultTimeout.
func Timeout(v string) (time.Duration, error) {
	if strings.TrimSpace(v) == "" {
		return DefaultTimeout, nil
	}
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil || d < time.Second || d > 10*time.Minute {
		return 0, fmt.Errorf("%s=%q: want a duration from 1s to 10m, such as 30s", EnvTimeout, v)
	}
	return d, nil
}
