package cli

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/adopt"
	"github.com/roadmap-dev/roadmap/internal/dashboard"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
)

// dashboards are the open issues on the fake labelled roadmap:dashboard.
func dashboards(fake *githubfake.Fake) []githubfake.Issue {
	var out []githubfake.Issue
	for n := 1; n < 100; n++ {
		is, ok := fake.Issue(n)
		if ok && is.Pull == nil && is.State == "open" && slices.Contains(is.Labels, dashboard.Label) {
			out = append(out, is)
		}
	}
	return out
}

// dashboardInputs counts the workflow inputs naming issue n as the
// dashboard in text: "dashboard: <n>" followed by the comment, so a
// dashboard: 12 is not counted as 1.
func dashboardInputs(text string, n int) int {
	return strings.Count(text, fmt.Sprintf("dashboard: %d  #", n))
}

// TestInitCreatesDashboard: init opens one dashboard issue with the
// roadmap:dashboard label (created with its colour and description first),
// an empty dashboard in its body, and writes its number into the caller
// (both calls of roadmap.yml and the answer's report) and the wake workflow,
// which refreshes the dashboard; --dry-run opens none and says it would; a
// second init opens none and finds the first; and a repository that has a
// dashboard gets that one.
func TestInitCreatesDashboard(t *testing.T) {
	r := newInitRepo(t, map[string]string{"go.mod": "module example.com/widgets\n"})

	t.Run("dry run opens none", func(t *testing.T) {
		out, _ := r.run("--dry-run")
		if got := dashboards(r.fake); len(got) != 0 {
			t.Fatalf("--dry-run opened %d dashboard issues", len(got))
		}
		if !strings.Contains(out, `would open the dashboard issue "`+dashboard.Title+`"`) {
			t.Errorf("--dry-run does not say it would open the dashboard issue:\n%s", out)
		}
		got := r.json("--dry-run")
		if got.Dashboard.Number != 0 || got.Dashboard.Status != adopt.Created {
			t.Errorf("--dry-run --json dashboard = %+v, want number 0, status created", got.Dashboard)
		}
		for _, req := range r.fake.Requests() {
			if req.Method != "GET" {
				t.Errorf("--dry-run sent %s %s", req.Method, req.Path)
			}
		}
	})

	var n int
	t.Run("first run opens one", func(t *testing.T) {
		got := r.json()
		ds := dashboards(r.fake)
		if len(ds) != 1 {
			t.Fatalf("init opened %d dashboard issues, want 1", len(ds))
		}
		n = ds[0].Number
		if got.Dashboard.Number != n || got.Dashboard.Status != adopt.Created {
			t.Errorf("--json dashboard = %+v, want number %d, status created", got.Dashboard, n)
		}
		if ds[0].Title != dashboard.Title {
			t.Errorf("title %q, want %q", ds[0].Title, dashboard.Title)
		}
		if st, err := dashboard.Parse(ds[0].Body); err != nil || len(st.Items) != 0 {
			t.Errorf("the dashboard's body holds no empty state block: %v\n%s", err, ds[0].Body)
		}
		if !strings.Contains(ds[0].Body, "roadmap keeps this issue") || !strings.Contains(ds[0].Body, "No item yet.") {
			t.Errorf("the dashboard's first body does not say roadmap keeps it, or is not an empty dashboard:\n%s", ds[0].Body)
		}
		if d, ok := r.labels()[dashboard.Label]; !ok || d == "" {
			t.Errorf("label %s: created %v, description %q; want it created with a description", dashboard.Label, ok, d)
		}
		if c := dashboardInputs(r.read(adopt.CallerPath), n); c != 3 {
			t.Errorf("the caller names issue %d as the dashboard %d times, want 3 (both calls of roadmap.yml and the answer's report):\n%s", n, c, r.read(adopt.CallerPath))
		}
		wake := r.read(adopt.WakePath)
		if c := dashboardInputs(wake, n); c != 1 || !strings.Contains(wake, "refresh-dashboard: true") || !strings.Contains(wake, `cron: "17 * * * *"`) {
			t.Errorf("the wake workflow does not name dashboard %d and refresh it hourly:\n%s", n, wake)
		}
		lintInit(t, r.dir)
	})

	t.Run("second run finds it", func(t *testing.T) {
		r.fake.ResetLog()
		got := r.json()
		if ds := dashboards(r.fake); len(ds) != 1 || ds[0].Number != n {
			t.Errorf("after a second init the dashboards are %v, want issue %d alone", ds, n)
		}
		if got.Dashboard.Number != n || got.Dashboard.Status != adopt.Exists || got.Changed {
			t.Errorf("second run: dashboard %+v, changed %v; want number %d, exists, nothing changed", got.Dashboard, got.Changed, n)
		}
		for _, req := range r.fake.Requests() {
			if req.Method != "GET" {
				t.Errorf("a second run sent %s %s", req.Method, req.Path)
			}
		}
	})

	t.Run("an existing dashboard is used", func(t *testing.T) {
		r2 := newInitRepo(t, nil)
		r2.fake.CreateIssue(githubfake.Issue{Title: "unrelated"})
		have := r2.fake.CreateIssue(githubfake.Issue{Title: "our dashboard", Labels: []string{dashboard.Label}})
		got := r2.json()
		if got.Dashboard.Number != have || got.Dashboard.Status != adopt.Exists {
			t.Errorf("dashboard = %+v, want the existing issue %d", got.Dashboard, have)
		}
		if ds := dashboards(r2.fake); len(ds) != 1 {
			t.Errorf("init opened another dashboard: %d of them", len(ds))
		}
		if c := dashboardInputs(r2.read(adopt.CallerPath), have); c != 3 {
			t.Errorf("the caller names issue %d as the dashboard %d times, want 3", have, c)
		}
	})
}
