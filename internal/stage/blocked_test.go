package stage_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/adopt"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/stage"
)

// TestBlockedItemWaits: an item blocked by an open issue through GitHub's
// issue dependencies and by a "Blocked by #N" line in its body does not
// start. The Job (kernel.Job.Blockers, which implement's Jobs start through
// too) ends yielded, class blocked, before any model call and with no
// number: the issue gets roadmap:blocked, the record item.blocked_by and a
// line naming both blockers, and the check reads with two counted requests
// (the dependencies, then one query for the body's reference). Once both
// are closed as completed, the next Job starts: it takes the label and the
// key off and stages the plan. A Job started while they are still open
// writes nothing again.
func TestBlockedItemWaits(t *testing.T) {
	w := newWorld(t)
	dep := w.fake.CreateIssue(githubfake.Issue{Title: "Parse greetings", Author: "alice"})
	text := w.fake.CreateIssue(githubfake.Issue{Title: "Name the greeting", Author: "alice"})
	if err := w.fake.AddBlockedBy(w.issue, dep); err != nil {
		t.Fatal(err)
	}
	if err := w.fake.SetIssueBody(w.issue, "alice", fmt.Sprintf("%s\nBlocked by #%d (must merge first)\n", issueBody, text)); err != nil {
		t.Fatal(err)
	}
	w.fake.ResetLog()

	j := w.newJob(soundPlanner("Write the plan for issue"), cleanVerifier("Review the plan for issue"))
	res := j.run(context.Background())
	if res.Result != stage.ResultYielded || res.Failure != string(failure.Blocked) {
		t.Fatalf("result %s (%s: %s), want yielded (blocked)\n%s", res.Result, res.Failure, res.Reason, j.log.String())
	}
	want := fmt.Sprintf("#%d, #%d", dep, text)
	if !strings.Contains(res.Reason, "waiting for "+want) || j.outputs["failure"] != "blocked" || j.outputs["job"] != "0" {
		t.Errorf("reason %q, outputs %v; want waiting for %s, failure blocked, job 0", res.Reason, j.outputs, want)
	}
	if n := len(j.model.Requests()); n != 0 {
		t.Errorf("%d model calls; want none", n)
	}
	if !strings.Contains(j.log.String(), "class=blocked") {
		t.Errorf("the log has no typed line class=blocked:\n%s", j.log.String())
	}
	if !slices.Contains(w.fake.Labels(w.issue), "roadmap:blocked") {
		t.Errorf("labels %v; want roadmap:blocked", w.fake.Labels(w.issue))
	}
	rec := w.record()
	if got, _ := rec.BlockedBy(); got != want {
		t.Errorf("item.blocked_by %q, want %q", got, want)
	}
	if jobs, _ := rec.StageJobs(); len(jobs) != 0 || rec.Has(record.KeyStageState) {
		t.Errorf("stage.jobs %v, stage.state set %v; a blocked Job takes no number and marks nothing", jobs, rec.Has(record.KeyStageState))
	}
	if !strings.Contains(w.recordText(), "waiting for "+want) {
		t.Errorf("the record comment does not name the blockers:\n%s", w.recordText())
	}
	// The check's own reads: the dependencies and one query for the body's
	// reference; then the label and the record comment (made).
	counts := w.fake.CountByEndpoint()
	for ep, n := range map[string]int{"GET /repos/{owner}/{repo}/issues/{n}/dependencies/blocked_by": 1, "POST /graphql": 1,
		"GET /repos/{owner}/{repo}/issues/{n}": 1, "POST /repos/{owner}/{repo}/issues/{n}/labels": 1} {
		if counts[ep] != n {
			t.Errorf("%s: %d requests, want %d (all: %v)", ep, counts[ep], n, counts)
		}
	}
	if total := len(w.fake.Requests()); total > 6 {
		t.Errorf("the blocked Job made %d requests, want at most 6: %v", total, counts)
	}
	wantAdopted(t, w.fake.Requests())

	// Started again while both are still open (a wake, a label): it waits
	// again and writes nothing, the label and the record say it already.
	w.fake.ResetLog()
	again := w.newJob(soundPlanner("Write the plan for issue"))
	if res := again.run(context.Background()); res.Failure != string(failure.Blocked) {
		t.Fatalf("the Job started again: %s (%s), want blocked\n%s", res.Result, res.Failure, again.log.String())
	}
	for _, r := range w.fake.Requests() {
		if r.Method != "GET" && r.Endpoint != "POST /graphql" {
			t.Errorf("the Job started again wrote: %s %s", r.Method, r.Path)
		}
	}

	// Both closed as completed: the next Job starts and stages the plan.
	for _, n := range []int{dep, text} {
		if err := w.fake.CloseIssue(n, "completed"); err != nil {
			t.Fatal(err)
		}
	}
	w.fake.ResetLog()
	j2 := w.newJob(soundPlanner("Write the plan for issue"), cleanVerifier("Review the plan for issue"))
	res = j2.run(context.Background())
	if res.Result != stage.ResultStaged {
		t.Fatalf("the Job after the blockers closed: result %s (%s: %s), want staged\n%s", res.Result, res.Failure, res.Reason, j2.log.String())
	}
	if slices.Contains(w.fake.Labels(w.issue), "roadmap:blocked") {
		t.Errorf("labels %v; roadmap:blocked is still on the issue", w.fake.Labels(w.issue))
	}
	if got, ok := w.record().BlockedBy(); ok {
		t.Errorf("item.blocked_by %q is still in the record", got)
	}
	wantAdopted(t, w.fake.Requests())
}

// wantAdopted wants every request in log to be one internal/adopt's table
// of stage's calls has: the stage job's permissions are made from it, so a
// call it lacks is refused on GitHub.
func wantAdopted(t *testing.T, log []githubfake.LoggedRequest) {
	t.Helper()
	for _, r := range log {
		if r.Endpoint != "" && !adopt.Allows("stage", r.Endpoint) {
			t.Errorf("the Job called %s, which internal/adopt's table of stage's calls lacks", r.Endpoint)
		}
	}
}
