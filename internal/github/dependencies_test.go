package github

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
)

// TestBlockersFromDependenciesAPI reads an issue's blockers from GitHub's
// issue dependencies, over HTTP against the fake with the real go-github
// client: each blocker with its state, reason and kind in one request; the
// unchanged list again as a free 304; a list past one page of 100; and a
// GitHub without the feature told apart from an issue with no blockers.
func TestBlockersFromDependenciesAPI(t *testing.T) {
	// GitHub lets an issue have 50 blockers; the fake is raised past 100
	// so the second page is read.
	e := newEnv(t, githubfake.Options{MaxBlockedBy: 120})
	n := e.fake.CreateIssue(githubfake.Issue{Title: "B"})
	open := e.fake.CreateIssue(githubfake.Issue{Title: "A, open"})
	done := e.fake.CreateIssue(githubfake.Issue{Title: "A, done"})
	pr := e.fake.CreatePullRequest("topic", "main", "a pull request", "", false)
	for _, b := range []int{open, done, pr} {
		if err := e.fake.AddBlockedBy(n, b); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.fake.CloseIssue(done, "completed"); err != nil {
		t.Fatal(err)
	}
	merge, _ := http.NewRequest("PUT", fmt.Sprintf("%s/repos/acme/widgets/pulls/%d/merge", e.srv.URL, pr), nil)
	merge.Header.Set("Authorization", "Bearer "+testToken)
	if resp, err := http.DefaultClient.Do(merge); err != nil || resp.StatusCode != 200 {
		t.Fatalf("merge #%d: %v %v", pr, resp, err)
	}

	id := func(num int) int64 { is, _ := e.fake.Issue(num); return is.ID }
	before := e.c.Requests()
	got, err := e.c.BlockedBy(ctx, n)
	if err != nil {
		t.Fatalf("BlockedBy: %v", err)
	}
	want := []Dependency{
		{ID: id(open), Number: open, Repo: "acme/widgets", Title: "A, open", State: "open"},
		{ID: id(done), Number: done, Repo: "acme/widgets", Title: "A, done", State: "closed", StateReason: "completed"},
		{ID: id(pr), Number: pr, Repo: "acme/widgets", Title: "a pull request", State: "closed", PullRequest: true, Merged: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("BlockedBy (-want +got):\n%s", diff)
	}
	if spent := e.c.Requests().Sub(before); spent.Counted() != 1 {
		t.Errorf("first read: %d counted requests, want 1", spent.Counted())
	}

	// Unchanged: a conditional GET answered 304, free, with the same list.
	before = e.c.Requests()
	again, err := e.c.BlockedBy(ctx, n)
	if err != nil || !cmp.Equal(want, again) {
		t.Errorf("second read: %v, %v", again, err)
	}
	if spent := e.c.Requests().Sub(before); spent.Counted() != 0 || spent.NotModified != 1 {
		t.Errorf("second read: counted %d, not modified %d; want 0 and 1", spent.Counted(), spent.NotModified)
	}

	// Past one page: two requests, every blocker in order.
	many := e.fake.CreateIssue(githubfake.Issue{Title: "many"})
	for i := range 110 {
		if err := e.fake.AddBlockedBy(many, e.fake.CreateIssue(githubfake.Issue{Title: fmt.Sprintf("b%d", i)})); err != nil {
			t.Fatal(err)
		}
	}
	before = e.c.Requests()
	all, err := e.c.BlockedBy(ctx, many)
	if err != nil || len(all) != 110 || all[0].Title != "b0" || all[109].Title != "b109" {
		t.Fatalf("110 blockers: %d read, %v", len(all), err)
	}
	if spent := e.c.Requests().Sub(before); spent.Counted() != 2 {
		t.Errorf("110 blockers: %d counted requests, want 2", spent.Counted())
	}

	// No blockers: an empty list and no error.
	if none, err := e.c.BlockedBy(ctx, open); err != nil || len(none) != 0 {
		t.Errorf("an issue with no blockers: %v, %v", none, err)
	}
	// A GitHub without issue dependencies: 404, told apart.
	off := newEnv(t, githubfake.Options{NoIssueDependencies: true})
	m := off.fake.CreateIssue(githubfake.Issue{Title: "B"})
	list, err := off.c.BlockedBy(ctx, m)
	if !errors.Is(err, ErrDependenciesUnavailable) || list == nil || len(list) != 0 {
		t.Errorf("dependencies off: %v, %v; want an empty list and ErrDependenciesUnavailable", list, err)
	}

	// A blocker in another repository is named by its own URLs (the fake
	// holds one repository, so its answers are read here directly).
	for _, w := range []issueWire{
		{RepositoryURL: "https://api.github.com/repos/acme/gadgets"},
		{URL: "https://api.github.com/repos/acme/gadgets/issues/4"},
		{HTMLURL: "https://github.com/acme/gadgets/issues/4"},
		{HTMLURL: "https://github.com/acme/gadgets/pull/4"},
	} {
		if got := repoOf(w); got != "acme/gadgets" {
			t.Errorf("repoOf(%+v) = %q, want acme/gadgets", w, got)
		}
	}
}
