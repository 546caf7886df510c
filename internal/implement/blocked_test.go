package implement_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/adopt"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// TestImplementJobBlocked: an implement Job starts through the same check
// as stage's (TestBlockedItemWaits, internal/stage): an item GitHub's issue
// dependencies say an open issue blocks ends yielded, class blocked, with
// no model call, no number and no line in implement.jobs; the outputs say
// so for report, the issue has roadmap:blocked and the record
// item.blocked_by. Once the blocker is closed as completed, the next Job
// takes the label and the key off and goes on. Every call both Jobs make
// is one the implement job's permissions are made from (internal/adopt).
func TestImplementJobBlocked(t *testing.T) {
	w := newWorld(t, 1, "")
	blocker := w.fake.CreateIssue(githubfake.Issue{Title: "Parse greetings", Author: "alice"})
	if err := w.fake.AddBlockedBy(w.issue, blocker); err != nil {
		t.Fatal(err)
	}
	w.fake.ResetLog()
	j := w.newJob(w.conversations())
	res := j.run()
	if res.Result != record.ResultYielded || res.Failure != string(failure.Blocked) {
		t.Fatalf("result %s/%s (%s), want yielded/blocked\n%s", res.Result, res.Failure, res.Reason, j.log.String())
	}
	if calls := len(j.model.Requests()); calls != 0 {
		t.Errorf("%d model calls, want none", calls)
	}
	if j.outputs["failure"] != string(failure.Blocked) || j.outputs["result"] != string(record.ResultYielded) {
		t.Errorf("outputs %v, want result yielded, failure blocked", j.outputs)
	}
	if !slices.Contains(w.fake.Labels(w.issue), "roadmap:blocked") {
		t.Errorf("labels %v; want roadmap:blocked", w.fake.Labels(w.issue))
	}
	rec := w.record()
	if got, _ := rec.BlockedBy(); got != fmt.Sprintf("#%d", blocker) {
		t.Errorf("item.blocked_by %q, want #%d", got, blocker)
	}
	if jobs, _ := rec.Jobs(); len(jobs) != 0 {
		t.Errorf("implement.jobs %v; a blocked Job takes no number", jobs)
	}
	wantAdopted(t, w.fake.Requests())

	// The blocker closed as completed: the next Job starts.
	if err := w.fake.CloseIssue(blocker, "completed"); err != nil {
		t.Fatal(err)
	}
	w.fake.ResetLog()
	j2 := w.newJob(w.conversations())
	if res := j2.runWithGreenCI(); res.Failure == string(failure.Blocked) {
		t.Fatalf("the Job after the blocker closed: %s/%s, want it to start\n%s", res.Result, res.Failure, j2.log.String())
	}
	if slices.Contains(w.fake.Labels(w.issue), "roadmap:blocked") {
		t.Errorf("labels %v; roadmap:blocked is still on the issue", w.fake.Labels(w.issue))
	}
	if got, ok := w.record().BlockedBy(); ok {
		t.Errorf("item.blocked_by %q is still in the record", got)
	}
	if n := len(j2.model.Requests()); n == 0 {
		t.Errorf("the Job after the blocker closed made no model call")
	}
	wantAdopted(t, w.fake.Requests())
}

// wantAdopted wants every request in log to be one internal/adopt's table
// of implement's calls has: the implement job's permissions are made from
// it, so a call it lacks is refused on GitHub.
func wantAdopted(t *testing.T, log []githubfake.LoggedRequest) {
	t.Helper()
	for _, r := range log {
		if r.Endpoint != "" && !adopt.Allows("implement", r.Endpoint) {
			t.Errorf("the Job called %s, which internal/adopt's table of implement's calls lacks", r.Endpoint)
		}
	}
}
