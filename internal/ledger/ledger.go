package ledger

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// Prefix starts the machine line of a ledger comment.
const Prefix = "roadmap::ledger "

// maxLine bounds the line ParseLine reads.
const maxLine = 1024

// Entry is one Job's spend, booked on the day report saw it end (UTC).
type Entry struct {
	Day   string `json:"day"`
	Issue int    `json:"issue"`
	Job   int    `json:"job"`
	// Phase is "stage" for a stage Job's entry (its Job numbers are
	// stage's own); empty for implement's.
	Phase      string  `json:"phase,omitempty"`
	RunID      int64   `json:"run_id,omitempty"`
	USD        float64 `json:"usd"`
	TokensIn   int64   `json:"tokens_in"`
	TokensOut  int64   `json:"tokens_out"`
	ModelCalls int     `json:"model_calls"`
}

// Spend returns the entry's spend.
func (e Entry) Spend() record.Spend {
	return record.Spend{TokensIn: e.TokensIn, TokensOut: e.TokensOut, USD: e.USD, ModelCalls: e.ModelCalls}
}

// Day is the ledger's name for t's day: its UTC date.
func Day(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// Line renders an entry as its machine line.
func Line(e Entry) string {
	b, err := json.Marshal(e)
	if err != nil {
		// Unreachable for finite numbers; report never books others.
		panic(fmt.Sprintf("encode ledger entry: %v", err))
	}
	return Prefix + string(b)
}

// ParseLine reads one machine line. Comments on the dashboard are text
// anyone who can comment may write, so the line is checked: a real day, an
// issue and a Job >= 1, no negative or non-finite number, no unknown field.
func ParseLine(line string) (Entry, bool) {
	line = strings.TrimSpace(line)
	rest, ok := strings.CutPrefix(line, Prefix)
	if !ok || len(line) > maxLine {
		return Entry{}, false
	}
	var e Entry
	dec := json.NewDecoder(bytes.NewReader([]byte(rest)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil || dec.More() {
		return Entry{}, false
	}
	if _, err := time.Parse(time.DateOnly, e.Day); err != nil {
		return Entry{}, false
	}
	if e.Issue < 1 || e.Job < 1 || (e.Phase != "" && e.Phase != PhaseStage) || e.RunID < 0 || e.TokensIn < 0 || e.TokensOut < 0 || e.ModelCalls < 0 ||
		e.USD < 0 || math.IsNaN(e.USD) || math.IsInf(e.USD, 0) {
		return Entry{}, false
	}
	return e, true
}

func marker(e Entry) string {
	if e.Phase != "" {
		return fmt.Sprintf("<!-- roadmap:ledger issue=%d %s=%d -->", e.Issue, e.Phase, e.Job)
	}
	return fmt.Sprintf("<!-- roadmap:ledger issue=%d job=%d -->", e.Issue, e.Job)
}

// Append books one Job's spend on the dashboard issue: the Job's own
// comment, created or updated in place.
func Append(ctx context.Context, gh *github.Client, dashboard int, e Entry) error {
	if dashboard <= 0 {
		return fmt.Errorf("book ledger entry: dashboard issue %d is not an issue number", dashboard)
	}
	if _, err := time.Parse(time.DateOnly, e.Day); err != nil {
		return fmt.Errorf("book ledger entry: day %q is not a date (YYYY-MM-DD)", e.Day)
	}
	line := Line(e)
	if _, ok := ParseLine(line); !ok {
		return fmt.Errorf("book ledger entry for issue %d Job %d: the entry is not valid: %s", e.Issue, e.Job, line)
	}
	marker := marker(e)
	if _, err := gh.UpsertMarkerComment(ctx, dashboard, marker, marker+"\n"+line); err != nil {
		return fmt.Errorf("book ledger entry for issue %d Job %d on issue %d: %w", e.Issue, e.Job, dashboard, err)
	}
	return nil
}

// Entries reads the dashboard's ledger: one entry per (issue, Job),
// the newest comment's when a Job has several. Only comments by the
// client's identity count; comments without a valid ledger line are
// skipped.
func Entries(ctx context.Context, gh *github.Client, dashboard int) ([]Entry, error) {
	comments, err := gh.Comments(ctx, dashboard)
	if err != nil {
		return nil, fmt.Errorf("read the day ledger on issue %d: %w", dashboard, err)
	}
	type key struct {
		issue, job int
		phase      string
	}
	at := map[key]int{}
	var out []Entry
	for _, c := range comments {
		if !strings.EqualFold(c.Author, gh.Identity()) {
			continue // anyone's comment: not the ledger
		}
		for _, l := range strings.Split(c.Body, "\n") {
			e, ok := ParseLine(l)
			if !ok {
				continue
			}
			k := key{e.Issue, e.Job, e.Phase}
			if i, seen := at[k]; seen {
				out[i] = e
			} else {
				at[k] = len(out)
				out = append(out, e)
			}
			break
		}
	}
	return out, nil
}

// Check sums the ledger's entries for day (YYYY-MM-DD, UTC) and reports
// whether a Job may start: ok is false once any bound of budget is reached.
// The stage and implement Jobs check before they start (pending nil); a Job
// refused yields until the next day (class day_budget_exhausted). Report
// checks the ledger as it will be once pending is booked: pending stands in
// for the entry of its (issue, Job, phase), or is added.
func Check(ctx context.Context, gh *github.Client, dashboard int, day string, budget Budget, pending *Entry) (record.Spend, bool, error) {
	if _, err := time.Parse(time.DateOnly, day); err != nil {
		return record.Spend{}, false, fmt.Errorf("check the day budget: day %q is not a date (YYYY-MM-DD)", day)
	}
	entries, err := Entries(ctx, gh, dashboard)
	if err != nil {
		return record.Spend{}, false, err
	}
	if pending != nil {
		entries = slices.DeleteFunc(entries, func(e Entry) bool {
			return e.Issue == pending.Issue && e.Job == pending.Job && e.Phase == pending.Phase
		})
		entries = append(entries, *pending)
	}
	spent, ok := Sum(day, budget, entries)
	return spent, ok, nil
}

// Sum adds the entries of day and says whether the sum is still under every
// bound of budget.
func Sum(day string, budget Budget, entries []Entry) (record.Spend, bool) {
	var spent record.Spend
	for _, e := range entries {
		if e.Day == day {
			spent = spent.Add(e.Spend())
		}
	}
	return spent, within(spent, budget)
}

// within reports whether spent is still under every bound of b.
func within(spent record.Spend, b Budget) bool {
	switch {
	case b.USD > 0 && spent.USD >= b.USD:
		return false
	case b.TokensIn > 0 && spent.TokensIn >= b.TokensIn:
		return false
	case b.TokensOut > 0 && spent.TokensOut >= b.TokensOut:
		return false
	}
	return true
}

// Budget bounds what all items may spend in one day (UTC); a zero field is
// unlimited.
type Budget struct {
	USD       float64 `json:"usd,omitempty"`
	TokensIn  int64   `json:"tokens_in,omitempty"`
	TokensOut int64   `json:"tokens_out,omitempty"`
}

// Zero reports whether the budget bounds nothing.
func (b Budget) Zero() bool { return b == Budget{} }

// PhaseStage is an entry's Phase for a stage Job (report's phase input of
// the same name).
const PhaseStage = "stage"

// Text says what was spent against each bound of b: "$5.0012 of $5.00,
// 2100000 of 2000000 tokens in".
func Text(spent record.Spend, b Budget) string {
	var parts []string
	if b.USD > 0 {
		parts = append(parts, fmt.Sprintf("$%.4f of $%.2f", spent.USD, b.USD))
	}
	if b.TokensIn > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d tokens in", spent.TokensIn, b.TokensIn))
	}
	if b.TokensOut > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d tokens out", spent.TokensOut, b.TokensOut))
	}
	return strings.Join(parts, ", ")
}

// Label marks the issue that holds the day ledger when no dashboard issue
// is named: roadmap opens it on the first booking of a repository with a
// day budget and no dashboard, so the day's budget holds by default.
const Label = "roadmap:ledger"

// Title is the ledger issue's title.
const Title = "roadmap: day ledger"

const ledgerBody = `roadmap books each Job's spend here, one comment per Job, and sums the day's
comments before a Job starts: this is how ` + "`budgets.day`" + ` holds in a repository without a
dashboard issue (docs/dashboard.md, "The day ledger"). Leave it open: closed, it is not read,
and roadmap opens a new one, so the day's spend so far is forgotten.`

// Find returns the issue that holds the day ledger: the dashboard when one
// is named (dashboard > 0), else the oldest open issue labelled Label that
// roadmap's identity opened, 0 when there is none yet (nothing booked: the
// day's spend is 0). One request without a dashboard, none with one.
func Find(ctx context.Context, gh *github.Client, dashboard int) (int, error) {
	if dashboard > 0 {
		return dashboard, nil
	}
	list, err := gh.LabelledIssues(ctx, Label)
	if err != nil {
		return 0, fmt.Errorf("find the day ledger: %w", err)
	}
	for _, is := range list {
		// Anyone who may label an issue could open one: only roadmap's own
		// is the ledger, as only its comments are entries.
		if strings.EqualFold(is.Author, gh.Identity()) {
			return is.Number, nil
		}
	}
	return 0, nil
}

// Open is Find, opening the ledger issue when there is none. Two reports
// that open one at the same moment each find the oldest afterwards, so
// both book on the same issue.
func Open(ctx context.Context, gh *github.Client, dashboard int) (int, error) {
	n, err := Find(ctx, gh, dashboard)
	if err != nil || n > 0 {
		return n, err
	}
	if _, err := gh.CreateIssue(ctx, Title, ledgerBody, []string{Label}); err != nil {
		return 0, fmt.Errorf("open the day ledger: %w", err)
	}
	if n, err = Find(ctx, gh, 0); err == nil && n == 0 {
		err = errors.New("open the day ledger: the issue opened is not listed")
	}
	return n, err
}
