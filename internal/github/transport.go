package github

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/roadmap-dev/roadmap/internal/retry"
)

// Retry and wait bounds. Waits are slept on the injected Clock.
const (
	// maxTransientRetries is how often an idempotent request is retried after
	// a 5xx or a connection error (so up to 4 attempts: 1 s, 2 s, 4 s apart).
	maxTransientRetries = 3
	// maxPrimaryWaits bounds the waits for the hourly budget to reset.
	maxPrimaryWaits = 2
	// maxSecondaryWaits bounds the waits for a secondary limit; without a
	// retry-after they are 1, 2, 4 and 8 minutes, as GitHub asks (at least a
	// minute, then exponential).
	maxSecondaryWaits = 4
	// resetMargin is added to x-ratelimit-reset: it has second precision and
	// the runner's clock may run a little ahead of GitHub's.
	resetMargin = time.Second
	// maxWait caps one wait: GitHub's windows are an hour long, so a longer
	// reset or retry-after is a bad header, not a reason to sleep for days.
	maxWait = time.Hour + resetMargin
	// maxCached is the largest answer kept for conditional requests.
	maxCached = 4 << 20
)

// transport is the one RoundTripper every request of a Client passes: it
// adds the token, makes GETs conditional, waits out rate limits, retries
// idempotent requests on transient failures, and counts every attempt. It is
// the layer under go-github and githubv4, so nothing escapes it.
type transport struct {
	base      http.RoundTripper
	token     string
	authHosts map[string]bool
	prefix    string // the API's path prefix ("/api/v3" on GHES), stripped for accounting
	rec       *recorder
	clock     Clock
	deadline  time.Time
	limits    *limits
	cache     *etagCache // nil: no conditional requests
	retry     bool
	unmetered bool
	recovered func(Recovery) // nil on the log transport
	// timeout bounds each attempt (sending, and reading the answer), not the
	// waits between attempts, which an http.Client Timeout would cut short.
	timeout time.Duration
}

// limits remembers, per resource ("core", "graphql"), until when GitHub
// told us not to send, so no request goes out during a cool-down.
type limits struct {
	mu    sync.Mutex
	until map[string]cooldown
	seen  map[string]RateUse
}

// RateUse is a resource's primary limit as GitHub's last answer gave it
// (x-ratelimit-used, -limit, -reset).
type RateUse struct {
	Resource string    `json:"resource"`
	Used     int       `json:"used"`
	Limit    int       `json:"limit"`
	Reset    time.Time `json:"reset,omitzero"`
}

// observe keeps the rate-limit headers of an answer, per resource.
func (l *limits) observe(h http.Header, resource string) {
	limit, err1 := strconv.Atoi(strings.TrimSpace(h.Get("X-RateLimit-Limit")))
	used, err2 := strconv.Atoi(strings.TrimSpace(h.Get("X-RateLimit-Used")))
	if err1 != nil || err2 != nil || limit <= 0 || used < 0 {
		return
	}
	if r := h.Get("X-RateLimit-Resource"); r != "" {
		resource = r
	}
	u := RateUse{Resource: resource, Used: used, Limit: limit}
	if reset, ok := parseReset(h); ok {
		u.Reset = reset
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen == nil {
		l.seen = map[string]RateUse{}
	}
	l.seen[resource] = u
}

func (l *limits) used(resource string) (RateUse, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	u, ok := l.seen[resource]
	return u, ok
}

type cooldown struct {
	until     time.Time
	secondary bool
}

func (l *limits) get(resource string) cooldown {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.until[resource]
}

func (l *limits) set(resource string, cd cooldown) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.until == nil {
		l.until = map[string]cooldown{}
	}
	if cur := l.until[resource]; cd.until.After(cur.until) {
		l.until[resource] = cd
	}
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	path := strings.TrimPrefix(req.URL.Path, t.prefix)
	endpoint := endpointOf(req.Method, path)
	// sent is the request as a recovery's log line names it.
	sent := req.Method + " " + strings.TrimPrefix(req.URL.EscapedPath(), t.prefix)
	if t.unmetered {
		endpoint = req.Method + " {log URL}" // the path is a one-time secret
		sent = ""
	}
	resource := "core"
	if strings.HasSuffix(path, "/graphql") {
		resource = "graphql"
	}
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		// Make the body replayable so a retry sends it again (on a clone: a
		// RoundTripper must not change its caller's request).
		orig := req.Body
		req = req.Clone(ctx)
		data, err := io.ReadAll(orig)
		orig.Close()
		if err != nil {
			return nil, err
		}
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
		req.Body, _ = req.GetBody()
	}
	k := t.kindOf(req)
	retryable := t.retry && idempotent(req.Method)

	var cached *cacheEntry
	key := cacheKey(req)
	if t.cache != nil && req.Method == http.MethodGet && req.Header.Get("If-None-Match") == "" {
		cached = t.cache.get(key)
	}

	transient, primary, secondary := 0, 0, 0
	for attempt := 1; ; attempt++ {
		if cd := t.limits.get(resource); cd.until.After(t.clock.Now()) {
			wait := cd.until.Sub(t.clock.Now())
			if err := t.wait(ctx, wait); err != nil {
				return nil, t.rateErr(req, endpoint, wait, cd.secondary, "cool-down from an earlier answer", err)
			}
		}
		r := req.Clone(ctx)
		if attempt > 1 && req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r.Body = body
		}
		if t.token != "" && t.authHosts[req.URL.Host] {
			r.Header.Set("Authorization", "Bearer "+t.token)
		}
		if cached != nil {
			r.Header.Set("If-None-Match", cached.etag)
		}

		resp, err := t.send(r)
		if err != nil {
			t.rec.add(endpoint, k)
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if retryable && transient < maxTransientRetries {
				if werr := t.wait(ctx, backoff(transient)); werr == nil {
					transient++
					t.recover(Recovery{Request: sent, Kind: RecoverRetry, Endpoint: endpoint, Attempt: attempt + 1, Wait: backoff(transient - 1), Reason: "a connection error"})
					continue
				}
			}
			return nil, &TransportError{Method: req.Method, Endpoint: endpoint, Attempts: attempt, Err: err}
		}
		switch {
		case t.unmetered:
			t.rec.add(endpoint, kindUnmetered)
		case resp.StatusCode == http.StatusNotModified && k == kindRead:
			t.rec.add(endpoint, kindNotModified)
		default:
			t.rec.add(endpoint, k)
		}
		t.noteRemaining(resp, resource)

		if rl, ok := t.rateLimited(resp, resource, secondary); ok {
			drain(resp)
			n := &primary
			limit := maxPrimaryWaits
			if rl.secondary {
				n, limit = &secondary, maxSecondaryWaits
			}
			if *n >= limit {
				return nil, t.rateErr(req, endpoint, rl.wait, rl.secondary, rl.message, nil)
			}
			t.limits.set(resource, cooldown{until: t.clock.Now().Add(rl.wait), secondary: rl.secondary})
			if err := t.wait(ctx, rl.wait); err != nil {
				return nil, t.rateErr(req, endpoint, rl.wait, rl.secondary, rl.message, err)
			}
			*n++
			t.recover(Recovery{Request: sent, Kind: RecoverRateLimit, Endpoint: endpoint, Attempt: attempt + 1, Wait: rl.wait, Reason: strconv.Itoa(resp.StatusCode)})
			if ctx.Value(noResendKey{}) != nil {
				// The caller rebuilds this request after the wait.
				err := t.rateErr(req, endpoint, rl.wait, rl.secondary, rl.message, nil).(*RateLimitError)
				err.Waited = true
				return nil, err
			}
			continue
		}
		if resp.StatusCode >= 500 && retryable && transient < maxTransientRetries {
			if werr := t.wait(ctx, backoff(transient)); werr == nil {
				drain(resp)
				transient++
				t.recover(Recovery{Request: sent, Kind: RecoverRetry, Endpoint: endpoint, Attempt: attempt + 1, Wait: backoff(transient - 1), Reason: strconv.Itoa(resp.StatusCode)})
				continue
			}
		}
		if resp.StatusCode == http.StatusNotModified && cached != nil {
			drain(resp)
			return cached.response(req, resp.Header), nil
		}
		if t.cache != nil && resp.StatusCode == http.StatusOK && resp.Header.Get("ETag") != "" &&
			(req.Method == http.MethodGet || req.Method == http.MethodPatch) {
			// A PATCH answer is the resource's new representation, so it
			// replaces the older one kept under the GET key. It does not make
			// the next read free: GitHub (and the fake) give a write's answer
			// an ETag of its own, so that read is a counted 200
			// (TestWriteRecordRequests); only a server that gave it the GET's
			// ETag would answer 304.
			resp = t.cache.store(key, resp)
		}
		if t.cache != nil && resp.StatusCode == http.StatusCreated && req.Method == http.MethodPost &&
			resp.Header.Get("ETag") != "" && resp.Header.Get("Location") != "" {
			// A create's answer is the new resource as a GET of its Location
			// gives it, kept under that URL. As with a PATCH, its ETag is the
			// write's own, so the first read of it is still counted.
			if loc, err := req.URL.Parse(resp.Header.Get("Location")); err == nil && loc.Host == req.URL.Host {
				resp = t.cache.store(loc.String(), resp)
			}
		}
		return resp, nil
	}
}

// noResendKey, set in a request's context, makes the transport return a
// rate-limit refusal after waiting it out (a *RateLimitError with Waited)
// instead of resending the request: its body was built from a read before
// the wait, and the caller reads again and rebuilds it.
type noResendKey struct{}

// recover reports a recovery branch taken, after its wait.
func (t *transport) recover(r Recovery) {
	if t.recovered != nil {
		t.recovered(r)
	}
}

func (t *transport) kindOf(req *http.Request) kind {
	if t.unmetered {
		return kindUnmetered
	}
	switch req.Method {
	case http.MethodGet, http.MethodHead:
		return kindRead
	}
	if strings.HasSuffix(req.URL.Path, "/graphql") && req.GetBody != nil {
		if body, err := req.GetBody(); err == nil {
			var q struct {
				Query string `json:"query"`
			}
			data, _ := io.ReadAll(io.LimitReader(body, 1<<20))
			body.Close()
			if json.Unmarshal(data, &q) == nil && !strings.HasPrefix(strings.TrimSpace(q.Query), "mutation") {
				return kindRead
			}
		}
	}
	return kindWrite
}

// send makes one attempt, bounded by the per-attempt timeout; the timeout
// ends when the answer's body is closed.
func (t *transport) send(r *http.Request) (*http.Response, error) {
	if t.timeout <= 0 {
		return t.base.RoundTrip(r)
	}
	ctx, cancel := context.WithTimeout(r.Context(), t.timeout)
	resp, err := t.base.RoundTrip(r.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = cancelOnClose{resp.Body, cancel}
	return resp, nil
}

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// wait sleeps d on the clock unless that would pass the deadline.
func (t *transport) wait(ctx context.Context, d time.Duration) error {
	if pastDeadline(ctx, t.clock, t.deadline, d) {
		return errPastDeadline
	}
	return t.clock.Sleep(ctx, d)
}

// pastDeadline reports whether waiting d passes the Options' deadline (a
// time on the Clock) or the context's (real time: what is left of it).
func pastDeadline(ctx context.Context, clock Clock, deadline time.Time, d time.Duration) bool {
	if !deadline.IsZero() && clock.Now().Add(d).After(deadline) {
		return true
	}
	if dl, ok := ctx.Deadline(); ok && d > time.Until(dl) {
		return true
	}
	return false
}

var errPastDeadline = errors.New("the wait would pass the deadline")

func (t *transport) rateErr(req *http.Request, endpoint string, wait time.Duration, secondary bool, msg string, cause error) error {
	if cause != nil && !errors.Is(cause, errPastDeadline) {
		return cause // the context ended during the wait
	}
	return &RateLimitError{
		Wait: wait, Reset: t.clock.Now().Add(wait), Secondary: secondary,
		Method: req.Method, Endpoint: endpoint, Message: msg,
	}
}

// noteRemaining starts a cool-down when an answer spent the last request of
// the window, so the next request waits instead of drawing a 403.
func (t *transport) noteRemaining(resp *http.Response, resource string) {
	t.limits.observe(resp.Header, resource)
	if resp.Header.Get("X-RateLimit-Remaining") != "0" {
		return
	}
	if reset, ok := parseReset(resp.Header); ok {
		if res := resp.Header.Get("X-RateLimit-Resource"); res != "" {
			resource = res
		}
		t.limits.set(resource, cooldown{until: reset.Add(resetMargin)})
	}
}

type rateLimit struct {
	wait      time.Duration
	secondary bool
	message   string
}

// rateLimited applies GitHub's documented rules to an answer: a retry-after
// header means wait that long; x-ratelimit-remaining 0 means wait until
// x-ratelimit-reset; a secondary-limit message (or a 429) without either
// means wait at least a minute, doubling each time. A 403 with none of
// these markers is a permission error, not a rate limit. GraphQL reports its
// primary limit as 200 with a RATE_LIMITED error.
func (t *transport) rateLimited(resp *http.Response, resource string, secondaryWaits int) (rateLimit, bool) {
	rl, ok := t.readRateLimit(resp, resource, secondaryWaits)
	rl.wait = min(max(rl.wait, 0), maxWait)
	return rl, ok
}

func (t *transport) readRateLimit(resp *http.Response, resource string, secondaryWaits int) (rateLimit, bool) {
	remaining := resp.Header.Get("X-RateLimit-Remaining")
	graphqlLimited := resource == "graphql" && resp.StatusCode == http.StatusOK && remaining == "0"
	if resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusTooManyRequests && !graphqlLimited {
		return rateLimit{}, false
	}
	body := peek(resp, 1<<20)
	var e struct {
		Message string `json:"message"`
		Doc     string `json:"documentation_url"`
	}
	_ = json.Unmarshal(body, &e)
	if graphqlLimited {
		if !bytes.Contains(body, []byte(`"RATE_LIMITED"`)) {
			return rateLimit{}, false
		}
		e.Message = "GraphQL RATE_LIMITED"
	}
	msg := strings.ToLower(e.Message)
	secondaryMsg := strings.Contains(msg, "secondary rate limit") || strings.Contains(msg, "abuse") ||
		strings.HasSuffix(e.Doc, "secondary-rate-limits") || strings.HasSuffix(e.Doc, "#abuse-rate-limits")
	now := t.clock.Now()
	if ra, ok := retry.After(resp.Header, now); ok {
		return rateLimit{wait: ra, secondary: secondaryMsg || remaining != "0", message: e.Message}, true
	}
	if remaining == "0" {
		wait := resetMargin
		if reset, ok := parseReset(resp.Header); ok && reset.After(now) {
			wait = reset.Sub(now) + resetMargin
		}
		return rateLimit{wait: wait, secondary: secondaryMsg, message: e.Message}, true
	}
	if secondaryMsg || resp.StatusCode == http.StatusTooManyRequests || strings.Contains(msg, "rate limit exceeded") {
		return rateLimit{wait: time.Minute << secondaryWaits, secondary: true, message: e.Message}, true
	}
	return rateLimit{}, false
}

func parseReset(h http.Header) (time.Time, bool) {
	s, err := strconv.ParseInt(strings.TrimSpace(h.Get("X-RateLimit-Reset")), 10, 64)
	if err != nil || s <= 0 || s > 1<<40 {
		return time.Time{}, false
	}
	return time.Unix(s, 0), true
}

// backoff is the wait before transient retry n+1: 1 s, 2 s, 4 s.
func backoff(n int) time.Duration { return retry.Exp(time.Second, 30*time.Second, n) }

// peek reads up to limit bytes of the body and puts them back.
func peek(resp *http.Response, limit int64) []byte {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, limit))
	rest := resp.Body
	resp.Body = readCloser{io.MultiReader(bytes.NewReader(data), rest), rest}
	return data
}

type readCloser struct {
	io.Reader
	io.Closer
}

func drain(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
}

// etagCache keeps the last answer with an ETag per URL, for conditional GETs.
type etagCache struct {
	mu      sync.Mutex
	entries map[string]*cacheEntry
	order   []string
	max     int
}

type cacheEntry struct {
	etag   string
	header http.Header
	body   []byte
}

// cacheKey is the URL alone: a cached answer is only ever used after the
// server confirmed its ETag, and an ETag names one representation, so an
// answer kept for another Accept header just draws a 200.
func cacheKey(req *http.Request) string { return req.URL.String() }

func (c *etagCache) get(key string) *cacheEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entries[key]
}

// store keeps resp's body (when small enough) and returns a response that
// reads the same bytes.
func (c *etagCache) store(key string, resp *http.Response) *http.Response {
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxCached+1))
	if err != nil || len(data) > maxCached {
		rest := resp.Body
		resp.Body = readCloser{io.MultiReader(bytes.NewReader(data), rest), rest}
		return resp
	}
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(data))
	e := &cacheEntry{etag: resp.Header.Get("ETag"), header: resp.Header.Clone(), body: data}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[string]*cacheEntry{}
	}
	if _, ok := c.entries[key]; !ok {
		c.order = append(c.order, key)
	}
	c.entries[key] = e
	for len(c.order) > c.max {
		delete(c.entries, c.order[0])
		c.order = c.order[1:]
	}
	return resp
}

// response rebuilds a 200 from the cache for a 304. The fresh rate-limit
// headers of the 304 are kept; X-From-Cache tells go-github not to take
// its rate numbers from it.
func (e *cacheEntry) response(req *http.Request, fresh http.Header) *http.Response {
	h := e.header.Clone()
	for k, v := range fresh {
		if strings.HasPrefix(strings.ToLower(k), "x-ratelimit-") {
			h[k] = v
		}
	}
	h.Set("X-From-Cache", "1")
	return &http.Response{
		Status: "200 OK", StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(bytes.NewReader(e.body)), ContentLength: int64(len(e.body)), Request: req,
	}
}
