package implement_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/claims"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/report"
	theworld "github.com/roadmap-dev/roadmap/internal/world"
)

// claimHolder is who holds unit's claim on the remote (0: nobody).
func (w *world) claimHolder(unit string) int {
	w.t.Helper()
	sha, err := theworld.Git(gitEnv(), w.remote, "for-each-ref", "--format=%(objectname)", claims.Ref(unit))
	if err != nil {
		w.t.Fatal(err)
	}
	if strings.TrimSpace(sha) == "" {
		return 0
	}
	msg, err := theworld.Git(gitEnv(), w.remote, "log", "-1", "--format=%B", claims.Ref(unit))
	if err != nil {
		w.t.Fatal(err)
	}
	h, _ := claims.ParseNote(msg)
	return h.Issue
}

// TestClaimOverlapWaitsAndWakes: another item's live Job holds a unit this
// item's plan changes. This item's Job holds nothing (the unit it had
// claimed before meeting the overlap is given back), runs no group, yields
// claim_wait with item.waiting_for naming the holder, and its record
// comment's first line says "waiting for #N". When the holder ends ready
// and gives its claims back, its report dispatches the waiter, whose next
// Job claims, runs to ready and gives its own claims back.
func TestClaimOverlapWaitsAndWakes(t *testing.T) {
	w := newWorld(t, 2, "")
	w.fake.AddWorkflow("roadmap.yml")
	ctx := context.Background()

	// The holder: issue #other, whose Job (run in progress) holds
	// greeting-2.txt, the second of this plan's units.
	other := w.fake.CreateIssue(githubfake.Issue{Title: "Reword greetings", Body: "Reword them.", Author: "alice"})
	holderRun := w.activeRun("issues")
	if _, err := w.fake.AddComment(other, github.DefaultIdentity, fmt.Sprintf("**roadmap** · implementing\n\n<!-- roadmap:record v1\nimplement.attempt: 1\nimplement.jobs: [{\"job\":1,\"run_id\":%d}]\n-->\n", holderRun)); err != nil {
		t.Fatal(err)
	}
	hj := w.newJob(w.conversations())
	holder := claims.Options{Repo: hj.opts.Repo, Remote: hj.opts.Remote, Runs: hj.gh, Issue: other, RunID: holderRun, Job: 1, Now: t0}
	if _, ov, err := claims.Claim(ctx, holder, []string{"greeting-2.txt"}); err != nil || ov != nil {
		t.Fatalf("the holder's claim: %v %v", err, ov)
	}

	waiter := w.newJob(w.conversations())
	res := waiter.run()
	want := fmt.Sprintf("waiting for #%d", other)
	if res.Result != record.ResultYielded || res.Failure != "claim_wait" || !strings.HasPrefix(res.Reason, want) {
		t.Fatalf("the waiter ended %s/%s (%s), want yielded/claim_wait %q…\n%s", res.Result, res.Failure, res.Reason, want, waiter.log.String())
	}
	if n := len(waiter.model.Requests()); n != 0 {
		t.Errorf("the waiter made %d model calls, want 0: no group runs while waiting", n)
	}
	if h := w.claimHolder("greeting-1.txt"); h != 0 {
		t.Errorf("the waiter left greeting-1.txt claimed (by #%d): a waiting item holds nothing", h)
	}
	if n, ok := w.record().WaitingFor(); !ok || n != other {
		t.Errorf("item.waiting_for = %d, %v; want %d", n, ok, other)
	}
	c, _ := w.recordComment()
	// Not "a continuation goes on": none is dispatched until #other ends.
	if first, _, _ := strings.Cut(c.Body, "\n"); !strings.HasPrefix(strings.TrimPrefix(first, "**roadmap** · "), want) {
		t.Errorf("the record comment's first line is %q, want it to start %q", first, want)
	}
	if !slices.Contains(w.fake.Labels(w.issue), claims.Label) {
		t.Errorf("the waiter's labels %v lack %s, which the holder's report lists", w.fake.Labels(w.issue), claims.Label)
	}
	if n := len(w.fake.Dispatches()); n != 0 {
		t.Fatalf("%d dispatches before the holder ended, want none", n)
	}
	if !slices.Contains(w.fake.Labels(other), claims.WaitedLabel) {
		t.Errorf("the holder #%d's labels %v lack %s: its report would not look for waiters", other, w.fake.Labels(other), claims.WaitedLabel)
	}

	// The holder ends ready: its Job gives its claims back, its report
	// wakes the items waiting for it.
	if err := claims.Release(ctx, holder, []string{"greeting-2.txt"}); err != nil {
		t.Fatal(err)
	}
	out, err := report.Run(ctx, report.Options{Issue: other, GitHub: hj.gh, JobResult: "success", Result: string(record.ResultReady),
		Attempt: 1, RunID: holderRun, Workflow: "roadmap.yml", Ref: "main", Clock: w.clock, Mask: w.base.Masker.Mask})
	if err != nil {
		t.Fatalf("the holder's report: %v", err)
	}
	if !slices.Equal(out.Woken, []int{w.issue}) {
		t.Errorf("the holder's report woke %v, want [%d]", out.Woken, w.issue)
	}
	ds := w.fake.Dispatches()
	if len(ds) != 1 || ds[0].Inputs["issue"] != fmt.Sprint(w.issue) || ds[0].Inputs["attempt"] != "2" {
		t.Fatalf("dispatches %+v, want one of issue %d, Job 2", ds, w.issue)
	}
	if slices.Contains(w.fake.Labels(other), claims.WaitedLabel) {
		t.Errorf("the holder keeps %s after waking its waiters", claims.WaitedLabel)
	}
	if slices.Contains(w.fake.Labels(w.issue), claims.Label) {
		t.Errorf("the woken item keeps %s: a second report would dispatch it again", claims.Label)
	}

	// The waiter's next Job claims its units and runs to ready.
	next := w.newJob(w.conversations())
	next.opts.Attempt = 2
	res = next.runWithGreenCI()
	if res.Result != record.ResultReady {
		t.Fatalf("the woken Job ended %s/%s (%s), want ready\n%s", res.Result, res.Failure, res.Reason, next.log.String())
	}
	if !strings.Contains(next.log.String(), "claims on greeting-1.txt, greeting-2.txt") {
		t.Errorf("the woken Job's log does not say it claimed its units:\n%s", next.log.String())
	}
	if _, ok := w.record().WaitingFor(); ok {
		t.Error("item.waiting_for is still in the record after the item took its claims")
	}
	for _, u := range []string{"greeting-1.txt", "greeting-2.txt"} {
		if h := w.claimHolder(u); h != 0 {
			t.Errorf("%s is still claimed by #%d after the item ended ready", u, h)
		}
	}
}
