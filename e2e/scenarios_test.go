//go:build unix

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// maxRequests is the item's budget of counted GitHub requests (DESIGN §9):
// stage (when the item starts from an issue), a three-group implement and
// its reports, continuation included.
const maxRequests = 30

// TestE2EYieldAndContinue: the label starts the item; the implement Job does
// the three groups, opens the PR and yields at the watch because the PR's CI
// is still pending; report (the next job of the same run) dispatches a
// continuation; the test starts the dispatched run as GitHub would, with CI
// now green, and it ends ready.
func TestE2EYieldAndContinue(t *testing.T) {
	act := requireAct(t)
	it := newItem(t, act, itemOptions{Latency: 20 * time.Millisecond, WatchTimeout: 2 * time.Second})
	c := it.playCI("pending")
	it.baselinePushes()
	alice := it.person("alice", "admin")

	alice.label(it.w.Issue, "roadmap:implement")
	ran1 := it.nextRun("run 1", it.workflowFile(), "issues", nil)
	run1 := ran1.actRun
	it.wantJobs(run1, "success", "success")
	rec := it.record()
	if res, _ := rec.Result(); res != record.ResultYielded {
		t.Fatalf("after run 1 implement.result = %q, want yielded:\n%s", res, recordText(rec))
	}
	served1 := it.w.Replay.Stats().Calls
	it.checkTrace(run1, 1, served1, false)
	disp := it.w.Fake.Dispatches()
	if len(disp) != 1 {
		t.Fatalf("report dispatched %d runs, want 1: %+v", len(disp), disp)
	}
	cont := it.continuation("run 2", disp[0])
	if diff := cmp.Diff(map[string]string{"issue": fmt.Sprint(it.w.Issue), "attempt": "2", "record-comment": it.recordCommentID()}, cont.inputs); diff != "" {
		t.Errorf("continuation inputs (-want +got):\n%s", diff)
	}
	it.logf("report dispatched run %d with %v; the PR's CI turns green", cont.runID, cont.inputs)

	c.set("success")
	ran2 := it.nextRun("run 2", it.workflowFile(), "workflow_dispatch", nil)
	run2 := ran2.actRun
	if ran2.run.ID != cont.runID {
		t.Errorf("GitHub started run %d, want the dispatch's run %d", ran2.run.ID, cont.runID)
	}
	it.wantJobs(run2, "success", "success")
	it.checkTrace(run2, 2, it.w.Replay.Stats().Calls-served1, false)

	rec = it.record()
	if res, _ := rec.Result(); res != record.ResultReady {
		t.Errorf("implement.result = %q, want ready:\n%s", res, recordText(rec))
	}
	jobs, _ := rec.Jobs()
	var ends []string
	for _, j := range jobs {
		ends = append(ends, fmt.Sprintf("%d:%s", j.Job, j.Result))
	}
	if got, want := strings.Join(ends, " "), "1:yielded 2:ready"; got != want {
		t.Errorf("implement.jobs = %s, want %s", got, want)
	} else if jobs[0].Group != 3 || jobs[0].Failure != "" {
		t.Errorf("Job 1 = %+v, want it to yield at the watch: group 3 passed, no failure class", jobs[0])
	}
	it.checkSpend(rec)
	pr, _ := rec.StagePR()
	it.checkReadyPR(pr)
	if len(it.w.Fake.Dispatches()) != 1 {
		t.Errorf("report dispatched again after ready: %+v", it.w.Fake.Dispatches())
	}
	it.noMoreRuns("after ready")
	if n := it.requests(); n > maxRequests {
		t.Errorf("the item made %d counted GitHub requests, want at most %d", n, maxRequests)
	}
}

// TestE2EKilled: the item starts from an issue with no plan: stage (its own
// run, on the roadmap:stage label) writes the plan and opens the draft PR.
// Then the implement step is SIGKILLed inside group 2, while its
// next model call is on the wire. act then runs report (needs.implement.result
// is failure, with no result output). Under act there is no job-log API, so
// the test gives the fake GitHub the run's implement job with the log the
// runner would have kept: the killed step's output and the runner's exit-code
// line. Report classifies the Job as killed, recovers its spend from the log
// and dispatches a continuation, which finishes the item.
func TestE2EKilled(t *testing.T) {
	act := requireAct(t)
	it := newItem(t, act, itemOptions{Latency: time.Second, WatchTimeout: 30 * time.Second, FromIssue: true})
	it.playCI("success")
	it.baselinePushes()
	alice := it.person("alice", "admin")
	// The issue has no plan: stage writes it, checks it and opens the
	// draft PR the implement Jobs then work on.
	it.stage(alice)
	alice.label(it.w.Issue, "roadmap:implement")
	// On GitHub the implement job's log is complete before report, which
	// needs it, starts. Here the test writes it after the kill: report's
	// listing of the run's jobs waits for it (it normally has it already).
	seeded := make(chan struct{})
	var held atomic.Bool
	it.w.Fake.AddFault(githubfake.Rule{Method: "GET", Path: "/repos/*/*/actions/runs/*/jobs", Before: func() {
		select {
		case <-seeded:
		default:
			held.Store(true)
			select {
			case <-seeded:
			case <-time.After(2 * time.Minute):
			}
		}
	}})

	var killedCalls int
	ran1 := it.nextRun("run 1", it.workflowFile(), "issues", func(ctx context.Context, s *Started, runID int64) {
		defer close(seeded)
		if killedCalls = it.killInGroup(ctx, s, 2); killedCalls > 0 {
			it.seedKilledJob(ctx, s, runID)
		}
	})
	run1 := ran1.actRun
	if killedCalls == 0 {
		t.FailNow()
	}
	if held.Load() {
		it.logf("report asked for the run's jobs before the log was in place; it waited for it")
	}
	it.wantJobs(run1, "failure", "success")
	killed := slices.ContainsFunc(run1.Steps, func(s StepResult) bool {
		return s.ID == "implement/run" && s.Result == "failure" && s.Error == "signal: killed"
	})
	if !killed {
		t.Errorf("steps = %+v, want the implement step failed with signal: killed", run1.Steps)
	}
	summary := run1.Summaries[run1.job("report")]
	if !strings.Contains(summary, "(killed") || !strings.Contains(summary, "recovered from the killed Job's log") {
		t.Errorf("report's summary = %q, want the Job classified killed and its spend recovered", summary)
	}
	it.logf("report's summary:\n%s", summary)
	// The killed Job's trace, kept although the Job set no outputs itself.
	it.checkTrace(run1, 1, killedCalls, true)
	rec := it.record()
	if res, _ := rec.Result(); res != "" {
		t.Errorf("after the kill implement.result = %q, want none (the killed Job wrote no result)", res)
	}
	disp := it.w.Fake.Dispatches()
	if len(disp) != 1 {
		t.Fatalf("report dispatched %d runs, want 1: %+v", len(disp), disp)
	}
	cont := it.continuation("run 2", disp[0])
	if diff := cmp.Diff(map[string]string{"issue": fmt.Sprint(it.w.Issue), "attempt": "2", "record-comment": it.recordCommentID()}, cont.inputs); diff != "" {
		t.Errorf("continuation inputs (-want +got):\n%s", diff)
	}
	it.logf("report: killed → continuation, run %d with %v", cont.runID, cont.inputs)

	ran2 := it.nextRun("run 2", it.workflowFile(), "workflow_dispatch", nil)
	run2 := ran2.actRun
	if ran2.run.ID != cont.runID {
		t.Errorf("GitHub started run %d, want the dispatch's run %d", ran2.run.ID, cont.runID)
	}
	it.wantJobs(run2, "success", "success")
	it.checkTrace(run2, 2, it.w.Replay.Stats().Calls-killedCalls-it.staged, false)

	rec = it.record()
	if res, _ := rec.Result(); res != record.ResultReady {
		t.Errorf("implement.result = %q, want ready:\n%s", res, recordText(rec))
	}
	jobs, _ := rec.Jobs()
	var ends []string
	for _, j := range jobs {
		ends = append(ends, fmt.Sprintf("%d:%s", j.Job, j.Result))
	}
	if got, want := strings.Join(ends, " "), "1: 2:ready"; got != want {
		t.Errorf("implement.jobs = %s, want %s (the killed Job without a result)", got, want)
	} else if want := killedCalls + it.booked.ModelCalls; jobs[0].Spend.ModelCalls != want || it.booked.ModelCalls != 1 {
		t.Errorf("the killed Job's spend in implement.jobs = %+v, want its %d calls answered and the %d on the wire at its booking (%d: those after its last mark recovered from its log)",
			jobs[0].Spend, killedCalls, it.booked.ModelCalls, want)
	}
	it.checkSpend(rec)
	pr, _ := rec.StagePR()
	it.checkReadyPR(pr)
	it.noMoreRuns("after ready")
	if n := it.requests(); n > maxRequests {
		t.Errorf("the item made %d counted GitHub requests, want at most %d", n, maxRequests)
	}
}

// readmeFailure is the scripted CI's job log for a real failure of the
// change: a go test the repository's CI runs and the plan's verify
// commands do not, in the runner's log format.
const readmeFailure = `2026-11-29T09:01:00.1000000Z ##[group]Run go test ./...
2026-11-29T09:01:00.1000000Z go test ./...
2026-11-29T09:01:00.1000000Z ##[endgroup]
2026-11-29T09:01:02.3000000Z --- FAIL: TestReadmeExample (0.00s)
2026-11-29T09:01:02.3000000Z     readme_test.go:14: README.md has no usage example ("Example:")
2026-11-29T09:01:02.3000000Z FAIL
2026-11-29T09:01:02.3000000Z FAIL	example.com/greet	0.004s
2026-11-29T09:01:02.3100000Z ##[error]Process completed with exit code 1.
`

// TestE2ECIRerunAndRepair: the repository's CI is a workflow roadmap
// dispatches (GITHUB_TOKEN-only: its pushes start no run). After the
// groups, the CI fails with a network error (a real npm ECONNRESET log):
// the watch reads the log, re-runs the failed job with no model call; the
// re-run fails on the change (a go test failure): the log goes to an agent
// repair step at the head, which commits and pushes; CI is dispatched at the
// new head, passes, and the PR is marked ready, all in one Job.
func TestE2ECIRerunAndRepair(t *testing.T) {
	act := requireAct(t)
	flaky, err := os.ReadFile(filepath.Join(repoRoot(t), "testdata", "logs", "real", "transient-npm-econnreset-runner-images.log"))
	if err != nil {
		t.Fatal(err)
	}
	it := newItem(t, act, itemOptions{Latency: 20 * time.Millisecond, WatchTimeout: 2 * time.Minute,
		Implement: "  ci_workflows: [ci.yml]\n  check_reruns: 2\n"})
	it.w.Fake.ScriptCI("ci.yml", githubfake.CIJob{Name: "test", Outcomes: []githubfake.CIOutcome{
		{Conclusion: "failure", Log: string(flaky)},
		{Conclusion: "failure", Log: readmeFailure},
		{Conclusion: "success"},
	}})

	it.baselinePushes()
	alice := it.person("alice", "admin")
	alice.label(it.w.Issue, "roadmap:implement")
	run1 := it.nextRun("run 1", it.workflowFile(), "issues", nil).actRun
	it.wantJobs(run1, "success", "success")
	rec := it.record()
	if res, _ := rec.Result(); res != record.ResultReady {
		t.Fatalf("implement.result = %q, want ready:\n%s", res, recordText(rec))
	}
	if rr := it.w.Fake.Reruns(); len(rr) != 1 {
		t.Errorf("rerun-failed-jobs accepted %d times, want 1 (the network error only): %+v", len(rr), rr)
	}
	var ci int
	for _, d := range it.w.Fake.Dispatches() {
		if d.Workflow == "ci.yml" {
			ci++
			if d.Ref != it.w.Branch() {
				t.Errorf("ci.yml dispatched on %q, want the work branch %q", d.Ref, it.w.Branch())
			}
		}
	}
	if ci != 2 {
		t.Errorf("ci.yml dispatched %d times, want 2 (the groups' head, the repaired head)", ci)
	}
	pr, _ := rec.StagePR()
	var comment string
	for _, c := range it.w.Fake.Comments(pr) {
		if strings.Contains(c.Body, marker) {
			comment = c.Body
		}
	}
	for _, want := range []string{"re-ran the failed jobs", "transient", "its log goes to the agent", "repaired the head", "are green"} {
		if !strings.Contains(comment, want) {
			t.Errorf("the PR comment lacks %q:\n%s", want, comment)
		}
	}
	readme, err := git(t.Context(), "--git-dir", it.w.Remote, "show", it.w.Branch()+":README.md")
	if err != nil || !strings.Contains(readme, "Example:") {
		t.Errorf("README.md on the branch = %q (%v), want the repair's example", readme, err)
	}
	it.checkSpend(rec)
	// Not checkReadyPR: the repair comes after the archive commit, so the
	// PR's last commit is the repair's.
	if is, ok := it.w.Fake.Issue(pr); !ok || is.Pull == nil || is.Pull.Draft {
		t.Errorf("PR #%d is not a pull request out of draft", pr)
	}
	msg, err := git(t.Context(), "--git-dir", it.w.Remote, "log", "-2", "--format=%s", it.w.Branch())
	if err != nil || !strings.HasPrefix(msg, "roadmap: repair at the head\nroadmap: archive add-greetings") {
		t.Errorf("the branch's last two commits = %q (%v), want the repair after the archive", msg, err)
	}
	it.logf("the item made %d counted GitHub requests (the CI's dispatches, log reads and re-run included)", it.requests())
}
