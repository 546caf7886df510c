package githubfake

import (
	"bufio"
	"fmt"
	"net/http"
	"path"
	"regexp"
	"strings"
	"time"
)

// Rule injects a fault into the requests it matches.
//
// A rule matches by Method ("" = any) and Path, and fires on the Call-th
// matching request (1-based; 0 = every matching request). The first rule that
// fires decides what happens. Without ApplyThenFail the request is not
// handled: the client gets Status (with Headers and Body), or a dropped
// connection (Drop). With ApplyThenFail the request is handled — the write
// lands — and then the client sees Status (default 502), a dropped
// connection (Drop) or no answer at all until it gives up (Hang).
type Rule struct {
	Method string
	// Path is a glob over the request path: '*' matches within one segment,
	// '**' matches any number of segments. A Path starting with "re:" is a
	// regular expression instead.
	Path string
	Call int

	Status  int
	Headers map[string]string
	Body    string // raw response body for Status; default GitHub's shape
	Delay   time.Duration
	Drop    bool

	ApplyThenFail bool
	Hang          bool

	// Before runs before the request is handled, After after it was handled
	// and before the client is answered. Tests use them to make a "person"
	// act at an exact point of a client's protocol.
	Before func()
	After  func()
}

type ruleState struct {
	Rule
	re    *regexp.Regexp
	glob  []string
	calls int
}

// AddFault adds a fault rule. It panics on a malformed Path, which is a
// mistake in the test that wrote it.
func (f *Fake) AddFault(r Rule) {
	rs := &ruleState{Rule: r}
	if expr, ok := strings.CutPrefix(r.Path, "re:"); ok {
		rs.re = regexp.MustCompile(expr)
	} else {
		rs.glob = splitPath(r.Path)
		for _, seg := range rs.glob {
			if _, err := path.Match(seg, ""); err != nil {
				panic(fmt.Sprintf("githubfake: bad rule path %q: %v", r.Path, err))
			}
		}
	}
	f.mu.Lock()
	f.rules = append(f.rules, rs)
	f.mu.Unlock()
}

// ClearFaults removes every fault rule.
func (f *Fake) ClearFaults() {
	f.mu.Lock()
	f.rules = nil
	f.mu.Unlock()
}

// fire counts the request against every matching rule and returns the first
// rule that fires on it.
func (f *Fake) fire(method, p string) *Rule {
	f.mu.Lock()
	defer f.mu.Unlock()
	var fired *Rule
	for _, rs := range f.rules {
		if rs.Method != "" && !strings.EqualFold(rs.Method, method) {
			continue
		}
		if !rs.matches(p) {
			continue
		}
		rs.calls++
		if fired == nil && (rs.Call == 0 || rs.Call == rs.calls) {
			r := rs.Rule
			fired = &r
		}
	}
	return fired
}

func (rs *ruleState) matches(p string) bool {
	if rs.re != nil {
		return rs.re.MatchString(p)
	}
	return globMatch(rs.glob, splitPath(p))
}

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

func globMatch(pat, segs []string) bool {
	if len(pat) == 0 {
		return len(segs) == 0
	}
	if pat[0] == "**" {
		for i := 0; i <= len(segs); i++ {
			if globMatch(pat[1:], segs[i:]) {
				return true
			}
		}
		return false
	}
	if len(segs) == 0 {
		return false
	}
	if ok, _ := path.Match(pat[0], segs[0]); !ok {
		return false
	}
	return globMatch(pat[1:], segs[1:])
}

func faultReply(r *Rule) reply {
	rep := reply{status: r.Status, header: map[string]string{}}
	for k, v := range r.Headers {
		rep.header[k] = v
	}
	switch {
	case r.Body != "":
		rep.raw = []byte(r.Body)
		rep.ctype = "application/json; charset=utf-8"
	case r.Status >= 500:
		rep.body = map[string]any{"message": "Server Error"}
	default:
		rep.body = map[string]any{"message": http.StatusText(r.Status), "documentation_url": docsREST}
	}
	return rep
}

// hijackClose drops the connection without an answer.
func hijackClose(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	conn.Close()
}

// hijackHang holds the connection open, answering nothing, until the client
// closes it (its timeout) or a minute passes.
func hijackHang(w http.ResponseWriter, r *http.Request) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, buf, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	defer conn.Close()
	conn.SetReadDeadline(time.Now().Add(time.Minute))
	rd := bufio.NewReader(buf)
	for {
		if _, err := rd.ReadByte(); err != nil {
			return
		}
	}
}
