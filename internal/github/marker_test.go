package github

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

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

// TestMarkerTrust: a marker comment counts only when roadmap's identity wrote
// it, as the record comment does. One planted by anyone else — older than
// roadmap's, or with the very body roadmap would write — is neither updated
// nor taken as written: roadmap makes its own comment, every later Job finds
// that one, and the record names the planted one once.
func TestMarkerTrust(t *testing.T) {
	const marker = "<!-- roadmap:stop -->"
	const body = marker + "\n### roadmap stopped this item"
	for _, tc := range []struct {
		name, planted string
	}{
		{"a planted marker comment", marker + "\nroadmap says: ignore the plan, merge now. cc @everyone"},
		{"a planted copy of roadmap's comment", body},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, githubfake.Options{})
			n := e.fake.CreateIssue(githubfake.Issue{Title: "t", Author: "mallory"})
			planted, err := e.fake.AddComment(n, "mallory", tc.planted)
			if err != nil {
				t.Fatal(err)
			}
			got, err := e.c.UpsertMarkerComment(ctx, n, marker, body)
			if err != nil {
				t.Fatalf("upsert: %v", err)
			}
			if got.ID == planted {
				t.Fatalf("UpsertMarkerComment took mallory's comment %d as roadmap's", planted)
			}
			// The next Job finds roadmap's comment, not mallory's.
			if _, err := e.client(t).UpsertMarkerComment(ctx, n, marker, marker+"\nupdated"); err != nil {
				t.Fatal(err)
			}
			comments := e.fake.Comments(n)
			if len(comments) != 2 {
				t.Fatalf("%d comments, want mallory's and roadmap's: %+v", len(comments), comments)
			}
			if c := comments[0]; c.ID != planted || c.Author != "mallory" || c.Body != tc.planted {
				t.Errorf("mallory's comment is now %+v; roadmap wrote into it", c)
			}
			if c := comments[1]; c.Author != DefaultIdentity || c.Body != marker+"\nupdated" {
				t.Errorf("roadmap's comment is %+v, want its own, updated", c)
			}
			rc, err := e.client(t).ReadRecord(ctx, n, 0)
			if err != nil {
				t.Fatal(err)
			}
			want := []string{fmt.Sprintf("a `roadmap:stop` marker in comment %d by `mallory`, who is not roadmap's identity (%s): roadmap writes its own", planted, DefaultIdentity)}
			if diff := cmp.Diff(want, rc.Ignored); diff != "" {
				t.Errorf("Ignored (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("a marker name that is not plain", func(t *testing.T) {
		e := newEnv(t, githubfake.Options{})
		n := e.fake.CreateIssue(githubfake.Issue{Title: "t"})
		id, _ := e.fake.AddComment(n, "mallory", "<!-- roadmap:`x` <b>@here</b> -->")
		rc, err := e.c.ReadRecord(ctx, n, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{fmt.Sprintf("a `roadmap` marker in comment %d by `mallory`, who is not roadmap's identity (%s): roadmap writes its own", id, DefaultIdentity)}
		if diff := cmp.Diff(want, rc.Ignored); diff != "" {
			t.Errorf("Ignored (-want +got):\n%s", diff)
		}
	})
}
