package githubfake

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-github/v66/github"
)

// Tokens of the people and programs in the trigger tests. tok (the
// harness's own) is the workflow's GITHUB_TOKEN.
const (
	aliceTok   = "ghp_alice"   // a maintainer with write access
	appTok     = "ghs_app"     // a GitHub App's installation token
	malloryTok = "ghp_mallory" // an outside contributor with a fork
)

// triggerWorld is a fake with the identities above and a go-github client
// for each.
type triggerWorld struct {
	t                        *testing.T
	h                        *harness
	ctx                      context.Context
	bot, alice, app, mallory *github.Client
	pushes                   int
}

func newTriggerWorld(t *testing.T, o Options) *triggerWorld {
	t.Helper()
	h := newHarness(t, o)
	h.f.AddIdentity(aliceTok, Identity{Login: "alice", Kind: PersonalToken})
	h.f.AddIdentity(appTok, Identity{Login: "roadmap-app[bot]", Kind: AppToken})
	h.f.AddIdentity(malloryTok, Identity{Login: "mallory", Kind: PersonalToken})
	h.f.SetPermission("alice", "write")
	w := &triggerWorld{t: t, h: h, ctx: t.Context()}
	w.bot, w.alice, w.app, w.mallory = w.client(tok), w.client(aliceTok), w.client(appTok), w.client(malloryTok)
	return w
}

func (w *triggerWorld) client(token string) *github.Client {
	c := github.NewClient(nil).WithAuthToken(token)
	u, err := url.Parse(w.h.srv.URL + "/")
	if err != nil {
		w.t.Fatal(err)
	}
	c.BaseURL = u
	return c
}

// wfOn is a complete workflow file triggered by on (YAML under "on:").
func wfOn(on string) string {
	return "on:\n" + on + "\njobs:\n  j:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo hi\n"
}

func (w *triggerWorld) must(err error, what string) {
	w.t.Helper()
	if err != nil {
		w.t.Fatalf("%s: %v", what, err)
	}
}

func (w *triggerWorld) issue(c *github.Client, labels ...string) int {
	w.t.Helper()
	req := &github.IssueRequest{Title: github.String("an issue")}
	if labels != nil {
		req.Labels = &labels
	}
	is, _, err := c.Issues.Create(w.ctx, "acme", "widgets", req)
	w.must(err, "create issue")
	return is.GetNumber()
}

func (w *triggerWorld) label(c *github.Client, n int, label string) {
	w.t.Helper()
	_, _, err := c.Issues.AddLabelsToIssue(w.ctx, "acme", "widgets", n, []string{label})
	w.must(err, "label")
}

func (w *triggerWorld) pr(c *github.Client, head, base string) int {
	w.t.Helper()
	pr, _, err := c.PullRequests.Create(w.ctx, "acme", "widgets", &github.NewPullRequest{
		Title: github.String("a change"), Head: github.String(head), Base: github.String(base)})
	w.must(err, "open pull request")
	return pr.GetNumber()
}

func (w *triggerWorld) setPRState(c *github.Client, n int, state string) {
	w.t.Helper()
	_, _, err := c.PullRequests.Edit(w.ctx, "acme", "widgets", n, &github.PullRequest{State: github.String(state)})
	w.must(err, "set pull request state")
}

// push records a push of a new commit to ref by the holder of token.
func (w *triggerWorld) push(token, ref string, paths ...string) {
	w.t.Helper()
	w.pushes++
	sum := sha1.Sum(fmt.Appendf(nil, "push %d", w.pushes))
	_, err := w.h.f.RecordPush(token, ref, hex.EncodeToString(sum[:]), paths...)
	w.must(err, "push")
}

func (w *triggerWorld) dispatch(c *github.Client, file, ref string) (int, error) {
	resp, err := c.Actions.CreateWorkflowDispatchEventByFileName(w.ctx, "acme", "widgets", file, github.CreateWorkflowDispatchEventRequest{Ref: ref})
	if resp == nil {
		return 0, err
	}
	return resp.StatusCode, err
}

// approve asks GitHub to approve run id as c, answering the status.
func (w *triggerWorld) approve(c *github.Client, id int64) int {
	w.t.Helper()
	req, err := c.NewRequest("POST", fmt.Sprintf("repos/acme/widgets/actions/runs/%d/approve", id), nil)
	w.must(err, "approve request")
	resp, _ := c.Do(w.ctx, req, nil)
	if resp == nil {
		w.t.Fatal("approve: no answer")
	}
	return resp.StatusCode
}

// startedRun is what a test compares of a run the fake started.
type startedRun struct {
	Workflow, Event, Branch, Status, Conclusion, Actor string
	ReadOnly, NoSecrets                                bool
}

func (w *triggerWorld) runs() []startedRun {
	var out []startedRun
	for _, r := range w.h.f.Runs() {
		out = append(out, startedRun{Workflow: r.WorkflowFile, Event: r.Event, Branch: r.HeadBranch, Status: r.Status,
			Conclusion: r.Conclusion, Actor: r.Actor, ReadOnly: r.ReadOnlyToken, NoSecrets: r.NoSecrets})
	}
	return out
}

func queued(file, event, branch, actor string) startedRun {
	return startedRun{Workflow: file, Event: event, Branch: branch, Status: "queued", Actor: actor}
}

func waiting(file, event, branch, actor string) startedRun {
	return startedRun{Workflow: file, Event: event, Branch: branch, Status: "completed", Conclusion: "action_required", Actor: actor}
}

const (
	srcFromWorkflow = "https://docs.github.com/actions/using-workflows/triggering-a-workflow#triggering-a-workflow-from-a-workflow"
	srcEvents       = "https://docs.github.com/actions/reference/workflows-and-actions/events-that-trigger-workflows"
	srcSyntax       = "https://docs.github.com/actions/reference/workflows-and-actions/workflow-syntax"
	srcForks        = "https://docs.github.com/actions/managing-workflow-runs/approving-workflow-runs-from-public-forks"
	srcApproveAPI   = "https://docs.github.com/rest/actions/workflow-runs#approve-a-workflow-run-for-a-fork-pull-request"
	srcDisable      = "https://docs.github.com/actions/how-tos/manage-workflow-runs/disable-and-enable-workflows"
	srcLinking      = "https://docs.github.com/issues/tracking-your-work-with-issues/using-issues/linking-a-pull-request-to-an-issue"
)

// TestTriggerRules holds the fake to GitHub's documented rules for which
// workflow runs an event starts, one row per rule; docs/fake-github.md
// ("Which runs an event starts") has the same table.
func TestTriggerRules(t *testing.T) {
	const bot = "github-actions[bot]"
	tests := []struct {
		rule, source string
		// files are workflow files by ref ("" every ref), then file name.
		files map[string]map[string]string
		act   func(w *triggerWorld)
		want  []startedRun
	}{
		{
			rule: "an event caused by GITHUB_TOKEN starts no run", source: srcFromWorkflow,
			files: map[string]map[string]string{"": {"triage.yml": wfOn("  issues:\n    types: [opened, labeled]")}},
			act: func(w *triggerWorld) {
				w.label(w.bot, w.issue(w.bot), "bug")
			},
		},
		{
			rule: "GITHUB_TOKEN's workflow_dispatch starts a run", source: srcFromWorkflow,
			files: map[string]map[string]string{"": {"go.yml": wfOn("  workflow_dispatch:")}},
			act: func(w *triggerWorld) {
				_, err := w.dispatch(w.bot, "go.yml", "main")
				w.must(err, "dispatch")
			},
			want: []startedRun{queued("go.yml", "workflow_dispatch", "main", bot)},
		},
		{
			rule: "GITHUB_TOKEN's repository_dispatch starts a run of the workflows its event_type matches", source: srcFromWorkflow,
			files: map[string]map[string]string{"": {"hook.yml": wfOn("  repository_dispatch:\n    types: [deploy]")}},
			act: func(w *triggerWorld) {
				for _, et := range []string{"other", "deploy"} {
					_, _, err := w.bot.Repositories.Dispatch(w.ctx, "acme", "widgets", github.DispatchRequestOptions{EventType: et})
					w.must(err, "repository dispatch")
				}
			},
			want: []startedRun{queued("hook.yml", "repository_dispatch", "main", bot)},
		},
		{
			rule: "a person's token starts runs", source: srcFromWorkflow,
			files: map[string]map[string]string{"": {"triage.yml": wfOn("  issues:\n    types: [labeled]")}},
			act: func(w *triggerWorld) {
				w.label(w.alice, w.issue(w.bot), "bug")
			},
			want: []startedRun{queued("triage.yml", "issues", "main", "alice")},
		},
		{
			rule: "a GitHub App's installation token starts runs", source: srcFromWorkflow,
			files: map[string]map[string]string{"": {"triage.yml": wfOn("  issues:\n    types: [labeled]")}},
			act: func(w *triggerWorld) {
				w.label(w.app, w.issue(w.bot), "bug")
			},
			want: []startedRun{queued("triage.yml", "issues", "main", "roadmap-app[bot]")},
		},
		{
			rule: "types: only the listed activity types start a run", source: srcSyntax + "#onevent_nametypes",
			files: map[string]map[string]string{"": {"triage.yml": wfOn("  issues:\n    types: [labeled]")}},
			act: func(w *triggerWorld) {
				n := w.issue(w.alice) // opened: not listed
				w.label(w.alice, n, "bug")
			},
			want: []startedRun{queued("triage.yml", "issues", "main", "alice")},
		},
		{
			rule: "no types: an issues workflow runs on every activity type", source: srcEvents + "#issues",
			files: map[string]map[string]string{"": {"any.yml": wfOn("  issues:")}},
			act: func(w *triggerWorld) {
				w.issue(w.alice, "bug") // opened, then labeled
			},
			want: []startedRun{queued("any.yml", "issues", "main", "alice"), queued("any.yml", "issues", "main", "alice")},
		},
		{
			rule: "no types: a pull_request workflow runs on opened, synchronize and reopened only", source: srcEvents + "#pull_request",
			files: map[string]map[string]string{"": {"ci.yml": wfOn("  pull_request:")}},
			act: func(w *triggerWorld) {
				n := w.pr(w.alice, "topic", "main") // opened
				w.label(w.alice, n, "bug")          // labeled: no
				w.push(aliceTok, "topic", "a.go")   // synchronize
				w.setPRState(w.alice, n, "closed")  // closed: no
				w.setPRState(w.alice, n, "open")    // reopened
			},
			want: []startedRun{queued("ci.yml", "pull_request", "topic", "alice"), queued("ci.yml", "pull_request", "topic", "alice"),
				queued("ci.yml", "pull_request", "topic", "alice")},
		},
		{
			rule: "push: branches runs for a pushed branch a pattern matches", source: srcSyntax + "#onpushbranchestagsbranches-ignoretags-ignore",
			files: map[string]map[string]string{"": {"push.yml": wfOn("  push:\n    branches: [main, 'releases/**']")}},
			act: func(w *triggerWorld) {
				w.push(aliceTok, "feature/x", "a.go")
				w.push(aliceTok, "releases/v1/rc", "a.go")
				w.push(aliceTok, "main", "a.go")
			},
			want: []startedRun{queued("push.yml", "push", "releases/v1/rc", "alice"), queued("push.yml", "push", "main", "alice")},
		},
		{
			rule: "push: branches-ignore skips a pushed branch a pattern matches", source: srcSyntax + "#onpushbranchestagsbranches-ignoretags-ignore",
			files: map[string]map[string]string{"": {"push.yml": wfOn("  push:\n    branches-ignore: ['wip/**']")}},
			act: func(w *triggerWorld) {
				w.push(aliceTok, "wip/a/b", "a.go")
				w.push(aliceTok, "feature", "a.go")
			},
			want: []startedRun{queued("push.yml", "push", "feature", "alice")},
		},
		{
			rule: "push: with only a tags filter a branch push does not run", source: srcSyntax + "#onpushbranchestagsbranches-ignoretags-ignore",
			files: map[string]map[string]string{"": {"release.yml": wfOn("  push:\n    tags: ['v[0-9]+.*']")}},
			act: func(w *triggerWorld) {
				w.push(aliceTok, "main", "a.go")
				w.push(aliceTok, "refs/tags/v12.0")
				w.push(aliceTok, "refs/tags/nightly")
			},
			want: []startedRun{queued("release.yml", "push", "v12.0", "alice")},
		},
		{
			rule: "push: paths runs when a changed file is included, a later ! pattern excluding it again", source: srcSyntax + "#onpushpull_requestpull_request_targetpathspaths-ignore",
			files: map[string]map[string]string{"": {"go.yml": wfOn("  push:\n    paths: ['**.go', '!docs/**']")}},
			act: func(w *triggerWorld) {
				w.push(aliceTok, "a", "docs/example.go")
				w.push(aliceTok, "b", "README.md")
				w.push(aliceTok, "c", "README.md", "cmd/main.go")
			},
			want: []startedRun{queued("go.yml", "push", "c", "alice")},
		},
		{
			rule: "push: paths-ignore runs unless every changed file is ignored", source: srcSyntax + "#onpushpull_requestpull_request_targetpathspaths-ignore",
			files: map[string]map[string]string{"": {"go.yml": wfOn("  push:\n    paths-ignore: ['docs/**']")}},
			act: func(w *triggerWorld) {
				w.push(aliceTok, "a", "docs/a.md", "docs/b/c.md")
				w.push(aliceTok, "b", "docs/a.md", "main.go")
			},
			want: []startedRun{queued("go.yml", "push", "b", "alice")},
		},
		{
			rule: "pull_request: branches matches the base branch", source: srcSyntax + "#onpull_requestpull_request_targetbranchesbranches-ignore",
			files: map[string]map[string]string{"": {"ci.yml": wfOn("  pull_request:\n    branches: [main]")}},
			act: func(w *triggerWorld) {
				w.pr(w.alice, "main-fix", "dev")
				w.pr(w.alice, "dev", "main")
			},
			want: []startedRun{queued("ci.yml", "pull_request", "dev", "alice")},
		},
		{
			rule: "pull_request: paths matches the files the pull request changes", source: srcSyntax + "#onpushpull_requestpull_request_targetpathspaths-ignore",
			files: map[string]map[string]string{"": {"ci.yml": wfOn("  pull_request:\n    paths: ['src/**']")}},
			act: func(w *triggerWorld) {
				w.push(aliceTok, "docs-only", "docs/a.md")
				w.push(aliceTok, "code", "src/a.go")
				w.pr(w.alice, "docs-only", "main")
				w.pr(w.alice, "code", "main")
			},
			want: []startedRun{queued("ci.yml", "pull_request", "code", "alice")},
		},
		{
			rule: "push runs the workflow files of the pushed commit", source: srcEvents + "#push",
			files: map[string]map[string]string{"feature": {"new.yml": wfOn("  push:")}},
			act: func(w *triggerWorld) {
				w.push(aliceTok, "main", "a.go")
				w.push(aliceTok, "feature", "a.go")
			},
			want: []startedRun{queued("new.yml", "push", "feature", "alice")},
		},
		{
			rule: "issues events run the default branch's workflow files only", source: srcEvents + "#issues",
			files: map[string]map[string]string{
				"main":    {"triage.yml": wfOn("  issues:\n    types: [labeled]")},
				"feature": {"draft.yml": wfOn("  issues:\n    types: [labeled]")},
			},
			act: func(w *triggerWorld) {
				w.label(w.alice, w.issue(w.bot), "bug")
			},
			want: []startedRun{queued("triage.yml", "issues", "main", "alice")},
		},
		{
			rule: "pull_request runs the workflow as the pull request has it", source: srcEvents + "#pull_request",
			files: map[string]map[string]string{"topic": {"new-ci.yml": wfOn("  pull_request:")}},
			act: func(w *triggerWorld) {
				w.pr(w.alice, "topic", "main")
			},
			want: []startedRun{queued("new-ci.yml", "pull_request", "topic", "alice")},
		},
		{
			rule: "pull_request_target runs the default branch's workflow files", source: srcEvents + "#pull_request_target",
			files: map[string]map[string]string{
				"main":  {"label.yml": wfOn("  pull_request_target:")},
				"topic": {"sneaky.yml": wfOn("  pull_request_target:")},
			},
			act: func(w *triggerWorld) {
				w.pr(w.alice, "topic", "main")
			},
			want: []startedRun{queued("label.yml", "pull_request_target", "main", "alice")},
		},
		{
			rule: "a fork's pull_request runs with a read-only GITHUB_TOKEN and no secrets", source: srcEvents + "#pull-request-events-for-forked-repositories",
			files: map[string]map[string]string{"": {"ci.yml": wfOn("  pull_request:")}},
			act: func(w *triggerWorld) {
				w.h.f.AddContributor("mallory")
				w.pr(w.mallory, "mallory:patch", "main")
			},
			want: []startedRun{{Workflow: "ci.yml", Event: "pull_request", Branch: "patch", Status: "queued", Actor: "mallory", ReadOnly: true, NoSecrets: true}},
		},
		{
			rule: "a first-time contributor's fork pull_request waits for approval", source: srcForks,
			files: map[string]map[string]string{"": {"ci.yml": wfOn("  pull_request:")}},
			act: func(w *triggerWorld) {
				w.pr(w.mallory, "mallory:patch", "main")
			},
			want: []startedRun{{Workflow: "ci.yml", Event: "pull_request", Branch: "patch", Status: "completed", Conclusion: "action_required",
				Actor: "mallory", ReadOnly: true, NoSecrets: true}},
		},
		{
			rule: "a waiting run starts when a person with write access approves it", source: srcApproveAPI,
			files: map[string]map[string]string{"": {"ci.yml": wfOn("  pull_request:")}},
			act: func(w *triggerWorld) {
				w.pr(w.mallory, "mallory:patch", "main")
				id := w.h.f.Runs()[0].ID
				if got := w.approve(w.bot, id); got != http.StatusForbidden {
					w.t.Errorf("GITHUB_TOKEN approving: %d, want 403", got)
				}
				if got := w.approve(w.mallory, id); got != http.StatusForbidden {
					w.t.Errorf("the contributor approving their own run: %d, want 403", got)
				}
				if got := w.approve(w.alice, id); got != http.StatusCreated {
					w.t.Errorf("a maintainer approving: %d, want 201", got)
				}
				if got := w.approve(w.alice, id); got != http.StatusForbidden {
					w.t.Errorf("approving a run that no longer waits: %d, want 403", got)
				}
			},
			want: []startedRun{{Workflow: "ci.yml", Event: "pull_request", Branch: "patch", Status: "queued", Actor: "mallory", ReadOnly: true, NoSecrets: true}},
		},
		{
			rule: "a fork's pull_request_target runs in the base's context, without approval", source: srcForks,
			files: map[string]map[string]string{"": {"label.yml": wfOn("  pull_request_target:")}},
			act: func(w *triggerWorld) {
				w.pr(w.mallory, "mallory:patch", "main")
			},
			want: []startedRun{queued("label.yml", "pull_request_target", "main", "mallory")},
		},
		{
			rule: "a pull request GITHUB_TOKEN opens or updates: opened, synchronize and reopened runs wait for approval, others start nothing", source: srcEvents + "#pull_request",
			files: map[string]map[string]string{"": {"ci.yml": wfOn("  pull_request:\n    types: [opened, synchronize, labeled]\n  push:")}},
			act: func(w *triggerWorld) {
				n := w.pr(w.bot, "roadmap/issue-1", "main")
				w.label(w.bot, n, "roadmap")
				w.push(tok, "roadmap/issue-1", "a.go") // the push starts nothing, its synchronize waits
			},
			want: []startedRun{waiting("ci.yml", "pull_request", "roadmap/issue-1", bot), waiting("ci.yml", "pull_request", "roadmap/issue-1", bot)},
		},
		{
			rule: "schedule runs the default branch's workflow files only", source: srcEvents + "#schedule",
			files: map[string]map[string]string{
				"":        {"nightly.yml": wfOn("  schedule:\n    - cron: '*/15 * * * *'")},
				"feature": {"other.yml": wfOn("  schedule:\n    - cron: '*/5 * * * *'")},
			},
			act: func(w *triggerWorld) {
				w.h.clock.Advance(30 * time.Minute) // 12:00 to 12:30: due at 12:15 and 12:30
				w.h.f.RunSchedules()
				w.h.f.RunSchedules() // nothing more came due
			},
			want: []startedRun{queued("nightly.yml", "schedule", "main", "acme"), queued("nightly.yml", "schedule", "main", "acme")},
		},
		{
			rule: "a disabled workflow starts nothing and cannot be dispatched", source: srcDisable,
			files: map[string]map[string]string{"": {"triage.yml": wfOn("  issues:\n    types: [labeled]\n  workflow_dispatch:")}},
			act: func(w *triggerWorld) {
				n := w.issue(w.bot)
				_, err := w.alice.Actions.DisableWorkflowByFileName(w.ctx, "acme", "widgets", "triage.yml")
				w.must(err, "disable")
				w.label(w.alice, n, "bug")
				if got, _ := w.dispatch(w.alice, "triage.yml", "main"); got != http.StatusUnprocessableEntity {
					w.t.Errorf("dispatching a disabled workflow: %d, want 422", got)
				}
				_, err = w.alice.Actions.EnableWorkflowByFileName(w.ctx, "acme", "widgets", "triage.yml")
				w.must(err, "enable")
				w.label(w.alice, n, "later")
			},
			want: []startedRun{queued("triage.yml", "issues", "main", "alice")},
		},
		{
			rule: "workflow_dispatch needs the workflow_dispatch trigger at the ref", source: srcEvents + "#workflow_dispatch",
			files: map[string]map[string]string{"": {"push.yml": wfOn("  push:")}},
			act: func(w *triggerWorld) {
				if got, _ := w.dispatch(w.alice, "push.yml", "main"); got != http.StatusUnprocessableEntity {
					w.t.Errorf("dispatching a workflow without the trigger: %d, want 422", got)
				}
			},
		},
		{
			rule: "a workflow file that does not parse starts nothing", source: srcSyntax,
			files: map[string]map[string]string{"": {
				"broken.yml": "on: [issues\njobs: {}\n",
				"typo.yml":   wfOn("  issues:\n    typez: [labeled]"),
				"triage.yml": wfOn("  issues:\n    types: [labeled]"),
			}},
			act: func(w *triggerWorld) {
				w.label(w.alice, w.issue(w.bot), "bug")
			},
			want: []startedRun{queued("triage.yml", "issues", "main", "alice")},
		},
		{
			rule: "issue_comment: a person's comment starts a run, GITHUB_TOKEN's does not", source: srcEvents + "#issue_comment",
			files: map[string]map[string]string{"": {"chat.yml": wfOn("  issue_comment:\n    types: [created]")}},
			act: func(w *triggerWorld) {
				n := w.issue(w.bot)
				for _, c := range []*github.Client{w.bot, w.alice} {
					_, _, err := c.Issues.CreateComment(w.ctx, "acme", "widgets", n, &github.IssueComment{Body: github.String("hi")})
					w.must(err, "comment")
				}
			},
			want: []startedRun{queued("chat.yml", "issue_comment", "main", "alice")},
		},
		{
			rule: "pull_request_review: a submitted review starts a run", source: srcEvents + "#pull_request_review",
			files: map[string]map[string]string{"": {"review.yml": wfOn("  pull_request_review:\n    types: [submitted]")}},
			act: func(w *triggerWorld) {
				n := w.pr(w.bot, "roadmap/issue-2", "main")
				_, _, err := w.alice.PullRequests.CreateReview(w.ctx, "acme", "widgets", n, &github.PullRequestReviewRequest{Event: github.String("APPROVE")})
				w.must(err, "review")
			},
			want: []startedRun{queued("review.yml", "pull_request_review", "roadmap/issue-2", "alice")},
		},
		{
			rule: "pull_request_review_comment: a person's line comment starts a run, GITHUB_TOKEN's none", source: srcEvents + "#pull_request_review_comment",
			files: map[string]map[string]string{"": {"rc.yml": wfOn("  pull_request_review_comment:\n    types: [created]")}},
			act: func(w *triggerWorld) {
				n := w.pr(w.bot, "roadmap/issue-2", "main")
				for _, c := range []*github.Client{w.bot, w.alice} {
					_, _, err := c.PullRequests.CreateComment(w.ctx, "acme", "widgets", n, &github.PullRequestComment{
						Body: github.String("why?"), Path: github.String("a.go"), Line: github.Int(3), CommitID: github.String(w.h.f.headSHAOf(n))})
					w.must(err, "review comment")
				}
			},
			want: []startedRun{queued("rc.yml", "pull_request_review_comment", "roadmap/issue-2", "alice")},
		},
		{
			rule: "issues closed and reopened by a person start runs", source: srcEvents + "#issues",
			files: map[string]map[string]string{"": {"state.yml": wfOn("  issues:\n    types: [closed, reopened]")}},
			act: func(w *triggerWorld) {
				n := w.issue(w.bot)
				for _, st := range []string{"closed", "open"} {
					_, _, err := w.alice.Issues.Edit(w.ctx, "acme", "widgets", n, &github.IssueRequest{State: github.String(st)})
					w.must(err, "issue state")
				}
			},
			want: []startedRun{queued("state.yml", "issues", "main", "alice"), queued("state.yml", "issues", "main", "alice")},
		},
		{
			// The dashboard's boxes: a person's tick is an edit of the
			// issue's body; roadmap's own writes of it are GITHUB_TOKEN's
			// (no run) or, with an App token, a run whose job's if: skips.
			rule: "issues edited: a person's or a GitHub App's edit of an issue's body or title starts a run, GITHUB_TOKEN's and a labels-only change none", source: srcEvents + "#issues",
			files: map[string]map[string]string{"": {"boxes.yml": wfOn("  issues:\n    types: [edited]")}},
			act: func(w *triggerWorld) {
				n := w.issue(w.bot)
				for i, c := range []*github.Client{w.bot, w.alice, w.app} {
					_, _, err := c.Issues.Edit(w.ctx, "acme", "widgets", n, &github.IssueRequest{Body: github.String(fmt.Sprintf("- [x] retry #%d", i))})
					w.must(err, "edit the body")
				}
				_, _, err := w.alice.Issues.Edit(w.ctx, "acme", "widgets", n, &github.IssueRequest{Title: github.String("renamed")})
				w.must(err, "edit the title")
				// The same body again, and a change of labels alone, are no edit.
				_, _, err = w.alice.Issues.Edit(w.ctx, "acme", "widgets", n, &github.IssueRequest{Body: github.String("- [x] retry #2")})
				w.must(err, "edit to the same body")
				w.label(w.alice, n, "bug")
			},
			want: []startedRun{queued("boxes.yml", "issues", "main", "alice"), queued("boxes.yml", "issues", "main", "roadmap-app[bot]"),
				queued("boxes.yml", "issues", "main", "alice")},
		},
		{
			rule: "issue_dependencies is not an event that triggers workflows: a person's blocked-by change starts no run", source: srcEvents,
			files: map[string]map[string]string{"": {"any.yml": wfOn("  issues:\n  issue_comment:")}},
			act: func(w *triggerWorld) {
				n, b := w.issue(w.bot), w.issue(w.bot)
				is, _ := w.h.f.Issue(b)
				for _, m := range []string{"POST", "DELETE"} {
					u := fmt.Sprintf("repos/acme/widgets/issues/%d/dependencies/blocked_by", n)
					var body any = map[string]any{"issue_id": is.ID}
					if m == "DELETE" {
						u, body = fmt.Sprintf("%s/%d", u, is.ID), nil
					}
					req, err := w.alice.NewRequest(m, u, body)
					w.must(err, "request")
					_, err = w.alice.Do(w.ctx, req, nil)
					w.must(err, m+" blocked_by")
				}
			},
		},
		{
			rule: "a person's merge: a push to the base and a pull_request closed start runs", source: srcEvents + "#running-your-pull_request-workflow-when-a-pull-request-merges",
			files: map[string]map[string]string{"": {"merged.yml": wfOn("  push:\n    branches: [main]\n  pull_request:\n    types: [closed]")}},
			act: func(w *triggerWorld) {
				n := w.pr(w.bot, "roadmap/issue-2", "main")
				_, _, err := w.alice.PullRequests.Merge(w.ctx, "acme", "widgets", n, "", &github.PullRequestOptions{MergeMethod: "squash"})
				w.must(err, "merge")
			},
			want: []startedRun{queued("merged.yml", "push", "main", "alice"), queued("merged.yml", "pull_request", "roadmap/issue-2", "alice")},
		},
		{
			rule: "a person's merge closes the issues its body fixes: issues closed by the merger starts runs", source: srcLinking,
			files: map[string]map[string]string{"": {"state.yml": wfOn("  issues:\n    types: [closed]")}},
			act: func(w *triggerWorld) {
				fixed, other := w.issue(w.bot), w.issue(w.bot)
				// The title's keyword is not read: GitHub reads the description.
				pr, _, err := w.bot.PullRequests.Create(w.ctx, "acme", "widgets", &github.NewPullRequest{Title: github.String(fmt.Sprintf("a change (fixes #%d)", other)),
					Head: github.String("roadmap/issue-2"), Base: github.String("main"), Body: github.String(fmt.Sprintf("Fixes #%d. See #%d.", fixed, other))})
				w.must(err, "open pull request")
				_, _, err = w.alice.PullRequests.Merge(w.ctx, "acme", "widgets", pr.GetNumber(), "", nil)
				w.must(err, "merge")
				for n, want := range map[int]string{fixed: "closed", other: "open"} {
					if is, _ := w.h.f.Issue(n); is.State != want || (want == "closed" && is.StateReason != "completed") {
						w.t.Errorf("issue %d after the merge: %s (%s), want %s", n, is.State, is.StateReason, want)
					}
				}
			},
			want: []startedRun{queued("state.yml", "issues", "main", "alice")},
		},
		{
			rule: "GITHUB_TOKEN's merge closes the issues its body fixes and starts no run", source: srcFromWorkflow,
			files: map[string]map[string]string{"": {"state.yml": wfOn("  issues:\n    types: [closed]")}},
			act: func(w *triggerWorld) {
				fixed := w.issue(w.bot)
				pr, _, err := w.bot.PullRequests.Create(w.ctx, "acme", "widgets", &github.NewPullRequest{Title: github.String("a change"),
					Head: github.String("roadmap/issue-2"), Base: github.String("main"), Body: github.String(fmt.Sprintf("Closes #%d", fixed))})
				w.must(err, "open pull request")
				_, _, err = w.bot.PullRequests.Merge(w.ctx, "acme", "widgets", pr.GetNumber(), "", nil)
				w.must(err, "merge")
				if is, _ := w.h.f.Issue(fixed); is.State != "closed" {
					w.t.Errorf("issue %d after the merge: %s, want closed", fixed, is.State)
				}
			},
		},
		{
			rule: "GITHUB_TOKEN's merge starts no run", source: srcFromWorkflow,
			files: map[string]map[string]string{"": {"merged.yml": wfOn("  push:\n    branches: [main]\n  pull_request:\n    types: [closed]")}},
			act: func(w *triggerWorld) {
				n := w.pr(w.bot, "roadmap/issue-2", "main")
				_, _, err := w.bot.PullRequests.Merge(w.ctx, "acme", "widgets", n, "", nil)
				w.must(err, "merge")
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			if tt.source == "" {
				t.Fatal("a rule without its source")
			}
			w := newTriggerWorld(t, Options{})
			for ref, files := range tt.files {
				for name, text := range files {
					w.h.f.SetWorkflowFile(ref, name, text)
				}
			}
			tt.act(w)
			if diff := cmp.Diff(tt.want, w.runs()); diff != "" {
				t.Errorf("runs (-want +got):\n%s\nevents:\n%s", diff, eventNotes(w.h.f))
			}
		})
	}
}

func eventNotes(f *Fake) string {
	var b strings.Builder
	for _, ev := range f.Events() {
		fmt.Fprintf(&b, "  %s %s by %s: runs %v %v\n", ev.Name, ev.Action, ev.Actor, ev.Runs, ev.Notes)
	}
	return b.String()
}

// TestPushedReadsGit plays pushes to a real git remote: Pushed turns each
// moved branch into a push event whose changed files come from git, the
// workflow files are read from the pushed commit, and a pull request from
// the branch gets a synchronize when its head moves, not before.
func TestPushedReadsGit(t *testing.T) {
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
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(work, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run("init", "--bare", "-q", "-b", "main", remote)
	run("init", "-q", "-b", "main", work)
	write("README.md", "hello\n")
	run("-C", work, "add", "-A")
	run("-C", work, "commit", "-q", "-m", "one")
	run("-C", work, "push", "-q", remote, "main")

	w := newTriggerWorld(t, Options{GitRemote: remote})
	run("-C", work, "checkout", "-q", "-b", "topic")
	write(".github/workflows/go.yml", wfOn("  push:\n    paths: ['**.go']\n  pull_request:"))
	write("cmd/main.go", "package main\n")
	run("-C", work, "add", "-A")
	run("-C", work, "commit", "-q", "-m", "two")
	run("-C", work, "push", "-q", remote, "topic")
	evs, err := w.h.f.Pushed(aliceTok)
	w.must(err, "pushed")
	if len(evs) != 1 || evs[0].Ref != "refs/heads/topic" || !cmp.Equal(evs[0].Paths, []string{".github/workflows/go.yml", "cmd/main.go"}) {
		t.Fatalf("events after pushing a new branch: %+v", evs)
	}
	n := w.pr(w.alice, "topic", "main")
	if evs, _ := w.h.f.Pushed(aliceTok); len(evs) != 0 {
		t.Errorf("events when nothing moved: %+v", evs)
	}
	write("README.md", "hello again\n")
	run("-C", work, "commit", "-q", "-am", "three")
	run("-C", work, "push", "-q", remote, "topic")
	evs, err = w.h.f.Pushed(aliceTok)
	w.must(err, "pushed")
	if len(evs) != 2 || evs[1].Name != "pull_request" || evs[1].Action != "synchronize" || evs[1].Number != n {
		t.Fatalf("events after pushing to the pull request's branch: %+v", evs)
	}
	// The remote's refs packed (the fake reads its ref files' stamp before it
	// asks git): nothing moved, then a push to the packed branch is seen.
	run("--git-dir", remote, "pack-refs", "--all")
	if evs, _ := w.h.f.Pushed(aliceTok); len(evs) != 0 {
		t.Errorf("events after the refs were packed: %+v", evs)
	}
	write("README.md", "hello, packed\n")
	run("-C", work, "commit", "-q", "-am", "four")
	run("-C", work, "push", "-q", remote, "topic")
	if evs, _ := w.h.f.Pushed(aliceTok); len(evs) != 2 || evs[0].Name != "push" {
		t.Fatalf("events after a push to a packed branch: %+v", evs)
	}
	want := []startedRun{queued("go.yml", "push", "topic", "alice"), queued("go.yml", "pull_request", "topic", "alice"),
		queued("go.yml", "pull_request", "topic", "alice"), queued("go.yml", "pull_request", "topic", "alice")} // the README-only pushes do not match paths
	if diff := cmp.Diff(want, w.runs()); diff != "" {
		t.Errorf("runs (-want +got):\n%s\nevents:\n%s", diff, eventNotes(w.h.f))
	}
	// The driver takes them in order.
	var order []string
	for {
		r, ev, ok := w.h.f.NextRun()
		if !ok {
			break
		}
		order = append(order, ev.Name+" "+ev.Action)
		w.must(w.h.f.FinishRun(r.ID, "success"), "finish run")
	}
	if want := []string{"push ", "pull_request opened", "pull_request synchronize", "pull_request synchronize"}; !cmp.Equal(order, want) {
		t.Errorf("NextRun order %q, want %q", order, want)
	}
}

// TestFilterPatterns holds the pattern matcher to the examples of GitHub's
// filter pattern cheat sheet (srcSyntax#filter-pattern-cheat-sheet).
func TestFilterPatterns(t *testing.T) {
	tests := []struct {
		patterns []string
		path     bool
		match    []string
		miss     []string
	}{
		{[]string{"feature/*"}, false, []string{"feature/my-branch", "feature/your-branch"}, []string{"feature/a/b", "feature"}},
		{[]string{"feature/**"}, false, []string{"feature/beta-a/my-branch", "feature/your-branch", "feature/mona/the/octocat"}, []string{"features/x"}},
		{[]string{"*"}, false, []string{"main", "releases"}, []string{"releases/v1"}},
		{[]string{"**"}, false, []string{"all/the/branches", "every/tag"}, nil},
		{[]string{"*feature"}, false, []string{"mona-feature", "feature", "ver-10-feature"}, []string{"feature-x"}},
		{[]string{"v2*"}, false, []string{"v2", "v2.0", "v2.9"}, []string{"v1"}},
		{[]string{"v[12].[0-9]+.[0-9]+"}, false, []string{"v1.10.1", "v2.0.0"}, []string{"v3.0.0", "v1.x.1", "v1.10"}},
		{[]string{"*"}, true, []string{"README.md", "server.rb"}, []string{"docs/README.md"}},
		{[]string{"*.jsx?"}, true, []string{"page.js", "page.jsx"}, []string{"page.jsxx", "a/page.js"}},
		{[]string{"**"}, true, []string{"all/the/files.md"}, nil},
		{[]string{"*.js"}, true, []string{"app.js", "index.js"}, []string{"js/index.js"}},
		{[]string{"**.js"}, true, []string{"index.js", "js/index.js", "src/js/app.js"}, []string{"index.ts"}},
		{[]string{"docs/*"}, true, []string{"docs/README.md", "docs/file.txt"}, []string{"docs/a/b.md"}},
		{[]string{"docs/**"}, true, []string{"docs/README.md", "docs/mona/octocat.txt"}, []string{"src/docs/a"}},
		{[]string{"docs/**/*.md"}, true, []string{"docs/README.md", "docs/mona/hello-world.md", "docs/a/markdown/file.md"}, []string{"docs/a.txt"}},
		{[]string{"**/docs/**"}, true, []string{"docs/hello.md", "dir/docs/my-file.txt", "space/docs/plan/space.doc"}, []string{"mydocs/a"}},
		{[]string{"**/README.md"}, true, []string{"README.md", "js/README.md"}, []string{"README.mdx"}},
		{[]string{"**/*src/**"}, true, []string{"a/src/app.js", "my-src/code/js/app.js"}, []string{"source/a.js"}},
		{[]string{"**/*-post.md"}, true, []string{"my-post.md", "path/their-post.md"}, []string{"post.md"}},
		{[]string{"**/migrate-*.sql"}, true, []string{"migrate-10909.sql", "db/migrate-v1.0.sql", "db/sept/migrate-v1.sql"}, []string{"db/migrate.sql"}},
		{[]string{"*.md", "!README.md"}, true, []string{"hello.md"}, []string{"README.md", "docs/hello.md"}},
		{[]string{"*.md", "!README.md", "README*"}, true, []string{"hello.md", "README.md", "README.doc"}, nil},
		{[]string{`releases/v1\+`}, false, []string{"releases/v1+"}, []string{"releases/v11"}},
	}
	for _, tt := range tests {
		for _, name := range tt.match {
			if !included(tt.patterns, name, tt.path) {
				t.Errorf("%q does not match %q, GitHub's example says it does", tt.patterns, name)
			}
		}
		for _, name := range tt.miss {
			if included(tt.patterns, name, tt.path) {
				t.Errorf("%q matches %q", tt.patterns, name)
			}
		}
	}
}
