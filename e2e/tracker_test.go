//go:build unix

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/demo/demotest"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/report"
)

// TestE2ETrackerDrivesThree is issue 48's acceptance of a tracker
// (docs/tracker.md, "Driving a tracker"), in the trio world
// (demotest.NewTrioWorld). T, a fourth issue, has A, B and C as its native
// sub-issues; alice marks C blocked by B and labels T roadmap:stage. T's
// stage Job ends at once, yielded with class tracker (no model call, no
// record), and its report labels T roadmap:tracker and drives it: A's and
// B's implement Jobs are dispatched (their records name plans), C waits.
// Both runs go at once and hold their disjoint claims at one moment, to
// ready. alice merges B's PR: its close starts the caller's unblock job,
// whose drive dispatches C; C's run, on main as B's merge left it, goes to
// ready (A, ready, gave hello back). alice merges A's PR and C's: each close
// is an unblock run; after the last, T is complete: its label off, closed
// as completed, its status comment saying so. Each run's requests are in
// its verb's table, and each drive's within what the spec gives it.
func TestE2ETrackerDrivesThree(t *testing.T) {
	act := requireAct(t)
	it := newItem(t, act, itemOptions{World: demotest.NewTrioWorld, Latency: 20 * time.Millisecond, WatchTimeout: time.Minute, NoReview: true})
	trio := demotest.Trio(it.w)
	a, b, c := trio[0], trio[1], trio[2]
	it.playCIOn("success", a.Branch, b.Branch, c.Branch)
	it.baselinePushes()
	alice := it.person("alice", "admin")
	wf := it.workflowFile()
	tracked := config.Default().Labels.Tracker

	tr := it.w.Fake.CreateIssue(githubfake.Issue{Title: "Greetings", Author: "alice",
		Body: "Every greeting the module offers: hello, bye and a shout.\n"})
	for _, ti := range trio {
		if err := it.w.Fake.AddSubIssue(tr, ti.Issue); err != nil {
			t.Fatal(err)
		}
	}
	it.logf("tracker T #%d of A #%d %s (%s), B #%d %s (%s), C #%d %s (%s); C waits for B",
		tr, a.Issue, a.Change, a.Package, b.Issue, b.Change, b.Package, c.Issue, c.Change, c.Package)
	alice.markBlocked(c.Issue, b.Issue)
	it.noMoreRuns("after the dependency")

	// T labelled roadmap:stage: its stage Job hands it over, report drives it.
	alice.label(tr, "roadmap:stage")
	takeT := it.takeRun("T stage", wf, "issues")
	if takeT.ev.Number != tr {
		t.Fatalf("GitHub started a run for #%d, want T #%d", takeT.ev.Number, tr)
	}
	ranT := it.runOne(takeT)
	if got := ranT.Jobs[ranT.job("stage")]; got != "success" || ranT.Jobs[ranT.job("report")] != "success" || ranT.ExitCode != 0 {
		t.Fatalf("T's run: stage job %q, act exit %d (jobs %v)", got, ranT.ExitCode, ranT.Jobs)
	}
	reason := fmt.Sprintf("#%d is a tracker (3 sub-issues): roadmap drives its sub-issues, not the tracker itself", tr)
	if typed := failure.TypedLine(failure.ResultYielded, failure.Tracker, reason); !strings.Contains(ranT.Log, typed) {
		t.Errorf("T's stage Job does not end with %q:\n%s", typed, ranT.Log)
	}
	if st := it.w.Replay.Stats(); st.Requests != 0 {
		t.Errorf("the model had %d requests during T's Job, want none", st.Requests)
	}
	if slices.ContainsFunc(it.w.Fake.Comments(tr), func(c githubfake.Comment) bool { return record.HasBlock(c.Body) }) {
		t.Errorf("T has a record comment: a tracker's Job takes no number")
	}
	if !slices.Contains(it.w.Fake.Labels(tr), tracked) {
		t.Errorf("T's labels %v lack %s", it.w.Fake.Labels(tr), tracked)
	}
	it.wantStatus(tr, "0 of 3 sub-issues closed; 2 active (at most 3",
		fmt.Sprintf("| waiting | waiting for #%d |", b.Issue), fmt.Sprintf("<!-- started: %d %d -->", a.Issue, b.Issue))
	ds := it.w.Fake.Dispatches()
	if got, want := dispatched(ds), []string{fmt.Sprintf("#%d implement", a.Issue), fmt.Sprintf("#%d implement", b.Issue)}; !slices.Equal(got, want) {
		t.Fatalf("T's report dispatched %v, want %v", got, want)
	}

	// A and B at once: the model keeps their calls until both hold their
	// claims, which each Job takes before its first call.
	together := it.claimBarrier(6*time.Minute, a, b)
	takeA := it.takeRun("A run", wf, "workflow_dispatch")
	takeB := it.takeRun("B run", wf, "workflow_dispatch")
	if takeA.run.ID != ds[0].RunID || takeB.run.ID != ds[1].RunID {
		t.Fatalf("GitHub started runs %d and %d, want the drive's %d (A) and %d (B)", takeA.run.ID, takeB.run.ID, ds[0].RunID, ds[1].RunID)
	}
	var wg sync.WaitGroup
	ranA, ranB := it.goRun(&wg, takeA, nil), it.goRun(&wg, takeB, nil)
	wg.Wait()
	if !together() {
		t.Errorf("A #%d and B #%d never held their claims (%s, %s) at one moment", a.Issue, b.Issue, a.Package, b.Package)
	}
	if ranA.actRun == nil || ranB.actRun == nil {
		t.FailNow()
	}
	prA, prB := it.wantReady(a, ranA), it.wantReady(b, ranB)
	if n := servedOf(it, c.Change); n != 0 {
		t.Errorf("the model served %d calls of C's group before C started, want none", n)
	}
	if n := len(it.w.Fake.Dispatches()); n != 2 {
		t.Errorf("%d dispatches after A and B ready, want the drive's 2", n)
	}
	it.noMoreRuns("A and B ready, C waiting")

	// alice merges B's PR: #2 closes as hers, and the unblock's drive
	// starts C.
	mergedB := alice.merge(prB)
	unblockB := it.unblockRun("unblock B", b.Issue, alice)
	if want := fmt.Sprintf("roadmap: tracker #%d: sub-issue #%d: started (implement)", tr, c.Issue); !strings.Contains(unblockB.Log, want) {
		t.Errorf("the unblock's log does not say %q:\n%s", want, unblockB.Log)
	}
	ds = it.w.Fake.Dispatches()
	if got, want := dispatched(ds[2:]), []string{fmt.Sprintf("#%d implement", c.Issue)}; !slices.Equal(got, want) {
		t.Fatalf("the unblock dispatched %v, want %v", got, want)
	}
	it.wantStatus(tr, "1 of 3 sub-issues closed; 2 active", fmt.Sprintf("<!-- started: %d %d %d -->", a.Issue, b.Issue, c.Issue))

	// C runs, on main as B's merge left it: A gave hello back at ready.
	takeC := it.takeRun("C run", wf, "workflow_dispatch")
	if takeC.run.ID != ds[2].RunID {
		t.Errorf("GitHub started run %d, want the unblock's %d", takeC.run.ID, ds[2].RunID)
	}
	ranC := it.runOne(takeC)
	prC := it.wantReady(c, ranC)
	if jobs, _ := it.recordOf(c.Issue).Jobs(); len(jobs) != 1 || jobs[0].Result != record.ResultReady {
		t.Errorf("C's implement.jobs = %+v, want one Job, ready (no claim wait)", jobs)
	}
	pullC, _ := it.w.Fake.Issue(prC)
	if _, err := git(t.Context(), "--git-dir", it.w.Remote, "merge-base", "--is-ancestor", mergedB, pullC.Pull.HeadSHA); err != nil {
		t.Errorf("B's merge %s is not an ancestor of C's ready head %s: %v", short(mergedB), short(pullC.Pull.HeadSHA), err)
	}

	// alice merges A's PR, then C's: each close drives T again; the last
	// completes it.
	alice.merge(prA)
	it.unblockRun("unblock A", a.Issue, alice)
	it.wantStatus(tr, "2 of 3 sub-issues closed; 1 active")
	if is, _ := it.w.Fake.Issue(tr); is.State != "open" {
		t.Errorf("T is %s with C open, want open", is.State)
	}
	alice.merge(prC)
	unblockC := it.unblockRun("unblock C", c.Issue, alice)
	if want := fmt.Sprintf("roadmap wake: tracker #%d: complete", tr); !strings.Contains(unblockC.Log, want) {
		t.Errorf("the last unblock's log does not say %q", want)
	}
	it.wantStatus(tr, "**roadmap · tracker complete**: all 3 sub-issues are closed, so roadmap closed this tracker.")
	if is, _ := it.w.Fake.Issue(tr); is.State != "closed" || is.StateReason != "completed" {
		t.Errorf("T at the end: %s (%s), want closed as completed", is.State, is.StateReason)
	}
	if slices.Contains(it.w.Fake.Labels(tr), tracked) {
		t.Errorf("T keeps %s once complete: %v", tracked, it.w.Fake.Labels(tr))
	}
	it.noMoreRuns("T complete")
	if n := len(it.w.Fake.Dispatches()); n != 3 {
		t.Errorf("%d dispatches in all, want the drives' 3", n)
	}
	want := map[int][]string{tr: {"issues labeled"},
		a.Issue: {"dispatch implement", "issues closed"}, b.Issue: {"dispatch implement", "issues closed"}, c.Issue: {"dispatch implement", "issues closed"}}
	if diff := cmp.Diff(want, it.runsByIssue()); diff != "" {
		t.Errorf("the runs GitHub started, by issue (-want +got):\n%s", diff)
	}
	it.checkSpendOf(a.Issue, b.Issue, c.Issue)

	// The requests, run by run, each by its token and checked against its
	// verb's table; each drive's against what the spec gives it.
	counts := it.tokenCounts()
	bounds := map[string]int{
		// report's label on T, then the first drive: A, B and C decided, A
		// and B started.
		"T stage": 1 + driveBound(3, 2, false),
		// Each unblock run lists the blocked items and the trackers.
		"unblock B": 2 + driveBound(1, 1, false), // C decided and started
		"unblock A": 2 + driveBound(0, 0, false),
		"unblock C": 2 + driveBound(0, 0, true),
	}
	var tb strings.Builder
	fmt.Fprintf(&tb, "  %-9s %5s %5s %6s %13s %9s %6s\n", "run", "all", "job", "report", "C's blockers", "dashboard", "bound")
	for _, r := range []string{"T stage", "A run", "B run", "unblock B", "C run", "unblock A", "unblock C"} {
		k := counts[r]
		reads := it.blockerReads(r, c.Issue)
		bound := "-"
		if b, ok := bounds[r]; ok {
			bound = strconv.Itoa(b)
		}
		fmt.Fprintf(&tb, "  %-9s %5d %5d %6d %13d %9d %6s\n", r, k.n, k.implement, k.report, reads, k.dash, bound)
		if k.n > maxRequests {
			t.Errorf("%s made %d counted GitHub requests, want at most %d", r, k.n, maxRequests)
		}
		if reads > maxBlockerReads {
			t.Errorf("%s made %d counted requests to read C's blockers, want at most %d", r, reads, maxBlockerReads)
		}
		if n := it.blockerReads(r, tr); n != 0 {
			t.Errorf("%s made %d requests to read T's blockers, want none (a tracker's Job reads none)", r, n)
		}
	}
	for r, bound := range bounds {
		// T's stage Job's requests are the Job's; the drive is its report's.
		n := counts[r].n
		if r == "T stage" {
			n = counts[r].report
		}
		if n > bound {
			t.Errorf("%s: the drive's run made %d counted requests, want at most %d", r, n, bound)
		}
	}
	if other := counts[""]; other.n+other.dash > 0 {
		t.Errorf("%d counted requests made with no run's token (%+v)", other.n+other.dash, other)
	}
	t.Logf("counted GitHub requests by run:\n%s", tb.String())
}

// driveBound is the most counted requests one drive of a tracker makes
// (report.Drive, docs/tracker.md): the tracker and its sub-issues (2); the
// status comment's read and, when it changed, its write (2); for each
// sub-issue it decides (open, not started before) its blockers' reads (at
// most maxBlockerReads); for each it starts, its record's read and the
// dispatch (2); a complete tracker's label off and its close (2).
func driveBound(decided, started int, complete bool) int {
	n := 2 + 2 + decided*maxBlockerReads + started*2
	if complete {
		n += 2
	}
	return n
}

// runOne runs a taken run alone with a token of its own named as the run,
// its requests split at its Job's end as goRun's (tokenCounts).
func (it *item) runOne(tk *takenRun) *ranRun {
	it.t.Helper()
	var wg sync.WaitGroup
	r := it.goRun(&wg, tk, nil)
	wg.Wait()
	if r.actRun == nil {
		it.t.FailNow()
	}
	return r
}

// claimBarrier holds the model's calls of items' plans until every item
// holds its claim on its package at one moment, or d has passed: Jobs that
// run at once, each claiming before its first call, are then seen holding
// their claims together, however their runs' starts fall. The returned
// func lifts the hold and says whether that moment was seen.
func (it *item) claimBarrier(d time.Duration, items ...demotest.TrioItem) func() bool {
	var seen atomic.Bool
	deadline := time.Now().Add(d)
	it.model.setHold(func(ctx context.Context, body []byte) {
		msg := firstUserMessage(body)
		if !slices.ContainsFunc(items, func(ti demotest.TrioItem) bool { return strings.Contains(msg, `the plan "`+ti.Change+`"`) }) {
			return
		}
		for !seen.Load() && ctx.Err() == nil && time.Now().Before(deadline) {
			h := it.claimHolders()
			if !slices.ContainsFunc(items, func(ti demotest.TrioItem) bool { return h[ti.Package] != ti.Issue }) {
				seen.Store(true)
				it.logf("claims held at one moment: %v", h)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	return func() bool {
		it.model.setHold(nil)
		return seen.Load()
	}
}

// wantStatus wants the tracker's one status comment (report.TrackerMarker,
// by roadmap) to hold each of parts.
func (it *item) wantStatus(tracker int, parts ...string) {
	t := it.t
	t.Helper()
	var bodies []string
	for _, c := range it.w.Fake.Comments(tracker) {
		if c.Author == github.DefaultIdentity && strings.Contains(c.Body, report.TrackerMarker) {
			bodies = append(bodies, c.Body)
		}
	}
	if len(bodies) != 1 {
		t.Errorf("#%d has %d status comments, want 1", tracker, len(bodies))
		return
	}
	for _, p := range parts {
		if !strings.Contains(bodies[0], p) {
			t.Errorf("#%d's status comment lacks %q:\n%s", tracker, p, bodies[0])
		}
	}
}

// dispatched is "#issue phase" of each dispatch.
func dispatched(ds []githubfake.Dispatch) []string {
	var out []string
	for _, d := range ds {
		out = append(out, fmt.Sprintf("#%v %v", d.Inputs["issue"], d.Inputs["phase"]))
	}
	return out
}

// runsByIssue is every run GitHub started, by the issue it was for: a
// dispatch's input issue ("dispatch <phase>"), or the issue of the event
// that started it ("<event> <action>").
func (it *item) runsByIssue() map[int][]string {
	evs := map[int64]githubfake.Event{}
	for _, ev := range it.w.Fake.Events() {
		evs[ev.ID] = ev
	}
	out := map[int][]string{}
	for _, r := range it.w.Fake.Runs() {
		if r.Event == "workflow_dispatch" {
			n, _ := strconv.Atoi(fmt.Sprint(r.Inputs["issue"]))
			out[n] = append(out[n], fmt.Sprintf("dispatch %v", r.Inputs["phase"]))
			continue
		}
		ev := evs[r.EventID]
		out[ev.Number] = append(out[ev.Number], r.Event+" "+ev.Action)
	}
	return out
}
