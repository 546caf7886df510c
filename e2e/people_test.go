//go:build unix

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/demo"
	"github.com/roadmap-dev/roadmap/internal/demo/demotest"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// People's acts on a running item (issue 47), each run started by the
// fake's decision of what GitHub would start (scheduler_test.go).

// send sends a person's request the product has no method for, as GitHub's
// REST API takes it.
func (p *person) send(ctx context.Context, method, path string, body any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, method, p.it.apiURL+path, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+p.token)
	req.Header.Set("Accept", "application/vnd.github+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<12))
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, msg)
	}
	return nil
}

// closePR closes pull request n.
func (p *person) closePR(n int) {
	p.do(fmt.Sprintf("closes PR #%d", n), func(ctx context.Context, _ *github.Client) error {
		return p.send(ctx, http.MethodPatch, fmt.Sprintf("/repos/%s/%s/pulls/%d", demo.Owner, demo.Repo, n), map[string]any{"state": "closed"})
	})
}

// merge merges pull request n with a merge commit, as GitHub's merge
// button does, and returns the merge commit. The issues its description
// closes ("Closes #1.") close as the person's act.
func (p *person) merge(n int) string {
	p.do(fmt.Sprintf("merges PR #%d", n), func(ctx context.Context, _ *github.Client) error {
		return p.send(ctx, http.MethodPut, fmt.Sprintf("/repos/%s/%s/pulls/%d/merge", demo.Owner, demo.Repo, n),
			map[string]any{"merge_method": "merge"})
	})
	pull, _ := p.it.w.Fake.Issue(n)
	return pull.Pull.MergeCommitSHA
}

// markBlocked marks issue n blocked by issue blocker in GitHub's issue
// dependencies, as a person does in the web UI: an issue_dependencies
// event, which starts no run.
func (p *person) markBlocked(n, blocker int) {
	is, _ := p.it.w.Fake.Issue(blocker)
	p.do(fmt.Sprintf("marks #%d blocked by #%d", n, blocker), func(ctx context.Context, _ *github.Client) error {
		return p.send(ctx, http.MethodPost, fmt.Sprintf("/repos/%s/%s/issues/%d/dependencies/blocked_by", demo.Owner, demo.Repo, n),
			map[string]any{"issue_id": is.ID})
	})
}

// lineComment is a comment on a line of a file in a review.
type lineComment struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	Side string `json:"side"`
	Body string `json:"body"`
}

// requestChanges submits a "changes requested" review of pull request n
// with its line comments, in one review as GitHub's UI batches them.
func (p *person) requestChanges(n int, body string, comments ...lineComment) {
	p.do(fmt.Sprintf("requests changes on PR #%d (%d line comments)", n, len(comments)), func(ctx context.Context, _ *github.Client) error {
		return p.send(ctx, http.MethodPost, fmt.Sprintf("/repos/%s/%s/pulls/%d/reviews", demo.Owner, demo.Repo, n),
			map[string]any{"event": "REQUEST_CHANGES", "body": body, "comments": comments})
	})
}

// TestE2EPersonClosesPR: the label starts the item; its Job does the groups
// and yields at the watch (the PR's CI still runs), and report dispatches
// the continuation. A person closes the PR before the continuation runs:
// its Job holds the item at its first safe point (nothing pushed, the PR
// not marked ready), ends yielded with class pr_closed, and report starts
// nothing more. The item never ends ready on a closed PR.
func TestE2EPersonClosesPR(t *testing.T) {
	act := requireAct(t)
	it := newItem(t, act, itemOptions{Latency: 20 * time.Millisecond, WatchTimeout: 2 * time.Second})
	it.playCI("pending")
	it.baselinePushes()
	alice := it.person("alice", "write")

	alice.label(it.w.Issue, "roadmap:implement")
	run1 := it.nextRun("run 1", it.workflowFile(), "issues", nil)
	it.wantJobs(run1.actRun, "success", "success")
	rec := it.record()
	pr, _ := rec.StagePR()
	is, ok := it.w.Fake.Issue(pr)
	if !ok || is.Pull == nil {
		t.Fatalf("stage.pr #%d is no pull request", pr)
	}
	head := is.Pull.HeadSHA
	if len(it.w.Fake.Dispatches()) != 1 {
		t.Fatalf("run 1's report dispatched %d runs, want the continuation", len(it.w.Fake.Dispatches()))
	}

	alice.closePR(pr)
	run2 := it.nextRun("run 2", it.workflowFile(), "workflow_dispatch", nil)
	it.wantJobs(run2.actRun, "success", "success")
	rec = it.record()
	res, _ := rec.Result()
	class, _ := rec.Failure()
	if res != record.ResultYielded || class != string(failure.PRClosed) {
		t.Fatalf("the continuation ended %s/%s, want yielded/%s:\n%s", res, class, failure.PRClosed, recordText(rec))
	}
	is, _ = it.w.Fake.Issue(pr)
	if is.State != "closed" || !is.Pull.Draft || is.Pull.HeadSHA != head {
		t.Errorf("PR #%d: state %s, draft %v, head %s; want closed, still a draft, at %s (nothing pushed, never ready)",
			pr, is.State, is.Pull.Draft, is.Pull.HeadSHA, head)
	}
	if n := len(it.w.Fake.Dispatches()); n != 1 {
		t.Errorf("%d dispatches, want only run 1's: a held item is not continued", n)
	}
	it.noMoreRuns("after the person closed the PR")
}

// TestE2EReviewRound: the item is ready; a maintainer requests changes with
// two line comments in one review. GitHub starts the caller on
// pull_request_review (the fake's rules, not the test): one repair Job
// answers both comments, each with a commit and a reply in its thread
// naming the commit, writes the comment ledger, checks and reviews the new
// head, and marks the PR ready again there.
func TestE2EReviewRound(t *testing.T) {
	act := requireAct(t)
	it := newItem(t, act, itemOptions{Latency: 20 * time.Millisecond, WatchTimeout: 30 * time.Second, World: demotest.NewReviewWorld})
	it.playCI("success")
	it.baselinePushes()
	alice := it.person("alice", "admin")

	alice.label(it.w.Issue, "roadmap:implement")
	run1 := it.nextRun("run 1", it.workflowFile(), "issues", nil)
	it.wantJobs(run1.actRun, "success", "success")
	rec := it.record()
	if res, _ := rec.Result(); res != record.ResultReady {
		t.Fatalf("implement.result = %q, want ready:\n%s", res, recordText(rec))
	}
	pr, _ := rec.StagePR()
	it.checkReadyPR(pr)
	is, _ := it.w.Fake.Issue(pr)
	readyHead := is.Pull.HeadSHA
	it.noMoreRuns("after ready")

	alice.requestChanges(pr, demotest.ReviewBody,
		lineComment{Path: "README.md", Line: demotest.ReviewLineHello, Side: "RIGHT", Body: demotest.ReviewCommentHello},
		lineComment{Path: "README.md", Line: demotest.ReviewLineExample, Side: "RIGHT", Body: demotest.ReviewCommentExample})
	repair := it.nextRun("repair", it.workflowFile(), "pull_request_review", nil)
	if got := repair.Jobs[repair.job("approved")]; got != "success" {
		t.Fatalf("the review's run: jobs %v, want its implement job to succeed", repair.Jobs)
	}
	rec = it.record()
	if res, _ := rec.Result(); res != record.ResultReady {
		t.Fatalf("after the repair implement.result = %q, want ready:\n%s", res, recordText(rec))
	}
	is, _ = it.w.Fake.Issue(pr)
	if is.Pull.Draft || is.Pull.HeadSHA == readyHead {
		t.Fatalf("PR #%d: draft %v at %s; want ready again at a new head (was %s)", pr, is.Pull.Draft, is.Pull.HeadSHA, readyHead)
	}
	state := ""
	for _, st := range it.w.Fake.Statuses(is.Pull.HeadSHA) {
		if st.Context == "roadmap/implement" {
			state = st.State
		}
	}
	if state != "success" {
		t.Errorf("status roadmap/implement on the new head = %q, want success", state)
	}
	readme, err := git(t.Context(), "--git-dir", it.w.Remote, "show", is.Pull.HeadSHA+":README.md")
	if err != nil || !strings.Contains(readme, "greet.Hello(name)") || !strings.Contains(readme, "Example:") {
		t.Errorf("README.md at the new head does not hold both changes (%v):\n%s", err, readme)
	}
	// Each line comment has a reply in its thread, by roadmap, naming a
	// commit on the branch.
	comments, err := alice.gh.ReviewComments(t.Context(), pr)
	if err != nil {
		t.Fatal(err)
	}
	replies := map[int64]string{}
	var asked []int64
	for _, c := range comments {
		switch {
		case c.InReplyTo != 0 && strings.EqualFold(c.Author, github.DefaultIdentity):
			replies[c.InReplyTo] = c.Body
		case c.InReplyTo == 0 && c.Author == "alice":
			asked = append(asked, c.ID)
		}
	}
	if len(asked) != 2 {
		t.Fatalf("%d line comments by alice, want 2: %+v", len(asked), comments)
	}
	for _, id := range asked {
		reply, ok := replies[id]
		if !ok {
			t.Errorf("comment %d has no reply by roadmap in its thread", id)
			continue
		}
		sha := ""
		for _, w := range strings.Fields(reply) {
			if w = strings.Trim(w, "`.,()"); len(w) >= 7 && strings.Trim(w, "0123456789abcdef") == "" {
				sha = w
			}
		}
		if _, err := git(t.Context(), "--git-dir", it.w.Remote, "merge-base", "--is-ancestor", sha, is.Pull.HeadSHA); sha == "" || err != nil {
			t.Errorf("the reply to comment %d names no commit of the branch (%q): %s", id, sha, reply)
		}
	}
	if ledger, ok := rec.Comments(); !ok || len(ledger.Done) == 0 && ledger.Through == 0 {
		t.Errorf("implement.comments holds nothing after the repair:\n%s", recordText(rec))
	}
	it.noMoreRuns("after the repair")
}
