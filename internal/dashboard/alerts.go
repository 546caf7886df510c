package dashboard

import (
	"fmt"
	"github.com/roadmap-dev/roadmap/internal/text"
	"sort"
	"strings"
	"time"
)

// Alerts are keyed like Alertmanager's, by class, scope and window, not by
// title: a condition that holds fires once (one comment on the dashboard,
// mentioning the owners), is never posted again while it holds, and is
// resolved in place (the same comment edited) when it clears. A condition
// that comes back after its resolution is a new alert with a comment of its
// own. (gh-aw's failure issues matched by title collected 68 comments.)

// Rules are the alert thresholds of the configuration (alerts.*).
type Rules struct {
	// Owners are mentioned in an alert's comment ("@login" or "@org/team").
	Owners []string
	// StopsPerDay fires an alert for a class once that many stops of it
	// happened across items in the last 24 hours; 0 is off.
	StopsPerDay int
	// DayBudgetShare fires when the day's spend reaches that share of the
	// day's budget (0.8: 80%); 0 is off, and so is a zero budget.
	DayBudgetShare float64
}

// Alert is one alert the dashboard raised.
type Alert struct {
	// Key is class/scope/window: "stops/checks_failed/repository/24h",
	// "budget/day_usd/repository/day".
	Key      string    `json:"key"`
	Firing   bool      `json:"firing"`
	Since    time.Time `json:"since"`
	Resolved time.Time `json:"resolved,omitzero"`
	// Comment is the alert's comment on the dashboard (0: not posted yet).
	Comment int64 `json:"comment,omitempty"`
	// Summary says what holds, for a person.
	Summary string `json:"summary"`
}

func (a Alert) check() error {
	if a.Key == "" || len(a.Key) > 120 || strings.ContainsAny(a.Key, "\n<>") || len(a.Summary) > 400 || a.Comment < 0 {
		return fmt.Errorf("alert %q is not one", clip(a.Key, 40))
	}
	return nil
}

// condition is an alert's condition as it holds now.
type condition struct {
	key, summary string
}

// conditions evaluates the rules over the state at now. budgetUSD is the
// day's budget (0: none).
func (s *State) conditions(r Rules, now time.Time, budgetUSD float64) []condition {
	var out []condition
	if r.StopsPerDay > 0 {
		type tally struct {
			n      int
			issues []int
		}
		by := map[string]*tally{}
		for _, l := range s.Items {
			for _, st := range l.Stops {
				if st.At.After(now.Add(-24*time.Hour)) && !st.At.After(now) {
					t := by[st.Class]
					if t == nil {
						t = &tally{}
						by[st.Class] = t
					}
					t.n++
					if len(t.issues) == 0 || t.issues[len(t.issues)-1] != l.Issue {
						t.issues = append(t.issues, l.Issue)
					}
				}
			}
		}
		for class, t := range by {
			if t.n >= r.StopsPerDay {
				out = append(out, condition{key: "stops/" + class + "/repository/24h",
					summary: fmt.Sprintf("%d stops of class %s in the last 24 hours (threshold %d): %s", t.n, class, r.StopsPerDay, issueList(t.issues))})
			}
		}
	}
	if r.DayBudgetShare > 0 && budgetUSD > 0 {
		spent := s.spentOn(day(now))
		if spent >= r.DayBudgetShare*budgetUSD {
			out = append(out, condition{key: "budget/day_usd/repository/day",
				summary: fmt.Sprintf("the day's spend %s is %.0f%% of the day's budget %s (threshold %.0f%%)",
					usd(spent), 100*spent/budgetUSD, usd(budgetUSD), 100*r.DayBudgetShare)})
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].key < out[b].key })
	return out
}

func issueList(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = fmt.Sprintf("#%d", n)
	}
	return strings.Join(parts, ", ")
}

// alertChange is what keeping the alerts must do on GitHub.
type alertChange struct {
	fire    []int // indexes into State.Alerts of alerts to post
	resolve []int // indexes of alerts to edit as resolved
}

// applyAlerts brings State.Alerts in line with the conditions at now and
// says which comments to post or edit. An alert firing for a key stays
// one alert however long it holds.
func (s *State) applyAlerts(conds []condition, now time.Time) alertChange {
	var ch alertChange
	holds := map[string]condition{}
	for _, c := range conds {
		holds[c.key] = c
	}
	firing := map[string]int{}
	for i, a := range s.Alerts {
		if a.Firing {
			firing[a.Key] = i
		}
	}
	for i := range s.Alerts {
		a := &s.Alerts[i]
		if !a.Firing {
			continue
		}
		if _, ok := holds[a.Key]; !ok {
			a.Firing, a.Resolved = false, now.UTC().Truncate(time.Second)
			ch.resolve = append(ch.resolve, i)
		} else if a.Comment == 0 {
			// Fired before, its comment not posted (the write failed).
			ch.fire = append(ch.fire, i)
		}
	}
	for _, c := range conds {
		if _, ok := firing[c.key]; ok {
			continue
		}
		s.Alerts = append(s.Alerts, Alert{Key: c.key, Firing: true, Since: now.UTC().Truncate(time.Second), Summary: clip(c.summary, 400)})
		ch.fire = append(ch.fire, len(s.Alerts)-1)
	}
	// Resolved alerts older than a week are forgotten.
	return ch
}

// alertBody is an alert's comment, as posted and as resolved.
func alertBody(a Alert, owners []string) string {
	marker := fmt.Sprintf("<!-- roadmap:alert %s -->", a.Key)
	if a.Firing {
		who := ""
		if len(owners) > 0 {
			who = "\n\n" + strings.Join(owners, " ")
		}
		return fmt.Sprintf("%s\n🔔 **roadmap alert** `%s` (since %s)\n\n%s%s", marker, a.Key, stamp(a.Since), a.Summary, who)
	}
	return fmt.Sprintf("%s\n✅ **resolved** %s: roadmap alert `%s` (fired %s)\n\n~~%s~~", marker, stamp(a.Resolved), a.Key, stamp(a.Since), a.Summary)
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

func usd(v float64) string { return text.USD(v) }

// spentOn sums the items' spend on a UTC day.
func (s *State) spentOn(d string) float64 {
	t := 0.0
	for _, l := range s.Items {
		t += l.Days[d]
	}
	return round6(t)
}
