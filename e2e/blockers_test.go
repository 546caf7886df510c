//go:build unix

package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/demo/demotest"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// maxBlockerReads bounds the counted requests one look at a waiting item's
// blockers makes (docs/tracker.md, "At most 2 counted requests per waiting
// item"): GitHub's dependencies, and one GraphQL query for the body's
// references they do not hold.
const maxBlockerReads = 2

// TestE2EBlockedThenUnblocked is issue 48's acceptance of blockers
// (docs/tracker.md, "Blockers"), in the trio world
// (demotest.NewTrioWorld): alice marks B (#2) blocked by A (#1) with
// GitHub's issue dependencies and labels both. A's run goes to ready; B's
// Job ends at once, yielded with class blocked, with roadmap:blocked on #2
// and item.blocked_by "#1" in its record: no model call, no push. alice
// merges A's ready PR, whose body says "Closes #1.": GitHub closes #1 as
// her act and starts the caller on issues closed; its unblock job (roadmap
// wake --unblock-only) dispatches B's Job, and that run, on main as the
// merge left it, takes B to ready on code that holds A's change.
func TestE2EBlockedThenUnblocked(t *testing.T) {
	act := requireAct(t)
	it := newItem(t, act, itemOptions{World: demotest.NewTrioWorld, Latency: 20 * time.Millisecond, WatchTimeout: time.Minute, NoReview: true})
	trio := demotest.Trio(it.w)
	a, b := trio[0], trio[1]
	it.logf("A #%d %s (package %s), B #%d %s (package %s); B waits for A", a.Issue, a.Change, a.Package, b.Issue, b.Change, b.Package)
	it.playCIOn("success", a.Branch, b.Branch)
	it.baselinePushes()
	alice := it.person("alice", "admin")
	blocked := config.Default().Labels.Blocked
	wf := it.workflowFile()

	// B is blocked by A in GitHub's issue dependencies, as alice marks it
	// in the web UI: an issue_dependencies event, which starts no run.
	alice.markBlocked(b.Issue, a.Issue)
	it.noMoreRuns("after the dependency")

	// Both labelled: two runs at once, each with a token of its own.
	alice.label(a.Issue, "roadmap:implement")
	alice.label(b.Issue, "roadmap:implement")
	takeA := it.takeRun("A run 1", wf, "issues")
	takeB := it.takeRun("B run 1", wf, "issues")
	if takeA.ev.Number != a.Issue || takeB.ev.Number != b.Issue {
		t.Fatalf("GitHub started runs for #%d and #%d, want A #%d and B #%d", takeA.ev.Number, takeB.ev.Number, a.Issue, b.Issue)
	}
	var wg sync.WaitGroup
	ranA, ranB := it.goRun(&wg, takeA, nil), it.goRun(&wg, takeB, nil)
	wg.Wait()
	if ranA.actRun == nil || ranB.actRun == nil {
		t.FailNow()
	}

	// A ready.
	prA := it.wantReady(a, ranA)

	// B waits for A: its Job yields with class blocked, with no mark and
	// no number (the record keeps no implement.result and no Job line),
	// the label and item.blocked_by; no model call, no work branch,
	// nothing dispatched.
	it.wantJobs(ranB.actRun, "success", "success")
	waiting := fmt.Sprintf("waiting for #%d", a.Issue)
	if typed := failure.TypedLine(failure.ResultYielded, failure.Blocked, waiting); !strings.Contains(ranB.Log, typed) {
		t.Errorf("B's Job does not end with %q:\n%s", typed, ranB.Log)
	}
	recB := it.recordOf(b.Issue)
	if by, _ := recB.BlockedBy(); by != "#"+strconv.Itoa(a.Issue) {
		t.Fatalf("B's item.blocked_by = %q, want #%d:\n%s", by, a.Issue, recordText(recB))
	}
	if res, set := recB.Result(); set {
		t.Errorf("B's blocked Job left implement.result %q, want no mark", res)
	}
	if jobs, _ := recB.Jobs(); len(jobs) != 0 {
		t.Errorf("B's blocked Job left implement.jobs %+v, want no number", jobs)
	}
	if c := it.w.Fake.Comments(b.Issue); !slices.ContainsFunc(c, func(c githubfake.Comment) bool {
		return record.HasBlock(c.Body) && strings.Contains(c.Body, waiting)
	}) {
		t.Errorf("B's record comment does not say %q", waiting)
	}
	if !slices.Contains(it.w.Fake.Labels(b.Issue), blocked) {
		t.Errorf("B's labels %v lack %s", it.w.Fake.Labels(b.Issue), blocked)
	}
	if n := servedOf(it, b.Change); n != 0 {
		t.Errorf("the model served %d calls of B's group while B was blocked, want none", n)
	}
	if sp, _ := recB.Spend(); sp.ModelCalls != 0 || sp.TokensIn != 0 {
		t.Errorf("B's implement.spend after its blocked Job = %+v, want none", sp)
	}
	if ref, err := git(t.Context(), "--git-dir", it.w.Remote, "for-each-ref", "refs/heads/"+b.Branch); err != nil || strings.TrimSpace(ref) != "" {
		t.Errorf("B's work branch %s is on the remote after its blocked Job (%v): %s", b.Branch, err, ref)
	}
	if d := it.w.Fake.Dispatches(); len(d) != 0 {
		t.Errorf("A's and B's reports dispatched %+v, want nothing", d)
	}
	it.noMoreRuns("A ready, B blocked")

	// alice merges A's PR: GitHub closes #1 as hers, and starts the caller.
	merged := alice.merge(prA)
	unblock := it.unblockRun("unblock", a.Issue, alice)
	if want := fmt.Sprintf("roadmap wake: issue #%d (implement): dispatched", b.Issue); !strings.Contains(unblock.Log, want) {
		t.Errorf("the unblock job's log does not say %q:\n%s", want, unblock.Log)
	}
	ds := it.w.Fake.Dispatches()
	if len(ds) != 1 || ds[0].Workflow != wf || fmt.Sprint(ds[0].Inputs["issue"]) != strconv.Itoa(b.Issue) || fmt.Sprint(ds[0].Inputs["phase"]) != "implement" {
		t.Fatalf("the unblock dispatched %+v, want one implement Job of B #%d on %s", ds, b.Issue, wf)
	}
	if slices.Contains(it.w.Fake.Labels(b.Issue), blocked) {
		t.Errorf("B keeps %s after the unblock dispatched it: %v", blocked, it.w.Fake.Labels(b.Issue))
	}
	it.logf("the unblock dispatched B: run %d with %v", ds[0].RunID, ds[0].Inputs)

	// B's Job runs as GitHub starts it, on main as the merge left it.
	takeB2 := it.takeRun("B run 2", wf, "workflow_dispatch")
	if takeB2.run.ID != ds[0].RunID {
		t.Errorf("GitHub started run %d, want the unblock's run %d", takeB2.run.ID, ds[0].RunID)
	}
	var wg2 sync.WaitGroup
	ranB2 := it.goRun(&wg2, takeB2, nil)
	wg2.Wait()
	if ranB2.actRun == nil {
		t.FailNow()
	}
	prB := it.wantReady(b, ranB2)
	recB = it.recordOf(b.Issue)
	if by, ok := recB.BlockedBy(); ok {
		t.Errorf("B's record keeps item.blocked_by %q after its blocker closed", by)
	}
	if slices.Contains(it.w.Fake.Labels(b.Issue), blocked) {
		t.Errorf("B ends ready with %s: %v", blocked, it.w.Fake.Labels(b.Issue))
	}
	pullB, _ := it.w.Fake.Issue(prB)
	head := pullB.Pull.HeadSHA
	// A's change is its package as the merge left it on main (hello/hello.go
	// is on main from the start: the package's doc comment, no Hello).
	tree := func(rev string) string {
		out, err := git(t.Context(), "--git-dir", it.w.Remote, "rev-parse", rev+":"+a.Package)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(out)
	}
	if before, after, atB := tree(merged+"^1"), tree(merged), tree(head); after == before || atB != after {
		t.Errorf("package %s: tree %s before A's merge, %s after it, %s at B's ready head %s; want B's to be the merge's, A's change",
			a.Package, short(before), short(after), short(atB), short(head))
	}
	if src, err := git(t.Context(), "--git-dir", it.w.Remote, "show", head+":hello/hello.go"); err != nil || !strings.Contains(src, "func Hello") {
		t.Errorf("hello/hello.go at B's ready head %s has no Hello (%v):\n%s", short(head), err, src)
	}
	if _, err := git(t.Context(), "--git-dir", it.w.Remote, "merge-base", "--is-ancestor", merged, head); err != nil {
		t.Errorf("A's merge %s is not an ancestor of B's ready head %s: %v", short(merged), short(head), err)
	}
	if n := len(it.w.Fake.Dispatches()); n != 1 {
		t.Errorf("%d dispatches in all, want the unblock's one", n)
	}
	it.noMoreRuns("after both ready")
	it.checkSpendOf(a.Issue, b.Issue)

	// The requests, run by run, each by its token; the blocker reads of
	// each look at B: its two Jobs' and the unblock's.
	counts := it.tokenCounts()
	var tb strings.Builder
	fmt.Fprintf(&tb, "  %-8s %5s %13s %9s\n", "run", "all", "blocker reads", "dashboard")
	for _, r := range []string{"A run 1", "B run 1", "unblock", "B run 2"} {
		reads := it.blockerReads(r, b.Issue)
		fmt.Fprintf(&tb, "  %-8s %5d %13d %9d\n", r, counts[r].n, reads, counts[r].dash)
		if r != "A run 1" && (reads == 0 || reads > maxBlockerReads) {
			t.Errorf("%s made %d counted requests to read B's blockers, want 1 to %d", r, reads, maxBlockerReads)
		}
		if counts[r].n > maxRequests {
			t.Errorf("%s made %d counted GitHub requests, want at most %d", r, counts[r].n, maxRequests)
		}
	}
	// A has no blocker, and its issue read says so: no read at all.
	if reads := it.blockerReads("A run 1", a.Issue); reads != 0 {
		t.Errorf("A's Job made %d requests to read A's blockers, want none (A has none)", reads)
	}
	// The unblock's own with one waiting item: the list, its blockers (A,
	// closed: its dependency and the query for the pull requests that
	// close A), and for a met item the read of its record, its dispatch and
	// the removal of its label; then the list of the trackers roadmap
	// drives (none here).
	if n, bound := counts["unblock"].n, 1+maxBlockerReads+3+1; n > bound {
		t.Errorf("the unblock run made %d counted requests for one waiting item, want at most %d", n, bound)
	}
	if other := counts[""]; other.n+other.dash > 0 {
		t.Errorf("%d counted requests made with no run's token (%+v)", other.n+other.dash, other)
	}
	t.Logf("counted GitHub requests by run:\n%s", tb.String())
}

// runAlone runs a taken run with no other at once, with a token of its own
// named as the run, whose every request is verb's (tokenCounts): the
// caller's unblock job runs wake.
func (it *item) runAlone(tk *takenRun, verb string) *ranRun {
	it.t.Helper()
	tk.tr.token = it.runToken(tk.tr.name)
	tk.tr.unbooked = true
	it.mu.Lock()
	if it.runVerbs == nil {
		it.runVerbs = map[string]string{}
	}
	it.runVerbs[tk.tr.name] = verb
	it.mu.Unlock()
	return it.runTaken(tk, nil)
}

// wantReady wants r, trio item ti's run, to have taken ti to ready: both
// jobs green, implement.result ready and its PR ready (checkReadyPROf). It
// returns the PR.
func (it *item) wantReady(ti demotest.TrioItem, r *ranRun) int {
	t := it.t
	t.Helper()
	it.wantJobs(r.actRun, "success", "success")
	rec := it.recordOf(ti.Issue)
	if res, _ := rec.Result(); res != record.ResultReady {
		t.Fatalf("#%d (%s) implement.result = %q, want ready:\n%s", ti.Issue, ti.Change, res, recordText(rec))
	}
	pr, _ := rec.StagePR()
	it.checkReadyPROf(pr, ti.Change)
	return pr
}

// unblockRun takes the caller's run GitHub starts on by's close of issue
// n, which must be closed as completed, and runs it alone with a token
// named name (runAlone): the unblock job alone, which runs wake, must
// succeed.
func (it *item) unblockRun(name string, n int, by *person) *ranRun {
	t := it.t
	t.Helper()
	if is, _ := it.w.Fake.Issue(n); is.State != "closed" || is.StateReason != "completed" {
		t.Fatalf("#%d: %s (%s), want closed as completed", n, is.State, is.StateReason)
	}
	tk := it.takeRun(name, it.workflowFile(), "issues")
	if tk.ev.Action != "closed" || tk.ev.Number != n || tk.ev.Actor != by.login {
		t.Fatalf("%s: GitHub started the caller on issues %s of #%d by %s, want closed of #%d by %s", name, tk.ev.Action, tk.ev.Number, tk.ev.Actor, n, by.login)
	}
	r := it.runAlone(tk, "wake")
	if got := r.Jobs[r.job("unblock")]; got != "success" || r.ExitCode != 0 {
		t.Fatalf("%s: unblock job %q, act exit %d (jobs %v)", name, got, r.ExitCode, r.Jobs)
	}
	if len(r.Jobs) != 1 {
		t.Errorf("%s ran more than the unblock job: %v", name, r.Jobs)
	}
	return r
}

// blockerReads counts the counted requests a run (by its token's name)
// made to read issue n's blockers: its GitHub dependencies, and the GraphQL
// queries of the states of issues (github.(*Client).IssueStates, whose
// query names the client's own repository "home"), which the body's
// references and the closing pull requests of a closed dependency ask
// for. A query names the blockers, not the issue they block, so it counts
// for n only in a run that read n's dependencies: a run that read none
// read no blockers of n. (A run that looks at more than one waiting item
// would have each one's queries counted for every one of them.)
func (it *item) blockerReads(run string, n int) int {
	path := fmt.Sprintf("/issues/%d/dependencies/blocked_by", n)
	deps, queries := 0, 0
	for _, r := range it.w.Fake.Requests() {
		if r.TokenName != run || r.Status == http.StatusNotModified {
			continue
		}
		switch {
		case strings.HasSuffix(r.Path, path):
			deps++
		case r.Endpoint == "POST /graphql" && strings.Contains(r.Body, "home: repository("):
			queries++
		}
	}
	if deps == 0 {
		return 0
	}
	return deps + queries
}
