package tracker

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/redact"
)

const token = "ghs_trackertesttoken00000000000000000000"

// world is the fake GitHub over HTTP and the real client on it.
type world struct {
	t    *testing.T
	fake *githubfake.Fake
	gh   *github.Client
	url  string // the fake's base URL
}

func newWorld(t *testing.T, opts ...githubfake.Options) *world {
	t.Helper()
	o := githubfake.Options{Token: token, Owner: "acme", Repo: "widgets"}
	if len(opts) > 0 {
		o.MaxSubIssues = opts[0].MaxSubIssues
	}
	fake := githubfake.New(o)
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	gh, err := github.New(github.Options{BaseURL: srv.URL + "/", Token: token, Owner: "acme", Repo: "widgets",
		// Fresh connections keep the request counts exact (docs/github.md).
		HTTPClient: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}},
		Masker:     redact.New(redact.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	return &world{t: t, fake: fake, gh: gh, url: srv.URL}
}

func (w *world) issue(title, body string) int {
	return w.fake.CreateIssue(githubfake.Issue{Title: title, Body: body})
}

func (w *world) sub(parent, child int) {
	w.t.Helper()
	if err := w.fake.AddSubIssue(parent, child); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) close(n int, reason string) {
	w.t.Helper()
	if err := w.fake.CloseIssue(n, reason); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) check(n int) Result {
	w.t.Helper()
	r, err := Check(context.Background(), w.gh, n)
	if err != nil {
		w.t.Fatalf("Check(#%d): %v", n, err)
	}
	return r
}

// states is each child's name and state, in order: "#3 open".
func states(r Result) []string {
	var out []string
	for _, c := range r.Children {
		out = append(out, fmt.Sprintf("%s %s", strings.Join(c.Path[1:], ">"), c.State))
	}
	return out
}

func printed(t *testing.T, r Result) string {
	t.Helper()
	var b strings.Builder
	if err := Print(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestTrackerStatus(t *testing.T) {
	t.Run("one open child is named and the tracker is not complete", func(t *testing.T) {
		w := newWorld(t)
		tr := w.issue("tracker", "")
		a, b := w.issue("first", ""), w.issue("second, still open", "")
		w.sub(tr, a)
		w.sub(tr, b)
		w.close(a, "completed")
		r := w.check(tr)
		want := []string{fmt.Sprintf("#%d done", a), fmt.Sprintf("#%d open", b)}
		if diff := cmp.Diff(want, states(r)); diff != "" {
			t.Errorf("children (-want +got):\n%s", diff)
		}
		if r.Complete || r.Open != 1 || r.Done != 1 {
			t.Errorf("complete %v, open %d, done %d; want false, 1, 1", r.Complete, r.Open, r.Done)
		}
		out := printed(t, r)
		if !strings.Contains(out, fmt.Sprintf("open          #%d        second, still open", b)) ||
			!strings.Contains(out, fmt.Sprintf("not complete: open #%d", b)) {
			t.Errorf("the output does not name the open child:\n%s", out)
		}
	})

	t.Run("all closed is complete", func(t *testing.T) {
		w := newWorld(t)
		tr := w.issue("tracker", "")
		for i := range 3 {
			c := w.issue(fmt.Sprintf("child %d", i), "")
			w.sub(tr, c)
			w.close(c, "completed")
		}
		r := w.check(tr)
		if !r.Complete || r.Done != 3 || r.Open != 0 {
			t.Errorf("complete %v, done %d, open %d; want true, 3, 0\n%s", r.Complete, r.Done, r.Open, printed(t, r))
		}
		if out := printed(t, r); !strings.Contains(out, "complete: no child is open") {
			t.Errorf("verdict line missing:\n%s", out)
		}
	})

	t.Run("closed as not planned is dropped, not done", func(t *testing.T) {
		w := newWorld(t)
		tr := w.issue("tracker", "")
		a, b, c := w.issue("done", ""), w.issue("not planned", ""), w.issue("a duplicate", "")
		for _, n := range []int{a, b, c} {
			w.sub(tr, n)
		}
		w.close(a, "completed")
		w.close(b, "not_planned")
		w.close(c, "duplicate")
		r := w.check(tr)
		want := []string{fmt.Sprintf("#%d done", a), fmt.Sprintf("#%d dropped", b), fmt.Sprintf("#%d dropped", c)}
		if diff := cmp.Diff(want, states(r)); diff != "" {
			t.Errorf("children (-want +got):\n%s", diff)
		}
		if !r.Complete || r.Dropped != 2 || r.Done != 1 {
			t.Errorf("complete %v, dropped %d, done %d; want true, 2, 1", r.Complete, r.Dropped, r.Done)
		}
	})

	t.Run("130 native sub-issues: paginated, one request per 100", func(t *testing.T) {
		// GitHub stops a parent at 100 sub-issues; the fake is told to
		// allow more so the list runs past one page.
		w := newWorld(t, githubfake.Options{MaxSubIssues: 200})
		tr := w.issue("tracker", "")
		var open []string
		for i := range 130 {
			c := w.issue(fmt.Sprintf("child %d", i), "")
			w.sub(tr, c)
			if i == 3 || i == 117 {
				open = append(open, fmt.Sprintf("#%d open", c))
				continue
			}
			w.close(c, "completed")
		}
		r := w.check(tr)
		if len(r.Children) != 130 || r.Open != 2 || r.Done != 128 || r.Complete {
			t.Fatalf("%d children, %d open, %d done, complete %v; want 130, 2, 128, false", len(r.Children), r.Open, r.Done, r.Complete)
		}
		var got []string
		for _, s := range states(r) {
			if strings.HasSuffix(s, " open") {
				got = append(got, s)
			}
		}
		if diff := cmp.Diff(open, got); diff != "" {
			t.Errorf("open children (-want +got):\n%s", diff)
		}
		// The tracker (1) and its sub-issues in pages of 100 (2).
		if r.Requests != 3 {
			t.Errorf("%d requests, want 3: the issue and two pages of sub-issues", r.Requests)
		}
		if n := w.fake.CountByEndpoint()["GET /repos/{owner}/{repo}/issues/{n}/sub_issues"]; n != 2 {
			t.Errorf("the fake served %d pages of sub-issues, want 2", n)
		}
	})

	t.Run("100 sub-issues and 30 more in the task list", func(t *testing.T) {
		w := newWorld(t)
		tr := w.issue("tracker", "")
		// GitHub holds 100 sub-issues a parent: a tracker past the limit
		// lists the rest in its body.
		var list strings.Builder
		for i := range 130 {
			c := w.issue(fmt.Sprintf("child %d", i), "")
			if i < 100 {
				w.sub(tr, c)
			} else {
				fmt.Fprintf(&list, "- [ ] #%d\n", c)
			}
			if i != 77 && i != 120 {
				w.close(c, "completed")
			}
		}
		if err := w.fake.SetIssueBody(tr, "alice", list.String()); err != nil {
			t.Fatal(err)
		}
		r := w.check(tr)
		if len(r.Children) != 130 || r.Open != 2 || r.Done != 128 || r.Complete {
			t.Fatalf("%d children, %d open, %d done, complete %v; want 130, 2, 128, false", len(r.Children), r.Open, r.Done, r.Complete)
		}
		// The tracker (1), its sub-issues (one page of 100), the task
		// list's 30 states (one GraphQL query).
		if r.Requests != 3 {
			t.Errorf("%d requests, want 3 (issue, one page of sub-issues, one GraphQL query)", r.Requests)
		}
	})

	t.Run("past 100 native sub-issues the list is paginated", func(t *testing.T) {
		// A parent GitHub let grow past 100 (an older limit, or a
		// migration): every page is read.
		w := newWorld(t)
		tr := w.issue("tracker", "")
		mids := []int{}
		for range 2 {
			m := w.issue("half", "")
			w.sub(tr, m)
			mids = append(mids, m)
		}
		for i := range 130 {
			c := w.issue(fmt.Sprintf("leaf %d", i), "")
			w.sub(mids[i%2], c)
			if i != 129 {
				w.close(c, "completed")
			}
		}
		w.close(mids[0], "completed")
		w.close(mids[1], "completed")
		r := w.check(tr)
		if len(r.Children) != 132 || r.Open != 1 {
			t.Fatalf("%d children, %d open; want 132, 1", len(r.Children), r.Open)
		}
		// 1 tracker + 1 page under it + 1 page under each half (65 each).
		if r.Requests != 4 {
			t.Errorf("%d requests, want 4", r.Requests)
		}
	})

	t.Run("a nested tracker with an open sub-issue: not complete, the path names both", func(t *testing.T) {
		w := newWorld(t)
		tr := w.issue("epic", "")
		mid := w.issue("feature", "")
		leaf := w.issue("the last task", "")
		w.sub(tr, mid)
		w.sub(mid, leaf)
		w.close(mid, "completed") // closed too early: its child is still open
		r := w.check(tr)
		want := []string{fmt.Sprintf("#%d done", mid), fmt.Sprintf("#%d>#%d open", mid, leaf)}
		if diff := cmp.Diff(want, states(r)); diff != "" {
			t.Errorf("children (-want +got):\n%s", diff)
		}
		if r.Complete {
			t.Errorf("complete with an open grandchild")
		}
		if out := printed(t, r); !strings.Contains(out, fmt.Sprintf("not complete: open #%d → #%d", mid, leaf)) {
			t.Errorf("the verdict does not name the path:\n%s", out)
		}
	})

	t.Run("task-list references are read, unioned with sub-issues, once each", func(t *testing.T) {
		w := newWorld(t)
		a, b, c := w.issue("native", ""), w.issue("listed", ""), w.issue("both", "")
		tr := w.issue("tracker", fmt.Sprintf("- [x] #%d\n- [ ] acme/widgets#%d\n* [ ] Port it (#%d)\n- [ ] #999\n- [ ] other/repo#4\n", c, b, b))
		w.sub(tr, a)
		w.sub(tr, c)
		w.close(a, "completed")
		w.close(c, "completed")
		r := w.check(tr)
		want := []string{fmt.Sprintf("#%d done", a), fmt.Sprintf("#%d done", c), fmt.Sprintf("#%d open", b),
			"#999 unverifiable", "other/repo#4 unverifiable"}
		if diff := cmp.Diff(want, states(r)); diff != "" {
			t.Errorf("children (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"sub_issue", "task_list"}, r.Children[1].Via); diff != "" {
			t.Errorf("via of #%d (-want +got):\n%s", c, diff)
		}
		if r.Requests != 3 {
			t.Errorf("%d requests, want 3", r.Requests)
		}
	})

	t.Run("a deleted issue or a pull request in the task list is unverifiable and does not block", func(t *testing.T) {
		w := newWorld(t)
		a, gone := w.issue("done", ""), w.issue("deleted later", "")
		// A pull request's number is not an issue: GitHub's issue(number:)
		// does not resolve it.
		pr := w.fake.CreatePullRequest("topic", "main", "a pull request", "", false)
		tr := w.issue("tracker", fmt.Sprintf("- [x] #%d\n- [ ] #%d\n- [ ] #%d\n", a, gone, pr))
		w.close(a, "completed")
		w.fake.DeleteIssue(gone)
		r := w.check(tr)
		if !r.Complete || r.Unverifiable != 2 {
			t.Errorf("complete %v, unverifiable %d; want true, 2\n%s", r.Complete, r.Unverifiable, printed(t, r))
		}
	})

	t.Run("a cycle of task lists is reported and not followed", func(t *testing.T) {
		w := newWorld(t)
		tr := w.issue("a", "")
		b := w.issue("b", fmt.Sprintf("- [ ] #%d\n", tr))
		w.fake.SetIssueBody(tr, "alice", fmt.Sprintf("- [ ] #%d\n", b))
		r := w.check(tr)
		if len(r.Children) != 1 || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "cycle") {
			t.Errorf("children %v, notes %v; want #%d alone and a cycle note", states(r), r.Notes, b)
		}
	})

	t.Run("nesting deeper than 8 levels is not walked", func(t *testing.T) {
		w := newWorld(t)
		chain := []int{w.issue("level 0", "")}
		for i := 1; i <= 10; i++ {
			n := w.issue(fmt.Sprintf("level %d", i), "")
			// Task lists: GitHub's own sub-issues stop at 8 levels.
			w.fake.SetIssueBody(chain[i-1], "alice", fmt.Sprintf("- [ ] #%d\n", n))
			chain = append(chain, n)
		}
		r := w.check(chain[0])
		if len(r.Children) != MaxDepth {
			t.Errorf("%d children, want %d", len(r.Children), MaxDepth)
		}
		if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "8 levels deep") {
			t.Errorf("notes %v", r.Notes)
		}
	})

	t.Run("no children is not complete", func(t *testing.T) {
		w := newWorld(t)
		r := w.check(w.issue("empty", "nothing to track"))
		if r.Complete {
			t.Errorf("an issue with no children is complete")
		}
	})
}
