package implement_test

import (
	"context"

	"encoding/json"
	"fmt"
	gogithub "github.com/google/go-github/v66/github"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/implement"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// personToken is a person's token (alice, the issue's author, with write
// access): what they do through the fake's HTTP API is a person's act.
const personToken = "ghp_alicepersonaltoken00000000000000000"

// person acts as alice through the fake's HTTP API and returns the answer's
// JSON.
func person(t *testing.T, w *world, method, path, body string) map[string]any {
	t.Helper()
	req, err := http.NewRequest(method, w.base.GitHubURL()+"/repos/"+owner+"/"+repo+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	personAuth(w, req)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		t.Fatalf("alice: %s %s: %d %s", method, path, resp.StatusCode, data)
	}
	var out map[string]any
	json.Unmarshal(data, &out)
	return out
}

// personAuth makes req alice's, with write access.
func personAuth(w *world, req *http.Request) {
	w.fake.AddIdentity(personToken, githubfake.Identity{Login: "alice", Kind: githubfake.PersonalToken})
	w.fake.SetPermission("alice", "write")
	req.Header.Set("Authorization", "token "+personToken)
}

// theirPR is the item's PR number, as a person finds it.
func theirPR(t *testing.T, w *world) int {
	t.Helper()
	branch := fmt.Sprintf("roadmap/%d-add-greetings", w.issue)
	req, _ := http.NewRequest("GET", w.base.GitHubURL()+"/repos/"+owner+"/"+repo+"/pulls?head="+owner+":"+branch, nil)
	personAuth(w, req)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list []struct {
		Number int  `json:"number"`
		Draft  bool `json:"draft"`
	}
	json.NewDecoder(resp.Body).Decode(&list)
	if len(list) != 1 {
		t.Fatalf("%d PRs for %s, want 1", len(list), branch)
	}
	return list[0].Number
}

// closeBetweenGroups runs a two-group Job in which alice acts (act: the path
// and the state to set) when group 2's agent step starts: group 1 is
// committed, pushed and marked. It returns the Job's result and the Job.
func closeBetweenGroups(t *testing.T, w *world, act func() (string, string)) (implement.Result, *job) {
	t.Helper()
	j := w.newJob(w.conversations())
	j.model.Before = func(n int, _ agent.ModelRequest) {
		if n == 3 { // group 2's first call (two calls a group)
			path, state := act()
			person(t, w, "PATCH", path, `{"state":"`+state+`"}`)
		}
	}
	res := j.runWithGreenCI()
	return res, j
}

// heldAt checks what a person sees of an item held by their act: the typed
// result, no push after group 1, the PR still a draft, and the note on the
// issue (the record comment says why and how to resume).
func heldAt(t *testing.T, w *world, j *job, res implement.Result, class failure.Class, pr int, note string) {
	t.Helper()
	if res.Result != record.ResultYielded || res.Failure != string(class) {
		t.Fatalf("result %s/%s (%s), want yielded/%s\n%s", res.Result, res.Failure, res.Reason, class, j.log.String())
	}
	if res.Group != 1 {
		t.Errorf("group %d, want 1: group 2 was not to be published", res.Group)
	}
	branch := fmt.Sprintf("roadmap/%d-add-greetings", w.issue)
	if files := remoteFiles(t, w, branch); strings.Contains(files, "greeting-2.txt") {
		t.Errorf("group 2 reached the remote after the person's act:\n%s", files)
	}
	is, _ := w.fake.Issue(pr)
	if is.Pull == nil || !is.Pull.Draft {
		t.Errorf("the PR is not a draft: marked ready after the person's act")
	}
	rec := w.record()
	if got, _ := rec.Result(); got != record.ResultYielded {
		t.Errorf("implement.result %s, want yielded", got)
	}
	if got, _ := rec.Failure(); got != string(class) {
		t.Errorf("implement.failure %q, want %s", got, class)
	}
	cm, _ := w.recordComment()
	if !strings.Contains(cm.Body, note) {
		t.Errorf("the record comment does not say %q:\n%s", note, cm.Body)
	}
	if calls := len(j.model.Requests()); calls != 4 {
		t.Errorf("%d model calls, want 4: the spend stops at the hold", calls)
	}
}

// paidIssueReads counts the counted (not 304) reads of issue n's endpoint.
func paidIssueReads(w *world, n int) int {
	c := 0
	for _, r := range w.fake.Requests() {
		if r.Method == "GET" && r.Status == 200 && r.Path == fmt.Sprintf("/repos/%s/%s/issues/%d", owner, repo, n) {
			c++
		}
	}
	return c
}

func TestPersonClosesPR(t *testing.T) {
	w := newWorld(t, 2, "")
	pr := 0
	res, j := closeBetweenGroups(t, w, func() (string, string) {
		pr = theirPR(t, w)
		return fmt.Sprintf("/pulls/%d", pr), "closed"
	})
	heldAt(t, w, j, res, failure.PRClosed, pr, fmt.Sprintf("held: a person closed PR #%d", pr))
	// One paid read of the PR learns its state; the later ones are free
	// 304s until the person's act changes it, and that read notices it.
	if n := paidIssueReads(w, pr); n > 2 {
		t.Errorf("the PR was read %d times at a cost, want at most 2 (its state, then the person's act)", n)
	}
}

func TestPersonClosesIssue(t *testing.T) {
	w := newWorld(t, 2, "")
	pr := 0
	res, j := closeBetweenGroups(t, w, func() (string, string) {
		pr = theirPR(t, w)
		return fmt.Sprintf("/issues/%d", w.issue), "closed"
	})
	heldAt(t, w, j, res, failure.IssueClosed, pr, fmt.Sprintf("held: a person closed issue #%d", w.issue))
	// The start's read, and at most one more to notice the close.
	if n := paidIssueReads(w, w.issue); n > 2 {
		t.Errorf("the issue was read %d times at a cost, want at most 2", n)
	}
}

// TestPersonReopensResumes: the PR closed between groups holds the item;
// reopened, the next Job resumes where the hold left it (group 2, not
// group 1 again) and the PR ends ready.
func TestPersonReopensResumes(t *testing.T) {
	w := newWorld(t, 2, "")
	pr := 0
	res, first := closeBetweenGroups(t, w, func() (string, string) {
		pr = theirPR(t, w)
		return fmt.Sprintf("/pulls/%d", pr), "closed"
	})
	if res.Failure != string(failure.PRClosed) {
		t.Fatalf("Job 1: %s/%s (%s), want yielded/pr_closed\n%s", res.Result, res.Failure, res.Reason, first.log.String())
	}
	person(t, w, "PATCH", fmt.Sprintf("/pulls/%d", pr), `{"state":"open"}`)
	j := w.newJob(w.conversations())
	j.opts.Reopened = true // the caller's pull_request: reopened
	res = j.runWithGreenCI()
	if res.Result != record.ResultReady {
		t.Fatalf("Job 2 after the reopening: %s/%s (%s), want ready\n%s", res.Result, res.Failure, res.Reason, j.log.String())
	}
	if strings.Contains(j.log.String(), "roadmap: group 1:") {
		t.Errorf("Job 2 ran group 1 again; it was to resume at group 2:\n%s", j.log.String())
	}
	is, _ := w.fake.Issue(pr)
	if is.State != "open" || is.Pull == nil || is.Pull.Draft {
		t.Errorf("the PR is %s (draft %v), want open and ready", is.State, is.Pull != nil && is.Pull.Draft)
	}
}

// TestReopenedPlanPRStartsNothing: a Job started by a person's reopening of
// a roadmap PR (the plan's draft, reopened before its approval: no implement
// Job ever held the item) resumes nothing: no model call, no write, the
// class not_held, which report leaves alone.
func TestReopenedPlanPRStartsNothing(t *testing.T) {
	w := newWorld(t, 1, "")
	before := len(w.fake.Requests())
	j := w.newJob(w.conversations())
	j.opts.Reopened = true
	res := j.run()
	if res.Result != record.ResultYielded || res.Failure != string(failure.NotHeld) {
		t.Fatalf("result %s/%s (%s), want yielded/not_held\n%s", res.Result, res.Failure, res.Reason, j.log.String())
	}
	if calls := len(j.model.Requests()); calls != 0 {
		t.Errorf("%d model calls, want none", calls)
	}
	for _, r := range w.fake.Requests()[before:] {
		if r.Method != "GET" {
			t.Errorf("the Job wrote: %s %s", r.Method, r.Path)
		}
	}
}

// TestLabelRemovedBeforeJob: a Job started by the implement label on an
// issue that no longer has it (the person removed it while the Job was
// queued) does not start: no record comment, no model call, no write.
func TestLabelRemovedBeforeJob(t *testing.T) {
	w := newWorld(t, 1, "")
	before := len(w.fake.Requests())
	j := w.newJob(w.conversations())
	j.opts.TriggerLabel = "roadmap:implement"
	res := j.run()
	if res.Result != record.ResultYielded || res.Failure != string(failure.LabelRemoved) {
		t.Fatalf("result %s/%s (%s), want yielded/label_removed\n%s", res.Result, res.Failure, res.Reason, j.log.String())
	}
	if calls := len(j.model.Requests()); calls != 0 {
		t.Errorf("%d model calls, want none", calls)
	}
	for _, r := range w.fake.Requests()[before:] {
		if r.Method != "GET" {
			t.Errorf("the Job wrote: %s %s", r.Method, r.Path)
		}
	}
	if got := j.outputs["failure"]; got != string(failure.LabelRemoved) {
		t.Errorf("the failure output is %q, want label_removed", got)
	}
}

// merge is alice marking the item's PR ready (GitHub merges no draft) and
// merging it, through the fake's HTTP API with go-github.
func merge(t *testing.T, w *world, pr int) {
	t.Helper()
	node, _ := person(t, w, "GET", fmt.Sprintf("/pulls/%d", pr), "")["node_id"].(string)
	q := `{"query":"mutation($input:MarkPullRequestReadyForReviewInput!){markPullRequestReadyForReview(input:$input){pullRequest{isDraft}}}","variables":{"input":{"pullRequestId":"` + node + `"}}}`
	req, _ := http.NewRequest("POST", w.base.GitHubURL()+"/graphql", strings.NewReader(q))
	personAuth(w, req)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	hc := &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		personAuth(w, r)
		return http.DefaultTransport.RoundTrip(r)
	})}
	gh := gogithub.NewClient(hc)
	if gh.BaseURL, err = url.Parse(w.base.GitHubURL() + "/"); err != nil {
		t.Fatal(err)
	}
	res, _, err := gh.PullRequests.Merge(context.Background(), owner, repo, pr, "", nil)
	if err != nil || !res.GetMerged() {
		t.Fatalf("alice merges PR #%d: %v", pr, err)
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestPersonMergesPR: alice merges the item's PR after group 1 of 3; the Job
// pushes nothing more to the merged branch, ends returned/pr_merged, and
// the record and the note on the issue name the groups left.
func TestPersonMergesPR(t *testing.T) {
	w := newWorld(t, 3, "")
	pr := 0
	j := w.newJob(w.conversations())
	j.model.Before = func(n int, _ agent.ModelRequest) {
		if n == 3 { // group 2's first call: group 1 is pushed and marked
			pr = theirPR(t, w)
			merge(t, w, pr)
		}
	}
	res := j.runWithGreenCI()
	if res.Result != record.ResultReturned || res.Failure != string(failure.PRMerged) {
		t.Fatalf("result %s/%s (%s), want returned/pr_merged\n%s", res.Result, res.Failure, res.Reason, j.log.String())
	}
	left := "groups 2, 3 were left"
	if !strings.Contains(res.Reason, left) {
		t.Errorf("the reason does not name the groups left (%q): %s", left, res.Reason)
	}
	branch := fmt.Sprintf("roadmap/%d-add-greetings", w.issue)
	if files := remoteFiles(t, w, branch); strings.Contains(files, "greeting-2.txt") {
		t.Errorf("group 2 was pushed to the merged branch:\n%s", files)
	}
	rec := w.record()
	if got, _ := rec.Result(); got != record.ResultReturned {
		t.Errorf("implement.result %s, want returned", got)
	}
	if got, _ := rec.Failure(); got != string(failure.PRMerged) {
		t.Errorf("implement.failure %q, want pr_merged", got)
	}
	if cm, _ := w.recordComment(); !strings.Contains(cm.Body, left) {
		t.Errorf("the note on the issue does not name the groups left:\n%s", cm.Body)
	}
	if calls := len(j.model.Requests()); calls != 4 {
		t.Errorf("%d model calls, want 4: group 3 was not to start", calls)
	}
}

// readyItem runs the world's one-group item to ready, the review on (one
// clean review), and returns its PR and the ready head.
func readyItem(t *testing.T, w *world) (int, string) {
	t.Helper()
	j := w.newJob(append(w.conversations(), reviewConv(t, "review-1", "[]")))
	j.withReview(1)
	res := j.runWithGreenCI()
	if res.Result != record.ResultReady {
		t.Fatalf("Job 1: %s/%s (%s), want ready\n%s", res.Result, res.Failure, res.Reason, j.log.String())
	}
	return res.PR, res.HeadSHA
}

// requestChanges is alice's review of pr: changes requested, with body and
// a line comment on greeting-1.txt's first line for each of lines.
func requestChanges(t *testing.T, w *world, pr int, body string, lines ...string) {
	t.Helper()
	var cs []map[string]any
	for _, l := range lines {
		cs = append(cs, map[string]any{"path": "greeting-1.txt", "line": 1, "body": l})
	}
	in, err := json.Marshal(map[string]any{"event": "REQUEST_CHANGES", "body": body, "comments": cs})
	if err != nil {
		t.Fatal(err)
	}
	person(t, w, "POST", fmt.Sprintf("/pulls/%d/reviews", pr), string(in))
}

// repairJob is the Job a person's review starts, the review on.
func repairJob(w *world, rounds int, convs ...*llm.Conversation) *job {
	j := w.newJob(convs)
	j.withReview(rounds)
	j.opts.Feedback = true
	return j
}

// TestReviewChangesRequestedRepaired: a person requests changes on the
// ready PR with two line comments. One repair Job addresses each comment by
// a commit and pushes, replies in both threads naming the commit, answers
// the review's body on the PR, writes the comment ledger, reviews the new
// head and marks the PR ready there.
func TestReviewChangesRequestedRepaired(t *testing.T) {
	w := newWorld(t, 1, "")
	pr, before := readyItem(t, w)
	requestChanges(t, w, pr, "Two things, below.", "Name the team on a second line.", "Add a farewell file too.")

	body := toolConv(t, "body", "Two things, below.",
		call(t, "finish", map[string]string{"summary": "the line comments carry the changes; nothing to change for the body"}))
	team := toolConv(t, "team", "Name the team on a second line.",
		call(t, "write_file", map[string]string{"path": "greeting-1.txt", "content": "hello 1\nfrom the widgets team\n"}),
		call(t, "finish", map[string]string{"summary": "the greeting names the team"}))
	farewell := toolConv(t, "farewell", "Add a farewell file too.",
		call(t, "write_file", map[string]string{"path": "farewell.txt", "content": "goodbye\n"}),
		call(t, "finish", map[string]string{"summary": "added farewell.txt"}))
	j := repairJob(w, 1, body, team, farewell, reviewConv(t, "review-2", "[]"))
	res := j.runWithGreenCI()
	if res.Result != record.ResultReady || res.HeadSHA == before {
		t.Fatalf("the repair Job: %s/%s at %s (%s), want ready at a new head\n%s", res.Result, res.Failure, short(res.HeadSHA), res.Reason, j.log.String())
	}
	branch := fmt.Sprintf("roadmap/%d-add-greetings", w.issue)
	commits := strings.Fields(run(t, w.remote, "git", "rev-list", before+".."+res.HeadSHA))
	if len(commits) != 2 {
		t.Fatalf("%d commits after the ready head, want 2 (one a comment)", len(commits))
	}
	if files := remoteFiles(t, w, branch); !strings.Contains(files, "farewell.txt") {
		t.Errorf("the branch lacks the farewell the comment asked for:\n%s", files)
	}

	lines, err := j.gh.ReviewComments(context.Background(), pr)
	if err != nil {
		t.Fatal(err)
	}
	replies := map[int64]string{}
	var roots []int64
	for _, lc := range lines {
		if lc.InReplyTo == 0 {
			roots = append(roots, lc.ID)
		} else if lc.Author == j.gh.Identity() {
			replies[lc.InReplyTo] += lc.Body
		}
	}
	if len(roots) != 2 {
		t.Fatalf("%d line comments, want alice's 2", len(roots))
	}
	named := map[string]bool{}
	for _, id := range roots {
		sha := ""
		for _, c := range commits {
			if strings.Contains(replies[id], c) {
				sha = c
			}
		}
		if sha == "" || !strings.Contains(replies[id], "@alice") {
			t.Errorf("line comment %d: reply %q names no commit of the repair (%v) or not alice", id, replies[id], commits)
		}
		named[sha] = true
	}
	if len(named) != 2 {
		t.Errorf("the replies name %d distinct commits, want one per comment", len(named))
	}
	comments, err := j.gh.Comments(context.Background(), pr)
	if err != nil {
		t.Fatal(err)
	}
	answered := false
	for _, c := range comments {
		answered = answered || strings.Contains(c.Body, "changed nothing") && strings.Contains(c.Body, "the line comments carry the changes")
	}
	if !answered {
		t.Error("the review's body got no answer on the PR")
	}

	is, _ := w.fake.Issue(pr)
	if is.Pull == nil || is.Pull.Draft {
		t.Error("the PR is not ready again after the repair")
	}
	rec := w.record()
	if l, _ := rec.Review(); string(l.SHA) != res.HeadSHA {
		t.Errorf("the review passed at %s, want the repaired head %s", short(string(l.SHA)), short(res.HeadSHA))
	}
	l, ok := rec.Comments()
	if !ok || l.Through == 0 {
		t.Fatalf("no comment ledger settling the review: %+v", l)
	}
	for _, lc := range lines {
		if lc.Author == "alice" && lc.CreatedAt.Unix() >= l.Through && !l.Has(record.CommentLine, lc.ID) {
			t.Errorf("line comment %d is not settled by the ledger %+v", lc.ID, l)
		}
	}
}

// TestReadyAgainOnlyAtReviewedHead: the repair Job's head is reviewed
// again; when the review blocks it (no round left), the PR, ready before
// the person's review, is not ready at the new head: it stays a draft.
func TestReadyAgainOnlyAtReviewedHead(t *testing.T) {
	w := newWorld(t, 1, "")
	pr, _ := readyItem(t, w)
	requestChanges(t, w, pr, "One thing, below.", "Name the team on a second line.")
	findings, id := greetingFinding(t)
	upheld := fmt.Sprintf(`[{"id":%q,"verdict":"upheld","reason":"the file says only hello 1"}]`, id)
	body := toolConv(t, "body", "One thing, below.",
		call(t, "finish", map[string]string{"summary": "the line comment carries the change"}))
	team := toolConv(t, "team", "Name the team on a second line.",
		call(t, "write_file", map[string]string{"path": "greeting-1.txt", "content": "hello 1\nfrom the widgets team\n"}),
		call(t, "finish", map[string]string{"summary": "the greeting names the team"}))
	j := repairJob(w, 0, body, team, reviewConv(t, "review-2", findings), refuteConv(t, "refute-2", upheld))
	res := j.runWithGreenCI()
	if res.Result != record.ResultStopped || res.Failure != "review_blocked" {
		t.Fatalf("the repair Job: %s/%s (%s), want stopped review_blocked\n%s", res.Result, res.Failure, res.Reason, j.log.String())
	}
	is, _ := w.fake.Issue(pr)
	if is.Pull == nil || !is.Pull.Draft {
		t.Error("the PR is ready at a head the review blocked")
	}
	if !strings.Contains(j.log.String(), "addressed in") {
		t.Errorf("the comment was not addressed:\n%s", j.log.String())
	}
}
