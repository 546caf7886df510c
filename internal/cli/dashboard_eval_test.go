package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/dashboard"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/items"
)

// TestDashboardEval: `roadmap dashboard eval` posts the suites' reports to
// the dashboard issue on the fake GitHub (the real go-github client over
// HTTP): one read and one write, the Evals section showing each suite's
// score, floor, verdict, cases, tokens, spend, model and start, the items
// kept; a post of the same reports writes nothing; a post of a new run
// replaces the section whole; a report that is missing shows as no report
// and the command exits 1 after posting, as it does for a suite below its
// floor; an issue without the dashboard label is refused unwritten; and the
// token, even inside a report, never reaches the body.
func TestDashboardEval(t *testing.T) {
	fake := githubfake.New(githubfake.Options{Token: explainToken, Owner: "acme", Repo: "widgets"})
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	now := time.Now().UTC()
	before := &dashboard.State{}
	before.Upsert(dashboard.Line{Issue: 2, Title: "Add retry backoff", State: items.Implementing})
	dash := fake.CreateIssue(githubfake.Issue{Title: dashboard.Title, Labels: []string{dashboard.Label},
		Body: dashboard.Render(before, dashboard.View{Now: now, DayBudgetUSD: 50})})
	other := fake.CreateIssue(githubfake.Issue{Title: "a person's issue", Body: "keep me"})

	write := func(name, text string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// As `roadmap eval … --json` prints them; the stage report's model
	// holds the token, as a hostile or careless report could.
	gates := write("gates.json", `{"cases":[{"name":"a","score":1},{"name":"b","score":0.95}],"score":0.975,"floor":0.98,"passed":false,"suite":"gates","started":"2026-12-06T05:00:00Z"}`)
	stage := write("stage.json", `{"cases":[{"name":"s1","score":1,"spend":{"tokens_in":8400,"tokens_out":1050,"usd":0.00189,"model_calls":7}},`+
		`{"name":"s2","score":0.4,"spend":{"tokens_in":1600,"tokens_out":950,"usd":0.0011,"model_calls":3}}],`+
		`"score":0.7,"floor":0.7,"passed":true,"suite":"stage","provider":"github-models","model":"`+explainToken+`","started":"2026-12-06T05:01:02Z"}`)
	implement := write("implement.json", `{"cases":[{"name":"i1","score":1,"spend":{"tokens_in":100,"tokens_out":20,"usd":0.5}}],`+
		`"score":1,"floor":0.95,"passed":true,"suite":"implement","provider":"github-models","model":"openai/gpt-4o-mini","started":"2026-12-06T05:03:00Z"}`)

	post := func(issue int, from ...string) (int, dashboardEvalOutput, string) {
		t.Helper()
		args := []string{"dashboard", "eval", "-R", "acme/widgets", "--json", "--dashboard", itoa(issue)}
		for _, f := range from {
			args = append(args, "--from", f)
		}
		var out, errb bytes.Buffer
		environ := []string{"GITHUB_TOKEN=" + explainToken, "GITHUB_API_URL=" + srv.URL, "GITHUB_WORKSPACE=" + dir,
			"GITHUB_SERVER_URL=https://github.example", "GITHUB_REPOSITORY=acme/widgets", "GITHUB_RUN_ID=777"}
		code := Main(context.Background(), args, environ, strings.NewReader(""), &out, &errb)
		var got dashboardEvalOutput
		if out.Len() > 0 {
			if err := json.Unmarshal(out.Bytes(), &got); err != nil {
				t.Fatalf("--json: %v\n%s", err, out.String())
			}
		}
		if strings.Contains(out.String()+errb.String(), explainToken) {
			t.Errorf("the token reached the output:\n%s%s", out.String(), errb.String())
		}
		return code, got, errb.String()
	}
	writes := func() int {
		n := 0
		for _, r := range fake.Requests() {
			if r.Method != http.MethodGet {
				n++
			}
		}
		return n
	}
	body := func(n int) string {
		is, _ := fake.Issue(n)
		if strings.Contains(is.Body, explainToken) {
			t.Errorf("the token was written into issue #%d's body", n)
		}
		return is.Body
	}

	t.Run("first post", func(t *testing.T) {
		fake.ResetLog()
		code, got, stderr := post(dash, gates, stage, implement)
		if code != ExitFindings {
			t.Errorf("exit %d, want %d: gates is below its floor\n%s", code, ExitFindings, stderr)
		}
		if !got.Wrote || got.Requests != 2 || writes() != 1 {
			t.Errorf("wrote %v, %d requests, %d writes; want one read and one write", got.Wrote, got.Requests, writes())
		}
		b := body(dash)
		for _, want := range []string{
			"## Evals",
			"[the run](https://github.example/acme/widgets/actions/runs/777)",
			"| gates | 0.9750 | 0.9800 | ❌ below the floor | 2 | 0 / 0 | $0.00 | — (no model) | 2026-12-06 05:00 UTC |",
			"| stage | 0.7000 | 0.7000 | ✅ yes | 2 | 10000 / 2000 | $0.0030 | `masked` (github-models) | 2026-12-06 05:01 UTC |",
			"| implement | 1.0000 | 0.9500 | ✅ yes | 1 | 100 / 20 | $0.50 | `openai/gpt-4o-mini` (github-models) | 2026-12-06 05:03 UTC |",
			"Add retry backoff",
		} {
			if !strings.Contains(b, want) {
				t.Errorf("the dashboard does not show %q:\n%s", want, b)
			}
		}
		st, err := dashboard.Parse(b)
		if err != nil || st.Evals == nil || len(st.Evals.Suites) != 3 || len(st.Items) != 1 {
			t.Fatalf("the state block: %+v, %v; want three suites and the item kept", st, err)
		}
	})

	t.Run("the same reports again write nothing", func(t *testing.T) {
		fake.ResetLog()
		_, got, _ := post(dash, gates, stage, implement)
		if got.Wrote || writes() != 0 {
			t.Errorf("wrote %v, %d writes; want none", got.Wrote, writes())
		}
	})

	t.Run("a new run replaces the section", func(t *testing.T) {
		gates2 := write("gates.json", `{"cases":[{"name":"a","score":1}],"score":1,"floor":0.98,"passed":true,"suite":"gates","started":"2026-12-13T05:00:00Z"}`)
		fake.ResetLog()
		code, got, stderr := post(dash, gates2, filepath.Join(dir, "missing", "stage.json"))
		if code != ExitFindings {
			t.Errorf("exit %d, want %d: the stage report is missing\n%s", code, ExitFindings, stderr)
		}
		if !got.Wrote || writes() != 1 {
			t.Errorf("wrote %v, %d writes; want one", got.Wrote, writes())
		}
		b := body(dash)
		if strings.Count(b, "## Evals") != 1 || strings.Contains(b, "| implement |") || strings.Contains(b, "2026-12-06 05:00 UTC") {
			t.Errorf("the old run's section is not replaced whole:\n%s", b)
		}
		for _, want := range []string{"| gates | 1.0000 | 0.9800 | ✅ yes | 1 |", "| stage | — | — | ❌ no report: open "} {
			if !strings.Contains(b, want) {
				t.Errorf("the dashboard does not show %q:\n%s", want, b)
			}
		}
		code, _, _ = post(dash, gates2)
		if code != ExitOK {
			t.Errorf("every suite passed: exit %d, want 0", code)
		}
		// A suite named by the token, in the report and as the file's name.
		named := write("named.json", `{"cases":[],"score":1,"floor":0,"passed":true,"suite":"`+explainToken+`"}`)
		if code, _, stderr := post(dash, named, filepath.Join(dir, explainToken+".json")); code != ExitFindings || !strings.Contains(body(dash), "| masked | 1.0000 |") {
			t.Errorf("suites named by the token: exit %d, want %d and shown as masked\n%s\n%s", code, ExitFindings, stderr, body(dash))
		}
	})

	t.Run("an issue without the label is refused", func(t *testing.T) {
		fake.ResetLog()
		code, _, stderr := post(other, gates)
		if code != ExitInternal || !strings.Contains(stderr, "no "+dashboard.Label+" label") {
			t.Errorf("exit %d, want %d naming the label:\n%s", code, ExitInternal, stderr)
		}
		if writes() != 0 || body(other) != "keep me" {
			t.Errorf("the issue without the label was written: %d writes, body %q", writes(), body(other))
		}
	})

	t.Run("bad command lines", func(t *testing.T) {
		var out, errb bytes.Buffer
		environ := []string{"GITHUB_TOKEN=" + explainToken, "GITHUB_API_URL=" + srv.URL, "GITHUB_WORKSPACE=" + dir}
		for _, args := range [][]string{{"dashboard", "eval", "-R", "acme/widgets"}, {"dashboard", "eval", "-R", "acme/widgets", "--from", gates, "extra"}} {
			if code := Main(context.Background(), args, environ, strings.NewReader(""), &out, &errb); code != ExitUsage {
				t.Errorf("%v: exit %d, want %d", args, code, ExitUsage)
			}
		}
	})
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
