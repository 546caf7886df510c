package claims_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/roadmap-dev/roadmap/internal/claims"
	"github.com/roadmap-dev/roadmap/internal/git"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/kernel"
	"github.com/roadmap-dev/roadmap/internal/plan"
	theworld "github.com/roadmap-dev/roadmap/internal/world"
)

var t0 = time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)

// world is a repository on a local bare remote and the fake GitHub over
// HTTP, which says whether a holder's run still runs.
type world struct {
	t  *testing.T
	tw *theworld.World
	n  int
}

func newWorld(t *testing.T) *world {
	t.Helper()
	tw, err := theworld.New(theworld.Options{Dir: t.TempDir(), Owner: "acme", Repo: "widgets",
		Token: "ghs_claimstesttoken00000000000000000000", Start: t0, Files: map[string]string{"README.md": "# widgets\n"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tw.Close)
	return &world{t: t, tw: tw}
}

// item is one item's Job on a runner of its own: its clone, its options.
func (w *world) item(issue int, run int64) claims.Options {
	w.t.Helper()
	w.n++
	ws, err := w.tw.Workspace("ws-" + strings.Repeat("x", w.n))
	if err != nil {
		w.t.Fatal(err)
	}
	repo, err := git.Open(context.Background(), ws, w.tw.GitEnv())
	if err != nil {
		w.t.Fatal(err)
	}
	gh, err := w.tw.GitHub(nil)
	if err != nil {
		w.t.Fatal(err)
	}
	return claims.Options{Repo: repo, Remote: "origin", Runs: gh, Issue: issue, RunID: run, Job: 1, Now: t0}
}

func (w *world) run(status string) int64 {
	return w.tw.Fake.AddRun(githubfake.Run{WorkflowFile: "roadmap.yml", HeadBranch: "main", Event: "issues", Status: status})
}

// holder is who the remote says holds unit's claim (0: nobody).
func (w *world) holder(unit string) int {
	w.t.Helper()
	sha, err := theworld.Git(w.tw.GitEnv(), w.tw.Remote, "for-each-ref", "--format=%(objectname)", claims.Ref(unit))
	if err != nil {
		w.t.Fatal(err)
	}
	if strings.TrimSpace(sha) == "" {
		return 0
	}
	msg, err := theworld.Git(w.tw.GitEnv(), w.tw.Remote, "log", "-1", "--format=%B", claims.Ref(unit))
	if err != nil {
		w.t.Fatal(err)
	}
	h, ok := claims.ParseNote(msg)
	if !ok {
		w.t.Fatalf("the claim on %s holds a note roadmap does not read: %q", unit, msg)
	}
	return h.Issue
}

// change writes an OpenSpec change whose tasks.md is tasks and loads it.
func change(t *testing.T, tasks string, specs ...string) *plan.Change {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "openspec", "changes", "c")
	files := map[string]string{"proposal.md": "# c\n", "tasks.md": tasks}
	for _, s := range specs {
		files["specs/"+s+"/spec.md"] = "## ADDED Requirements\n"
	}
	if err := theworld.WriteFiles(dir, files); err != nil {
		t.Fatal(err)
	}
	c, err := plan.LoadChange(dir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestClaimsDisjointRunTogether: two items whose plans change disjoint
// units claim at once and both hold all of theirs; two plans that change
// different files of one Go package overlap, and the second waits for the
// first.
func TestClaimsDisjointRunTogether(t *testing.T) {
	w := newWorld(t)
	a := change(t, "## 1. Backoff\n\n- [ ] 1.1 Compute the delay in `internal/webhook/backoff.go`; verify: `go test ./internal/webhook -run TestBackoff`\n", "webhook")
	b := change(t, "## 1. Docs\n\n- [ ] 1.1 Describe it in `docs/retry.md`; verify: `grep -q retry docs/retry.md`\n- [ ] 1.2 Add `cmd/tool/main.go`; verify: `go build ./cmd/tool`\n")
	ua, err := claims.Units(a)
	if err != nil {
		t.Fatal(err)
	}
	ub, err := claims.Units(b)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"internal/webhook", "openspec/specs/webhook/spec.md"}; !cmp.Equal(ua, want) {
		t.Errorf("units of a = %q, want %q", ua, want)
	}
	if want := []string{"cmd/tool", "docs/retry.md"}; !cmp.Equal(ub, want) {
		t.Errorf("units of b = %q, want %q", ub, want)
	}

	oa, ob := w.item(1, w.run("in_progress")), w.item(2, w.run("in_progress"))
	type out struct {
		held []claims.Claimed
		ov   *claims.Overlap
		err  error
	}
	res := make([]out, 2)
	var wg sync.WaitGroup
	for i, c := range []struct {
		o claims.Options
		u []string
	}{{oa, ua}, {ob, ub}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, ov, err := claims.Claim(context.Background(), c.o, c.u)
			res[i] = out{h, ov, err}
		}()
	}
	wg.Wait()
	for i, r := range res {
		if r.err != nil || r.ov != nil {
			t.Fatalf("item %d: claim: %v, overlap %v; disjoint items must both proceed", i+1, r.err, r.ov)
		}
	}
	for _, u := range ua {
		if got := w.holder(u); got != 1 {
			t.Errorf("%s is held by #%d, want #1", u, got)
		}
	}
	for _, u := range ub {
		if got := w.holder(u); got != 2 {
			t.Errorf("%s is held by #%d, want #2", u, got)
		}
	}

	// Another file of item 1's package: the same unit, so item 3 waits.
	c := change(t, "## 1. Jitter\n\n- [ ] 1.1 Add `internal/webhook/jitter.go`; verify: `go vet ./internal/webhook/jitter.go`\n")
	uc, err := claims.Units(c)
	if err != nil {
		t.Fatal(err)
	}
	oc := w.item(3, w.run("in_progress"))
	held, ov, err := claims.Claim(context.Background(), oc, append(uc, "docs/jitter.md"))
	if err != nil {
		t.Fatal(err)
	}
	if ov == nil || ov.Issue != 1 || !cmp.Equal(ov.Units, []string{"internal/webhook"}) {
		t.Fatalf("item 3 (another file of internal/webhook) got held %v, overlap %+v; want waiting for #1 on internal/webhook", held, ov)
	}
	if !strings.HasPrefix(ov.Error(), "waiting for #1") {
		t.Errorf("overlap says %q, want it to start with \"waiting for #1\"", ov.Error())
	}
	if got := w.holder("docs/jitter.md"); got != 0 {
		t.Errorf("item 3 waits and still holds docs/jitter.md (held by #%d): a waiter must hold nothing", got)
	}

	// Release gives back item 1's units only, and twice is harmless.
	for range 2 {
		if err := claims.Release(context.Background(), oa, append(ua, ub...)); err != nil {
			t.Fatal(err)
		}
	}
	for _, u := range ua {
		if got := w.holder(u); got != 0 {
			t.Errorf("%s is still held by #%d after #1 released it", u, got)
		}
	}
	for _, u := range ub {
		if got := w.holder(u); got != 2 {
			t.Errorf("#1's release took %s from #2 (held by #%d now)", u, got)
		}
	}
}

// TestClaimTakenOverFromGoneJob: a unit another item's Job holds is taken
// over when that Job is gone (its run completed or vanished, or it has no
// run and is older than any Job runs), and not while it lives; of two items
// taking over one gone holder's unit at once exactly one wins, and the other
// waits for the winner.
func TestClaimTakenOverFromGoneJob(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(w *world) int64
		age  time.Duration
		gone bool
		why  string
	}{
		{name: "its run is in progress", run: func(w *world) int64 { return w.run("in_progress") }, why: "in_progress"},
		{name: "its run completed", gone: true, why: "has completed (cancelled)",
			run: func(w *world) int64 { id := w.run("in_progress"); _ = w.tw.Fake.FinishRun(id, "cancelled"); return id }},
		{name: "its run vanished", run: func(*world) int64 { return 999999 }, gone: true, why: "is gone"},
		{name: "no run, young", run: func(*world) int64 { return 0 }, age: time.Hour, why: "no run to ask about"},
		{name: "no run, older than any Job", run: func(*world) int64 { return 0 }, age: claims.MaxAge + time.Minute, gone: true, why: "longer than any Job runs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			old := w.item(1, tc.run(w))
			if _, ov, err := claims.Claim(context.Background(), old, []string{"internal/webhook"}); err != nil || ov != nil {
				t.Fatalf("the first holder: %v %v", err, ov)
			}
			var logs []string
			taker := w.item(2, w.run("in_progress"))
			taker.Now = t0.Add(tc.age)
			taker.Logf = func(f string, _ ...any) { logs = append(logs, f) }
			held, ov, err := claims.Claim(context.Background(), taker, []string{"internal/webhook"})
			if err != nil {
				t.Fatal(err)
			}
			if tc.gone {
				if ov != nil || len(held) != 1 || w.holder("internal/webhook") != 2 {
					t.Fatalf("holder gone (%s): got overlap %v, held %v, holder #%d; want it taken over by #2", tc.name, ov, held, w.holder("internal/webhook"))
				}
				if len(logs) != 1 {
					t.Errorf("the takeover was said %d times, want once", len(logs))
				}
				return
			}
			if ov == nil || ov.Issue != 1 || !strings.Contains(ov.Why, tc.why) {
				t.Fatalf("holder live (%s): got overlap %+v, held %v; want waiting for #1 because %q", tc.name, ov, held, tc.why)
			}
			if got := w.holder("internal/webhook"); got != 1 {
				t.Errorf("a live holder's claim moved to #%d", got)
			}
		})
	}

	t.Run("two takeovers race", func(t *testing.T) {
		w := newWorld(t)
		id := w.run("in_progress")
		if _, ov, err := claims.Claim(context.Background(), w.item(1, id), []string{"internal/webhook", "internal/x"}); err != nil || ov != nil {
			t.Fatalf("the first holder: %v %v", err, ov)
		}
		if err := w.tw.Fake.FinishRun(id, "failure"); err != nil {
			t.Fatal(err)
		}
		racers := []claims.Options{w.item(2, w.run("in_progress")), w.item(3, w.run("in_progress"))}
		overlaps := make([]*claims.Overlap, 2)
		errs := make([]error, 2)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range racers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, overlaps[i], errs[i] = claims.Claim(context.Background(), racers[i], []string{"internal/webhook", "internal/x"})
			}()
		}
		close(start)
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		winners := 0
		for i, ov := range overlaps {
			if ov == nil {
				winners++
				continue
			}
			if other := racers[1-i].Issue; ov.Issue != other {
				t.Errorf("#%d waits for #%d, want the winner #%d", racers[i].Issue, ov.Issue, other)
			}
		}
		if winners != 1 {
			t.Fatalf("%d racers took the gone holder's units over, want exactly 1 (overlaps %+v)", winners, overlaps)
		}
		a, b := w.holder("internal/webhook"), w.holder("internal/x")
		if a != b || (a != 2 && a != 3) {
			t.Errorf("units held by #%d and #%d, want both by the one winner", a, b)
		}
	})
}

// TestClaimRenewsOwn: a continuation of the same item (a later Job) holds
// the units its earlier Job left, without waiting for itself.
func TestClaimRenewsOwn(t *testing.T) {
	w := newWorld(t)
	first := w.item(7, w.run("in_progress"))
	if _, ov, err := claims.Claim(context.Background(), first, []string{"a.txt"}); err != nil || ov != nil {
		t.Fatalf("%v %v", err, ov)
	}
	next := w.item(7, w.run("in_progress"))
	next.Job = 2
	held, ov, err := claims.Claim(context.Background(), next, []string{"a.txt"})
	if err != nil || ov != nil || len(held) != 1 {
		t.Fatalf("the item's next Job: held %v, overlap %v, err %v; want a.txt renewed", held, ov, err)
	}
	msg, _ := theworld.Git(w.tw.GitEnv(), w.tw.Remote, "log", "-1", "--format=%B", claims.Ref("a.txt"))
	if h, _ := claims.ParseNote(msg); h.Job != 2 || h.RunID != next.RunID {
		t.Errorf("the renewed claim names %+v, want Job 2 of run %d", h, next.RunID)
	}
}

// TestMaxAgeIsTheLeases: a claim's holder is judged gone by the item
// lease's rule, its age bound included.
func TestMaxAgeIsTheLeases(t *testing.T) {
	if claims.MaxAge != kernel.LeaseMaxAge {
		t.Errorf("claims.MaxAge = %s, kernel.LeaseMaxAge = %s: one rule for a gone holder", claims.MaxAge, kernel.LeaseMaxAge)
	}
}
