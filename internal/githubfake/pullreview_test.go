package githubfake

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-github/v66/github"
)

// headSHAOf is pull request n's head commit, as its head.sha shows it.
func (f *Fake) headSHAOf(n int) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if is := f.st.Issues[n]; is != nil && is.Pull != nil {
		return f.headSHA(is.Pull)
	}
	return ""
}

// status is the HTTP status of a go-github call's answer.
func status(resp *github.Response) int {
	if resp == nil {
		return 0
	}
	return resp.StatusCode
}

// TestMergePR merges a pull request through the API as a person: the base
// moves to the merge commit, the pull request is closed and merged by
// them, the push and the merged pull_request closed are their events; and
// GitHub's refusals (a draft, a closed pull request, a moved head, a
// person without write access) hold.
func TestMergePR(t *testing.T) {
	w := newTriggerWorld(t, Options{})
	ctx, f := w.ctx, w.h.f
	n := w.pr(w.bot, "roadmap/1", "main")
	w.push(tok, "roadmap/1", "a.go")
	head := f.headSHAOf(n)

	_, resp, err := w.alice.PullRequests.Merge(ctx, "acme", "widgets", n, "", &github.PullRequestOptions{SHA: otherSHA})
	if status(resp) != http.StatusConflict {
		t.Errorf("merge with a head the pull request no longer has: %v, want 409", err)
	}
	_, resp, _ = w.mallory.PullRequests.Merge(ctx, "acme", "widgets", n, "", nil)
	if status(resp) != http.StatusForbidden {
		t.Errorf("merge by a person without write access: %d, want 403", status(resp))
	}
	res, _, err := w.alice.PullRequests.Merge(ctx, "acme", "widgets", n, "", &github.PullRequestOptions{SHA: head, MergeMethod: "squash"})
	w.must(err, "merge")
	if !res.GetMerged() || !shaRE().MatchString(res.GetSHA()) {
		t.Fatalf("merge result %+v", res)
	}
	pr, _, err := w.bot.PullRequests.Get(ctx, "acme", "widgets", n)
	w.must(err, "get")
	got := []any{pr.GetState(), pr.GetMerged(), pr.GetMergedBy().GetLogin(), pr.GetMergeCommitSHA(), pr.GetBase().GetSHA(), pr.MergedAt != nil}
	if want := []any{"closed", true, "alice", res.GetSHA(), res.GetSHA(), true}; !cmp.Equal(got, want) {
		t.Errorf("merged pull request: state, merged, merged_by, merge_commit_sha, base.sha, merged_at set = %v, want %v", got, want)
	}
	if merged, _, err := w.bot.PullRequests.IsMerged(ctx, "acme", "widgets", n); !merged || err != nil {
		t.Errorf("IsMerged: %v %v", merged, err)
	}
	var evs []string
	for _, ev := range f.Events()[3:] { // after the opened, the push to the head and its synchronize
		evs = append(evs, strings.Join([]string{ev.Name, ev.Action, ev.Ref, ev.SHA, ev.Before, ev.Actor, strings.Join(ev.Paths, ","), map[bool]string{true: "merged"}[ev.Merged]}, " "))
	}
	before := madeUpSHA("main")
	want := []string{"push  refs/heads/main " + res.GetSHA() + " " + before + " alice a.go ", "pull_request closed  " + head + "  alice a.go merged"}
	if diff := cmp.Diff(want, evs); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	_, resp, _ = w.alice.PullRequests.Merge(ctx, "acme", "widgets", n, "", nil)
	if status(resp) != http.StatusMethodNotAllowed {
		t.Errorf("merging a merged pull request: %d, want 405", status(resp))
	}
	if _, resp, _ := w.alice.PullRequests.Edit(ctx, "acme", "widgets", n, &github.PullRequest{State: github.String("open")}); status(resp) != 422 {
		t.Errorf("reopening a merged pull request: %d, want 422", status(resp))
	}
	draft := f.CreatePullRequest("roadmap/2", "main", "draft", "", true)
	if _, resp, err := w.alice.PullRequests.Merge(ctx, "acme", "widgets", draft, "", nil); status(resp) != 405 || !strings.Contains(err.Error(), "still a draft") {
		t.Errorf("merging a draft: %v, want 405 Pull Request is still a draft", err)
	}
	closed := w.pr(w.bot, "roadmap/3", "main")
	w.setPRState(w.bot, closed, "closed")
	if _, resp, _ := w.alice.PullRequests.Merge(ctx, "acme", "widgets", closed, "", nil); status(resp) != 405 {
		t.Errorf("merging a closed pull request: %d, want 405", status(resp))
	}
	if merged, _, _ := w.bot.PullRequests.IsMerged(ctx, "acme", "widgets", closed); merged {
		t.Error("IsMerged of a closed, unmerged pull request")
	}
}

// TestMergePRGit merges on a real git remote: each merge method makes the
// commit GitHub's does and moves the base branch to it; a conflict is 405.
func TestMergePRGit(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	remote, work := filepath.Join(dir, "remote.git"), filepath.Join(dir, "work")
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(git, args...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	commit := func(file, text, msg string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(work, file), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		run("-C", work, "add", "-A")
		run("-C", work, "commit", "-q", "-m", msg)
	}
	run("init", "--bare", "-q", "-b", "main", remote)
	run("init", "-q", "-b", "main", work)
	commit("README.md", "hello\n", "one")
	for _, b := range []string{"merge", "squash", "rebase", "clash"} {
		run("-C", work, "checkout", "-q", "-b", b, "main")
		commit(b+".txt", b+"\n", "add "+b)
		commit(b+".txt", b+" twice\n", "change "+b)
		if b == "clash" {
			commit("README.md", "theirs\n", "clash")
		}
	}
	run("-C", work, "checkout", "-q", "main")
	commit("main.txt", "main\n", "main moves on")
	run("-C", work, "push", "-q", remote, "main", "merge", "squash", "rebase", "clash")

	w := newTriggerWorld(t, Options{GitRemote: remote})
	for _, method := range []string{"merge", "squash", "rebase"} {
		n := w.pr(w.bot, method, "main")
		before := run("--git-dir", remote, "rev-parse", "main")
		res, _, err := w.alice.PullRequests.Merge(w.ctx, "acme", "widgets", n, "", &github.PullRequestOptions{MergeMethod: method})
		w.must(err, "merge "+method)
		if got := run("--git-dir", remote, "rev-parse", "main"); got != res.GetSHA() {
			t.Errorf("%s: main is at %s, the merge answered %s", method, got, res.GetSHA())
		}
		parents := strings.Fields(run("--git-dir", remote, "log", "-1", "--format=%P", res.GetSHA()))
		subjects := run("--git-dir", remote, "log", "--format=%s", before+".."+res.GetSHA())
		tree := run("--git-dir", remote, "ls-tree", "--name-only", res.GetSHA())
		want := map[string]string{
			"merge":  "2 Merge pull request #1 from acme:merge|change merge|add merge",
			"squash": "1 a change (#2)",
			"rebase": "1 change rebase|add rebase",
		}[method]
		if got := strings.Join([]string{string(rune('0' + len(parents))), strings.ReplaceAll(subjects, "\n", "|")}, " "); got != want {
			t.Errorf("%s: parents and subjects %q, want %q", method, got, want)
		}
		if !strings.Contains(tree, method+".txt") || !strings.Contains(tree, "main.txt") {
			t.Errorf("%s: the merged tree has %q", method, tree)
		}
		if evs, _ := w.h.f.Pushed(aliceTok); len(evs) != 0 {
			t.Errorf("%s: the merge's push was seen again by Pushed: %+v", method, evs)
		}
	}
	n := w.pr(w.bot, "clash", "main")
	run("-C", work, "pull", "-q", remote, "main")
	commit("README.md", "ours\n", "ours") // clash changed the same line
	run("-C", work, "push", "-q", remote, "main")
	if _, resp, _ := w.alice.PullRequests.Merge(w.ctx, "acme", "widgets", n, "", nil); status(resp) != http.StatusMethodNotAllowed {
		t.Errorf("merging a conflicting pull request: %d, want 405", status(resp))
	}
}

// TestReviewCommentThreads comments on lines of a pull request's diff
// through go-github: a comment, replies in its thread (both forms), a
// review with line comments and a pending one; what GitHub refuses is
// refused, and each comment is a pull_request_review_comment event of its
// author with its review's pull_request_review.
func TestReviewCommentThreads(t *testing.T) {
	w := newTriggerWorld(t, Options{})
	ctx, f := w.ctx, w.h.f
	n := w.pr(w.bot, "roadmap/1", "main")
	w.push(tok, "roadmap/1", "a.go", "b.go")
	head := f.headSHAOf(n)
	first := len(f.Events())

	c, _, err := w.alice.PullRequests.CreateComment(ctx, "acme", "widgets", n, &github.PullRequestComment{
		Body: github.String("why?"), Path: github.String("a.go"), Line: github.Int(3), StartLine: github.Int(1), CommitID: github.String(head)})
	w.must(err, "comment")
	if c.GetSide() != "RIGHT" || c.GetStartSide() != "RIGHT" || c.GetPullRequestReviewID() == 0 {
		t.Errorf("comment: side %q start_side %q review %d", c.GetSide(), c.GetStartSide(), c.GetPullRequestReviewID())
	}
	r1, _, err := w.bot.PullRequests.CreateCommentInReplyTo(ctx, "acme", "widgets", n, "because", c.GetID())
	w.must(err, "reply")
	req, _ := w.mallory.NewRequest("POST", "repos/acme/widgets/pulls/1/comments/"+itoa(c.GetID())+"/replies", map[string]string{"body": "agreed"})
	r2 := new(github.PullRequestComment)
	_, err = w.mallory.Do(ctx, req, r2)
	w.must(err, "reply through /replies")
	for _, r := range []*github.PullRequestComment{r1, r2} {
		if r.GetInReplyTo() != c.GetID() || r.GetPath() != "a.go" || r.GetLine() != 3 {
			t.Errorf("reply %d: in_reply_to %d path %q line %d", r.GetID(), r.GetInReplyTo(), r.GetPath(), r.GetLine())
		}
	}
	refused := []struct {
		what string
		send func() *github.Response
		want int
	}{
		{"a reply to a reply", func() *github.Response {
			_, resp, _ := w.alice.PullRequests.CreateCommentInReplyTo(ctx, "acme", "widgets", n, "x", r1.GetID())
			return resp
		}, 422},
		{"a reply to no comment", func() *github.Response {
			_, resp, _ := w.alice.PullRequests.CreateCommentInReplyTo(ctx, "acme", "widgets", n, "x", 9999)
			return resp
		}, 404},
		{"a file the pull request does not change", func() *github.Response {
			_, resp, _ := w.alice.PullRequests.CreateComment(ctx, "acme", "widgets", n, &github.PullRequestComment{
				Body: github.String("x"), Path: github.String("c.go"), Line: github.Int(1), CommitID: github.String(head)})
			return resp
		}, 422},
		{"a commit the repository lacks", func() *github.Response {
			_, resp, _ := w.alice.PullRequests.CreateComment(ctx, "acme", "widgets", n, &github.PullRequestComment{
				Body: github.String("x"), Path: github.String("a.go"), Line: github.Int(1), CommitID: github.String(otherSHA)})
			return resp
		}, 422},
		{"no line", func() *github.Response {
			_, resp, _ := w.alice.PullRequests.CreateComment(ctx, "acme", "widgets", n, &github.PullRequestComment{
				Body: github.String("x"), Path: github.String("a.go"), CommitID: github.String(head)})
			return resp
		}, 422},
	}
	for _, r := range refused {
		if got := status(r.send()); got != r.want {
			t.Errorf("%s: %d, want %d", r.what, got, r.want)
		}
	}

	rv, _, err := w.alice.PullRequests.CreateReview(ctx, "acme", "widgets", n, &github.PullRequestReviewRequest{
		Event: github.String("REQUEST_CHANGES"), Body: github.String("see inline"),
		Comments: []*github.DraftReviewComment{{Path: github.String("b.go"), Line: github.Int(7), Side: github.String("LEFT"), Body: github.String("gone?")}}})
	w.must(err, "review")
	_, _, err = w.bot.PullRequests.CreateReview(ctx, "acme", "widgets", n, &github.PullRequestReviewRequest{
		Comments: []*github.DraftReviewComment{{Path: github.String("a.go"), Line: github.Int(1), Body: github.String("draft")}}})
	w.must(err, "pending review")
	_, resp, _ := w.bot.PullRequests.CreateReview(ctx, "acme", "widgets", n, &github.PullRequestReviewRequest{})
	if status(resp) != 422 {
		t.Errorf("a second pending review: %d, want 422", status(resp))
	}

	in, _, err := w.bot.PullRequests.ListReviewComments(ctx, "acme", "widgets", n, rv.GetID(), nil)
	w.must(err, "review's comments")
	if len(in) != 1 || in[0].GetPath() != "b.go" || in[0].GetSide() != "LEFT" || in[0].GetLine() != 7 {
		t.Errorf("the review's comments: %+v", in)
	}
	all, _, err := w.mallory.PullRequests.ListComments(ctx, "acme", "widgets", n, nil)
	w.must(err, "list")
	var got []string
	for _, x := range all {
		got = append(got, x.GetUser().GetLogin()+" "+x.GetBody()+" "+itoa(x.GetInReplyTo()))
	}
	want := []string{"alice why? 0", "github-actions[bot] because " + itoa(c.GetID()), "mallory agreed " + itoa(c.GetID()), "alice gone? 0"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the pull request's comments, the pending one unseen (-want +got):\n%s", diff)
	}
	reviews, _, err := w.mallory.PullRequests.ListReviews(ctx, "acme", "widgets", n, nil)
	w.must(err, "reviews")
	if len(reviews) != 4 || reviews[3].GetState() != "CHANGES_REQUESTED" {
		t.Errorf("reviews as another sees them: %d, the last %q", len(reviews), reviews[len(reviews)-1].GetState())
	}

	var evs []string
	for _, ev := range f.Events()[first:] {
		evs = append(evs, ev.Name+" "+ev.Actor)
	}
	wantEvs := []string{
		"pull_request_review_comment alice", "pull_request_review alice",
		"pull_request_review_comment github-actions[bot]", "pull_request_review github-actions[bot]",
		"pull_request_review_comment mallory", "pull_request_review mallory",
		"pull_request_review_comment alice", "pull_request_review alice",
	}
	if diff := cmp.Diff(wantEvs, evs); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
