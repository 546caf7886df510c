package dashboard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/items"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// Label marks the dashboard issue; `roadmap init` creates the issue with it.
const Label = "roadmap:dashboard"

// Title is the dashboard issue's title as init opens it.
const Title = "roadmap dashboard"

// The state block opens and closes with these lines.
const (
	blockOpen  = "<!-- roadmap:dashboard v1"
	blockClose = "-->"
)

// Bounds on what the state holds, so no dashboard a report reads can make
// its next write fail.
const (
	// MaxBody is the body's cap, below GitHub's 65,536 characters (Renovate
	// keeps 58,000) so a person's edit (a tick adds nothing) never tips it.
	MaxBody = 60_000
	// maxStateChars bounds the state block: past it, the lines of items
	// ready longest are dropped first.
	maxStateChars = 36_000
	maxTitle      = 80
	maxStops      = 20
	maxAlerts     = 50
	// keepDays is how many UTC days of spend a line keeps (today and the
	// six before: "this week").
	keepDays = 7
	// readyKeep is how long a ready item stays on the dashboard.
	readyKeep = 7 * 24 * time.Hour
)

// State is what the dashboard knows: one line per item, the alerts, and
// what the last write saw of GitHub's limit.
type State struct {
	Items  []Line  `json:"items"`
	Alerts []Alert `json:"alerts,omitempty"`
	// Rate is GitHub's primary limit as the last write saw it.
	Rate *Rate `json:"rate,omitempty"`
	// Refreshed is when the scheduled refresh last rebuilt every line.
	Refreshed time.Time `json:"refreshed,omitzero"`
	// Evals is the last eval run posted (`roadmap dashboard eval`); the
	// other updates keep it as it is.
	Evals *Evals `json:"evals,omitempty"`
}

// Rate is the requests used of the hour's limit at a time.
type Rate struct {
	Used  int       `json:"used"`
	Limit int       `json:"limit"`
	At    time.Time `json:"at"`
}

// Line is one item as the dashboard shows it.
type Line struct {
	Issue int         `json:"issue"`
	Title string      `json:"title,omitempty"`
	State items.State `json:"state"`
	Class string      `json:"class,omitempty"`
	PR    int         `json:"pr,omitempty"`
	// Last is the item's newest Job.
	Last *LastJob `json:"last,omitempty"`
	// USD is the item's whole spend, killed Jobs' recovered spend included.
	USD float64 `json:"usd"`
	// Days is the spend of the item's Jobs by the UTC day their lines last
	// changed, for the last keepDays days.
	Days map[string]float64 `json:"days,omitempty"`
	// Stops are the item's stops of the last seven days.
	Stops    []Stop    `json:"stops,omitempty"`
	Requests int       `json:"requests,omitempty"`
	WakeAt   time.Time `json:"wake_at,omitzero"`
	// BlockedBy is what a waiting_blockers item waits for (item.blocked_by).
	BlockedBy string `json:"blocked_by,omitempty"`
	// Updated is when the item's newest Job line changed: a line derived
	// again from an unchanged record is the same line, so it costs no write.
	Updated time.Time `json:"updated,omitzero"`
}

// LastJob is an item's newest Job.
type LastJob struct {
	Phase  string    `json:"phase"`
	Job    int       `json:"job"`
	RunID  int64     `json:"run_id,omitempty"`
	Result string    `json:"result,omitempty"`
	Class  string    `json:"class,omitempty"`
	At     time.Time `json:"at,omitzero"`
}

// Stop is one stop of an item: its class and when.
type Stop struct {
	Class string    `json:"class"`
	At    time.Time `json:"at"`
}

// LineOf is the dashboard's line for an item, at now. mask masks and
// neutralises text before it is kept (the title is the issue author's).
func LineOf(it items.Item, now time.Time, clean func(string) string) Line {
	l := Line{Issue: it.Issue, State: it.State, Class: it.Class, PR: it.PR, USD: round6(it.Spend.USD),
		Requests: it.Requests(), WakeAt: it.WakeAt}
	if clean != nil {
		l.Title = clip(clean(it.Title), maxTitle)
	}
	if it.State == items.WaitingBlockers {
		l.BlockedBy = refsText(it.BlockedBy)
	}
	if j, ok := it.Last(); ok {
		l.Last = &LastJob{Phase: j.Phase, Job: j.Job, RunID: j.RunID, Result: j.Result, Class: j.Class, At: j.At}
		l.Updated = j.At
	}
	since := dayStart(now).AddDate(0, 0, -(keepDays - 1))
	for _, j := range it.Jobs {
		if j.At.IsZero() || j.At.Before(since) {
			continue
		}
		if j.Spend.USD > 0 {
			if l.Days == nil {
				l.Days = map[string]float64{}
			}
			d := day(j.At)
			l.Days[d] = round6(l.Days[d] + j.Spend.USD)
		}
		if j.Stop() && j.Class != "" {
			l.Stops = append(l.Stops, Stop{Class: j.Class, At: j.At})
		}
	}
	sort.Slice(l.Stops, func(a, b int) bool { return l.Stops[a].At.Before(l.Stops[b].At) })
	if len(l.Stops) > maxStops {
		l.Stops = l.Stops[len(l.Stops)-maxStops:]
	}
	return l
}

// Upsert puts l in place of the item's line (or adds it). A line with no
// title keeps the title the item's line had: the refresh derives lines from
// the repository's comment list, which carries no issue titles, and must
// not blank the ones report wrote.
func (s *State) Upsert(l Line) {
	for i := range s.Items {
		if s.Items[i].Issue == l.Issue {
			if l.Title == "" {
				l.Title = s.Items[i].Title
			}
			s.Items[i] = l
			return
		}
	}
	s.Items = append(s.Items, l)
	sort.Slice(s.Items, func(a, b int) bool { return s.Items[a].Issue < s.Items[b].Issue })
}

// Prune drops what is past its time at now: ready items ready longer than a
// week, spend days and stops older than the window; then, while the state
// block is over its bound, the lines of the items ready longest, then of
// items with the oldest update.
func (s *State) Prune(now time.Time) {
	since := dayStart(now).AddDate(0, 0, -(keepDays - 1))
	kept := s.Items[:0]
	for _, l := range s.Items {
		if l.State == items.Ready && l.Last != nil && !l.Last.At.IsZero() && now.Sub(l.Last.At) > readyKeep {
			continue
		}
		for d := range l.Days {
			if t, err := time.Parse(time.DateOnly, d); err != nil || t.Before(since) {
				delete(l.Days, d)
			}
		}
		if len(l.Days) == 0 {
			l.Days = nil
		}
		stops := l.Stops[:0]
		for _, st := range l.Stops {
			if !st.At.Before(now.Add(-7 * 24 * time.Hour)) {
				stops = append(stops, st)
			}
		}
		l.Stops = stops
		if len(l.Stops) == 0 {
			l.Stops = nil
		}
		kept = append(kept, l)
	}
	s.Items = kept
	alerts := s.Alerts[:0]
	for _, a := range s.Alerts {
		if a.Firing || now.Sub(a.Resolved) <= readyKeep {
			alerts = append(alerts, a)
		}
	}
	s.Alerts = alerts
	if len(s.Alerts) > maxAlerts {
		s.Alerts = s.Alerts[len(s.Alerts)-maxAlerts:]
	}
	for len(s.Items) > 0 {
		b, _ := json.Marshal(s)
		if len(b) <= maxStateChars {
			return
		}
		s.dropOne()
	}
}

// dropOne drops the line of the item ready longest, else the one updated
// longest ago.
func (s *State) dropOne() {
	at := -1
	for i, l := range s.Items {
		if at < 0 || older(l, s.Items[at]) {
			at = i
		}
	}
	s.Items = append(s.Items[:at], s.Items[at+1:]...)
}

func older(a, b Line) bool {
	ar, br := a.State == items.Ready, b.State == items.Ready
	if ar != br {
		return ar
	}
	return a.Updated.Before(b.Updated)
}

// ErrNoState: the body holds no state block (a new dashboard).
var ErrNoState = errors.New("the dashboard holds no state block")

// Parse reads the state block of a dashboard body. The body is text people
// with write access can edit, so every value is checked: a block that does
// not decode, or holds a value out of its bounds, is an error and the
// caller starts from an empty state (the refresh rebuilds it).
func Parse(body string) (*State, error) {
	i := strings.LastIndex(body, blockOpen)
	if i < 0 {
		return &State{}, ErrNoState
	}
	rest := body[i+len(blockOpen):]
	j := strings.Index(rest, blockClose)
	if j < 0 {
		return &State{}, errors.New("the dashboard's state block is not closed")
	}
	var s State
	dec := json.NewDecoder(bytes.NewReader([]byte(rest[:j])))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return &State{}, fmt.Errorf("the dashboard's state block: %w", err)
	}
	if err := s.check(); err != nil {
		return &State{}, fmt.Errorf("the dashboard's state block: %w", err)
	}
	return &s, nil
}

func (s *State) check() error {
	seen := map[int]bool{}
	for _, l := range s.Items {
		switch {
		case l.Issue < 1 || l.Issue > record.MaxCount:
			return fmt.Errorf("item %d is not an issue number", l.Issue)
		case seen[l.Issue]:
			return fmt.Errorf("item %d has two lines", l.Issue)
		case !knownState(l.State):
			return fmt.Errorf("item %d: %q is not a state", l.Issue, clip(string(l.State), 20))
		case !money(l.USD) || l.Requests < 0 || l.PR < 0 || len(l.Stops) > maxStops || len(l.Days) > keepDays+1:
			return fmt.Errorf("item %d: a value is out of its bounds", l.Issue)
		case !word(l.Class):
			return fmt.Errorf("item %d: %q is not a class", l.Issue, clip(l.Class, 20))
		case refsText(l.BlockedBy) != l.BlockedBy:
			return fmt.Errorf("item %d: %q is not a list of issue references", l.Issue, clip(l.BlockedBy, 20))
		}
		seen[l.Issue] = true
		for d, v := range l.Days {
			if _, err := time.Parse(time.DateOnly, d); err != nil || !money(v) {
				return fmt.Errorf("item %d: day %q", l.Issue, clip(d, 12))
			}
		}
		for _, st := range l.Stops {
			if !word(st.Class) || st.Class == "" {
				return fmt.Errorf("item %d: a stop's class %q", l.Issue, clip(st.Class, 20))
			}
		}
		if l.Last != nil && (!word(l.Last.Class) || !word(l.Last.Result) || (l.Last.Phase != "stage" && l.Last.Phase != "implement") || l.Last.Job < 0 || l.Last.RunID < 0) {
			return fmt.Errorf("item %d: its last Job is not one", l.Issue)
		}
	}
	if len(s.Alerts) > maxAlerts {
		return fmt.Errorf("%d alerts, over %d", len(s.Alerts), maxAlerts)
	}
	for _, a := range s.Alerts {
		if err := a.check(); err != nil {
			return err
		}
	}
	if s.Rate != nil && (s.Rate.Used < 0 || s.Rate.Limit < 0) {
		return errors.New("the rate is negative")
	}
	return s.Evals.check()
}

func knownState(st items.State) bool {
	for _, k := range items.States {
		if st == k {
			return true
		}
	}
	return false
}

func money(v float64) bool {
	return v >= 0 && v <= record.MaxUSD && !math.IsNaN(v) && !math.IsInf(v, 0)
}

// maxBlockedBy bounds a line's blocked_by.
const maxBlockedBy = 200

// refsText is a list of issue references as item.blocked_by writes it
// ("#12, owner/repo#4"), kept to the characters references are made of and
// clipped at a reference's end: the record is a comment anyone with write
// access can edit, and the text goes into a table cell.
func refsText(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("#/_.-, ", r) {
			b.WriteRune(r)
		}
	}
	out := strings.TrimSpace(b.String())
	if len(out) > maxBlockedBy {
		out = out[:maxBlockedBy-len(", ...")]
		if i := strings.LastIndex(out, ","); i > 0 {
			out = out[:i]
		}
		out = strings.TrimSpace(out) + ", ..." // within the bound: the same text when read back
	}
	return out
}

// word: a class or result name (lower case, digits, underscores), or "".
func word(s string) bool {
	if len(s) > 40 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

// block renders the state block. encoding/json escapes <, > and & so no
// value can close the comment early.
func (s *State) block() string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("encode the dashboard state: %v", err)) // finite by check and LineOf
	}
	return blockOpen + "\n" + string(b) + "\n" + blockClose
}

func day(t time.Time) string { return t.UTC().Format(time.DateOnly) }

func dayStart(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
