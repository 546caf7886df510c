package dashboard

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/items"
)

// View is what a render needs besides the state.
type View struct {
	Now time.Time
	// DayBudgetUSD is the day's budget (0: none); the week's is seven of it.
	DayBudgetUSD float64
	// Ticked are boxes ticked and not yet carried out: they stay ticked.
	Ticked []Command
}

// Render is the dashboard body for the state: a pure function of its
// inputs, so an unchanged state renders the same body and costs no write.
// It stays under MaxBody: the items table is cut first, with a line saying
// how many rows it leaves out.
func Render(s *State, v View) string {
	ticked := map[Command]bool{}
	for _, c := range v.Ticked {
		ticked[c] = true
	}
	var head, tail strings.Builder
	fmt.Fprintf(&head, "# %s\n\n", Title)
	fmt.Fprintf(&head, "roadmap keeps this issue: each report rewrites it from its item's record, and the scheduled refresh rebuilds it from every record. Tick a box under **Commands** to give that command (people with write access only); anything else edited here is overwritten.\n\n")

	today := day(v.Now)
	week := s.spentSince(dayStart(v.Now).AddDate(0, 0, -(keepDays - 1)))
	spentToday := s.spentOn(today)
	fmt.Fprintf(&head, "| | |\n|---|---|\n")
	if v.DayBudgetUSD > 0 {
		fmt.Fprintf(&head, "| spend today (%s, UTC) | %s of %s (%.0f%%) |\n", today, usd(spentToday), usd(v.DayBudgetUSD), 100*spentToday/v.DayBudgetUSD)
		fmt.Fprintf(&head, "| spend this week (7 days) | %s of %s |\n", usd(week), usd(7*v.DayBudgetUSD))
	} else {
		fmt.Fprintf(&head, "| spend today (%s, UTC) | %s (no day budget) |\n", today, usd(spentToday))
		fmt.Fprintf(&head, "| spend this week (7 days) | %s |\n", usd(week))
	}
	if s.Rate != nil && s.Rate.Limit > 0 {
		fmt.Fprintf(&head, "| GitHub requests this hour | %d of %d (%.0f%%) at %s |\n", s.Rate.Used, s.Rate.Limit, 100*float64(s.Rate.Used)/float64(s.Rate.Limit), s.Rate.At.UTC().Format("15:04 UTC"))
	}
	fmt.Fprintf(&head, "| items | %s |\n", stateCounts(s))
	if !s.Refreshed.IsZero() {
		fmt.Fprintf(&head, "| last refresh from every record | %s |\n", stamp(s.Refreshed))
	}
	head.WriteString("\n")

	var firing []Alert
	for _, a := range s.Alerts {
		if a.Firing {
			firing = append(firing, a)
		}
	}
	if len(firing) > 0 {
		head.WriteString("## Alerts\n\n")
		for _, a := range firing {
			fmt.Fprintf(&head, "- 🔔 `%s` since %s: %s\n", a.Key, stamp(a.Since), a.Summary)
		}
		head.WriteString("\n")
	}

	lines := ordered(s.Items)
	var boxes []string
	for _, l := range lines {
		if verb := commandFor(l); verb != "" {
			boxes = append(boxes, box(verb, l.Issue, ticked[Command{Verb: verb, Issue: l.Issue}]))
		}
	}
	if len(boxes) > 0 {
		head.WriteString("## Commands\n\n")
		for _, b := range boxes {
			head.WriteString(b + "\n")
		}
		head.WriteString("\n")
	}

	// The tail: stops, charts and the state block, all bounded.
	tail.WriteString(evalsSection(s.Evals))
	stops := s.stopsByClass(v.Now)
	tail.WriteString("## Stops by class, last 7 days\n\n")
	if len(stops) == 0 {
		tail.WriteString("None.\n\n")
	} else {
		tail.WriteString("| class | stops | items |\n|---|---:|---|\n")
		for _, st := range stops {
			fmt.Fprintf(&tail, "| %s | %d | %s |\n", st.class, st.n, issueList(st.issues))
		}
		tail.WriteString("\n")
	}
	tail.WriteString("## Charts\n\n")
	tail.WriteString(pieChart(s))
	tail.WriteString(spendChart(s, v.Now))
	tail.WriteString(s.block())
	tail.WriteString("\n")

	var table strings.Builder
	fmt.Fprintf(&table, "## Items (%d)\n\n", len(lines))
	if len(lines) == 0 {
		table.WriteString("No item yet.\n\n")
	} else {
		table.WriteString("| state | item | last Job | spend | GitHub requests by the Jobs |\n|---|---|---|---:|---:|\n")
		room := MaxBody - head.Len() - tail.Len() - table.Len() - 200
		for i, l := range lines {
			row := row(l)
			if len(row) > room {
				fmt.Fprintf(&table, "\n… %d more item(s) not shown: the dashboard stays under GitHub's 65,536 characters. `roadmap metrics` counts every item.\n", len(lines)-i)
				break
			}
			room -= len(row)
			table.WriteString(row)
		}
		table.WriteString("\n")
	}
	return head.String() + table.String() + tail.String()
}

// ordered is the lines in the order a person acts on them: by state (the
// pipeline's order, stops and questions first), then by issue.
func ordered(ls []Line) []Line {
	rank := map[items.State]int{items.Stopped: 0, items.NeedsInput: 1, items.WaitingBudget: 2, items.WaitingClaim: 2, items.WaitingBlockers: 2, items.Staged: 3,
		items.WaitingChecks: 4, items.Implementing: 5, items.Planning: 6, items.Ready: 7, items.Unknown: 8}
	out := append([]Line(nil), ls...)
	sort.SliceStable(out, func(a, b int) bool {
		if rank[out[a].State] != rank[out[b].State] {
			return rank[out[a].State] < rank[out[b].State]
		}
		return out[a].Issue < out[b].Issue
	})
	return out
}

func row(l Line) string {
	st := string(l.State)
	if l.Class != "" && l.Class != string(l.State) && (l.State == items.Stopped || l.State == items.NeedsInput || l.State == items.WaitingBudget) {
		st += ": " + l.Class
	}
	item := fmt.Sprintf("#%d", l.Issue)
	if l.Title != "" {
		item += " " + cell(l.Title)
	}
	if l.PR > 0 {
		item += fmt.Sprintf(" (PR #%d)", l.PR)
	}
	last := "—"
	if j := l.Last; j != nil {
		last = fmt.Sprintf("%s Job %d", j.Phase, j.Job)
		if j.RunID > 0 {
			last += fmt.Sprintf(" (run %d)", j.RunID)
		}
		switch {
		case j.Result != "":
			last += " " + j.Result
		case j.Class != "":
			last += " no result (" + j.Class + ")"
		default:
			last += " running"
		}
		if j.Class != "" && j.Result != "" {
			last += " (" + j.Class + ")"
		}
		if !j.At.IsZero() {
			last += ", " + stamp(j.At)
		}
	}
	if l.State == items.WaitingBudget && !l.WakeAt.IsZero() {
		last += "; wakes " + stamp(l.WakeAt)
	}
	if l.State == items.WaitingBlockers && l.BlockedBy != "" {
		last += "; waits for " + cell(l.BlockedBy)
	}
	return fmt.Sprintf("| %s | %s | %s | %s | %d |\n", st, item, last, usd(l.USD), l.Requests)
}

// cell makes text safe in a table cell and in the body: one line, no pipe,
// no angle bracket (no HTML comment can open), no backtick run.
func cell(s string) string {
	r := strings.NewReplacer("\r", " ", "\n", " ", "|", "¦", "<", "‹", ">", "›", "`", "'")
	return r.Replace(s)
}

func stateCounts(s *State) string {
	n := map[items.State]int{}
	for _, l := range s.Items {
		n[l.State]++
	}
	var parts []string
	for _, st := range items.States {
		if n[st] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[st], st))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

type stopCount struct {
	class  string
	n      int
	issues []int
}

func (s *State) stopsByClass(now time.Time) []stopCount {
	by := map[string]*stopCount{}
	for _, l := range s.Items {
		for _, st := range l.Stops {
			if st.At.Before(now.Add(-7*24*time.Hour)) || st.At.After(now) {
				continue
			}
			c := by[st.Class]
			if c == nil {
				c = &stopCount{class: st.Class}
				by[st.Class] = c
			}
			c.n++
			if len(c.issues) == 0 || c.issues[len(c.issues)-1] != l.Issue {
				c.issues = append(c.issues, l.Issue)
			}
		}
	}
	out := make([]stopCount, 0, len(by))
	for _, c := range by {
		out = append(out, *c)
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].n != out[b].n {
			return out[a].n > out[b].n
		}
		return out[a].class < out[b].class
	})
	return out
}

func (s *State) spentSince(since time.Time) float64 {
	t := 0.0
	for _, l := range s.Items {
		for d, v := range l.Days {
			if dt, err := time.Parse(time.DateOnly, d); err == nil && !dt.Before(since) {
				t += v
			}
		}
	}
	return round6(t)
}

func pieChart(s *State) string {
	n := map[items.State]int{}
	for _, l := range s.Items {
		n[l.State]++
	}
	var b strings.Builder
	b.WriteString("```mermaid\npie title Items by state\n")
	some := false
	for _, st := range items.States {
		if n[st] > 0 {
			fmt.Fprintf(&b, "    %q : %d\n", string(st), n[st])
			some = true
		}
	}
	if !some {
		b.WriteString("    \"none\" : 1\n")
	}
	b.WriteString("```\n\n")
	return b.String()
}

func spendChart(s *State, now time.Time) string {
	var days, vals []string
	for i := keepDays - 1; i >= 0; i-- {
		d := dayStart(now).AddDate(0, 0, -i)
		days = append(days, fmt.Sprintf("%q", d.Format("01-02")))
		vals = append(vals, fmt.Sprintf("%.2f", s.spentOn(day(d))))
	}
	var b strings.Builder
	b.WriteString("```mermaid\nxychart-beta\n    title \"Spend per day (USD)\"\n")
	fmt.Fprintf(&b, "    x-axis [%s]\n    y-axis \"USD\"\n    bar [%s]\n```\n\n", strings.Join(days, ", "), strings.Join(vals, ", "))
	return b.String()
}
