package github

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/roadmap-dev/roadmap/internal/githubfake"
)

func TestNewRequiresMasker(t *testing.T) {
	_, err := New(Options{BaseURL: "http://127.0.0.1:1/", Owner: "o", Repo: "r"})
	if err == nil || !strings.Contains(err.Error(), "Masker") {
		t.Fatalf("New without a masker: err = %v, want an error naming the Masker", err)
	}
}

func TestIssue(t *testing.T) {
	e := newEnv(t, githubfake.Options{})
	n := e.fake.CreateIssue(githubfake.Issue{Title: "Add backoff", Body: "Please add backoff.", Author: "alice", Labels: []string{"roadmap:stage"}})

	got, err := e.c.Issue(ctx, n)
	if err != nil {
		t.Fatalf("Issue: %v", err)
	}
	want := Issue{Number: n, Title: "Add backoff", Body: "Please add backoff.", State: "open", Labels: []string{"roadmap:stage"}, Author: "alice",
		DependenciesKnown: true}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(Issue{}, "UpdatedAt")); diff != "" {
		t.Errorf("Issue (-want +got):\n%s", diff)
	}
	if got.UpdatedAt.IsZero() {
		t.Error("UpdatedAt is zero")
	}

	// Reading again unchanged is a conditional GET answered 304: free.
	before := e.c.Requests()
	if _, err := e.c.Issue(ctx, n); err != nil {
		t.Fatalf("Issue again: %v", err)
	}
	spent := e.c.Requests().Sub(before)
	if spent.Counted() != 0 || spent.NotModified != 1 {
		t.Errorf("second read: counted %d, not modified %d; want 0 and 1", spent.Counted(), spent.NotModified)
	}

	// A change by someone else is seen at once.
	if err := e.fake.SetIssueBody(n, "alice", "Edited."); err != nil {
		t.Fatal(err)
	}
	got, err = e.c.Issue(ctx, n)
	if err != nil || got.Body != "Edited." {
		t.Errorf("after an edit: body %q, err %v; want %q", got.Body, err, "Edited.")
	}

	if _, err := e.c.Issue(ctx, 999); !errors.Is(err, ErrNotFound) {
		t.Errorf("Issue(999): err = %v, want ErrNotFound", err)
	}

	// issue_dependencies_summary: how many block it, open and closed (the
	// blockers check reads none when there are none).
	b := e.fake.CreateIssue(githubfake.Issue{Title: "Parser", Author: "alice"})
	if err := e.fake.AddBlockedBy(n, b); err != nil {
		t.Fatal(err)
	}
	if err := e.fake.CloseIssue(b, "completed"); err != nil {
		t.Fatal(err)
	}
	if got, err := e.c.Issue(ctx, n); err != nil || !got.DependenciesKnown || got.BlockedByTotal != 1 {
		t.Errorf("blocked by a closed issue: known %v, total %d, err %v; want true, 1", got.DependenciesKnown, got.BlockedByTotal, err)
	}
	old := newEnv(t, githubfake.Options{NoIssueDependencies: true})
	m := old.fake.CreateIssue(githubfake.Issue{Title: "Add backoff", Author: "alice"})
	if got, err := old.c.Issue(ctx, m); err != nil || got.DependenciesKnown {
		t.Errorf("a GitHub without issue dependencies: known %v, err %v; want false", got.DependenciesKnown, err)
	}
}

func TestComments(t *testing.T) {
	e := newEnv(t, githubfake.Options{})
	n := e.fake.CreateIssue(githubfake.Issue{Title: "t"})
	var want []string
	for i := range 205 {
		body := fmt.Sprintf("comment %d", i)
		if _, err := e.fake.AddComment(n, "bob", body); err != nil {
			t.Fatal(err)
		}
		want = append(want, body)
	}
	list, err := e.c.Comments(ctx, n)
	if err != nil {
		t.Fatalf("Comments: %v", err)
	}
	var got []string
	for _, c := range list {
		got = append(got, c.Body)
		if c.Author != "bob" || c.ID == 0 || c.CreatedAt.IsZero() {
			t.Fatalf("comment %+v: want author bob, an id and a time", c)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Comments (-want +got):\n%s", diff)
	}
	// 205 comments at 100 a page are three pages.
	if got := e.count("GET /repos/{owner}/{repo}/issues/{n}/comments"); got != 3 {
		t.Errorf("pages read: %d, want 3", got)
	}
}

func TestUpsertMarkerComment(t *testing.T) {
	const marker = "<!-- roadmap:status -->"
	const endpointList = "GET /repos/{owner}/{repo}/issues/{n}/comments"
	e := newEnv(t, githubfake.Options{})
	n := e.fake.CreateIssue(githubfake.Issue{Title: "t"})
	e.fake.AddComment(n, "alice", "a person's comment")

	first, err := e.c.UpsertMarkerComment(ctx, n, marker, "Stage: planning.")
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if first.Body != marker+"\nStage: planning." {
		t.Errorf("created body %q: want the marker added as the first line", first.Body)
	}
	second, err := e.c.UpsertMarkerComment(ctx, n, marker, marker+"\nStage: done.")
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	if second.ID != first.ID {
		t.Errorf("update made comment %d, want %d updated in place", second.ID, first.ID)
	}
	var bodies []string
	for _, c := range e.fake.Comments(n) {
		bodies = append(bodies, c.Body)
	}
	if diff := cmp.Diff([]string{"a person's comment", marker + "\nStage: done."}, bodies); diff != "" {
		t.Errorf("comments on the issue (-want +got):\n%s", diff)
	}
	if got := e.count(endpointList); got != 1 {
		t.Errorf("comment list read %d times, want once per Client", got)
	}
	// The same body again costs nothing.
	before := e.c.Requests()
	if _, err := e.c.UpsertMarkerComment(ctx, n, marker, marker+"\nStage: done."); err != nil {
		t.Fatal(err)
	}
	if spent := e.c.Requests().Sub(before); spent.Total() != 0 {
		t.Errorf("unchanged upsert spent %d requests", spent.Total())
	}

	// A new Client (the next Job) finds the comment instead of adding one.
	c2 := e.client(t)
	if _, err := c2.UpsertMarkerComment(ctx, n, marker, "Stage: next job."); err != nil {
		t.Fatal(err)
	}
	if got := len(e.fake.Comments(n)); got != 2 {
		t.Errorf("%d comments after another Job's upsert, want 2", got)
	}

	for _, body := range []string{"", "  \n", "-", " - \n"} {
		if _, err := e.c.UpsertMarkerComment(ctx, n, marker, body); !errors.Is(err, ErrEmptyComment) {
			t.Errorf("body %q: err = %v, want ErrEmptyComment", body, err)
		}
	}
	if got := len(e.fake.Comments(n)); got != 2 {
		t.Errorf("%d comments after refused upserts, want 2", got)
	}

	// A comment deleted behind our back is created again.
	e3 := newEnv(t, githubfake.Options{})
	m := e3.fake.CreateIssue(githubfake.Issue{Title: "t"})
	if _, err := e3.c.UpsertMarkerComment(ctx, m, marker, "one"); err != nil {
		t.Fatal(err)
	}
	e3.fake.AddFault(githubfake.Rule{Method: "PATCH", Path: "/repos/*/*/issues/comments/*", Call: 1, Status: 404})
	if _, err := e3.c.UpsertMarkerComment(ctx, m, marker, "two"); err != nil {
		t.Fatalf("after a 404 on update: %v", err)
	}
	if got := e3.fake.Comments(m); len(got) != 2 || got[1].Body != marker+"\ntwo" {
		t.Errorf("comments %+v: want the comment created again", got)
	}
}

func TestAddLabels(t *testing.T) {
	e := newEnv(t, githubfake.Options{})
	n := e.fake.CreateIssue(githubfake.Issue{Title: "t", Labels: []string{"bug"}})
	if err := e.c.AddLabels(ctx, n, "roadmap:stage", "roadmap:needs-input"); err != nil {
		t.Fatalf("AddLabels: %v", err)
	}
	if diff := cmp.Diff([]string{"bug", "roadmap:stage", "roadmap:needs-input"}, e.fake.Labels(n)); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	// A lost answer is sent again; adding twice is adding once.
	e.fake.AddFault(githubfake.Rule{Method: "POST", Path: "/repos/*/*/issues/*/labels", Call: 1, ApplyThenFail: true, Status: 502})
	if err := e.c.AddLabels(ctx, n, "roadmap:implement"); err != nil {
		t.Fatalf("AddLabels after a lost answer: %v", err)
	}
	if diff := cmp.Diff([]string{"bug", "roadmap:stage", "roadmap:needs-input", "roadmap:implement"}, e.fake.Labels(n)); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
}

func TestRemoveLabel(t *testing.T) {
	e := newEnv(t, githubfake.Options{})
	n := e.fake.CreateIssue(githubfake.Issue{Title: "t", Labels: []string{"good first issue", "roadmap:stage"}})
	for _, l := range []string{"good first issue", "roadmap:stage", "not-there"} {
		if err := e.c.RemoveLabel(ctx, n, l); err != nil {
			t.Errorf("RemoveLabel(%q): %v", l, err)
		}
	}
	if got := e.fake.Labels(n); len(got) != 0 {
		t.Errorf("labels left: %v", got)
	}
}

func TestPermission(t *testing.T) {
	e := newEnv(t, githubfake.Options{})
	for _, role := range []string{"admin", "maintain", "write", "triage", "read"} {
		e.fake.SetPermission("user-"+role, role)
	}
	for _, tc := range []struct{ user, want string }{
		{"user-admin", "admin"}, {"user-maintain", "maintain"}, {"user-write", "write"},
		{"user-triage", "triage"}, {"user-read", "read"}, {"stranger", "none"},
	} {
		t.Run(tc.user, func(t *testing.T) {
			got, err := e.c.Permission(ctx, tc.user)
			if err != nil || got != tc.want {
				t.Errorf("Permission(%s) = %q, %v; want %q", tc.user, got, err, tc.want)
			}
		})
	}
}
