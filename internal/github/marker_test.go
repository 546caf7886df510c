package github

import (
	"net/http"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/githubfake"
)

// TestUpsertMarkerCommentApplyThenFail: a create or an update of a marker
// comment whose answer is lost leaves exactly one comment, as written.
func TestUpsertMarkerCommentApplyThenFail(t *testing.T) {
	for _, tc := range lostAnswers {
		t.Run(tc.name, func(t *testing.T) {
			const marker = "<!-- roadmap:status -->"
			e := newEnv(t, githubfake.Options{}, shortTimeout)
			n := e.fake.CreateIssue(githubfake.Issue{Title: "t"})
			rule := tc.rule
			rule.Method, rule.Path, rule.Call, rule.ApplyThenFail = "POST", "/repos/*/*/issues/*/comments", 1, true
			e.fake.AddFault(rule)
			c, err := e.c.UpsertMarkerComment(ctx, n, marker, "Implementing group 1.")
			if err != nil {
				t.Fatalf("create with a lost answer: %v", err)
			}
			list := e.fake.Comments(n)
			if len(list) != 1 || list[0].ID != c.ID || list[0].Body != marker+"\nImplementing group 1." {
				t.Fatalf("comments %+v: want exactly one, the returned one", list)
			}
			if got := e.count("POST /repos/{owner}/{repo}/issues/{n}/comments"); got != 1 {
				t.Errorf("%d creates, want 1", got)
			}
			// An update whose answer is lost leaves the one comment, updated.
			rule.Method, rule.Path = "PATCH", "/repos/*/*/issues/comments/*"
			e.fake.AddFault(rule)
			if _, err := e.c.UpsertMarkerComment(ctx, n, marker, "Ready."); err != nil {
				t.Fatalf("update with a lost answer: %v", err)
			}
			list = e.fake.Comments(n)
			if len(list) != 1 || list[0].Body != marker+"\nReady." {
				t.Errorf("comments %+v: want the one comment, updated", list)
			}
		})
	}
}

// lostAnswers are the ways a write's answer is lost after the write landed
// (internal/recordstore plays the same on the record comment).
var lostAnswers = []struct {
	name string
	rule githubfake.Rule
}{{"502", githubfake.Rule{Status: 502}}, {"dropped connection", githubfake.Rule{Drop: true}}, {"timeout", githubfake.Rule{Hang: true}}}

// shortTimeout makes the client give up on a hung answer quickly.
func shortTimeout(o *Options) {
	o.HTTPClient = &http.Client{Timeout: 300 * time.Millisecond, Transport: &http.Transport{DisableKeepAlives: true}}
}
