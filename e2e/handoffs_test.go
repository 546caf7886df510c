//go:build unix

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/demo/demotest"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// The hand-offs of an item, one scenario each, every run started by the
// fake's decision of what GitHub would start (scheduler_test.go).

// TestE2EPlanApprovedStartsImplement: a person labels the issue
// roadmap:stage; GitHub starts the caller (a person's label), whose stage
// job writes the plan into a draft PR. The PR, opened with the workflow's
// token, starts nothing. The person approves it: GitHub starts the caller
// on pull_request_review, whose approved job runs implement on the plan,
// to ready.
func TestE2EPlanApprovedStartsImplement(t *testing.T) {
	act := requireAct(t)
	it := newItem(t, act, itemOptions{Latency: 20 * time.Millisecond, WatchTimeout: 30 * time.Second, FromIssue: true})
	it.playCI("success")
	it.baselinePushes()
	alice := it.person("alice", "admin")

	alice.label(it.w.Issue, "roadmap:stage")
	stage := it.nextRun("stage", it.workflowFile(), "issues", nil)
	if got := stage.Jobs[stage.job("stage")]; got != "success" {
		t.Fatalf("the stage run: stage job %q (jobs %v)", got, stage.Jobs)
	}
	rec := it.record()
	if st, _ := rec.StageState(); st != "staged" {
		t.Fatalf("stage.state = %q, want staged:\n%s", st, recordText(rec))
	}
	pr, _ := rec.StagePR()
	is, ok := it.w.Fake.Issue(pr)
	if !ok || is.Pull == nil || !is.Pull.Draft {
		t.Fatalf("stage.pr #%d is not a draft PR", pr)
	}
	if want := fmt.Sprintf("Closes #%d.", it.w.Issue); !strings.Contains(is.Body, want) || !strings.Contains(is.Body, "awaiting a person's approval") {
		t.Errorf("the draft PR's body does not close the issue and say it awaits approval:\n%s", is.Body)
	}
	it.staged = it.w.Replay.Stats().Calls
	it.noMoreRuns("after stage (its PR and comments are the workflow token's)")

	alice.approve(pr)
	impl := it.nextRun("approved", it.workflowFile(), "pull_request_review", nil)
	it.wantJobs(impl.actRun, "success", "success")
	rec = it.record()
	if res, _ := rec.Result(); res != record.ResultReady {
		t.Fatalf("implement.result = %q, want ready:\n%s", res, recordText(rec))
	}
	it.checkReadyPR(pr)
	is, _ = it.w.Fake.Issue(pr)
	for _, want := range []string{fmt.Sprintf("Closes #%d.", it.w.Issue), "Ready for review", "- [x] 3.1"} {
		if !strings.Contains(is.Body, want) {
			t.Errorf("the ready PR's body lacks %q:\n%s", want, is.Body)
		}
	}
	if strings.Contains(is.Body, "- [ ]") || strings.Contains(is.Body, "awaiting") {
		t.Errorf("the ready PR's body is stale:\n%s", is.Body)
	}
	it.checkSpend(rec)
	it.noMoreRuns("after ready")
	if n := it.requests(); n > maxRequests {
		t.Errorf("the item made %d counted GitHub requests, want at most %d", n, maxRequests)
	}
}

// ciYAML is the user's repository's CI: a workflow on push and
// pull_request that the fake plays (ScriptCI), as GitHub would start it.
const ciYAML = `name: ci
on:
  push:
    branches-ignore: [main]
  pull_request:
permissions: {}
jobs:
  test:
    runs-on: ubuntu-latest
    timeout-minutes: 10
    steps:
      - run: go test ./...
`

// TestE2ECIWithPushToken: roadmap pushes with a GitHub App's installation
// token (ROADMAP_PUSH_TOKEN), so GitHub starts the repository's CI on its
// pushes, as on any contributor's: no CI is played by the test; the fake
// starts ci.yml on the push event by its rules, and the Job watches its
// check to green and marks the PR ready.
func TestE2ECIWithPushToken(t *testing.T) {
	act := requireAct(t)
	it := newItem(t, act, itemOptions{Latency: 20 * time.Millisecond, WatchTimeout: 2 * time.Minute,
		Files: map[string]string{".github/workflows/ci.yml": ciYAML}})
	it.w.Fake.ScriptCI("ci.yml", githubfake.CIJob{Name: "test", Outcomes: []githubfake.CIOutcome{{Conclusion: "success"}}})
	it.baselinePushes()
	alice := it.person("alice", "admin")

	alice.label(it.w.Issue, "roadmap:implement")
	run := it.nextRun("run 1", it.workflowFile(), "issues", nil)
	it.wantJobs(run.actRun, "success", "success")
	rec := it.record()
	if res, _ := rec.Result(); res != record.ResultReady {
		t.Fatalf("implement.result = %q, want ready:\n%s", res, recordText(rec))
	}
	var ciRuns, waiting int
	for _, r := range it.w.Fake.Runs() {
		switch {
		case r.WorkflowFile != "ci.yml":
		case r.Conclusion == "action_required":
			// The PR opened with the workflow's token: its pull_request
			// run waits for a person's approval (GitHub's rule), and is
			// not what turned the checks green.
			waiting++
			if r.Actor != "github-actions[bot]" {
				t.Errorf("ci.yml run %d waits for approval but was started by %s", r.ID, r.Actor)
			}
		default:
			ciRuns++
			if r.Actor != "roadmap-e2e[bot]" {
				t.Errorf("ci.yml run %d was started by %s, want the App's push", r.ID, r.Actor)
			}
		}
	}
	if ciRuns == 0 {
		t.Errorf("GitHub started no ci.yml run on roadmap's pushes:\n%s", it.eventNotes(12))
	}
	pr, _ := rec.StagePR()
	it.checkReadyPR(pr)
	it.noMoreRuns("after ready")
	it.logf("ci.yml ran %d times on roadmap's pushes; %d run(s) of the PR the workflow's token opened wait for approval", ciRuns, waiting)
	if n := it.requests(); n > maxRequests {
		t.Errorf("the item made %d counted GitHub requests, want at most %d", n, maxRequests)
	}
}

// TestE2ENoCIPathSaysWhatToDo: no push token and no CI workflow to
// dispatch: GitHub starts no workflow run on roadmap's pushes (the fake
// notes why), so the Job does not wait for a check that cannot come. It
// keeps the PR a draft and asks, in plain words, what a person must do.
func TestE2ENoCIPathSaysWhatToDo(t *testing.T) {
	act := requireAct(t)
	it := newItem(t, act, itemOptions{Latency: 20 * time.Millisecond, WatchTimeout: 10 * time.Minute, NoPushToken: true,
		Files: map[string]string{".github/workflows/ci.yml": ciYAML}})
	it.baselinePushes()
	alice := it.person("alice", "admin")

	alice.label(it.w.Issue, "roadmap:implement")
	run := it.nextRun("run 1", it.workflowFile(), "issues", nil)
	it.wantJobs(run.actRun, "success", "success")
	// The watch decided on its first look at the PR's checks, as the no-CI
	// path does, not after polling out the grace for a first check (5 min
	// at one look per 30 s). Each look logs a line with its elapsed time,
	// so two looks are two different lines however often act repeats one.
	looks := map[string]bool{}
	for _, l := range strings.Split(run.Log, "\n") {
		if i := strings.Index(l, "roadmap: watch PR #"); i >= 0 {
			looks[l[i:]] = true
		}
	}
	if len(looks) != 1 {
		t.Errorf("the watch looked at the PR's checks %d times, want once: it waited for a CI that cannot run\n%s", len(looks), grepLines(run.Log, "roadmap: watch"))
	}
	rec := it.record()
	if res, _ := rec.Result(); res != record.ResultReturned {
		t.Fatalf("implement.result = %q, want returned (needs_input):\n%s", res, recordText(rec))
	}
	var q string
	for _, c := range it.w.Fake.Comments(it.w.Issue) {
		if strings.Contains(c.Body, "<!-- roadmap:needs-input -->") {
			q = c.Body
		}
	}
	for _, want := range []string{"No CI can run", "ROADMAP_PUSH_TOKEN", "implement.ci_workflows", "implement.ready_without_ci"} {
		if !strings.Contains(q, want) {
			t.Errorf("the question on the issue lacks %q:\n%s", want, q)
		}
	}
	pr, _ := rec.StagePR()
	if is, ok := it.w.Fake.Issue(pr); !ok || is.Pull == nil || !is.Pull.Draft {
		t.Errorf("PR #%d is not kept a draft", pr)
	}
	// GitHub's side of it: the pushes were the workflow token's.
	var noted bool
	for _, ev := range it.w.Fake.Events() {
		if ev.Name == "push" && ev.Kind == githubfake.WorkflowToken && len(ev.Runs) == 0 {
			for _, n := range ev.Notes {
				noted = noted || strings.Contains(n, "GITHUB_TOKEN")
			}
		}
	}
	if !noted {
		t.Errorf("no push by the workflow's token noted as starting no run:\n%s", it.eventNotes(12))
	}
	it.noMoreRuns("after the question")
	if n := it.requests(); n > maxRequests {
		t.Errorf("the item made %d counted GitHub requests, want at most %d", n, maxRequests)
	}
}

// TestE2EStopByPerson: Job 1 yields (its CI still runs) and report
// dispatches Job 2. A person comments "/roadmap stop" while Job 2 runs;
// GitHub runs the runs in order: Job 2 ends and its report, which has not
// seen the stop yet, dispatches Job 3; then the comment's run records the
// stop; then Job 3 starts on a stopped item, does nothing, and its report
// dispatches nothing. A reader's "/roadmap retry" is ignored.
func TestE2EStopByPerson(t *testing.T) {
	act := requireAct(t)
	it := newItem(t, act, itemOptions{Latency: 20 * time.Millisecond, WatchTimeout: 2 * time.Second})
	it.playCI("pending")
	it.baselinePushes()
	alice := it.person("alice", "write")
	bob := it.person("bob", "read")

	alice.label(it.w.Issue, "roadmap:implement")
	run1 := it.nextRun("run 1", it.workflowFile(), "issues", nil)
	it.wantJobs(run1.actRun, "success", "success")
	run2 := it.nextRun("run 2", it.workflowFile(), "workflow_dispatch", func(ctx context.Context, s *Started, _ int64) {
		alice.comment(it.w.Issue, "/roadmap stop\nWe are going another way.")
	})
	it.wantJobs(run2.actRun, "success", "success")
	stop := it.nextRun("stop", it.workflowFile(), "issue_comment", nil)
	if got := stop.Jobs[stop.job("answer")]; got != "success" {
		t.Fatalf("the comment's run: answer job %q (jobs %v)", got, stop.Jobs)
	}
	rec := it.record()
	if by, _ := rec.StoppedBy(); by != "alice" {
		t.Fatalf("item.stopped_by = %q, want alice:\n%s", by, recordText(rec))
	}
	if !slices.Contains(it.w.Fake.Labels(it.w.Issue), "roadmap:stopped") {
		t.Errorf("labels = %v, want roadmap:stopped", it.w.Fake.Labels(it.w.Issue))
	}
	dispatched := len(it.w.Fake.Dispatches())
	run3 := it.nextRun("run 3", it.workflowFile(), "workflow_dispatch", nil)
	it.wantJobs(run3.actRun, "success", "success")
	if got := len(it.w.Fake.Dispatches()); got != dispatched {
		t.Errorf("the report of a stopped item's Job dispatched %d more", got-dispatched)
	}
	if summary := run3.Summaries[run3.job("report")]; !strings.Contains(summary, "stopped the item") {
		t.Errorf("run 3's report summary does not say the item is stopped:\n%s", summary)
	}
	bob.comment(it.w.Issue, "/roadmap retry")
	ignored := it.nextRun("bob's retry", it.workflowFile(), "issue_comment", nil)
	if !strings.Contains(ignored.Log, "bob has read access") {
		t.Errorf("the run of bob's retry does not say it was ignored and why:\n%s", ignored.Log)
	}
	if got := len(it.w.Fake.Dispatches()); got != dispatched {
		t.Errorf("a reader's retry dispatched %d", got-dispatched)
	}
	it.noMoreRuns("after the stop")
	// Three implement Jobs, the stop and the ignored retry: more than the
	// item's 30, which bound a life from label to ready.
	it.requests()
}

// TestE2ERetryByPerson: a person stops the item with the roadmap:stop
// label after Job 1 yielded; the continuation already dispatched starts,
// does nothing and is not continued; "/roadmap retry" by a person with
// write access restarts the item from its last mark, and with its CI now
// green it ends ready.
func TestE2ERetryByPerson(t *testing.T) {
	act := requireAct(t)
	it := newItem(t, act, itemOptions{Latency: 20 * time.Millisecond, WatchTimeout: 2 * time.Second})
	c := it.playCI("pending")
	it.baselinePushes()
	alice := it.person("alice", "maintain")

	alice.label(it.w.Issue, "roadmap:implement")
	run1 := it.nextRun("run 1", it.workflowFile(), "issues", nil)
	it.wantJobs(run1.actRun, "success", "success")
	alice.label(it.w.Issue, "roadmap:stop")
	// GitHub's order: the continuation report dispatched, then the label's run.
	run2 := it.nextRun("run 2", it.workflowFile(), "workflow_dispatch", nil)
	it.wantJobs(run2.actRun, "success", "success")
	it.nextRun("stop label", it.workflowFile(), "issues", nil)
	if by, _ := it.record().StoppedBy(); by != "alice" {
		t.Fatalf("item.stopped_by = %q, want alice", by)
	}
	// Job 2 ran before the stop was recorded; Job 3, dispatched by its
	// report, starts on the stopped item.
	run3 := it.nextRun("run 3", it.workflowFile(), "workflow_dispatch", nil)
	it.wantJobs(run3.actRun, "success", "success")
	it.noMoreRuns("a stopped item")

	c.set("success")
	alice.comment(it.w.Issue, "/roadmap retry")
	retry := it.nextRun("retry", it.workflowFile(), "issue_comment", nil)
	if got := retry.Jobs[retry.job("answer")]; got != "success" {
		t.Fatalf("the retry's run: answer job %q", got)
	}
	if _, held := it.record().StoppedBy(); held {
		t.Errorf("item.stopped_by kept after the retry")
	}
	run4 := it.nextRun("run 4", it.workflowFile(), "workflow_dispatch", nil)
	it.wantJobs(run4.actRun, "success", "success")
	rec := it.record()
	if res, _ := rec.Result(); res != record.ResultReady {
		t.Fatalf("implement.result = %q, want ready after the retry:\n%s", res, recordText(rec))
	}
	pr, _ := rec.StagePR()
	it.checkReadyPR(pr)
	it.noMoreRuns("after ready")
	it.requests()
}

// TestE2EWakeAfterDayBudget: an item yielded yesterday because the day's
// budget was spent, and report left it as it does (the roadmap:waiting
// label, item.wake_at at 00:00 UTC; TestWake in internal/report holds
// report to that). Nothing else starts it. The repository has the wake
// workflow roadmap init writes: at 00:05 UTC GitHub's scheduler starts it
// (the fake fires the cron that came due), roadmap wake dispatches the
// item, and its Job goes on from the last mark to ready.
func TestE2EWakeAfterDayBudget(t *testing.T) {
	act := requireAct(t)
	wake, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "examples", "roadmap-wake.yml"))
	if err != nil {
		t.Fatal(err)
	}
	it := newItem(t, act, itemOptions{Latency: 20 * time.Millisecond, WatchTimeout: 30 * time.Second,
		Files: map[string]string{".github/workflows/roadmap-wake.yml": string(wake)}})
	it.playCI("success")
	it.baselinePushes()

	now := time.Now().UTC()
	midnight := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	var ch record.Changes
	ch.SetAttempt(1)
	ch.SetResult(record.ResultYielded)
	ch.SetFailure("day_budget_exhausted")
	ch.SetJobs([]record.JobOutcome{{Job: 1, RunID: 900, Result: record.ResultYielded, Failure: "day_budget_exhausted"}})
	ch.SetWakeAt(midnight)
	it.editRecord(ch)
	if err := it.roadmapClient().AddLabels(t.Context(), it.w.Issue, "roadmap:waiting"); err != nil {
		t.Fatal(err)
	}
	it.book("seed: yesterday's yield") // the test's own requests, not a run's
	it.noMoreRuns("an item waiting for the day's budget, before its schedule")

	// The wake workflow runs at 00:05 UTC and hourly at :17 (the
	// dashboard's refresh); each run wakes what is due. The last of its
	// schedules came due: the fake starts that one run, as GitHub would.
	last := now.Truncate(time.Hour).Add(17 * time.Minute)
	if last.After(now) {
		last = last.Add(-time.Hour)
	}
	if d := midnight.Add(5 * time.Minute); d.After(last) && !d.After(now) {
		last = d
	}
	it.w.Fake.SchedulesFiredThrough(last.Add(-time.Second))
	if fired := it.w.Fake.RunSchedules(); len(fired) != 1 {
		t.Fatalf("the wake workflow's schedules due since %s started %d runs, want 1 (roadmap-wake.yml at 00:05 or :17 UTC):\n%s", last.Format(time.TimeOnly), len(fired), it.eventNotes(4))
	}
	w := it.nextRun("wake", "roadmap-wake.yml", "schedule", nil)
	if got := w.Jobs[w.job("wake")]; got != "success" {
		t.Fatalf("the wake run: job %q (jobs %v)\n%s", got, w.Jobs, w.Log)
	}
	if !strings.Contains(w.Log, fmt.Sprintf("issue #%d (implement Job 2): dispatched", it.w.Issue)) {
		t.Errorf("the wake run's log does not say it dispatched the item:\n%s", w.Log)
	}
	if slices.Contains(it.w.Fake.Labels(it.w.Issue), "roadmap:waiting") {
		t.Errorf("labels = %v, want roadmap:waiting removed by the wake", it.w.Fake.Labels(it.w.Issue))
	}
	run := it.nextRun("run 2", it.workflowFile(), "workflow_dispatch", nil)
	it.wantJobs(run.actRun, "success", "success")
	rec := it.record()
	if res, _ := rec.Result(); res != record.ResultReady {
		t.Fatalf("implement.result = %q, want ready:\n%s", res, recordText(rec))
	}
	pr, _ := rec.StagePR()
	it.checkReadyPR(pr)
	it.noMoreRuns("after ready")
	it.requests()
}

// TestE2EAnswerResumes: no CI can run on roadmap's pushes, so Job 1 asks a
// person (needs_input). A reader's reply is ignored. A maintainer allows
// ready without CI in the configuration (a push of their own to main) and
// answers: the comment starts the caller's answer job (a person's event),
// report resumes the item, and Job 2 goes on to ready.
func TestE2EAnswerResumes(t *testing.T) {
	act := requireAct(t)
	it := newItem(t, act, itemOptions{Latency: 20 * time.Millisecond, WatchTimeout: 10 * time.Minute, NoPushToken: true})
	it.baselinePushes()
	alice := it.person("alice", "maintain")
	bob := it.person("bob", "read")

	alice.label(it.w.Issue, "roadmap:implement")
	run1 := it.nextRun("run 1", it.workflowFile(), "issues", nil)
	it.wantJobs(run1.actRun, "success", "success")
	if !slices.Contains(it.w.Fake.Labels(it.w.Issue), "roadmap:needs-input") {
		t.Fatalf("labels = %v, want roadmap:needs-input after Job 1", it.w.Fake.Labels(it.w.Issue))
	}

	bob.comment(it.w.Issue, "Just ship it.")
	ignored := it.nextRun("bob's reply", it.workflowFile(), "issue_comment", nil)
	if !strings.Contains(ignored.Log, "bob has read access") {
		t.Errorf("the run of bob's reply does not say it was ignored and why:\n%s", ignored.Log)
	}
	if d := it.w.Fake.Dispatches(); len(d) != 0 {
		t.Fatalf("a reader's reply dispatched %v", d)
	}

	// alice allows ready without CI, with a push of her own to main.
	it.pushConfig(alice, "  ready_without_ci: true\n")
	alice.comment(it.w.Issue, "I set implement.ready_without_ci: true; mark it ready without CI.")
	answer := it.nextRun("alice's answer", it.workflowFile(), "issue_comment", nil)
	if got := answer.Jobs[answer.job("answer")]; got != "success" {
		t.Fatalf("the answer's run: answer job %q (jobs %v)", got, answer.Jobs)
	}
	if ans, _ := it.record().Answer(); !strings.Contains(ans, "ready without CI") {
		t.Errorf("implement.answer = %q, want alice's reply", ans)
	}
	run2 := it.nextRun("run 2", it.workflowFile(), "workflow_dispatch", nil)
	it.wantJobs(run2.actRun, "success", "success")
	rec := it.record()
	if res, _ := rec.Result(); res != record.ResultReady {
		t.Fatalf("implement.result = %q, want ready:\n%s", res, recordText(rec))
	}
	if slices.Contains(it.w.Fake.Labels(it.w.Issue), "roadmap:needs-input") {
		t.Errorf("labels = %v, want roadmap:needs-input removed", it.w.Fake.Labels(it.w.Issue))
	}
	it.noMoreRuns("after ready")
	it.requests()
}

// TestE2EReturnToStage: the agent finds the plan wrong at group 2
// (plan_wrong). Report returns the item to stage by dispatching the caller
// with phase stage: a roadmap:stage label added with the workflow's token
// would start nothing. GitHub starts that dispatch; stage amends the plan
// on the same PR, keeping group 1, which passed. A person approves the
// amended plan, and implement goes on from group 2 to ready.
func TestE2EReturnToStage(t *testing.T) {
	act := requireAct(t)
	it := newItem(t, act, itemOptions{Latency: 20 * time.Millisecond, WatchTimeout: 30 * time.Second, World: demotest.NewReturnWorld})
	it.playCI("success")
	it.baselinePushes()
	alice := it.person("alice", "admin")

	alice.label(it.w.Issue, "roadmap:implement")
	run1 := it.nextRun("run 1", it.workflowFile(), "issues", nil)
	it.wantJobs(run1.actRun, "success", "success")
	rec := it.record()
	if res, _ := rec.Result(); res != record.ResultReturned {
		t.Fatalf("implement.result = %q, want returned (plan_wrong):\n%s", res, recordText(rec))
	}
	if g, _ := rec.Group(); g != 1 {
		t.Errorf("implement.group = %d, want 1 (group 2's plan is wrong)", g)
	}
	disp := it.w.Fake.Dispatches()
	if len(disp) != 1 || disp[0].Inputs["phase"] != "stage" || disp[0].Workflow != it.workflowFile() {
		t.Fatalf("report dispatched %+v, want the caller once with phase stage", disp)
	}
	labels := it.w.Fake.Labels(it.w.Issue)
	if slices.Contains(labels, "roadmap:stage") || slices.Contains(labels, "roadmap:implement") {
		t.Errorf("labels = %v, want neither roadmap:stage (it would start nothing) nor roadmap:implement", labels)
	}

	amend := it.nextRun("stage amends", it.workflowFile(), "workflow_dispatch", nil)
	if got := amend.Jobs[amend.job("stage")]; got != "success" {
		t.Fatalf("the amendment's run: stage job %q (jobs %v)", got, amend.Jobs)
	}
	rec = it.record()
	if st, _ := rec.StageState(); st != "staged" {
		t.Fatalf("stage.state = %q, want staged after the amendment:\n%s", st, recordText(rec))
	}
	pr, _ := rec.StagePR()
	if is, _ := it.w.Fake.Issue(pr); !strings.Contains(is.Body, "Amended from group 2") || !strings.Contains(is.Body, "- [x] 1.1") {
		t.Errorf("the PR body does not say the plan was amended, group 1 ticked:\n%s", is.Body)
	}
	it.noMoreRuns("after the amendment (a person approves it next)")

	alice.approve(pr)
	run2 := it.nextRun("approved", it.workflowFile(), "pull_request_review", nil)
	it.wantJobs(run2.actRun, "success", "success")
	rec = it.record()
	if res, _ := rec.Result(); res != record.ResultReady {
		t.Fatalf("implement.result = %q, want ready:\n%s", res, recordText(rec))
	}
	it.checkReadyPR(pr)
	it.checkSpend(rec)
	it.noMoreRuns("after ready")
	// An amendment is a second stage Job and a second implement Job: more
	// than the 30 that bound the item's life from label to ready (38 on
	// the first run: 16 for Job 1 and its return, 6 for the amendment, 16
	// for Job 2 and its report).
	it.requests()
}
