package faults

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/roadmap-dev/roadmap/internal/git"
)

// Effect names: the durable effects a kill is placed around.
const (
	EffRecord   = "record write"
	EffComment  = "comment upsert"
	EffCommit   = "commit"
	EffRound    = "plan commit" // stage's round commit (Roadmap-Stage-Round)
	EffWIP      = "wip commit"
	EffArchive  = "archive commit"
	EffPush     = "push"
	EffPRNew    = "pr create"
	EffPREdit   = "pr update"
	EffStatus   = "status"
	EffLabel    = "label"
	EffDispatch = "dispatch"
)

// killed is what a Job's goroutine panics with when the suite kills it: the
// stack unwinds and nothing after the point runs, as after SIGKILL. Run's
// recover turns it back into "this Job wrote no result".
type killed struct{ point string }

// crasher is the seam at every effect site: the GitHub client's transport and
// the git runner's hook both report each effect just before and just after
// it. Armed for one point, it kills the Job there; it also lets a scenario
// act at an exact effect (a person pushing, CI reporting, a signal).
type crasher struct {
	mu sync.Mutex
	// arms are the kill points: "before push#2", "after dispatch#1" (an
	// effect and its occurrence in the history). Each fires once.
	arms   map[string]bool
	counts map[string]int
	log    []string // every effect started, as "name#n"
	// on is called before (done false) and after (done true) each effect.
	on func(point string, done, ok bool)
}

func newCrasher(arms ...string) *crasher {
	c := &crasher{counts: map[string]int{}, arms: map[string]bool{}}
	for _, a := range arms {
		c.arms[a] = true
	}
	return c
}

// proc is one process (a Job or a report run): once dead, every effect it
// reaches panics, so no write happens after its kill.
type proc struct {
	c    *crasher
	dead atomic.Bool
}

func (p *proc) before(name string) string {
	if p.dead.Load() {
		panic(killed{point: name + " (after the kill)"})
	}
	c := p.c
	c.mu.Lock()
	c.counts[name]++
	point := fmt.Sprintf("%s#%d", name, c.counts[name])
	c.log = append(c.log, point)
	fire := c.arms["before "+point]
	delete(c.arms, "before "+point)
	on := c.on
	c.mu.Unlock()
	if fire {
		p.dead.Store(true)
		panic(killed{point: "before " + point})
	}
	if on != nil {
		on(point, false, true)
	}
	return point
}

func (p *proc) afterEffect(point string, applied bool) {
	c := p.c
	c.mu.Lock()
	fire := applied && c.arms["after "+point]
	if fire {
		delete(c.arms, "after "+point)
	}
	on := c.on
	c.mu.Unlock()
	if on != nil {
		on(point, true, applied)
	}
	if fire {
		p.dead.Store(true)
		panic(killed{point: "after " + point})
	}
	if p.dead.Load() {
		panic(killed{point: point + " (after the kill)"})
	}
}

// transport reports the GitHub writes of one process.
type transport struct {
	p     *proc
	base  http.RoundTripper
	issue int
	// answered, when set, sees (and may change) each read's answer.
	answered func(*http.Request, *http.Response)
}

var (
	reIssueComments = regexp.MustCompile(`/issues/(\d+)/comments$`)
	reCommentEdit   = regexp.MustCompile(`/issues/comments/\d+$`)
	rePulls         = regexp.MustCompile(`/pulls$`)
	rePull          = regexp.MustCompile(`/pulls/\d+$`)
	reStatus        = regexp.MustCompile(`/statuses/[0-9a-f]+$`)
	reLabels        = regexp.MustCompile(`/issues/\d+/labels(/[^/]+)?$`)
	reDispatch      = regexp.MustCompile(`/actions/workflows/[^/]+/dispatches$`)
)

// effectOf names the durable effect of a request ("" for a read).
func effectOf(method, path string, body []byte, issue int) string {
	if method == http.MethodGet || method == http.MethodHead {
		return ""
	}
	isRecord := bytes.Contains(body, []byte("roadmap:record"))
	switch {
	case path == "/graphql" || strings.HasSuffix(path, "/graphql"):
		if bytes.Contains(body, []byte("mutation")) {
			return EffPREdit
		}
		return ""
	case reDispatch.MatchString(path):
		return EffDispatch
	case reLabels.MatchString(path):
		return EffLabel
	case reIssueComments.MatchString(path):
		if m := reIssueComments.FindStringSubmatch(path); m[1] == fmt.Sprint(issue) && isRecord {
			return EffRecord
		}
		return EffComment
	case reCommentEdit.MatchString(path):
		if isRecord {
			return EffRecord
		}
		return EffComment
	case rePulls.MatchString(path) && method == http.MethodPost:
		return EffPRNew
	case rePull.MatchString(path):
		return EffPREdit
	case reStatus.MatchString(path):
		return EffStatus
	}
	return "write " + method
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
		req.Body = io.NopCloser(bytes.NewReader(b))
	}
	name := effectOf(req.Method, req.URL.Path, body, t.issue)
	if name == "" {
		if t.p.dead.Load() {
			panic(killed{point: "a read after the kill"})
		}
		resp, err := t.base.RoundTrip(req)
		if err == nil && t.answered != nil {
			t.answered(req, resp)
		}
		return resp, err
	}
	point := t.p.before(name)
	resp, err := t.base.RoundTrip(req)
	// The write landed when GitHub answered 2xx, or 5xx after applying it
	// (apply-then-fail): "after" kills whenever an answer came back.
	t.p.afterEffect(point, err == nil)
	return resp, err
}

// gitHook reports commits and pushes of one Job.
func (p *proc) gitHook() func(args []string, done bool, err error) {
	var point string
	return func(args []string, done bool, err error) {
		name := gitEffect(args)
		if name == "" {
			if p.dead.Load() {
				panic(killed{point: "git after the kill"})
			}
			return
		}
		if !done {
			point = p.before(name)
			return
		}
		p.afterEffect(point, err == nil)
	}
}

func gitEffect(args []string) string {
	if len(args) == 0 {
		return ""
	}
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		i++
	}
	if i >= len(args) {
		return ""
	}
	switch args[i] {
	case "push":
		if git.NotePush(args) {
			// The item's lease (docs/reliability.md): not the branch's
			// push the promises count.
			return ""
		}
		return EffPush
	case "commit":
		joined := strings.Join(args, " ")
		switch {
		case strings.Contains(joined, "Roadmap-Archive"):
			return EffArchive
		case strings.Contains(joined, "Roadmap-WIP"):
			return EffWIP
		case strings.Contains(joined, "Roadmap-Stage-Round"):
			return EffRound
		}
		return EffCommit
	}
	return ""
}
