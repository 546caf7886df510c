package githubfake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// exchange is one recorded request/answer pair of ../shared/github-fixtures.
type exchange struct {
	Method   string         `json:"method"`
	Path     string         `json:"path"`
	Body     any            `json:"body"`
	Status   int            `json:"status"`
	Response any            `json:"response"`
	Headers  map[string]any `json:"headers"`
}

// absentFields lists fields GitHub sends that the fake leaves out on
// purpose, by JSON path ("[]" is any array element). docs/fake-github.md
// lists the same. It is empty today: every field of the recorded answers
// to the endpoints the fake implements is modelled.
var absentFields = map[string]string{}

// newerFields lists fields the fake sends that a recording lacks because
// GitHub added them after it was made, by JSON path: the pinned OpenAPI
// description (TestFakeOpenAPI) requires or names them.
var newerFields = map[string]string{
	"$.has_discussions": "full-repository requires it; get-repository.json predates it",
	// Sub-issues (GitHub, December 2024) came after the issue recordings;
	// the description's issue schema names both fields, and the tracker
	// check reads sub_issues_summary (internal/tracker).
	"$.sub_issues_summary":   "issue names it; the issue recordings predate sub-issues",
	"$[].sub_issues_summary": "issue names it; the issue recordings predate sub-issues",
	"$.parent_issue_url":     "issue names it; the issue recordings predate sub-issues",
	"$[].parent_issue_url":   "issue names it; the issue recordings predate sub-issues",
	// Issue dependencies (GitHub, August 2025) came later still.
	"$.issue_dependencies_summary":   "issue names it; the issue recordings predate issue dependencies",
	"$[].issue_dependencies_summary": "issue names it; the issue recordings predate issue dependencies",
}

// headerShapes are the headers compared, with the form their value must
// have in both the recording and the fake's answer.
var headerShapes = map[string]*regexp.Regexp{
	"etag":                  regexp.MustCompile(`^(W/)?"[0-9a-f]+"$`),
	"x-ratelimit-limit":     regexp.MustCompile(`^\d+$`),
	"x-ratelimit-remaining": regexp.MustCompile(`^\d+$`),
	"x-ratelimit-reset":     regexp.MustCompile(`^\d+$`),
	"x-ratelimit-used":      regexp.MustCompile(`^\d+$`),
	"x-ratelimit-resource":  regexp.MustCompile(`^(core|graphql|search)$`),
	"link":                  regexp.MustCompile(`^<[^>]+>; rel="\w+"(, <[^>]+>; rel="\w+")*$`),
	"location":              regexp.MustCompile(`^https?://[^/]+/.+$`),
}

// fixturesDir finds ../shared/github-fixtures from the module root.
func fixturesDir(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "..", "shared", "github-fixtures")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// TestFakeConformance replays the recorded GitHub exchanges that touch an
// endpoint the fake implements and holds the fake's answers to them: the
// same status; the same presence and form of etag, link, location and
// x-ratelimit-* (values are normalised in the recordings); the same field
// names and JSON types in the body.
func TestFakeConformance(t *testing.T) {
	dir := fixturesDir(t)
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) == 0 {
		t.Skipf("no recorded exchanges in %s (the folder sits beside the repository; see its README)", dir)
	}
	replayed := 0
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".json"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var exchanges []exchange
			if err := json.Unmarshal(data, &exchanges); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			replayed += replay(t, exchanges)
		})
	}
	if replayed == 0 {
		t.Error("no exchange touched an endpoint the fake implements")
	}
}

func replay(t *testing.T, exchanges []exchange) int {
	if len(exchanges) == 0 {
		return 0
	}
	owner, repo := "octokit-fixture-org", "unknown"
	if m := regexp.MustCompile(`^/repos/([^/]+)/([^/?]+)`).FindStringSubmatch(exchanges[0].Path); m != nil {
		owner, repo = m[1], m[2]
	}
	f := New(Options{Owner: owner, Repo: repo, RepoID: 1000, Login: "octokit-fixture-user-a", Clock: NewManualClock(t0)})
	seed(f, exchanges)
	srv := httptest.NewServer(f)
	defer srv.Close()

	n := 0
	for i, ex := range exchanges {
		method := strings.ToUpper(ex.Method)
		u, err := url.Parse(ex.Path)
		if err != nil {
			t.Fatalf("exchange %d: path %q: %v", i, ex.Path, err)
		}
		if rt, _ := match(method, f.rewriteRepositories(u.EscapedPath())); rt == nil {
			t.Logf("skip %s %s: not an endpoint the fake implements", method, ex.Path)
			continue
		}
		n++
		name := fmt.Sprintf("%d %s %s", i, method, ex.Path)
		var body io.Reader
		if s, isString := ex.Body.(string); ex.Body != nil && !(isString && s == "") {
			data, _ := json.Marshal(ex.Body)
			body = bytes.NewReader(data)
		}
		req, _ := http.NewRequest(method, srv.URL+ex.Path, body)
		req.Header.Set("Authorization", "token 0000000000000000000000000000000000000001")
		req.Header.Set("Accept", "application/vnd.github.v3+json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != ex.Status {
			t.Errorf("%s: status %d, recorded %d: %.300s", name, resp.StatusCode, ex.Status, got)
			continue
		}
		compareHeaders(t, name, ex.Headers, resp.Header, srv.URL)
		if len(got) == 0 && (ex.Response == nil || ex.Response == "") {
			continue
		}
		var gotBody any
		if err := json.Unmarshal(got, &gotBody); err != nil {
			t.Errorf("%s: body is not JSON: %v", name, err)
			continue
		}
		var diffs []string
		compareShape("$", ex.Response, gotBody, &diffs)
		for _, d := range diffs {
			t.Errorf("%s: %s", name, d)
		}
	}
	return n
}

// seed gives the fake the state the recorded requests assume: the issues a
// recorded list shows (numbers, titles, bodies, state).
func seed(f *Fake, exchanges []exchange) {
	issues := map[int]map[string]any{}
	// The recorded repository's topics.
	for _, ex := range exchanges {
		if m, ok := ex.Response.(map[string]any); ok && strings.ToUpper(ex.Method) == "GET" && regexp.MustCompile(`^/repos/[^/]+/[^/]+$`).MatchString(ex.Path) {
			var topics []string
			for _, t := range asSlice(m["topics"]) {
				if s, ok := t.(string); ok {
					topics = append(topics, s)
				}
			}
			f.SetTopics(topics...)
		}
	}
	// The recording's repository had the commits its statuses name: the
	// fake answers 422 for a SHA no commit has, as GitHub does.
	shaRe := regexp.MustCompile(`/(?:statuses|commits)/([0-9a-f]{40})(?:/|$)`)
	for _, ex := range exchanges {
		if m := shaRe.FindStringSubmatch(ex.Path); m != nil && ex.Status < 400 {
			f.AddCommit(m[1])
		}
	}
	for _, ex := range exchanges {
		if strings.ToUpper(ex.Method) != "GET" || !regexp.MustCompile(`/issues(\?|$)`).MatchString(ex.Path) {
			continue
		}
		list, _ := ex.Response.([]any)
		for _, item := range list {
			if m, ok := item.(map[string]any); ok {
				if n, ok := m["number"].(float64); ok {
					issues[int(n)] = m
				}
			}
		}
	}
	max := 0
	for n := range issues {
		max = maxInt(max, n)
	}
	for n := 1; n <= max; n++ {
		is := Issue{Title: fmt.Sprintf("issue %d", n)}
		if m := issues[n]; m != nil {
			is.Title, _ = m["title"].(string)
			is.Body, _ = m["body"].(string)
			is.State, _ = m["state"].(string)
		}
		f.CreateIssue(is)
	}
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

func compareHeaders(t *testing.T, name string, recorded map[string]any, got http.Header, base string) {
	t.Helper()
	for h, shape := range headerShapes {
		rv, has := recorded[h]
		gv := got.Get(h)
		if !has {
			if gv != "" && (h == "etag" || h == "link" || h == "location") {
				t.Errorf("%s: %s %q sent, the recording has none", name, h, gv)
			}
			continue
		}
		rs := fmt.Sprint(rv)
		if !shape.MatchString(rs) {
			t.Errorf("%s: recorded %s %q does not have the expected form %s; fix the test", name, h, rs, shape)
		}
		if gv == "" {
			t.Errorf("%s: %s missing (recorded %q)", name, h, rs)
			continue
		}
		if !shape.MatchString(gv) {
			t.Errorf("%s: %s %q, want the form %s", name, h, gv, shape)
		}
		switch h {
		case "x-ratelimit-resource":
			if gv != rs {
				t.Errorf("%s: %s %q, recorded %q", name, h, gv, rs)
			}
		case "location":
			if rp, gp := pathOf(rs), pathOf(gv); rp != gp {
				t.Errorf("%s: location path %s, recorded %s", name, gp, rp)
			}
		case "link":
			if r, g := linkShape(rs), linkShape(gv); r != g {
				t.Errorf("%s: link %s, recorded %s", name, g, r)
			}
		}
	}
}

func pathOf(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	return p.Path
}

// linkShape is a Link header without its host: rel → path?sorted query.
func linkShape(h string) string {
	var parts []string
	for _, m := range regexp.MustCompile(`<([^>]+)>; rel="(\w+)"`).FindAllStringSubmatch(h, -1) {
		u, err := url.Parse(m[1])
		if err != nil {
			parts = append(parts, m[2]+"=?")
			continue
		}
		q := u.Query()
		keys := make([]string, 0, len(q))
		for k := range q {
			keys = append(keys, k+"="+q.Get(k))
		}
		sort.Strings(keys)
		parts = append(parts, m[2]+"="+u.Path+"?"+strings.Join(keys, "&"))
	}
	return strings.Join(parts, ", ")
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// compareShape checks that got has rec's field names and JSON types.
func compareShape(path string, rec, got any, diffs *[]string) {
	if jsonType(rec) != jsonType(got) {
		*diffs = append(*diffs, fmt.Sprintf("%s: %s, recorded %s", path, jsonType(got), jsonType(rec)))
		return
	}
	switch r := rec.(type) {
	case map[string]any:
		g := got.(map[string]any)
		for k, rv := range r {
			p := path + "." + k
			if _, absent := absentFields[p]; absent {
				continue
			}
			gv, ok := g[k]
			if !ok {
				*diffs = append(*diffs, p+": missing")
				continue
			}
			compareShape(p, rv, gv, diffs)
		}
		for k := range g {
			if _, newer := newerFields[path+"."+k]; newer {
				continue
			}
			if _, ok := r[k]; !ok {
				*diffs = append(*diffs, path+"."+k+": not in the recording")
			}
		}
	case []any:
		g := got.([]any)
		if len(g) != len(r) {
			*diffs = append(*diffs, fmt.Sprintf("%s: %d elements, recorded %d", path, len(g), len(r)))
		}
		for i := 0; i < len(r) && i < len(g); i++ {
			compareShape(path+"[]", r[i], g[i], diffs)
		}
	}
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}
