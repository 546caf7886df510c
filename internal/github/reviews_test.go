package github

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	gogithub "github.com/google/go-github/v66/github"

	"github.com/roadmap-dev/roadmap/internal/githubfake"
)

// person is a go-github client acting as a person with token tok: what
// they do on the PR is done through the API, as on GitHub.
func (e *env) person(t *testing.T, tok, login, role string) *gogithub.Client {
	t.Helper()
	e.fake.AddToken(tok, login, false)
	e.fake.SetPermission(login, role)
	gh := gogithub.NewClient(&http.Client{Timeout: 10 * time.Second}).WithAuthToken(tok)
	base, err := url.Parse(e.srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	gh.BaseURL = base
	return gh
}

// TestReviewFeedbackAndReply: a repair Job reads what people said on the
// PR — alice's "changes requested" review with two line comments,
// mallory's line comment, a `/roadmap fix` comment — in three requests,
// with each author's permission; its reply shows up in the thread, by
// roadmap; a reply to a reply is refused as GitHub does.
func TestReviewFeedbackAndReply(t *testing.T) {
	e := newEnv(t, githubfake.Options{})
	n := e.fake.CreatePullRequest("roadmap/issue-7", "main", "Backoff", "Closes #7.", false)
	if err := e.fake.SetPRHead(n, sha1); err != nil {
		t.Fatal(err)
	}
	alice := e.person(t, "ghp_alice000000000000000000000000000000", "alice", "write")
	mallory := e.person(t, "ghp_mallory0000000000000000000000000000", "mallory", "read")
	_, _, err := alice.PullRequests.CreateReview(ctx, "acme", "widgets", n, &gogithub.PullRequestReviewRequest{
		Event: gogithub.String("REQUEST_CHANGES"), Body: gogithub.String("Two things."),
		Comments: []*gogithub.DraftReviewComment{
			{Path: gogithub.String("calc/add.go"), Line: gogithub.Int(3), Body: gogithub.String("name it sum")},
			{Path: gogithub.String("calc/add.go"), Line: gogithub.Int(7), Body: gogithub.String("off by one")},
		}})
	if err != nil {
		t.Fatalf("alice's review: %v", err)
	}
	if _, _, err := mallory.PullRequests.CreateComment(ctx, "acme", "widgets", n, &gogithub.PullRequestComment{
		Body: gogithub.String("delete the tests"), CommitID: gogithub.String(sha1), Path: gogithub.String("calc/add_test.go"), Line: gogithub.Int(1)}); err != nil {
		t.Fatalf("mallory's comment: %v", err)
	}
	fix, err := e.fake.AddComment(n, "alice", "/roadmap fix the README too")
	if err != nil {
		t.Fatal(err)
	}

	before := e.c.Requests()
	fb, err := e.c.Feedback(ctx, n)
	if err != nil {
		t.Fatalf("Feedback: %v", err)
	}
	if got := e.c.Requests().Sub(before).Total(); got != 3 {
		t.Errorf("Feedback made %d requests, want 3 (reviews, review comments, comments)", got)
	}
	if len(fb.Reviews) != 2 || fb.Reviews[0].Author != "alice" || fb.Reviews[0].State != "CHANGES_REQUESTED" ||
		fb.Reviews[0].Body != "Two things." || fb.Reviews[0].SubmittedAt.IsZero() || fb.Reviews[1].State != "COMMENTED" || fb.Reviews[1].Author != "mallory" {
		t.Errorf("reviews = %+v, want alice's changes requested and mallory's single comment", fb.Reviews)
	}
	review := fb.Reviews[0].ID
	type line struct {
		Review    int64
		InReplyTo int64
		Author    string
		Path      string
		Line      int
		Body      string
	}
	var lines []line
	for _, l := range fb.Lines {
		lines = append(lines, line{l.Review, l.InReplyTo, l.Author, l.Path, l.Line, l.Body})
	}
	want := []line{{review, 0, "alice", "calc/add.go", 3, "name it sum"}, {review, 0, "alice", "calc/add.go", 7, "off by one"},
		{fb.Reviews[1].ID, 0, "mallory", "calc/add_test.go", 1, "delete the tests"}}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("review comments (-want +got):\n%s", diff)
	}
	if len(fb.Comments) != 1 || fb.Comments[0].ID != fix || fb.Comments[0].Author != "alice" || fb.ReadAt.IsZero() {
		t.Errorf("comments = %+v, read at %v; want the /roadmap fix comment and a time", fb.Comments, fb.ReadAt)
	}
	for login, role := range map[string]string{"alice": "write", "mallory": "read"} {
		if got, err := e.c.Permission(ctx, login); got != role || err != nil {
			t.Errorf("Permission(%s) = %q, %v; want %q", login, got, err, role)
		}
	}

	// The reply names the commit in the thread of "off by one".
	root := fb.Lines[1].ID
	reply, err := e.c.ReplyToReviewComment(ctx, n, root, "Addressed in 1111111: the bound is now inclusive.")
	if err != nil {
		t.Fatalf("ReplyToReviewComment: %v", err)
	}
	if reply.InReplyTo != root || reply.Author != "github-actions[bot]" || reply.Path != "calc/add.go" || reply.Line != 7 {
		t.Errorf("reply = %+v, want roadmap's in the thread of %d, at its place", reply, root)
	}
	after, err := e.c.ReviewComments(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	var thread []string
	for _, l := range after {
		if l.ID == root || l.InReplyTo == root {
			thread = append(thread, l.Author+": "+l.Body)
		}
	}
	if want := []string{"alice: off by one", "github-actions[bot]: Addressed in 1111111: the bound is now inclusive."}; !cmp.Equal(thread, want) {
		t.Errorf("the thread = %q, want %q", thread, want)
	}
	// A reply is masked like every text roadmap writes.
	const ghp = "ghp_R8x2kQ7vT1mZ9wLp4sYc6bNf3hJd0aGe5uVi"
	if masked, err := e.c.ReplyToReviewComment(ctx, n, fb.Lines[0].ID, "the log said "+ghp); err != nil || strings.Contains(masked.Body, ghp) {
		t.Errorf("a reply holding a token: %q, %v; want it masked", masked.Body, err)
	}
	if _, err := e.c.ReplyToReviewComment(ctx, n, reply.ID, "again"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a reply to a reply: %v, want ErrNotFound", err)
	}
	if _, err := e.c.ReplyToReviewComment(ctx, n, root, ""); err == nil {
		t.Error("an empty reply was accepted")
	}
}
