package github

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/roadmap-dev/roadmap/internal/githubfake"
)

const sha1 = "1111111111111111111111111111111111111111"

func TestCreateDraftPR(t *testing.T) {
	e := newEnv(t, githubfake.Options{})
	pr, err := e.c.CreateDraftPR(ctx, "roadmap/issue-7", "main", "Plan: backoff", "The plan.")
	if err != nil {
		t.Fatalf("CreateDraftPR: %v", err)
	}
	if !pr.Draft || pr.HeadRef != "roadmap/issue-7" || pr.BaseRef != "main" || pr.Title != "Plan: backoff" ||
		pr.Body != "The plan." || pr.State != "open" || pr.NodeID == "" || pr.HeadSHA == "" || !strings.Contains(pr.URL, "/pull/") {
		t.Errorf("created %+v", pr)
	}
	// Creating again for the same head returns the open one (GitHub's 422).
	again, err := e.c.CreateDraftPR(ctx, "roadmap/issue-7", "main", "Plan: backoff", "The plan.")
	if err != nil || again.Number != pr.Number {
		t.Errorf("second create: %+v, %v; want pull request %d", again, err, pr.Number)
	}
	// A create whose answer is lost is found, not repeated.
	e.fake.AddFault(githubfake.Rule{Method: "POST", Path: "/repos/*/*/pulls", ApplyThenFail: true, Drop: true, Call: 2})
	lost, err := e.c.CreateDraftPR(ctx, "roadmap/issue-8", "main", "Plan 8", "b")
	if err != nil {
		t.Fatalf("create with a lost answer: %v", err)
	}
	open := 0
	for n := 1; n < 10; n++ {
		if is, ok := e.fake.Issue(n); ok && is.Pull != nil && is.Pull.Head == "roadmap/issue-8" {
			open++
			if n != lost.Number {
				t.Errorf("returned %d, the fake holds %d", lost.Number, n)
			}
		}
	}
	if open != 1 {
		t.Errorf("%d pull requests for roadmap/issue-8, want 1", open)
	}
}

func TestFindPR(t *testing.T) {
	e := newEnv(t, githubfake.Options{})
	e.fake.CreatePullRequest("other", "main", "Other", "", false)
	n := e.fake.CreatePullRequest("roadmap/issue-3", "main", "Mine", "", true)
	pr, found, err := e.c.FindPR(ctx, "roadmap/issue-3")
	if err != nil || !found || pr.Number != n {
		t.Errorf("FindPR = %+v, %v, %v; want pull request %d", pr, found, err, n)
	}
	_, found, err = e.c.FindPR(ctx, "nobody")
	if err != nil || found {
		t.Errorf("FindPR(nobody) found=%v err=%v; want not found", found, err)
	}
}

func TestPR(t *testing.T) {
	e := newEnv(t, githubfake.Options{})
	n := e.fake.CreatePullRequest("feature/x", "main", "Title", "Body", true)
	if err := e.fake.SetPRHead(n, sha1); err != nil {
		t.Fatal(err)
	}
	got, err := e.c.PR(ctx, n)
	if err != nil {
		t.Fatalf("PR: %v", err)
	}
	want := PullRequest{Number: n, NodeID: got.NodeID, HeadRef: "feature/x", HeadSHA: sha1, BaseRef: "main",
		Title: "Title", Body: "Body", Draft: true, State: "open", URL: got.URL}
	if diff := cmp.Diff(want, got); diff != "" || got.NodeID == "" || got.URL == "" {
		t.Errorf("PR (-want +got):\n%s", diff)
	}
	if _, err := e.c.PR(ctx, 4242); !errors.Is(err, ErrNotFound) {
		t.Errorf("PR(4242): %v, want ErrNotFound", err)
	}
}

func TestUpdatePR(t *testing.T) {
	e := newEnv(t, githubfake.Options{})
	n := e.fake.CreatePullRequest("b", "main", "Old title", "Old body", true)
	got, err := e.c.UpdatePR(ctx, n, "New title", "")
	if err != nil || got.Title != "New title" || got.Body != "Old body" {
		t.Errorf("title only: %+v, %v", got, err)
	}
	got, err = e.c.UpdatePR(ctx, n, "", "New body")
	if err != nil || got.Title != "New title" || got.Body != "New body" {
		t.Errorf("body only: %+v, %v", got, err)
	}
	is, _ := e.fake.Issue(n)
	if is.Title != "New title" || is.Body != "New body" {
		t.Errorf("fake holds %q / %q", is.Title, is.Body)
	}
}

func TestMarkReady(t *testing.T) {
	e := newEnv(t, githubfake.Options{})
	n := e.fake.CreatePullRequest("b", "main", "T", "", true)
	// By number only: the node id is read first.
	if err := e.c.MarkReady(ctx, PullRequest{Number: n}); err != nil {
		t.Fatalf("MarkReady: %v", err)
	}
	if is, _ := e.fake.Issue(n); is.Pull.Draft {
		t.Error("still a draft")
	}
	if got := e.count("POST /graphql"); got != 1 {
		t.Errorf("GraphQL requests: %d, want 1", got)
	}
	if spent := e.c.Requests(); spent.ByEndpoint["POST /graphql"].Writes != 1 {
		t.Errorf("the mutation was not counted as a write: %+v", spent.ByEndpoint["POST /graphql"])
	}
	// A node GitHub does not know is an error.
	if err := e.c.MarkReady(ctx, PullRequest{Number: 99, NodeID: "PR_nope"}); err == nil {
		t.Error("MarkReady of an unknown node: no error")
	}
}

// TestMarkReadyWithBody: the body rides in the mark-ready request.
func TestMarkReadyWithBody(t *testing.T) {
	e := newEnv(t, githubfake.Options{})
	n := e.fake.CreatePullRequest("b", "main", "T", "This draft holds only the plan.", true)
	pr, err := e.c.PR(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	before := e.count("POST /graphql")
	if err := e.c.MarkReadyWithBody(ctx, pr, "Closes #1.\n\nReady for review."); err != nil {
		t.Fatalf("MarkReadyWithBody: %v", err)
	}
	is, _ := e.fake.Issue(n)
	if is.Pull.Draft || is.Body != "Closes #1.\n\nReady for review." {
		t.Errorf("draft %v, body %q; want ready with the new body", is.Pull.Draft, is.Body)
	}
	if got := e.count("POST /graphql") - before; got != 1 {
		t.Errorf("GraphQL requests: %d, want 1 (the body and ready in one)", got)
	}
}

// TestMarkReadyAtHead: the PR is marked ready only at the head the caller
// checked, read in the same mutation (no request more); a head that moved
// puts it back to a draft and says so.
func TestMarkReadyAtHead(t *testing.T) {
	const reviewed, pushed = "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222"
	e := newEnv(t, githubfake.Options{})
	n := e.fake.CreatePullRequest("b", "main", "T", "", true)
	if err := e.fake.SetPRHead(n, reviewed); err != nil {
		t.Fatal(err)
	}
	pr, err := e.c.PR(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	before := e.count("POST /graphql")
	if err := e.c.MarkReadyAtHead(ctx, pr, "Ready.", reviewed); err != nil {
		t.Fatalf("MarkReadyAtHead at the PR's head: %v", err)
	}
	if is, _ := e.fake.Issue(n); is.Pull.Draft {
		t.Error("still a draft")
	}
	if got := e.count("POST /graphql") - before; got != 1 {
		t.Errorf("GraphQL requests: %d, want 1", got)
	}

	m := e.fake.CreatePullRequest("c", "main", "T", "", true)
	if err := e.fake.SetPRHead(m, pushed); err != nil {
		t.Fatal(err)
	}
	pr, _ = e.c.PR(ctx, m)
	err = e.c.MarkReadyAtHead(ctx, pr, "Ready.", reviewed)
	var moved *HeadMovedError
	if !errors.As(err, &moved) || moved.Got != pushed || moved.Want != reviewed {
		t.Fatalf("MarkReadyAtHead after a push = %v, want a HeadMovedError naming both heads", err)
	}
	if is, _ := e.fake.Issue(m); !is.Pull.Draft {
		t.Error("a PR whose head moved after the review was left ready")
	}
}
