//go:build unix

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/roadmap-dev/roadmap/internal/adopt"
	"github.com/roadmap-dev/roadmap/internal/claims"
	"github.com/roadmap-dev/roadmap/internal/demo/demotest"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// claimOwnRequests is what claims cost an item beyond the 30 counted
// requests of its own work (docs/claims.md, "Claim, wait, wake"):
//
//   - the holder's report, waking its waiters: the list of the open issues
//     labelled roadmap:waiting-claim, each waiter's record read, its
//     dispatch and the removal of its label, and the removal of the
//     holder's roadmap:claim-waited: 5 for one waiter;
//   - the waiter's Job that meets the live claim: the read of the holder's
//     run (is its Job alive?), and the two labels, roadmap:waiting-claim on
//     itself and roadmap:claim-waited on the holder: 3.
//
// Each item is held to maxRequests plus the claim's own requests it made.
const (
	wakeRequests = 5
	waitRequests = 3
)

// TestE2ETwoItemsAtOnce: three staged items in one repository
// (demotest.NewTrioWorld). A and B change the disjoint packages hello and bye:
// both are labelled, GitHub starts two runs and they run at once, each
// claiming its units, both to ready. C changes hello, A's package: it is
// labelled while A's Job holds its claim (A's model answers A's first call
// only once C's Job has ended), so C's Job claims nothing, runs no group and
// yields claim_wait with item.waiting_for A. A's report, at ready, wakes C
// (a workflow_dispatch); that run claims hello, now free, and runs to
// ready. Each run has a GITHUB_TOKEN of its own, so the requests are
// counted per item although the runs overlap.
func TestE2ETwoItemsAtOnce(t *testing.T) {
	act := requireAct(t)
	it := newItem(t, act, itemOptions{World: demotest.NewTrioWorld, Latency: 20 * time.Millisecond, WatchTimeout: time.Minute, NoReview: true})
	trio := demotest.Trio(it.w)
	a, b, c := trio[0], trio[1], trio[2]
	it.logf("three staged items: A #%d %s (package %s), B #%d %s (package %s), C #%d %s (package %s)",
		a.Issue, a.Change, a.Package, b.Issue, b.Change, b.Package, c.Issue, c.Change, c.Package)
	it.playCIOn("success", a.Branch, b.Branch, c.Branch)
	it.baselinePushes()
	alice := it.person("alice", "admin")
	label := "roadmap:implement"

	// A's model keeps A's calls until C's first Job has ended: A's Job
	// claims before its first call, so it holds hello while C's Job meets
	// it, however slowly C's run starts. (Were C never to wait, its Job
	// would end anyway and A would go on.)
	cEnded := make(chan struct{})
	var endC sync.Once
	openA := func() { endC.Do(func() { close(cEnded) }) }
	defer openA()
	var heldA atomic.Int32
	it.model.setHold(func(ctx context.Context, body []byte) {
		if !strings.Contains(firstUserMessage(body), `the plan "`+a.Change+`"`) {
			return
		}
		select {
		case <-cEnded:
			return
		default:
		}
		heldA.Add(1)
		select {
		case <-cEnded:
		case <-ctx.Done():
		case <-time.After(8 * time.Minute):
		}
	})
	// Who holds claims, polled from the bare remote while the runs go: A
	// and B must hold theirs at one moment.
	watch := it.watchClaims()

	alice.label(a.Issue, label)
	alice.label(b.Issue, label)
	takeA := it.takeRun("A run 1", it.workflowFile(), "issues")
	takeB := it.takeRun("B run 1", it.workflowFile(), "issues")
	if takeA.ev.Number != a.Issue || takeB.ev.Number != b.Issue {
		t.Fatalf("GitHub started runs for #%d and #%d, want A #%d and B #%d", takeA.ev.Number, takeB.ev.Number, a.Issue, b.Issue)
	}
	var wg sync.WaitGroup
	ranA, ranB, ranC1 := it.goRun(&wg, takeA, nil), it.goRun(&wg, takeB, nil), (*ranRun)(nil)

	// C is labelled once A's Job holds hello.
	if it.waitClaim(a.Package, a.Issue, 6*time.Minute) {
		alice.label(c.Issue, label)
		takeC := it.takeRun("C run 1", it.workflowFile(), "issues")
		if takeC.ev.Number != c.Issue {
			t.Errorf("GitHub started a run for #%d, want C #%d", takeC.ev.Number, c.Issue)
		}
		ranC1 = it.goRun(&wg, takeC, func(ctx context.Context, s *Started, _ int64) {
			defer openA()
			for ctx.Err() == nil {
				if r := (&actRun{Result: s.Snapshot()}); r.job("implement") != "" {
					it.logf("C run 1: the implement job ended (%s); A's model answers now", r.Jobs[r.job("implement")])
					return
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
	wg.Wait()
	openA()
	held := watch()
	if ranA.actRun == nil || ranB.actRun == nil || ranC1 == nil || ranC1.actRun == nil {
		t.FailNow()
	}
	it.logf("A's model held %d of A's calls until C's Job had ended", heldA.Load())

	// A and B at once, both to ready.
	if !slices.ContainsFunc(held, func(h map[int]bool) bool { return h[a.Issue] && h[b.Issue] }) {
		t.Errorf("A #%d and B #%d never held their claims at one moment; holders seen: %v", a.Issue, b.Issue, held)
	}
	for _, x := range []struct {
		ti demotest.TrioItem
		r  *ranRun
	}{{a, ranA}, {b, ranB}} {
		it.wantJobs(x.r.actRun, "success", "success")
		rec := it.recordOf(x.ti.Issue)
		if res, _ := rec.Result(); res != record.ResultReady {
			t.Errorf("#%d (%s) implement.result = %q, want ready:\n%s", x.ti.Issue, x.ti.Change, res, recordText(rec))
		}
		if jobs, _ := rec.Jobs(); len(jobs) != 1 || jobs[0].Result != record.ResultReady {
			t.Errorf("#%d implement.jobs = %+v, want one Job, ready (no wait)", x.ti.Issue, jobs)
		}
		pr, _ := rec.StagePR()
		it.checkReadyPROf(pr, x.ti.Change)
	}

	// C waited for A: no group, claim_wait, the labels, and A's wake.
	it.wantJobs(ranC1.actRun, "success", "success")
	rec := it.recordOf(c.Issue)
	jobs, _ := rec.Jobs()
	if res, _ := rec.Result(); res != record.ResultYielded || len(jobs) != 1 || jobs[0].Failure != string(failure.ClaimWait) {
		t.Fatalf("C #%d after its first run: implement.result %q, jobs %+v; want one Job yielded with %s:\n%s",
			c.Issue, res, jobs, failure.ClaimWait, recordText(rec))
	}
	if n, ok := rec.WaitingFor(); !ok || n != a.Issue {
		t.Errorf("C's item.waiting_for = %d (%v), want A #%d", n, ok, a.Issue)
	}
	if n := servedOf(it, c.Change); n != 0 {
		t.Errorf("the model served %d calls of C's group while C waited, want none", n)
	}
	labelled := map[string]bool{}
	for _, ev := range it.w.Fake.Events() {
		if ev.Name == "issues" && ev.Actor == github.DefaultIdentity {
			labelled[fmt.Sprintf("%s #%d %s", ev.Action, ev.Number, ev.Label)] = true
		}
	}
	for _, want := range []string{
		fmt.Sprintf("labeled #%d %s", c.Issue, claims.Label), fmt.Sprintf("labeled #%d %s", a.Issue, claims.WaitedLabel),
		fmt.Sprintf("unlabeled #%d %s", c.Issue, claims.Label), fmt.Sprintf("unlabeled #%d %s", a.Issue, claims.WaitedLabel),
	} {
		if !labelled[want] {
			t.Errorf("no event %q by roadmap; its label events: %v", want, labelled)
		}
	}
	var wakes []githubfake.Dispatch
	for _, d := range it.w.Fake.Dispatches() {
		if d.Workflow == it.workflowFile() {
			wakes = append(wakes, d)
		}
	}
	if len(wakes) != 1 {
		t.Fatalf("%d dispatches of the caller, want A's report's one wake of C: %+v", len(wakes), wakes)
	}
	cont := it.continuation("C run 2", wakes[0])
	if diff := cmp.Diff(map[string]string{"issue": strconv.Itoa(c.Issue), "attempt": "2", "record-comment": it.recordCommentIDOf(c.Issue)}, cont.inputs); diff != "" {
		t.Errorf("the wake's inputs (-want +got):\n%s", diff)
	}
	it.logf("A's report woke C: run %d with %v", cont.runID, cont.inputs)

	// The wake runs as GitHub would start it; C claims hello, now free.
	takeC2 := it.takeRun("C run 2", it.workflowFile(), "workflow_dispatch")
	if takeC2.run.ID != cont.runID {
		t.Errorf("GitHub started run %d, want the wake's run %d", takeC2.run.ID, cont.runID)
	}
	var wg2 sync.WaitGroup
	ranC2 := it.goRun(&wg2, takeC2, nil)
	wg2.Wait()
	if ranC2.actRun == nil {
		t.FailNow()
	}
	it.wantJobs(ranC2.actRun, "success", "success")
	rec = it.recordOf(c.Issue)
	if res, _ := rec.Result(); res != record.ResultReady {
		t.Errorf("C #%d implement.result = %q, want ready:\n%s", c.Issue, res, recordText(rec))
	}
	var ends []string
	jobs, _ = rec.Jobs()
	for _, j := range jobs {
		ends = append(ends, fmt.Sprintf("%d:%s/%s", j.Job, j.Result, j.Failure))
	}
	if got, want := strings.Join(ends, " "), "1:yielded/claim_wait 2:ready/"; got != want {
		t.Errorf("C's implement.jobs = %s, want %s", got, want)
	}
	if _, ok := rec.WaitingFor(); ok {
		t.Errorf("C's record still says item.waiting_for after it ran")
	}
	pr, _ := rec.StagePR()
	it.checkReadyPROf(pr, c.Change)
	for _, ti := range trio {
		if ls := it.w.Fake.Labels(ti.Issue); slices.Contains(ls, claims.Label) || slices.Contains(ls, claims.WaitedLabel) {
			t.Errorf("#%d keeps a claim label at the end: %v", ti.Issue, ls)
		}
	}
	if refs, err := git(t.Context(), "--git-dir", it.w.Remote, "for-each-ref", claims.Namespace); err != nil || strings.TrimSpace(refs) != "" {
		t.Errorf("claims left on the remote after every item ended ready (%v):\n%s", err, refs)
	}
	if n := len(it.w.Fake.Dispatches()); n != 1 {
		t.Errorf("%d dispatches in all, want the one wake", n)
	}
	it.noMoreRuns("after all three ready")
	it.checkSpendOf(a.Issue, b.Issue, c.Issue)

	// The requests, item by item, each run by its token.
	counts := it.tokenCounts()
	type bill struct {
		ti    demotest.TrioItem
		runs  []string
		claim int // the claim's own requests this item made
	}
	bills := []bill{{a, []string{"A run 1"}, wakeRequests}, {b, []string{"B run 1"}, 0}, {c, []string{"C run 1", "C run 2"}, waitRequests}}
	var tb strings.Builder
	fmt.Fprintf(&tb, "  %-6s %-44s %5s %9s %6s\n", "item", "runs (implement+report)", "item", "dashboard", "bound")
	for _, x := range bills {
		n, dash := 0, 0
		var parts []string
		for _, r := range x.runs {
			n += counts[r].n
			dash += counts[r].dash
			parts = append(parts, fmt.Sprintf("%d+%d", counts[r].implement, counts[r].report))
			if counts[r].dash > 2*maxDashboardRequests {
				t.Errorf("%s made %d counted requests on the dashboard issue, want at most %d (its two jobs)", r, counts[r].dash, 2*maxDashboardRequests)
			}
		}
		bound := maxRequests + x.claim
		fmt.Fprintf(&tb, "  #%-5d %-44s %5d %9d %6d\n", x.ti.Issue, strings.Join(x.runs, "+")+" ("+strings.Join(parts, "+")+")", n, dash, bound)
		if n > bound {
			t.Errorf("#%d (%s) made %d counted GitHub requests, want at most %d (%d and the claim's own %d)", x.ti.Issue, x.ti.Change, n, bound, maxRequests, x.claim)
		}
	}
	if other := counts[""]; other.n+other.dash > 0 {
		t.Errorf("%d counted requests made with no run's token (%+v)", other.n+other.dash, other)
	}
	t.Logf("counted GitHub requests by item:\n%s", tb.String())
}

// firstUserMessage is an OpenAI chat request's first user message.
func firstUserMessage(body []byte) string {
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(body, &req) != nil {
		return ""
	}
	for _, m := range req.Messages {
		if m.Role == "user" {
			var s string
			if json.Unmarshal(m.Content, &s) == nil {
				return s
			}
			return string(m.Content)
		}
	}
	return ""
}

// servedOf counts the model's calls served of the plan change's group.
func servedOf(it *item, change string) int {
	n := 0
	for _, s := range it.w.Replay.Stats().Served {
		if s.Conversation == change {
			n++
		}
	}
	return n
}

// goRun runs a taken run in a goroutine, at once with others, with a
// GITHUB_TOKEN of its own named as the run (so its requests are counted by
// it, tokenCounts) and out of the phases. The returned ranRun is filled
// when wg is done; its actRun stays nil when the run failed to run (the
// test has failed then).
func (it *item) goRun(wg *sync.WaitGroup, tk *takenRun, during func(ctx context.Context, s *Started, runID int64)) *ranRun {
	tk.tr.token = it.runToken(tk.tr.name)
	tk.tr.unbooked = true
	out := &ranRun{}
	wg.Add(1)
	go func() {
		defer wg.Done()
		*out = *it.runTaken(tk, func(ctx context.Context, s *Started, runID int64) {
			var inner sync.WaitGroup
			if during != nil {
				inner.Add(1)
				go func() {
					defer inner.Done()
					during(ctx, s, runID)
				}()
			}
			// The implement (or stage) job's end splits the run's
			// requests: that job's before it, report's after (report
			// starts with a build of the binary).
			for ctx.Err() == nil && !it.noteJobEnd(tk.tr.name, &actRun{Result: s.Snapshot()}) {
				time.Sleep(50 * time.Millisecond)
			}
			inner.Wait()
		})
	}()
	return out
}

// noteJobEnd notes when run's implement or stage job ended, once r (a
// snapshot of it) shows it ended; false while it has not.
func (it *item) noteJobEnd(run string, r *actRun) bool {
	stage := r.job("stage") != ""
	if !stage && r.job("implement") == "" {
		return false
	}
	it.mu.Lock()
	defer it.mu.Unlock()
	if it.implementEnds == nil {
		it.implementEnds, it.stageRuns = map[string]time.Time{}, map[string]bool{}
	}
	it.implementEnds[run], it.stageRuns[run] = time.Now(), stage
	return true
}

// runToken is a GITHUB_TOKEN of a run's own, which the fake knows as the
// workflow's (github-actions[bot]) and logs with name.
func (it *item) runToken(name string) string {
	tok := "ghs_e2e" + strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, name)
	tok += strings.Repeat("0", max(40-len(tok), 1))
	it.w.Fake.AddIdentity(tok, githubfake.Identity{Login: github.DefaultIdentity, Kind: githubfake.WorkflowToken, Name: name})
	return tok
}

// tokenCount is one run token's counted requests: the item's (its Job's,
// implement's or stage's, and report's), and those on the dashboard issue.
type tokenCount struct{ n, implement, report, dash int }

// tokenCounts counts the fake's requests by the name of the token that
// made them (tokenCount; "" for a token with no name), as book counts a
// phase's: a person's own and the free ones (304s, log blobs, git) left
// out. A run's requests before its implement job ended are implement's
// (stage's for a stage run, stageRuns), those after report's (a run in
// runVerbs: all its verb's), and each must be one its job's verb may make
// (internal/adopt). implement counts the Job's, of either phase.
func (it *item) tokenCounts() map[string]tokenCount {
	dashComments := map[string]bool{}
	if it.dashboard > 0 {
		for _, c := range it.w.Fake.Comments(it.dashboard) {
			dashComments[strconv.FormatInt(c.ID, 10)] = true
		}
	}
	it.mu.Lock()
	persons, ends, verbs, stages := it.persons, maps.Clone(it.implementEnds), maps.Clone(it.runVerbs), maps.Clone(it.stageRuns)
	it.mu.Unlock()
	out := map[string]tokenCount{}
	for _, r := range it.w.Fake.Requests() {
		if persons[r.Login] || notAPI(r.Path) {
			continue
		}
		verb := "implement"
		if stages[r.TokenName] {
			verb = "stage"
		}
		if v, ok := verbs[r.TokenName]; ok {
			verb = v
		} else if end, ok := ends[r.TokenName]; !ok || r.Time.After(end) {
			verb = "report"
		}
		if r.Endpoint != "" && !adopt.Allows(verb, r.Endpoint) {
			it.t.Errorf("%s: the %s job called %s, which internal/adopt's table of %s's calls lacks", r.TokenName, verb, r.Endpoint, verb)
		}
		c := out[r.TokenName]
		switch {
		case r.Status == http.StatusNotModified:
		case it.onDashboard(r.Path, dashComments):
			c.dash++
		default:
			c.n++
			switch verb {
			case "implement", "stage":
				c.implement++
			case "report":
				c.report++
			}
		}
		out[r.TokenName] = c
	}
	return out
}

// waitClaim waits until issue holds unit's claim on the bare remote; false
// (and the test failed) when it does not within d.
func (it *item) waitClaim(unit string, issue int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if h := it.claimHolders(); h[unit] == issue {
			it.logf("#%d holds the claim on %s (%s)", issue, unit, claims.Ref(unit))
			return true
		}
		time.Sleep(200 * time.Millisecond)
	}
	it.t.Errorf("#%d did not claim %s within %s; claims: %v", issue, unit, d, it.claimHolders())
	return false
}

// claimHolders reads the claims on the bare remote: unit to the holder's
// issue, from each claim's note.
func (it *item) claimHolders() map[string]int {
	ctx := context.Background()
	out, err := git(ctx, "--git-dir", it.w.Remote, "for-each-ref", "--format=%(refname)", claims.Namespace)
	if err != nil {
		return nil
	}
	held := map[string]int{}
	for _, ref := range strings.Fields(out) {
		msg, err := git(ctx, "--git-dir", it.w.Remote, "log", "-1", "--format=%B", ref)
		if err != nil {
			continue // given back between the listing and the read
		}
		if h, ok := claims.ParseNote(msg); ok {
			held[h.Unit] = h.Issue
		}
	}
	return held
}

// watchClaims polls the claims until the returned func is called, which
// returns each distinct set of holding issues seen.
func (it *item) watchClaims() func() []map[int]bool {
	ctx, stop := context.WithCancel(context.Background())
	var seen []map[int]bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		keys := map[string]bool{}
		for ctx.Err() == nil {
			set := map[int]bool{}
			for _, issue := range it.claimHolders() {
				set[issue] = true
			}
			var ks []string
			for n := range set {
				ks = append(ks, strconv.Itoa(n))
			}
			sort.Strings(ks)
			if k := strings.Join(ks, ","); len(set) > 0 && !keys[k] {
				keys[k] = true
				seen = append(seen, set)
				it.logf("claims held by #%s", strings.Join(ks, ", #"))
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return func() []map[int]bool {
		stop()
		<-done
		return seen
	}
}

// recordCommentIDOf is issue n's record comment's id.
func (it *item) recordCommentIDOf(n int) string {
	it.t.Helper()
	for _, c := range it.w.Fake.Comments(n) {
		if c.Author == github.DefaultIdentity && record.HasBlock(c.Body) {
			return strconv.FormatInt(c.ID, 10)
		}
	}
	it.t.Fatalf("issue #%d has no record comment", n)
	return ""
}

// checkSpendOf wants the records' spend of issues, summed, to be what the
// replay model served, every request served.
func (it *item) checkSpendOf(issues ...int) {
	t := it.t
	t.Helper()
	var sum record.Spend
	for _, n := range issues {
		rec := it.recordOf(n)
		s, ok := rec.Spend()
		if !ok {
			t.Errorf("#%d's record has no implement.spend:\n%s", n, recordText(rec))
			continue
		}
		sum = sum.Add(record.Spend{TokensIn: s.TokensIn, TokensOut: s.TokensOut, ModelCalls: s.ModelCalls})
	}
	st := it.w.Replay.Stats()
	want := record.Spend{TokensIn: st.TokensIn, TokensOut: st.TokensOut, ModelCalls: st.Calls}
	if sum != want {
		t.Errorf("the records' implement.spend sums to %+v, want what the model served: %+v", sum, want)
	}
	if st.Errors != 0 || st.Requests != st.Calls {
		t.Errorf("replay model: %d requests, %d served, %d errors; want every request served", st.Requests, st.Calls, st.Errors)
	}
	it.logf("spend: the %d records sum to %d tokens in, %d out, %d calls = served", len(issues), sum.TokensIn, sum.TokensOut, sum.ModelCalls)
}
