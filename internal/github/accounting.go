package github

import (
	"maps"
	"regexp"
	"strings"
	"sync"
)

// Accounting counts the requests a Client made. Every attempt is a request:
// a retried GET counts twice. Reads and Writes count against GitHub's
// primary limit; NotModified (a conditional GET answered 304) does not;
// Unmetered are downloads outside the API (job log blobs).
type Accounting struct {
	Reads       int `json:"reads"`
	Writes      int `json:"writes"`
	NotModified int `json:"not_modified"`
	Unmetered   int `json:"unmetered,omitempty"`
	// ByEndpoint is keyed by method and templated path:
	// "PATCH /repos/{owner}/{repo}/issues/{n}".
	ByEndpoint map[string]EndpointCount `json:"by_endpoint"`
}

// EndpointCount is one endpoint's share of an Accounting.
type EndpointCount struct {
	Reads       int `json:"reads,omitempty"`
	Writes      int `json:"writes,omitempty"`
	NotModified int `json:"not_modified,omitempty"`
	Unmetered   int `json:"unmetered,omitempty"`
}

// Total is every request made.
func (a Accounting) Total() int { return a.Reads + a.Writes + a.NotModified + a.Unmetered }

// Counted is the requests GitHub counts against the primary limit.
func (a Accounting) Counted() int { return a.Reads + a.Writes }

// Sub returns what was spent since before was taken:
//
//	before := c.Requests()
//	… one Job …
//	spent := c.Requests().Sub(before)
func (a Accounting) Sub(before Accounting) Accounting {
	out := Accounting{
		Reads:       a.Reads - before.Reads,
		Writes:      a.Writes - before.Writes,
		NotModified: a.NotModified - before.NotModified,
		Unmetered:   a.Unmetered - before.Unmetered,
		ByEndpoint:  map[string]EndpointCount{},
	}
	for k, v := range a.ByEndpoint {
		b := before.ByEndpoint[k]
		d := EndpointCount{v.Reads - b.Reads, v.Writes - b.Writes, v.NotModified - b.NotModified, v.Unmetered - b.Unmetered}
		if d != (EndpointCount{}) {
			out.ByEndpoint[k] = d
		}
	}
	return out
}

type kind int

const (
	kindRead kind = iota
	kindWrite
	kindNotModified
	kindUnmetered
)

// recorder is the Client's live Accounting.
type recorder struct {
	mu sync.Mutex
	a  Accounting
}

func (r *recorder) add(endpoint string, k kind) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.a.ByEndpoint == nil {
		r.a.ByEndpoint = map[string]EndpointCount{}
	}
	e := r.a.ByEndpoint[endpoint]
	switch k {
	case kindRead:
		r.a.Reads++
		e.Reads++
	case kindWrite:
		r.a.Writes++
		e.Writes++
	case kindNotModified:
		r.a.NotModified++
		e.NotModified++
	case kindUnmetered:
		r.a.Unmetered++
		e.Unmetered++
	}
	r.a.ByEndpoint[endpoint] = e
}

func (r *recorder) snapshot() Accounting {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.a
	out.ByEndpoint = maps.Clone(r.a.ByEndpoint)
	if out.ByEndpoint == nil {
		out.ByEndpoint = map[string]EndpointCount{}
	}
	return out
}

// templates name the endpoints the client calls; anything else is templated
// generically (numbers become {n}, SHAs {sha}).
var templates = []struct {
	re   *regexp.Regexp
	tmpl string
}{
	{regexp.MustCompile(`^/repos/[^/]+/[^/]+/issues$`), "/repos/{owner}/{repo}/issues"},
	{regexp.MustCompile(`^/repos/[^/]+/[^/]+/issues/comments/\d+$`), "/repos/{owner}/{repo}/issues/comments/{id}"},
	{regexp.MustCompile(`^/repos/[^/]+/[^/]+/issues/\d+$`), "/repos/{owner}/{repo}/issues/{n}"},
	{regexp.MustCompile(`^/repos/[^/]+/[^/]+/issues/\d+/comments$`), "/repos/{owner}/{repo}/issues/{n}/comments"},
	{regexp.MustCompile(`^/repos/[^/]+/[^/]+/issues/\d+/labels$`), "/repos/{owner}/{repo}/issues/{n}/labels"},
	{regexp.MustCompile(`^/repos/[^/]+/[^/]+/issues/\d+/labels/[^/]+$`), "/repos/{owner}/{repo}/issues/{n}/labels/{name}"},
	{regexp.MustCompile(`^/repos/[^/]+/[^/]+/pulls$`), "/repos/{owner}/{repo}/pulls"},
	{regexp.MustCompile(`^/repos/[^/]+/[^/]+/pulls/\d+$`), "/repos/{owner}/{repo}/pulls/{n}"},
	{regexp.MustCompile(`^/repos/[^/]+/[^/]+/statuses/[^/]+$`), "/repos/{owner}/{repo}/statuses/{sha}"},
	{regexp.MustCompile(`^/repos/[^/]+/[^/]+/commits/.+/statuses$`), "/repos/{owner}/{repo}/commits/{ref}/statuses"},
	{regexp.MustCompile(`^/repos/[^/]+/[^/]+/commits/.+/status$`), "/repos/{owner}/{repo}/commits/{ref}/status"},
	{regexp.MustCompile(`^/repos/[^/]+/[^/]+/commits/.+/check-runs$`), "/repos/{owner}/{repo}/commits/{ref}/check-runs"},
	{regexp.MustCompile(`^/repos/[^/]+/[^/]+/actions/workflows/[^/]+/dispatches$`), "/repos/{owner}/{repo}/actions/workflows/{workflow}/dispatches"},
	{regexp.MustCompile(`^/repos/[^/]+/[^/]+/actions/runs/\d+/jobs$`), "/repos/{owner}/{repo}/actions/runs/{run_id}/jobs"},
	{regexp.MustCompile(`^/repos/[^/]+/[^/]+/actions/jobs/\d+/logs$`), "/repos/{owner}/{repo}/actions/jobs/{job_id}/logs"},
	{regexp.MustCompile(`^/repos/[^/]+/[^/]+/collaborators/[^/]+/permission$`), "/repos/{owner}/{repo}/collaborators/{user}/permission"},
	{regexp.MustCompile(`^/graphql$`), "/graphql"},
}

var (
	numRE = regexp.MustCompile(`^\d+$`)
	hexRE = regexp.MustCompile(`^[0-9a-fA-F]{40}$`)
)

// endpointOf names a request for accounting: method and templated path.
func endpointOf(method, path string) string {
	for _, t := range templates {
		if t.re.MatchString(path) {
			return method + " " + t.tmpl
		}
	}
	segs := strings.Split(strings.Trim(path, "/"), "/")
	for i, s := range segs {
		switch {
		case i == 1 && segs[0] == "repos":
			segs[i] = "{owner}"
		case i == 2 && segs[0] == "repos":
			segs[i] = "{repo}"
		case hexRE.MatchString(s):
			segs[i] = "{sha}"
		case numRE.MatchString(s):
			segs[i] = "{n}"
		}
	}
	return method + " /" + strings.Join(segs, "/")
}
