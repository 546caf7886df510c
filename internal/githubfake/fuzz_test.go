package githubfake

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzServeHTTP sends the fake arbitrary requests (a client under test may
// send anything): it must answer every one, with JSON where it says JSON.
func FuzzServeHTTP(f *testing.F) {
	f.Add("GET", "/repos/acme/widgets/issues/1", "")
	f.Add("PATCH", "/repos/acme/widgets/issues/1", `{"body":null,"title":"x","state":"closed"}`)
	f.Add("POST", "/repos/acme/widgets/issues/1/labels", `{"labels":["a","b"]}`)
	f.Add("POST", "/repos/acme/widgets/statuses/0000000000000000000000000000000000000001", `{"state":"success"}`)
	f.Add("GET", "/repositories/1000/commits/a/b/c/status?per_page=-1&page=99999999999", "")
	f.Add("POST", "/graphql", `{"query":"mutation{markPullRequestReadyForReview(input:{}){pullRequest{id}}}","variables":{"input":{"pullRequestId":"PR_x"}}}`)
	f.Add("POST", "/repos/acme/widgets/actions/workflows/w.yml/dispatches", `{"ref":"main","inputs":{"a":[1,{"b":null}]}}`)
	f.Add("DELETE", "/repos/acme/widgets/labels/%2F%25", "")
	f.Fuzz(func(t *testing.T, method, path, body string) {
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		fake := New(Options{Owner: "acme", Repo: "widgets"})
		fake.CreateIssue(Issue{Title: "t", Body: "b"})
		fake.CreatePullRequest("h", "main", "p", "", true)
		req, err := http.NewRequest(method, "http://fake"+path, strings.NewReader(body))
		if err != nil {
			return
		}
		rec := httptest.NewRecorder()
		fake.ServeHTTP(rec, req)
		if rec.Code < 100 || rec.Code > 599 {
			t.Fatalf("status %d", rec.Code)
		}
		if strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") && !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("invalid JSON: %q", rec.Body.String())
		}
	})
}

// FuzzParseSelection feeds the GraphQL selection reader arbitrary text.
func FuzzParseSelection(f *testing.F) {
	f.Add("(input: $input){pullRequest{id,isDraft}}")
	f.Add("{clientMutationId pullRequest { number url }}")
	f.Add("{{{{{{{{{{{{")
	f.Fuzz(func(t *testing.T, s string) {
		fields, err := parseSelection(s)
		if err == nil && len(fields) == 0 {
			t.Fatal("no error and no fields")
		}
	})
}
