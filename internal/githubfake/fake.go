package githubfake

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure a Fake. The zero value is usable: any token is accepted,
// the repository is roadmap-dev/demo, and the budgets are GITHUB_TOKEN's.
type Options struct {
	// Token, when set, is the only token accepted (plus those added with
	// AddToken); anything else gets 401 Bad credentials. Empty accepts any
	// token and requests without one.
	Token string
	// Login is the user the token acts as (default "github-actions[bot]").
	Login string
	// Owner and Repo name the one repository the fake serves.
	Owner, Repo string
	// RepoID is the repository's numeric id, used in Link headers
	// (/repositories/{id}/…) as GitHub does. Default 1000.
	RepoID int64
	// RateLimit is the primary budget per token per hour for REST and,
	// separately, GraphQL (default 1,000: GITHUB_TOKEN's per repository).
	RateLimit int
	// SecondaryPerMinute and SecondaryPerHour bound content-creating
	// requests (default 80 and 500, as GitHub documents).
	SecondaryPerMinute, SecondaryPerHour int
	// MaxSubIssues is how many sub-issues a parent may hold (default 100,
	// GitHub's limit). A test raises it to read a list past one page of
	// 100, which GitHub's own limit never lets a parent reach.
	MaxSubIssues int
	// MaxBlockedBy is how many issues may block one issue (default 50,
	// GitHub's limit). A test raises it to read a list past one page of
	// 100, which GitHub's own limit never lets an issue reach.
	MaxBlockedBy int
	// NoIssueDependencies plays a GitHub without issue dependencies (an
	// older GitHub Enterprise Server): the dependency endpoints answer 404
	// and issues carry no issue_dependencies_summary.
	NoIssueDependencies bool
	// SecondaryLimit is the form of the answer over the secondary limit:
	// 403 with Retry-After (default), 403 without it, or 429.
	SecondaryLimit SecondaryLimit
	// Clock drives timestamps and rate-limit windows (default: real time).
	Clock Clock
	// GitRemote is a bare repository; when set, a pull request's head SHA is
	// read from it (git rev-parse refs/heads/<head>) so real pushes show up.
	GitRemote string
	// DefaultBranch is the repository's default branch (default main).
	DefaultBranch string
	// NoRunDetails makes a dispatch answer 204 even when the request asks for
	// return_run_details, as GitHub did before 2026-02-19 (and GHES may).
	NoRunDetails bool
}

// Fake is the fake GitHub. Create it with New; it is an http.Handler and is
// safe for concurrent use.
type Fake struct {
	opts  Options
	clock Clock

	mu        sync.Mutex
	st        *state
	tokens    map[string]token
	budgets   map[string]*budget
	content   map[string][]time.Time
	rules     []*ruleState
	log       []LoggedRequest
	logGrants map[string]logGrant
	// idGrants are the runs' OIDC request tokens (IDTokenRequest), and
	// otherRepos the refs of repositories a workflow calls (SetCalledRepository).
	idGrants   map[string]int64
	otherRepos map[string]map[string]string
	requests   atomic.Int64 // numbers x-github-request-id
	// parseCache holds parsed workflow files by name and content.
	parseCache map[[32]byte]workflow
	// refsSeen is the git remote's refs as gitRefs last listed them, and
	// refsStamp the ref files' stamp then (refsStamp).
	refsSeen  map[string]string
	refsStamp string
}

type token struct {
	login    string
	kind     Kind
	readOnly bool
	name     string // Identity.Name
}

type logGrant struct {
	job     int64
	expires time.Time
}

// LoggedRequest is one request the fake received.
type LoggedRequest struct {
	Time     time.Time `json:"time"`
	Method   string    `json:"method"`
	Path     string    `json:"path"`
	Query    string    `json:"query,omitempty"`
	Endpoint string    `json:"endpoint"` // "PATCH /repos/{owner}/{repo}/issues/{n}"
	Status   int       `json:"status"`   // 0 when the connection was dropped
	Fault    string    `json:"fault,omitempty"`
	Body     string    `json:"body,omitempty"` // request body, for writes
	// Login is who the request's token acts as ("" when it has none the
	// fake accepts), so a test can tell a person's requests from a Job's.
	Login string `json:"login,omitempty"`
	// TokenName is the Identity.Name of the request's token, when it has
	// one (never the token itself).
	TokenName string `json:"token_name,omitempty"`
}

// New returns a fake with GitHub's default labels and no issues.
func New(opts Options) *Fake {
	if opts.Login == "" {
		opts.Login = "github-actions[bot]"
	}
	if opts.Owner == "" {
		opts.Owner = "roadmap-dev"
	}
	if opts.Repo == "" {
		opts.Repo = "demo"
	}
	if opts.DefaultBranch == "" {
		opts.DefaultBranch = "main"
	}
	if opts.RepoID == 0 {
		opts.RepoID = 1000
	}
	if opts.RateLimit <= 0 {
		opts.RateLimit = 1000
	}
	if opts.SecondaryPerMinute <= 0 {
		opts.SecondaryPerMinute = 80
	}
	if opts.SecondaryPerHour <= 0 {
		opts.SecondaryPerHour = 500
	}
	clock := opts.Clock
	if clock == nil {
		clock = realClock{}
	}
	f := &Fake{
		opts:       opts,
		clock:      clock,
		st:         newState(),
		tokens:     map[string]token{},
		budgets:    map[string]*budget{},
		content:    map[string][]time.Time{},
		logGrants:  map[string]logGrant{},
		idGrants:   map[string]int64{},
		parseCache: map[[32]byte]workflow{},
	}
	if opts.Token != "" {
		f.tokens[opts.Token] = token{login: opts.Login, kind: kindOf(opts.Login)}
	}
	f.st.ScheduledThrough = clock.Now().UTC()
	f.st.Refs = f.gitRefs()
	for _, l := range defaultLabels {
		f.st.Labels = append(f.st.Labels, &Label{ID: f.st.id(), Name: l[0], Color: l[1], Description: l[2], Default: true})
	}
	return f
}

// defaultLabels are the labels GitHub gives a new repository.
var defaultLabels = [][3]string{
	{"bug", "d73a4a", "Something isn't working"},
	{"documentation", "0075ca", "Improvements or additions to documentation"},
	{"duplicate", "cfd3d7", "This issue or pull request already exists"},
	{"enhancement", "a2eeef", "New feature or request"},
	{"good first issue", "7057ff", "Good for newcomers"},
	{"help wanted", "008672", "Extra attention is needed"},
	{"invalid", "e4e669", "This doesn't seem right"},
	{"question", "d876e3", "Further information is requested"},
	{"wontfix", "ffffff", "This will not be worked on"},
}

// call is one parsed API request, handed to a route's handler.
type call struct {
	method string
	path   string // after /repositories/{id} is rewritten
	params map[string]string
	query  url.Values
	body   []byte
	base   string // scheme://host of the request, for URLs in bodies
	login  string
	kind   Kind   // what the token is: the workflow's GITHUB_TOKEN, a person's, an app's
	rest   string // path after /repos/{owner}/{repo}, for Link headers
}

// reply is a handler's answer; ServeHTTP adds ETag, rate-limit headers and
// the conditional-request logic.
type reply struct {
	status   int
	body     any    // JSON-encoded unless raw is set
	raw      []byte // a non-JSON body (job logs)
	ctype    string
	location string
	link     string
	header   map[string]string
}

const maxRequestBody = 10 << 20

func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	entry := LoggedRequest{Time: f.clock.Now(), Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery}
	f.mu.Lock()
	if tok, login, _, ok := f.authenticate(r); ok {
		entry.Login, entry.TokenName = login, f.tokens[tok].name
	}
	f.mu.Unlock()
	logBlob := strings.HasPrefix(r.URL.Path, "/_logs/")
	idToken := r.URL.Path == idTokenPath
	path := f.rewriteRepositories(r.URL.EscapedPath())
	var rt *route
	var params map[string]string
	switch {
	case logBlob:
		entry.Endpoint = "GET /_logs/{token}"
	case idToken:
		entry.Endpoint = r.Method + " " + idTokenPath
	default:
		rt, params = match(r.Method, path)
		if rt == nil {
			entry.Endpoint = r.Method + " " + r.URL.Path
			entry.Status = http.StatusNotFound
			f.record(entry)
			f.write(w, r, notFound(), nil)
			return
		}
		entry.Endpoint = r.Method + " " + rt.endpoint
	}

	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody))
	if err != nil {
		entry.Status = http.StatusBadRequest
		f.record(entry)
		f.write(w, r, errorReply(http.StatusBadRequest, "Problems parsing JSON"), nil)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		entry.Body = string(body)
	}

	rule := f.fire(r.Method, r.URL.Path)
	if rule != nil {
		if rule.Before != nil {
			rule.Before()
		}
		if rule.Delay > 0 {
			t := time.NewTimer(rule.Delay)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
			}
		}
		if !rule.ApplyThenFail {
			switch {
			case rule.Drop:
				entry.Fault = "drop"
				f.record(entry)
				hijackClose(w)
				return
			case rule.Status != 0:
				entry.Fault = fmt.Sprintf("status %d", rule.Status)
				entry.Status = rule.Status
				f.record(entry)
				var rate *rateView
				if rt != nil {
					rate = f.peekRate(r, rt)
				}
				f.write(w, r, faultReply(rule), rate)
				return
			}
		}
	}

	var rep reply
	var rate *rateView
	switch {
	case logBlob:
		rep = f.serveLogBlob(r)
	case idToken:
		rep = f.serveIDToken(r)
	default:
		rep, rate = f.handle(r, rt, params, path, body)
	}
	entry.Status = rep.status

	if rule != nil {
		if rule.After != nil {
			rule.After()
		}
		if rule.ApplyThenFail {
			switch {
			case rule.Hang:
				entry.Fault = "apply then hang"
				entry.Status = 0
				f.record(entry)
				hijackHang(w, r)
				return
			case rule.Drop:
				entry.Fault = "apply then drop"
				entry.Status = 0
				f.record(entry)
				hijackClose(w)
				return
			default:
				st := rule.Status
				if st == 0 {
					st = http.StatusBadGateway
				}
				entry.Fault = fmt.Sprintf("apply then status %d", st)
				entry.Status = st
				f.record(entry)
				f.write(w, r, faultReply(&Rule{Status: st, Headers: rule.Headers, Body: rule.Body}), rate)
				return
			}
		}
	}
	f.record(entry)
	f.write(w, r, rep, rate)
}

// handle authenticates, applies the rate limits and runs the route.
func (f *Fake) handle(r *http.Request, rt *route, params map[string]string, path string, body []byte) (reply, *rateView) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.clock.Now()

	tok, login, kind, ok := f.authenticate(r)
	if !ok {
		return reply{status: http.StatusUnauthorized, body: map[string]any{"message": "Bad credentials", "documentation_url": docsREST}}, nil
	}
	resource := "core"
	if rt.graphql {
		resource = "graphql"
	}
	b := f.budgetFor(tok, resource, now)
	if b.used >= b.limit {
		rv := b.view(resource)
		if rt.graphql {
			return reply{status: http.StatusOK, body: map[string]any{
				"errors": []any{map[string]any{"type": "RATE_LIMITED", "message": fmt.Sprintf("API rate limit exceeded for %s.", login)}},
			}}, rv
		}
		return reply{status: http.StatusForbidden, body: map[string]any{
			"message":           fmt.Sprintf("API rate limit exceeded for %s.", login),
			"documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-the-primary-rate-limit",
		}}, rv
	}
	content := rt.write || (rt.graphql && isMutation(body))
	if content {
		if wait, limited := f.secondaryLimited(tok, now); limited {
			b.used++
			rep := reply{status: http.StatusForbidden, body: map[string]any{
				"message":           "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID.",
				"documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits",
			}}
			if f.opts.SecondaryLimit == Secondary429 {
				rep.status = http.StatusTooManyRequests
			}
			if f.opts.SecondaryLimit != Secondary403 {
				rep.header = map[string]string{"Retry-After": strconv.Itoa(int((wait + time.Second - 1) / time.Second))}
			}
			return rep, b.view(resource)
		}
	}
	if content && f.tokens[tok].readOnly {
		b.used++
		if rt.graphql {
			return reply{status: http.StatusOK, body: map[string]any{"errors": []any{map[string]any{
				"type": "FORBIDDEN", "message": "Resource not accessible by integration",
			}}}}, b.view(resource)
		}
		return reply{status: http.StatusForbidden, body: map[string]any{
			"message":           "Resource not accessible by integration",
			"documentation_url": docsREST,
		}}, b.view(resource)
	}
	if (params["owner"] != "" && !strings.EqualFold(params["owner"], f.opts.Owner)) ||
		(params["repo"] != "" && !strings.EqualFold(params["repo"], f.opts.Repo)) {
		b.used++
		return notFound(), b.view(resource)
	}

	c := &call{
		method: r.Method,
		path:   path,
		params: params,
		query:  r.URL.Query(),
		body:   body,
		base:   baseURL(r),
		login:  login,
		kind:   kind,
	}
	if rest, ok := strings.CutPrefix(path, "/repos/"+params["owner"]+"/"+params["repo"]); ok && params["owner"] != "" {
		c.rest = rest
	}
	rep := rt.handler(f, c)
	if content && rep.status < 300 {
		f.content[tok] = append(f.content[tok], now)
	}

	// A conditional GET answered 304 does not use the budget, as on GitHub.
	if (r.Method == http.MethodGet || r.Method == http.MethodHead) && rep.status == http.StatusOK && rep.raw == nil {
		data := encodeJSON(rep.body)
		rep.raw, rep.ctype = data, "application/json; charset=utf-8"
		etag := etagOf(data)
		if inm := r.Header.Get("If-None-Match"); inm != "" && etagMatch(inm, etag) {
			return reply{status: http.StatusNotModified, header: map[string]string{"ETag": etag}, link: rep.link}, b.view(resource)
		}
		rep.header = withHeader(rep.header, "ETag", etag)
	}
	b.used++
	return rep, b.view(resource)
}

// authenticate maps the Authorization header to a token, the login it acts
// as and what kind of token it is.
func (f *Fake) authenticate(r *http.Request) (tok, login string, kind Kind, ok bool) {
	h := r.Header.Get("Authorization")
	for _, p := range []string{"Bearer ", "bearer ", "token ", "Token "} {
		if v, found := strings.CutPrefix(h, p); found {
			tok = strings.TrimSpace(v)
			break
		}
	}
	if t, known := f.tokens[tok]; known {
		return tok, t.login, t.kind, true
	}
	if f.opts.Token == "" {
		return tok, f.opts.Login, kindOf(f.opts.Login), true
	}
	return "", "", "", false
}

// peekRate returns the current rate view without spending, for fault replies.
func (f *Fake) peekRate(r *http.Request, rt *route) *rateView {
	f.mu.Lock()
	defer f.mu.Unlock()
	tok, _, _, ok := f.authenticate(r)
	if !ok {
		return nil
	}
	resource := "core"
	if rt.graphql {
		resource = "graphql"
	}
	return f.budgetFor(tok, resource, f.clock.Now()).view(resource)
}

func (f *Fake) record(e LoggedRequest) {
	f.mu.Lock()
	f.log = append(f.log, e)
	f.mu.Unlock()
}

// write sends rep with GitHub's headers.
func (f *Fake) write(w http.ResponseWriter, r *http.Request, rep reply, rate *rateView) {
	h := w.Header()
	// GitHub names every answer with a request id (five hex fields) that
	// its support asks for; the fake numbers them.
	n := f.requests.Add(1)
	h.Set("X-GitHub-Request-Id", fmt.Sprintf("%04X:%04X:%06X:%06X:%08X", f.opts.RepoID&0xffff, n&0xffff, n, n, n))
	if rate != nil {
		h.Set("X-RateLimit-Limit", strconv.Itoa(rate.limit))
		h.Set("X-RateLimit-Remaining", strconv.Itoa(rate.remaining))
		h.Set("X-RateLimit-Reset", strconv.FormatInt(rate.reset.Unix(), 10))
		h.Set("X-RateLimit-Used", strconv.Itoa(rate.used))
		h.Set("X-RateLimit-Resource", rate.resource)
	}
	for k, v := range rep.header {
		h.Set(k, v)
	}
	if rep.location != "" {
		h.Set("Location", rep.location)
	}
	if rep.link != "" {
		h.Set("Link", rep.link)
	}
	var data []byte
	switch {
	case rep.raw != nil:
		data = rep.raw
	case rep.body != nil:
		data = encodeJSON(rep.body)
		if rep.status < 300 && h.Get("ETag") == "" && r.Method != http.MethodDelete {
			// A write's answer has an ETag of its own, not the one a GET of
			// the resource gives: sending it back as If-None-Match gets a
			// full, counted 200, so a client cannot turn the read after
			// its write into a free 304.
			h.Set("ETag", etagOf(append([]byte(r.Method+" "), data...)))
		}
	}
	if rep.status == http.StatusNotModified || rep.status == http.StatusNoContent || rep.status == http.StatusFound {
		data = nil
	}
	if data != nil {
		ct := rep.ctype
		if ct == "" {
			ct = "application/json; charset=utf-8"
		}
		h.Set("Content-Type", ct)
		h.Set("Content-Length", strconv.Itoa(len(data)))
	}
	w.WriteHeader(rep.status)
	if r.Method != http.MethodHead && data != nil {
		w.Write(data)
	}
}

// Requests returns the request log, oldest first.
func (f *Fake) Requests() []LoggedRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]LoggedRequest(nil), f.log...)
}

// CountByEndpoint counts the logged requests by endpoint
// ("GET /repos/{owner}/{repo}/issues/{n}").
func (f *Fake) CountByEndpoint() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]int{}
	for _, e := range f.log {
		out[e.Endpoint]++
	}
	return out
}

// ResetLog forgets the request log (state and budgets stay).
func (f *Fake) ResetLog() {
	f.mu.Lock()
	f.log = nil
	f.mu.Unlock()
}

func (f *Fake) rewriteRepositories(p string) string {
	rest, ok := strings.CutPrefix(p, "/repositories/")
	if !ok {
		return p
	}
	id, tail, _ := strings.Cut(rest, "/")
	if id != strconv.FormatInt(f.opts.RepoID, 10) {
		return p
	}
	return "/repos/" + f.opts.Owner + "/" + f.opts.Repo + "/" + tail
}

func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

const docsREST = "https://docs.github.com/rest"

func notFound() reply {
	return reply{status: http.StatusNotFound, body: map[string]any{"message": "Not Found", "documentation_url": docsREST}}
}

func errorReply(status int, msg string) reply {
	return reply{status: status, body: map[string]any{"message": msg, "documentation_url": docsREST}}
}

// validation is GitHub's 422 shape: message, errors[], documentation_url.
func validation(doc string, errs ...map[string]any) reply {
	list := make([]any, len(errs))
	for i, e := range errs {
		list[i] = e
	}
	return reply{status: http.StatusUnprocessableEntity, body: map[string]any{
		"message": "Validation Failed", "errors": list, "documentation_url": doc,
	}}
}

func withHeader(h map[string]string, k, v string) map[string]string {
	if h == nil {
		h = map[string]string{}
	}
	h[k] = v
	return h
}

func encodeJSON(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("githubfake: encode response: %v", err))
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// etagOf is a strong ETag over the representation, the shape GitHub sends.
func etagOf(data []byte) string {
	sum := md5.Sum(data)
	return `"` + hex.EncodeToString(sum[:]) + `"`
}

// etagMatch is the weak comparison If-None-Match uses (RFC 9110 §13.1.2).
func etagMatch(header, etag string) bool {
	want := strings.TrimPrefix(etag, "W/")
	for _, v := range strings.Split(header, ",") {
		v = strings.TrimSpace(v)
		if v == "*" || strings.TrimPrefix(v, "W/") == want {
			return true
		}
	}
	return false
}

func isMutation(body []byte) bool {
	var q struct {
		Query string `json:"query"`
	}
	if json.Unmarshal(body, &q) != nil {
		return false
	}
	return strings.HasPrefix(strings.TrimSpace(q.Query), "mutation")
}
