package githubfake

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestIssueDependencies: an issue's issue_dependencies_summary counts open
// blockers apart from all of them, over REST and GraphQL; a change over the
// API is an issue_dependencies event; deleting a blocker unblocks; a GitHub
// without the feature answers 404 and carries no summary.
func TestIssueDependencies(t *testing.T) {
	h := newHarness(t, Options{})
	n := h.f.CreateIssue(Issue{Title: "blocked"})
	a, b := h.f.CreateIssue(Issue{Title: "a"}), h.f.CreateIssue(Issue{Title: "b"})
	for _, blocker := range []int{a, b} {
		if err := h.f.AddBlockedBy(n, blocker); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.f.AddBlockedBy(n, n); err == nil {
		t.Error("AddBlockedBy: an issue blocked by itself was accepted")
	}
	h.f.CloseIssue(a, "completed")
	summary := func(num int) map[string]any {
		t.Helper()
		_, data := h.do(t, "GET", fmt.Sprintf("/repos/acme/widgets/issues/%d", num), "")
		return decode[map[string]any](t, data)["issue_dependencies_summary"].(map[string]any)
	}
	want := map[string]any{"blocked_by": 1.0, "total_blocked_by": 2.0, "blocking": 0.0, "total_blocking": 0.0}
	if diff := cmp.Diff(want, summary(n)); diff != "" {
		t.Errorf("the blocked issue's summary (-want +got):\n%s", diff)
	}
	want = map[string]any{"blocked_by": 0.0, "total_blocked_by": 0.0, "blocking": 1.0, "total_blocking": 1.0}
	if diff := cmp.Diff(want, summary(b)); diff != "" {
		t.Errorf("the open blocker's summary (-want +got):\n%s", diff)
	}
	q, _ := json.Marshal(map[string]any{"query": fmt.Sprintf(`{r0: repository(owner: "acme", name: "widgets"){i%d: issue(number: %d){issueDependenciesSummary{blockedBy totalBlockedBy}}}}`, n, n)})
	_, data := h.do(t, "POST", "/graphql", string(q))
	gq := decode[map[string]any](t, data)
	wantQ := map[string]any{"data": map[string]any{"r0": map[string]any{fmt.Sprintf("i%d", n): map[string]any{
		"issueDependenciesSummary": map[string]any{"blockedBy": 1.0, "totalBlockedBy": 2.0}}}}}
	if diff := cmp.Diff(wantQ, gq); diff != "" {
		t.Errorf("GraphQL (-want +got):\n%s", diff)
	}

	// Over the API, a change is an event.
	c, _ := h.f.Issue(h.f.CreateIssue(Issue{Title: "c"}))
	if resp, _ := h.do(t, "POST", fmt.Sprintf("/repos/acme/widgets/issues/%d/dependencies/blocked_by", n), fmt.Sprintf(`{"issue_id": %d}`, c.ID)); resp.StatusCode != 201 {
		t.Fatalf("add over the API: %d", resp.StatusCode)
	}
	evs := h.f.Events()
	if len(evs) != 1 || evs[0].Name != "issue_dependencies" || evs[0].Action != "blocked_by_added" || evs[0].Number != n || evs[0].Blocking != c.Number {
		t.Errorf("events %+v, want one issue_dependencies blocked_by_added of #%d by #%d", evs, n, c.Number)
	}

	h.f.DeleteIssue(b)
	if is, _ := h.f.Issue(n); !cmp.Equal(is.BlockedBy, []int{a, c.Number}) {
		t.Errorf("after deleting #%d, blocked by %v, want [%d %d]", b, is.BlockedBy, a, c.Number)
	}

	off := newHarness(t, Options{NoIssueDependencies: true})
	m := off.f.CreateIssue(Issue{Title: "x"})
	if resp, _ := off.do(t, "GET", fmt.Sprintf("/repos/acme/widgets/issues/%d/dependencies/blocked_by", m), ""); resp.StatusCode != 404 {
		t.Errorf("dependencies off: %d, want 404", resp.StatusCode)
	}
	if _, data := off.do(t, "GET", fmt.Sprintf("/repos/acme/widgets/issues/%d", m), ""); decode[map[string]any](t, data)["issue_dependencies_summary"] != nil {
		t.Error("dependencies off: the issue carries issue_dependencies_summary")
	}
}
