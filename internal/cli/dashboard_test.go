package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/dashboard"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/items"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// TestDashboardRefresh: records of items in different states on the fake;
// `roadmap dashboard refresh` finds the dashboard by its label, reads every
// record with one list request, and writes one body showing each item in
// its state (the title report wrote kept, an item whose record was not read
// kept, the dashboard's own comments not an item), with the alert the
// configuration's rules raise posted once, mentioning its owner. A second
// refresh with nothing new writes nothing and posts nothing.
func TestDashboardRefresh(t *testing.T) {
	fake := githubfake.New(githubfake.Options{Token: explainToken, Owner: "acme", Repo: "widgets"})
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	cfg := "alerts:\n  owners: [\"@acme/oncall\"]\n  stops_per_day: 2\n"
	if err := os.MkdirAll(filepath.Join(dir, ".github"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, config.DefaultPath), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	ago := func(d time.Duration) int64 { return now.Add(-d).Unix() }
	usd := func(v float64) record.Spend { return record.Spend{USD: v, ModelCalls: 1} }

	// The dashboard as report left it: item 2's line with its title, and
	// item 9, whose record is not read (it has none here: as if not updated
	// in the window).
	before := &dashboard.State{}
	before.Upsert(dashboard.Line{Issue: 2, Title: "Add retry backoff", State: items.Implementing})
	before.Upsert(dashboard.Line{Issue: 9, Title: "Older work", State: items.Implementing,
		Last: &dashboard.LastJob{Phase: "implement", Job: 1, At: now.Add(-30 * time.Hour)}, Updated: now.Add(-30 * time.Hour)})
	dash := fake.CreateIssue(githubfake.Issue{Title: dashboard.Title, Labels: []string{dashboard.Label},
		Body: dashboard.Render(before, dashboard.View{Now: now})})

	staged := func(c *record.Changes, d time.Duration) {
		c.SetStageState("staged")
		c.SetStagePR(100)
		c.SetStageJobs([]record.JobOutcome{{Job: 1, RunID: 1, Result: record.ResultStaged, Spend: usd(0.05), Requests: 4, At: ago(d)}})
	}
	seed := map[int]func(c *record.Changes){
		2: func(c *record.Changes) {
			staged(c, 5*time.Hour)
			c.SetResult(record.ResultReady)
			c.SetSpend(usd(0.35))
			c.SetJobs([]record.JobOutcome{{Job: 1, RunID: 2, Result: record.ResultReady, Spend: usd(0.30), Requests: 12, At: ago(4 * time.Hour)}})
		},
		3: func(c *record.Changes) {
			staged(c, 4*time.Hour)
			c.SetResult(record.ResultStopped)
			c.SetFailure("checks_failed")
			c.SetSpend(usd(0.25))
			c.SetJobs([]record.JobOutcome{{Job: 1, RunID: 3, Result: record.ResultStopped, Failure: "checks_failed", Spend: usd(0.20), Requests: 9, At: ago(3 * time.Hour)}})
		},
		4: func(c *record.Changes) {
			staged(c, 2*time.Hour)
			c.SetResult(record.ResultStopped)
			c.SetFailure("checks_failed")
			c.SetSpend(usd(0.15))
			c.SetJobs([]record.JobOutcome{{Job: 1, RunID: 4, Result: record.ResultStopped, Failure: "checks_failed", Spend: usd(0.10), Requests: 8, At: ago(time.Hour)}})
		},
		5: func(c *record.Changes) {
			staged(c, 6*time.Hour)
			c.SetResult(record.ResultReturned)
			c.SetFailure("needs_input")
			c.SetQuestion("JSON or YAML?")
			c.SetSpend(usd(0.09))
			c.SetJobs([]record.JobOutcome{{Job: 1, RunID: 5, Result: record.ResultReturned, Failure: "needs_input", Spend: usd(0.04), Requests: 6, At: ago(5 * time.Hour)}})
		},
		6: func(c *record.Changes) {
			staged(c, time.Hour)
			c.SetSpend(usd(0.05))
		},
	}
	for n := 2; n <= 6; n++ {
		if got := fake.CreateIssue(githubfake.Issue{Title: "item " + strconv.Itoa(n)}); got != n {
			t.Fatalf("issue %d created as %d", n, got)
		}
		fake.AddComment(n, "alice", "a person's comment")
		var c record.Changes
		seed[n](&c)
		body, err := record.Update("", c)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fake.AddComment(n, github.DefaultIdentity, body); err != nil {
			t.Fatal(err)
		}
	}

	// A record on the dashboard issue itself (someone labelled it for
	// stage): the dashboard is not one of its items.
	{
		var c record.Changes
		staged(&c, time.Hour)
		body, err := record.Update("", c)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fake.AddComment(dash, github.DefaultIdentity, body); err != nil {
			t.Fatal(err)
		}
	}

	refresh := func() dashboardOutput {
		t.Helper()
		var out, errb bytes.Buffer
		environ := []string{"GITHUB_TOKEN=" + explainToken, "GITHUB_API_URL=" + srv.URL, "GITHUB_WORKSPACE=" + dir}
		code := Main(context.Background(), []string{"dashboard", "refresh", "-R", "acme/widgets", "--json"}, environ, strings.NewReader(""), &out, &errb)
		if code != ExitOK {
			t.Fatalf("roadmap dashboard refresh: exit %d\n%s%s", code, out.String(), errb.String())
		}
		var got dashboardOutput
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			t.Fatalf("--json: %v\n%s", err, out.String())
		}
		return got
	}
	count := func(method, endpoint string) int {
		n := 0
		for _, r := range fake.Requests() {
			if r.Method == method && r.Endpoint == method+" "+endpoint {
				n++
			}
		}
		return n
	}
	const (
		list    = "/repos/{owner}/{repo}/issues/comments"
		issue   = "/repos/{owner}/{repo}/issues/{n}"
		comment = "/repos/{owner}/{repo}/issues/{n}/comments"
	)
	alertKey := "stops/checks_failed/repository/24h"

	fake.ResetLog()
	first := refresh()
	if first.Dashboard != dash || first.Items != 5 || !first.Wrote {
		t.Errorf("first refresh: dashboard %d, items %d, wrote %v; want %d, 5, true", first.Dashboard, first.Items, first.Wrote, dash)
	}
	if n := count(http.MethodGet, list); n != 1 {
		t.Errorf("comment list requests = %d, want 1 (11 comments, 100 a page)", n)
	}
	if n := count(http.MethodPatch, issue); n != 1 {
		t.Errorf("dashboard writes = %d, want 1", n)
	}
	if diff := cmp.Diff([]string{alertKey}, first.Fired); diff != "" {
		t.Errorf("alerts fired (-want +got):\n%s", diff)
	}
	is, _ := fake.Issue(dash)
	st, err := dashboard.Parse(is.Body)
	if err != nil {
		t.Fatalf("the dashboard's state block: %v\n%s", err, is.Body)
	}
	states, titles := map[int]items.State{}, map[int]string{}
	for _, l := range st.Items {
		states[l.Issue], titles[l.Issue] = l.State, l.Title
	}
	want := map[int]items.State{2: items.Ready, 3: items.Stopped, 4: items.Stopped, 5: items.NeedsInput, 6: items.Staged, 9: items.Implementing}
	if diff := cmp.Diff(want, states); diff != "" {
		t.Errorf("items on the dashboard (-want +got):\n%s", diff)
	}
	if titles[2] != "Add retry backoff" || titles[9] != "Older work" {
		t.Errorf("titles %v; want report's kept", titles)
	}
	for _, s := range []string{"#2", "#3", "#4", "#5", "#6", "#9", "Add retry backoff", "checks_failed", "🔔 `" + alertKey + "`"} {
		if !strings.Contains(is.Body, s) {
			t.Errorf("the dashboard's body does not show %q:\n%s", s, is.Body)
		}
	}
	cms := fake.Comments(dash)[1:] // the alerts, after the record
	if len(cms) != 1 || !strings.Contains(cms[0].Body, alertKey) || !strings.Contains(cms[0].Body, "@acme/oncall") {
		t.Errorf("alert comments on the dashboard = %+v; want one naming %s and mentioning @acme/oncall", cms, alertKey)
	}

	// A new process, nothing new: reads, no write, no comment. It runs in
	// a later second than the first, so a refresh time stamped into the
	// state block (which keeps seconds) would change the body.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 50*time.Millisecond)))
	fake.ResetLog()
	second := refresh()
	if second.Wrote || len(second.Fired) > 0 || second.Items != 5 {
		t.Errorf("second refresh: wrote %v, fired %v, items %d; want no write, nothing fired, 5", second.Wrote, second.Fired, second.Items)
	}
	if n := count(http.MethodPatch, issue) + count(http.MethodPost, comment); n != 0 {
		t.Errorf("a refresh with nothing new made %d writes, want 0", n)
	}
	if n := count(http.MethodGet, list); n != 1 {
		t.Errorf("comment list requests = %d, want 1", n)
	}
	if after, _ := fake.Issue(dash); after.Body != is.Body {
		t.Error("the body changed on a refresh with nothing new")
	}
}
