package faults

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/record"
)

// TestRequestsIndependentOfGroups plays an item's whole life from an issue
// with no plan — stage (its verifier sends round 1 back), stage's report,
// the implement Job killed before its push of the middle group, report on
// the killed Job, the continuation it dispatches, report on the end — for
// plans of 3, 10 and 30 groups, and counts the GitHub requests that count
// against the rate limit (a 304 is free; the job log's download from the
// storage link is not an API request). Each life stays within the budget,
// the counts do not grow with the groups, and no group is run twice: the
// continuation takes the groups the killed Job pushed from git, their
// marks having waited for a write the kill prevented.
func TestRequestsIndependentOfGroups(t *testing.T) {
	if testing.Short() {
		t.Skip("plays three whole lives")
	}
	counts := map[int]int{}
	for _, n := range []int{3, 10, 30} {
		// Stage pushes its two plan rounds first: implement's push of
		// group g is push number 2+g.
		kill := fmt.Sprintf("before push#%d", 2+n/2+1)
		sc := scenario{Name: fmt.Sprintf("%d groups: kill %s", n, kill), Kind: "crash", Branch: "reconcile",
			Expect: expectReady, Stage: true, groups: n, arms: []string{kill}}
		p, err := play(context.Background(), filepath.Join(t.TempDir(), fmt.Sprint(n)), sc, false)
		if err != nil {
			t.Fatal(err)
		}
		l := p.l
		trace := strings.Join(l.trace, "; ")
		if p.st.Result != string(record.ResultReady) || p.st.Group != n {
			t.Fatalf("%d groups: ended %s at group %d, want ready at %d\ntrace: %s", n, p.st.Result, p.st.Group, n, trace)
		}
		if len(l.jobs) < 2 || l.jobs[0].Killed == "" {
			t.Fatalf("%d groups: the kill did not land (jobs %d)\ntrace: %s", n, len(l.jobs), trace)
		}
		if out := check(l, sc, p.st, p.st); out.Repeated != 0 || out.Duplicates != 0 || out.SpendLost != 0 {
			t.Errorf("%d groups: %d groups repeated, %d duplicates, %d tokens lost: %q", n, out.Repeated, out.Duplicates, out.SpendLost, out.Violations)
		}
		var by []string
		for _, r := range l.w.fake.Requests() {
			if r.Status == http.StatusNotModified || strings.HasPrefix(r.Path, "/_logs/") {
				continue
			}
			counts[n]++
			by = append(by, r.Method+" "+r.Path)
		}
		if counts[n] > ItemRequestBudget {
			t.Errorf("%d groups: the item's life cost %d counted requests, want at most %d:\n  %s", n, counts[n], ItemRequestBudget, strings.Join(by, "\n  "))
		}
	}
	if counts[30] != counts[3] {
		t.Errorf("counted requests grow with the plan: %v (groups: requests)", counts)
	}
	t.Logf("counted requests by groups: %v", counts)
}

// TestFreshJobManyComments: a Job handed no record comment id (a person's
// dispatch, a workflow that lost the output) finds the item's record by
// its pointer, not by reading every page of the issue's comments: on an
// issue with 1,000 comments it costs at most 2 counted requests more than
// on one with none. The first Job makes the record (and its pointer); the
// second, fresh, is the one measured.
func TestFreshJobManyComments(t *testing.T) {
	if testing.Short() {
		t.Skip("plays two items' first two Jobs")
	}
	cost := map[int]int{}
	for _, people := range []int{0, 1000} {
		convs, err := conversations(1, nil)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), fmt.Sprint(people))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		w, err := newWorld(dir, convs, false, 1)
		if err != nil {
			t.Fatal(err)
		}
		defer w.close()
		for i := range people {
			if _, err := w.fake.AddComment(w.issue, "bob", fmt.Sprintf("comment %d of the discussion", i+1)); err != nil {
				t.Fatal(err)
			}
		}
		// The world's record comment was posted by the fake, with no
		// pointer: the item's first Job finds it by the list and points
		// at it.
		l := &life{w: w, c: newCrasher(), ctx: context.Background()}
		l.c.on = l.onEffect
		first, err := l.job(1, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		if first.Result.RecordComment == 0 {
			t.Fatalf("%d comments: the first Job found no record: %s", people, first.Log)
		}
		before := len(w.fake.Requests())
		second, err := l.job(2, 2, 0) // fresh: no record comment id
		if err != nil {
			t.Fatal(err)
		}
		if second.Result.RecordComment != first.Result.RecordComment {
			t.Fatalf("%d comments: the fresh Job used record comment %d, the first %d", people, second.Result.RecordComment, first.Result.RecordComment)
		}
		for _, r := range w.fake.Requests()[before:] {
			if r.Status != http.StatusNotModified && !strings.HasPrefix(r.Path, "/_logs/") {
				cost[people]++
				if people > 0 && strings.HasSuffix(r.Path, "/comments") && r.Method == http.MethodGet && strings.Contains(r.Path, fmt.Sprintf("/issues/%d/", w.issue)) {
					t.Errorf("%d comments: the fresh Job listed the issue's comments (%s)", people, r.Path)
				}
			}
		}
	}
	if cost[1000] > cost[0]+2 {
		t.Errorf("a fresh Job on an issue with 1,000 comments cost %d counted requests, with none %d: want at most 2 more", cost[1000], cost[0])
	}
	t.Logf("a fresh Job's counted requests: %v (by the issue's other comments)", cost)
}
