package githubfake

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
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
