package implement_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/implement"
	"github.com/roadmap-dev/roadmap/internal/kernel"
	"github.com/roadmap-dev/roadmap/internal/record"
	theworld "github.com/roadmap-dev/roadmap/internal/world"
)

// leaseOnRemote is the item's lease ref on the bare remote ("" when none).
func (w *world) leaseOnRemote() string {
	out, err := theworld.Git(gitEnv(), w.remote, "for-each-ref", "--format=%(objectname)", kernel.LeaseRef(w.issue))
	if err != nil {
		w.t.Fatal(err)
	}
	return strings.TrimSpace(out)
}

// runReads counts the requests that read a workflow run.
func (w *world) runReads() int {
	n := 0
	for _, r := range w.fake.Requests() {
		if r.Endpoint == "GET /repos/{owner}/{repo}/actions/runs/{run_id}" {
			n++
		}
	}
	return n
}

func (w *world) activeRun(event string) int64 {
	return w.fake.AddRun(githubfake.Run{WorkflowFile: "roadmap.yml", HeadBranch: "main", Event: event, Status: "in_progress"})
}

// TestLeaseOneJobPerItem: two implement Jobs for one item at once (a
// person's dispatch while the label's run goes). The first takes the
// item's lease before it reads the record; the second finds it held by a
// run GitHub says is in progress and leaves the item: no mark, no model
// call, no Job number, no spend, typed yielded/busy, and the first ends
// ready as Job 1, the only line in the record, its lease released.
func TestLeaseOneJobPerItem(t *testing.T) {
	w := newWorld(t, 1, "")
	first, second := w.newJob(w.conversations()), w.newJob(w.conversations())
	first.opts.RunID, second.opts.RunID = w.activeRun("issues"), w.activeRun("workflow_dispatch")
	first.opts.PollInterval = time.Minute

	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	first.model.Before = func(int, agent.ModelRequest) {
		once.Do(func() { close(entered); <-release })
	}
	done := make(chan implement.Result)
	go func() { done <- first.runWithGreenCI() }()
	<-entered // the first Job is in its first model call, holding the lease
	if w.leaseOnRemote() == "" {
		t.Fatal("the first Job is at work and the remote has no lease for the item")
	}
	res := second.run()
	close(release)
	firstRes := <-done

	if res.Result != record.ResultYielded || res.Failure != "busy" {
		t.Errorf("the second Job ended %s/%s (%s), want yielded/busy\n%s", res.Result, res.Failure, res.Reason, second.log.String())
	}
	if !strings.Contains(res.Reason, "in_progress") {
		t.Errorf("reason %q does not say the holder's run is in progress", res.Reason)
	}
	if n := len(second.model.Requests()); n != 0 {
		t.Errorf("the second Job made %d model calls, want 0", n)
	}
	if got := second.outputs["attempt"]; got != "0" {
		t.Errorf("the second Job's attempt output = %q, want 0 (it takes no number)", got)
	}
	if !strings.Contains(second.log.String(), "class=busy") {
		t.Errorf("the second Job's log has no typed busy line:\n%s", second.log.String())
	}
	if firstRes.Result != record.ResultReady {
		t.Fatalf("the first Job ended %s/%s (%s), want ready\n%s", firstRes.Result, firstRes.Failure, firstRes.Reason, first.log.String())
	}
	jobs, _ := w.record().Jobs()
	if len(jobs) != 1 || jobs[0].Job != 1 || jobs[0].RunID != first.opts.RunID {
		t.Errorf("implement.jobs = %+v, want only Job 1 of run %d", jobs, first.opts.RunID)
	}
	spend, _ := w.record().Spend()
	if spend != firstRes.Spend {
		t.Errorf("item spend %+v, want the first Job's %+v: the second spent nothing", spend, firstRes.Spend)
	}
	if sha := w.leaseOnRemote(); sha != "" {
		t.Errorf("the lease %s is still on the remote after the holder ended", sha)
	}
}

// TestLeaseTakenOverFromGoneJob: a Job that was killed holding the lease
// (it took it and never released it) blocks the item only while its run
// lives. Its lease is taken over when the record has its ending (report
// settled it: no request), when its run completed or vanished (one read of
// the run), and when it was an earlier attempt of this run; the Job that
// takes it over goes on with the next number and releases the lease at its
// end. That a taker runs the item to ready is shown once (its run
// completed); the other takers end at their first group, with a deadline
// that leaves no room for it, as the takeover is decided before any group.
func TestLeaseTakenOverFromGoneJob(t *testing.T) {
	for _, tc := range []struct {
		name string
		// gone makes the holder of run holder gone (or leaves it live).
		gone func(w *world, holder int64) error
		// sameRun: the taker runs in the holder's run (its next attempt).
		sameRun  bool
		live     bool
		runReads int
		why      string
		// toReady: the taker runs the item to ready; else it yields at
		// its first group.
		toReady bool
	}{
		{name: "its run is in progress", gone: func(*world, int64) error { return nil }, live: true, runReads: 1, why: "in_progress"},
		{name: "its run completed", gone: func(w *world, id int64) error { return w.fake.FinishRun(id, "cancelled") },
			runReads: 1, why: "has completed (cancelled)", toReady: true},
		{name: "its run vanished", gone: func(*world, int64) error { return nil }, runReads: 1, why: "is gone"},
		{name: "report settled its line", gone: settleKilled, why: "the record has its Job 1's ending (no result, killed)"},
		{name: "an earlier attempt of this run", gone: func(*world, int64) error { return nil }, sameRun: true, why: "earlier attempt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, 1, "")
			holder := w.activeRun("issues")
			if tc.name == "its run vanished" {
				holder = 999999 // a run GitHub does not have (deleted)
			}
			killed := w.newJob(w.conversations())
			killed.opts.RunID = holder
			// The killed Job's start, as the binary makes it; then the
			// process is gone, with no release.
			kj, err := kernel.Start(context.Background(), killed.opts.Options, 0)
			if err != nil || kj.Busy != nil {
				t.Fatalf("the first Job could not take the lease: %v %v", err, kj.Busy)
			}
			left := w.leaseOnRemote()
			if err := tc.gone(w, holder); err != nil {
				t.Fatal(err)
			}
			before := w.runReads()

			next := w.newJob(w.conversations())
			next.opts.RunID = w.activeRun("workflow_dispatch")
			if tc.sameRun {
				next.opts.RunID = holder
			}
			next.opts.PollInterval = time.Minute
			if !tc.toReady {
				next.opts.Deadline = w.clock.Now().Add(time.Minute) // less than the reserve: no group can start
			}
			res := next.runWithGreenCI()
			if got := w.runReads() - before; got != tc.runReads {
				t.Errorf("the Job read the holder's run %d times, want %d", got, tc.runReads)
			}
			if tc.live {
				if res.Result != record.ResultYielded || res.Failure != "busy" || !strings.Contains(res.Reason, tc.why) {
					t.Fatalf("ended %s/%s (%s), want yielded/busy saying %q", res.Result, res.Failure, res.Reason, tc.why)
				}
				if got := w.leaseOnRemote(); got != left {
					t.Errorf("the live holder's lease moved: %s, was %s", got, left)
				}
				return
			}
			want := record.ResultReady
			if !tc.toReady {
				want = record.ResultYielded
			}
			if res.Result != want || res.Failure == "busy" {
				t.Fatalf("ended %s/%s (%s), want %s\n%s", res.Result, res.Failure, res.Reason, want, next.log.String())
			}
			if !strings.Contains(next.log.String(), "took over the item's lease") || !strings.Contains(next.log.String(), tc.why) {
				t.Errorf("the log does not say the lease was taken over because %q:\n%s", tc.why, next.log.String())
			}
			jobs, _ := w.record().Jobs()
			nums := map[int]int{}
			for _, j := range jobs {
				nums[j.Job]++
			}
			for n, c := range nums {
				if c != 1 {
					t.Errorf("Job %d has %d lines in %+v: numbers are unique", n, c, jobs)
				}
			}
			if last := jobs[len(jobs)-1]; last.Result != want || last.RunID != next.opts.RunID {
				t.Errorf("the last line %+v is not the taker's %s", last, want)
			}
			if sha := w.leaseOnRemote(); sha != "" {
				t.Errorf("the lease %s is still on the remote after the taker ended", sha)
			}
		})
	}
}

// settleKilled writes the record line report writes for a killed Job 1 of
// run id: no result, class killed. The run stays in progress (report is its
// last job).
func settleKilled(w *world, id int64) error {
	c, ok := w.recordComment()
	if !ok {
		return errors.New("no record comment")
	}
	var ch record.Changes
	ch.SetJobs([]record.JobOutcome{{Job: 1, RunID: id, Failure: "killed"}})
	ch.SetAttempt(1)
	var uerr error
	err := w.fake.EditComment(c.ID, func(body string) string {
		out, err := record.Update(body, ch)
		uerr = err
		return out
	})
	return errors.Join(err, uerr)
}
