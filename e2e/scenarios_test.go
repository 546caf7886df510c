//go:build unix

package e2e

import (
	"context"
	"fmt"
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

	run1ID := it.w.Fake.AddRun(githubfake.Run{WorkflowFile: "roadmap-caller.yml", HeadBranch: "main", Event: "issues", Status: "in_progress"})
	run1 := it.run(it.labelled(run1ID), nil)
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
	run2 := it.run(cont, nil)
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
	// The issue has no plan: stage writes it, checks it and opens the
	// draft PR the implement Jobs then work on.
	it.stage()

	run1ID := it.w.Fake.AddRun(githubfake.Run{WorkflowFile: "roadmap-caller.yml", HeadBranch: "main", Event: "issues", Status: "in_progress"})
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
	run1 := it.run(it.labelled(run1ID), func(ctx context.Context, s *Started) {
		defer close(seeded)
		if killedCalls = it.killInGroup(ctx, s, 2); killedCalls > 0 {
			it.seedKilledJob(ctx, s, run1ID)
		}
	})
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

	run2 := it.run(cont, nil)
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
	} else if jobs[0].Spend.ModelCalls != killedCalls {
		t.Errorf("the killed Job's spend in implement.jobs = %+v, want its %d calls (those after its last mark recovered from its log)", jobs[0].Spend, killedCalls)
	}
	it.checkSpend(rec)
	pr, _ := rec.StagePR()
	it.checkReadyPR(pr)
	if n := it.requests(); n > maxRequests {
		t.Errorf("the item made %d counted GitHub requests, want at most %d", n, maxRequests)
	}
}
