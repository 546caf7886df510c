package dashboard

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/items"
	"github.com/roadmap-dev/roadmap/internal/redact"
)

const token = "ghs_dashboardtesttoken00000000000000000"

type world struct {
	fake *githubfake.Fake
	srv  *httptest.Server
	dash int
}

func newWorld(t *testing.T) *world {
	t.Helper()
	fake := githubfake.New(githubfake.Options{Token: token, Owner: "acme", Repo: "widgets", Clock: githubfake.NewManualClock(now)})
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	dash := fake.CreateIssue(githubfake.Issue{Title: Title, Labels: []string{Label}})
	return &world{fake: fake, srv: srv, dash: dash}
}

// client is a new process's client: nothing cached.
func (w *world) client(t *testing.T) *github.Client {
	t.Helper()
	c, err := github.New(github.Options{BaseURL: w.srv.URL + "/", Token: token, Owner: "acme", Repo: "widgets",
		HTTPClient: &http.Client{Timeout: 10 * time.Second}, Masker: redact.New(redact.Config{Secrets: []string{token}})})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// writes counts the writes to the dashboard's body in the fake's log.
func (w *world) writes() int {
	n := 0
	for _, r := range w.fake.Requests() {
		if r.Method == http.MethodPatch && strings.HasSuffix(r.Path, "/issues/"+strconv.Itoa(w.dash)) {
			n++
		}
	}
	return n
}

func lines(t *testing.T) []Line {
	var out []Line
	for _, it := range tenItems(t) {
		out = append(out, LineOf(it, now, func(s string) string { return s }))
	}
	return out
}

// TestDashboardUnchangedNoWrite: a dashboard update that changes nothing
// costs no write; an update costs at most one read and one write.
func TestDashboardUnchangedNoWrite(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	ls := lines(t)
	o := KeepOptions{Issue: w.dash, Lines: ls, Now: now, DayBudgetUSD: 50}

	o.GitHub = w.client(t)
	first, err := Keep(ctx, o)
	if err != nil || !first.Wrote || first.Requests != 2 {
		t.Fatalf("first keep = %+v, %v; want a read and a write", first, err)
	}
	// Report after report, each its own process: the same line again.
	for i := range 3 {
		o.GitHub = w.client(t)
		o.Lines = ls[i : i+1]
		again, err := Keep(ctx, o)
		if err != nil || again.Wrote || again.Requests != 1 {
			t.Errorf("keep %d with nothing new = %+v, %v; want one read, no write", i, again, err)
		}
	}
	// One process reading an unchanged dashboard twice: the second read is a free 304.
	o.GitHub = w.client(t)
	if _, err := Keep(ctx, o); err != nil {
		t.Fatal(err)
	}
	if k, err := Keep(ctx, o); err != nil || k.Requests != 0 || k.Wrote {
		t.Errorf("an idle keep in one process = %+v, %v; want 0 counted requests (a 304)", k, err)
	}
	if got := w.writes(); got != 1 {
		t.Errorf("%d writes of the dashboard, want 1", got)
	}

	// A changed item is one write, and the body says so.
	moved := ls[5] // #6 implementing → ready
	moved.State = items.Ready
	o.GitHub, o.Lines = w.client(t), []Line{moved}
	k, err := Keep(ctx, o)
	if err != nil || !k.Wrote || k.Requests != 2 {
		t.Errorf("keep with #6 ready = %+v, %v; want one read and one write", k, err)
	}
	is, _ := w.fake.Issue(w.dash)
	if !strings.Contains(is.Body, "| ready | #6 Implementing now") {
		t.Errorf("the body does not show #6 ready:\n%s", is.Body)
	}
	if st, err := Parse(is.Body); err != nil || len(st.Items) != 10 {
		t.Errorf("the state block after the write: %v, %d items; want the ten", err, len(st.Items))
	}
}

// TestDashboardOverflow: more items than the body holds cut the items table
// with a line saying so; the commands and the state block stay whole.
func TestDashboardOverflow(t *testing.T) {
	st := &State{}
	base := lines(t)
	for i := range 400 {
		l := base[i%len(base)]
		l.Issue = i + 1
		l.Title = strings.Repeat("A long title that fills the table ", 3)
		st.Upsert(l)
	}
	st.Prune(now)
	body := Render(st, View{Now: now, DayBudgetUSD: 50})
	if n := len([]rune(body)); n > MaxBody {
		t.Fatalf("the body is %d characters, over %d", n, MaxBody)
	}
	if !strings.Contains(body, "more item(s) not shown") {
		t.Errorf("no overflow line in a body of %d items", len(st.Items))
	}
	back, err := Parse(body)
	if err != nil || len(back.Items) != len(st.Items) {
		t.Fatalf("the state block: %v, %d items; want %d", err, len(back.Items), len(st.Items))
	}
	for _, l := range st.Items {
		if verb := commandFor(l); verb != "" && !strings.Contains(body, box(verb, l.Issue, false)) {
			t.Fatalf("the command box of #%d was cut", l.Issue)
		}
	}
}

// TestAlertOnce: a condition that holds fires one alert comment, mentioning
// the owners, and is never posted again while it holds.
func TestAlertOnce(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	ls := lines(t)
	rules := Rules{Owners: []string{"@octo", "@acme/oncall"}, StopsPerDay: 2, DayBudgetShare: 0.8}
	o := KeepOptions{Issue: w.dash, Lines: ls, Now: now, DayBudgetUSD: 50, Rules: rules}
	for i := range 3 {
		o.GitHub = w.client(t)
		o.Lines = ls[i : i+1]
		if i == 0 {
			o.Lines = ls
		}
		k, err := Keep(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		if want := i == 0; (len(k.Fired) == 1) != want {
			t.Errorf("keep %d fired %v; want one alert only the first time", i, k.Fired)
		}
	}
	cs := w.fake.Comments(w.dash)
	if len(cs) != 1 {
		t.Fatalf("%d comments on the dashboard, want one alert", len(cs))
	}
	c := cs[0].Body
	for _, want := range []string{"stops/checks_failed/repository/24h", "2 stops of class checks_failed", "#2, #3", "@octo @acme/oncall"} {
		if !strings.Contains(c, want) {
			t.Errorf("the alert lacks %q:\n%s", want, c)
		}
	}
	is, _ := w.fake.Issue(w.dash)
	if !strings.Contains(is.Body, "## Alerts") || !strings.Contains(is.Body, "stops/checks_failed") {
		t.Errorf("the dashboard does not show the firing alert")
	}
	// The budget at 80%: $40 of $50 spent today fires its own alert, once.
	big := ls[0]
	big.Issue, big.Days = 99, map[string]float64{day(now): 40}
	o.GitHub, o.Lines = w.client(t), []Line{big}
	k, err := Keep(ctx, o)
	if err != nil || len(k.Fired) != 1 || k.Fired[0] != "budget/day_usd/repository/day" {
		t.Errorf("keep at 80%% of the budget fired %v, %v; want the budget alert", k.Fired, err)
	}
}

// TestAlertResolves: when the condition clears, the alert's comment is
// edited in place to say so; no new comment; a new firing is a new alert.
func TestAlertResolves(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	ls := lines(t)
	rules := Rules{Owners: []string{"@octo"}, StopsPerDay: 2}
	o := KeepOptions{GitHub: w.client(t), Issue: w.dash, Lines: ls, Now: now, Rules: rules}
	if k, err := Keep(ctx, o); err != nil || len(k.Fired) != 1 {
		t.Fatalf("keep = %+v, %v; want one alert fired", k, err)
	}
	// A day later the two stops are past the window.
	o.GitHub, o.Lines, o.Now = w.client(t), nil, now.Add(25*time.Hour)
	k, err := Keep(ctx, o)
	if err != nil || len(k.Resolved) != 1 || len(k.Fired) != 0 {
		t.Fatalf("keep a day later = %+v, %v; want the alert resolved", k, err)
	}
	cs := w.fake.Comments(w.dash)
	if len(cs) != 1 || !strings.Contains(cs[0].Body, "resolved") || !strings.Contains(cs[0].Body, "stops/checks_failed") {
		t.Fatalf("comments = %+v; want the one alert, resolved in place", cs)
	}
	is, _ := w.fake.Issue(w.dash)
	if strings.Contains(is.Body, "## Alerts") {
		t.Errorf("the dashboard still shows a firing alert")
	}
	// Resolved stays resolved: another keep edits nothing.
	o.GitHub = w.client(t)
	if k, err := Keep(ctx, o); err != nil || len(k.Resolved)+len(k.Fired) != 0 {
		t.Errorf("keep again = %+v, %v; want nothing to fire or resolve", k, err)
	}
	// Two new stops: a new alert, a new comment.
	fresh := ls[1]
	fresh.Stops = []Stop{{Class: "checks_failed", At: o.Now.Add(-time.Hour)}, {Class: "checks_failed", At: o.Now.Add(-time.Minute)}}
	o.GitHub, o.Lines = w.client(t), []Line{fresh}
	if k, err := Keep(ctx, o); err != nil || len(k.Fired) != 1 {
		t.Errorf("keep with new stops = %+v, %v; want a new alert", k, err)
	}
	if n := len(w.fake.Comments(w.dash)); n != 2 {
		t.Errorf("%d comments, want the resolved alert and the new one", n)
	}
}

// TestKeepRefusesAnIssueNotTheDashboard: a workflow naming the wrong issue
// (the example's placeholder, an item's own number) leaves that issue's body
// alone: Keep reads it, finds no roadmap:dashboard label and writes nothing.
func TestKeepRefusesAnIssueNotTheDashboard(t *testing.T) {
	w := newWorld(t)
	body := "A person's issue: keep this text."
	n := w.fake.CreateIssue(githubfake.Issue{Title: "Add greetings", Body: body, Author: "alice"})
	k, err := Keep(context.Background(), KeepOptions{GitHub: w.client(t), Issue: n, Lines: lines(t)[:1], Now: now})
	if err == nil || !strings.Contains(err.Error(), "no "+Label+" label") || k.Wrote {
		t.Errorf("keep on issue #%d = %+v, %v; want an error naming the missing label and no write", n, k, err)
	}
	if is, _ := w.fake.Issue(n); is.Body != body {
		t.Errorf("issue #%d's body was replaced:\n%s", n, is.Body)
	}
}
