package tracker

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/roadmap-dev/roadmap/internal/blockers"
)

// TestBlockerClosedBeforeItsPRMerged: a blocker is met when it is closed as
// completed and, where pull requests close it, one of them is merged. A
// person closes A by hand while the pull request that closes it ("Closes
// #A") is open: the item still waits for A, saying why; the pull request
// merged, A is met. A blocker closed with no pull request naming it is
// taken at its word, and one whose only pull request was closed unmerged
// is waited for. Each read is at most two counted requests.
func TestBlockerClosedBeforeItsPRMerged(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	a := w.issue("A", "")
	b := w.issue("B", "")
	c := w.issue("C", "")
	pr := w.fake.CreatePullRequest("fix-a", "main", "Fix A", fmt.Sprintf("Closes #%d.", a), false)
	prC := w.fake.CreatePullRequest("fix-c", "main", "Fix C", fmt.Sprintf("Fixes #%d", c), false)
	item := w.issue("item", fmt.Sprintf("Blocked by #%d and #%d", b, c))
	if err := w.fake.AddBlockedBy(item, a); err != nil {
		t.Fatal(err)
	}
	w.close(a, "completed")
	w.close(b, "completed")
	w.close(c, "completed")
	w.close(prC, "") // closed unmerged

	decide := func() blockers.Verdict {
		t.Helper()
		is, err := w.gh.Issue(ctx, item)
		if err != nil {
			t.Fatal(err)
		}
		before := w.gh.Requests()
		states, err := BlockerStates(ctx, w.gh, is, BlockerRead{})
		if err != nil {
			t.Fatal(err)
		}
		if n := w.gh.Requests().Sub(before).Counted(); n > 2 {
			t.Errorf("the read cost %d counted requests, want at most 2", n)
		}
		return blockers.Decide(blockers.Ref{Repo: w.gh.FullName(), Number: item}, states, blockers.Options{})
	}
	v := decide()
	ref := func(n int) blockers.Ref { return blockers.Ref{Number: n} }
	if v.Met || !cmp.Equal(v.Waiting, []blockers.Ref{ref(a), ref(c)}) || !cmp.Equal(v.Unmerged, []blockers.Ref{ref(a), ref(c)}) {
		t.Fatalf("A closed by hand with its PR open, C's PR closed unmerged: met %v, waiting %v, unmerged %v; want A and C waited for, B met",
			v.Met, v.Waiting, v.Unmerged)
	}
	if why := blockers.UnmergedWhy(ref(a)); !strings.Contains(why, "no pull request that closes it is merged") {
		t.Errorf("the reason a person reads: %q", why)
	}

	// The pull request merged (by a person, as GitHub takes it).
	req, _ := http.NewRequest(http.MethodPut, fmt.Sprintf("%s/repos/acme/widgets/pulls/%d/merge", w.url, pr), strings.NewReader("{}"))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("merge #%d: %s", pr, resp.Status)
	}
	v = decide()
	if !cmp.Equal(v.Waiting, []blockers.Ref{ref(c)}) {
		t.Errorf("A's pull request merged: waiting %v, want only C (its pull request closed unmerged)", v.Waiting)
	}
}
