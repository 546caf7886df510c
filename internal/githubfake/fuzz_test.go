package githubfake

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
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
	f.Add("POST", "/repos/acme/widgets/dispatches", `{"event_type":"go","client_payload":{"a":1}}`)
	f.Add("POST", "/repos/acme/widgets/pulls/2/reviews", `{"event":"APPROVE","body":""}`)
	f.Add("POST", "/repos/acme/widgets/pulls", `{"title":"t","head":"someone:patch","base":"main"}`)
	f.Add("POST", "/repos/acme/widgets/actions/runs/1000/approve", "")
	f.Add("PUT", "/repos/acme/widgets/actions/workflows/w.yml/disable", "")
	f.Fuzz(func(t *testing.T, method, path, body string) {
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		fake := New(Options{Owner: "acme", Repo: "widgets"})
		fake.CreateIssue(Issue{Title: "t", Body: "b"})
		fake.CreatePullRequest("h", "main", "p", "", true)
		fake.SetWorkflowFile("", "w.yml", "on:\n  pull_request:\n  issues:\n  repository_dispatch:\n  pull_request_review:\njobs:\n  j:\n    runs-on: x\n    steps: [{run: a}]\n")
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
	f.Add("{markPullRequestReadyForReview(input: $input){pullRequest{id,isDraft}}}")
	f.Add("{clientMutationId pullRequest { number url }}")
	f.Add("{a(input: $i){b} c(input:$j){d{e}}}")
	f.Add("{{{{{{{{{{{{")
	f.Add("{a(((}")
	f.Fuzz(func(t *testing.T, s string) {
		fields, err := (&selParser{s: s}).set(0)
		if err == nil && len(fields) == 0 {
			t.Fatal("no error and no fields")
		}
	})
}

// FuzzTriggers feeds the trigger decision workflow files nobody here wrote
// (a repository's workflow files are untrusted) and arbitrary events: it
// must never panic, and a run it starts must be one of the file's.
func FuzzTriggers(f *testing.F) {
	f.Add("on:\n  push:\n    branches: [main, 'v[12].[0-9]+']\n    paths: ['**.go', '!docs/**']\njobs:\n  j:\n    runs-on: x\n    steps: [{run: a}]\n",
		"push", "", "refs/heads/main", "cmd/a.go")
	f.Add("on:\n  pull_request:\n    types: [labeled]\n    branches-ignore: ['[z-a]']\njobs: {}\n", "pull_request", "labeled", "main", "a\\")
	f.Add("on:\n  schedule:\n    - cron: '*/1 * * * *'\n    - cron: '@daily'\n    - cron: '61 * * * *'\njobs:\n  j:\n    runs-on: x\n    steps: [{run: a}]\n", "schedule", "", "", "")
	f.Add("on: [issues, issue_comment, repository_dispatch]\njobs:\n  j:\n    runs-on: x\n    steps: [{run: a}]\n", "repository_dispatch", "x", "", "")
	f.Add("on:\n  push:\n    tags: ['**+?[']\n", "push", "", "refs/tags/v1", "")
	f.Add("&a [*a, *a]", "issues", "opened", "", "")
	names := []string{"issues", "issue_comment", "pull_request", "pull_request_review", "push", "repository_dispatch", "schedule"}
	f.Fuzz(func(t *testing.T, src, name, action, ref, path string) {
		clock := NewManualClock(time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC))
		fake := New(Options{Owner: "acme", Repo: "widgets", Clock: clock})
		fake.SetWorkflowFile("", "w.yml", src)
		fake.SetWorkflowFile("main", "m.yml", src)
		pr := fake.CreatePullRequest("topic", "main", "p", "", false)
		fake.mu.Lock()
		for _, kind := range []Kind{WorkflowToken, PersonalToken} {
			ev := &Event{Name: name, Action: action, Ref: ref, SHA: madeUpSHA(ref), Number: pr, Base: "main", Head: "topic",
				Paths: []string{path}, Actor: "someone", Kind: kind}
			if !slices.Contains(names, name) {
				ev.Name = names[len(name)%len(names)]
			}
			fake.emit(nil, ev)
		}
		fake.mu.Unlock()
		clock.Advance(3 * time.Hour)
		fake.RunSchedules()
		for _, r := range fake.Runs() {
			if r.WorkflowFile != "w.yml" && r.WorkflowFile != "m.yml" {
				t.Fatalf("a run of %q", r.WorkflowFile)
			}
		}
		if len(fake.Runs()) > 2*2*2+2*maxTicks {
			t.Fatalf("%d runs", len(fake.Runs()))
		}
	})
}

// FuzzFilterGlob compiles arbitrary filter patterns: a pattern is the
// repository's text, and compiling or matching one must never panic.
func FuzzFilterGlob(f *testing.F) {
	for _, p := range []string{"**/*src/**", "v[12].[0-9]+.[0-9]+", "*.jsx?", "[", "\\", "a+?*", "!x", "[-]", "[^a]"} {
		f.Add(p, "a/src/b.go")
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		for _, path := range []bool{false, true} {
			if re := filterGlob(pattern, path); re != nil {
				re.MatchString(name)
			}
			included([]string{pattern, "!" + pattern}, name, path)
		}
	})
}
