package report

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// The day ledger. Spend per day across items is kept as comments on one
// dashboard issue, one comment per Job, each holding one machine line:
//
//	roadmap::ledger {"day":"2026-11-29","issue":12,"job":3,"run_id":9120,"usd":0.12,"tokens_in":4100,"tokens_out":900,"model_calls":7}
//
// Nobody edits another Job's comment, so Jobs writing at once cannot lose
// each other's entries (a single counter in an issue body would: GitHub has
// no compare-and-swap). A Job's comment is found again by its marker line and
// updated in place, so booking the same Job twice (a re-run of report, spend
// recovered later) replaces its entry rather than adding a second one.
// DayCheck sums the entries of a day on read. Only comments by roadmap's
// identity are the ledger: anyone who can comment on the dashboard could
// otherwise spend the day's budget with one line (stopping every item) or
// un-spend it (a later entry for a Job replaces the earlier one).

// LedgerPrefix starts the machine line of a ledger comment.
const LedgerPrefix = "roadmap::ledger "

// maxLedgerLine bounds the line ParseLedgerLine reads.
const maxLedgerLine = 1024

// LedgerEntry is one Job's spend, booked on the day report saw it end (UTC).
type LedgerEntry struct {
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
func (e LedgerEntry) Spend() record.Spend {
	return record.Spend{TokensIn: e.TokensIn, TokensOut: e.TokensOut, USD: e.USD, ModelCalls: e.ModelCalls}
}

// Day is the ledger's name for t's day: its UTC date.
func Day(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// LedgerLine renders an entry as its machine line.
func LedgerLine(e LedgerEntry) string {
	b, err := json.Marshal(e)
	if err != nil {
		// Unreachable for finite numbers; report never books others.
		panic(fmt.Sprintf("encode ledger entry: %v", err))
	}
	return LedgerPrefix + string(b)
}

// ParseLedgerLine reads one machine line. Comments on the dashboard are text
// anyone who can comment may write, so the line is checked: a real day, an
// issue and a Job >= 1, no negative or non-finite number, no unknown field.
func ParseLedgerLine(line string) (LedgerEntry, bool) {
	line = strings.TrimSpace(line)
	rest, ok := strings.CutPrefix(line, LedgerPrefix)
	if !ok || len(line) > maxLedgerLine {
		return LedgerEntry{}, false
	}
	var e LedgerEntry
	dec := json.NewDecoder(bytes.NewReader([]byte(rest)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil || dec.More() {
		return LedgerEntry{}, false
	}
	if _, err := time.Parse(time.DateOnly, e.Day); err != nil {
		return LedgerEntry{}, false
	}
	if e.Issue < 1 || e.Job < 1 || (e.Phase != "" && e.Phase != PhaseStage) || e.RunID < 0 || e.TokensIn < 0 || e.TokensOut < 0 || e.ModelCalls < 0 ||
		e.USD < 0 || math.IsNaN(e.USD) || math.IsInf(e.USD, 0) {
		return LedgerEntry{}, false
	}
	return e, true
}

func ledgerMarker(e LedgerEntry) string {
	if e.Phase != "" {
		return fmt.Sprintf("<!-- roadmap:ledger issue=%d %s=%d -->", e.Issue, e.Phase, e.Job)
	}
	return fmt.Sprintf("<!-- roadmap:ledger issue=%d job=%d -->", e.Issue, e.Job)
}

// AppendLedger books one Job's spend on the dashboard issue: the Job's own
// comment, created or updated in place.
func AppendLedger(ctx context.Context, gh *github.Client, dashboard int, e LedgerEntry) error {
	if dashboard <= 0 {
		return fmt.Errorf("book ledger entry: dashboard issue %d is not an issue number", dashboard)
	}
	if _, err := time.Parse(time.DateOnly, e.Day); err != nil {
		return fmt.Errorf("book ledger entry: day %q is not a date (YYYY-MM-DD)", e.Day)
	}
	line := LedgerLine(e)
	if _, ok := ParseLedgerLine(line); !ok {
		return fmt.Errorf("book ledger entry for issue %d Job %d: the entry is not valid: %s", e.Issue, e.Job, line)
	}
	marker := ledgerMarker(e)
	if _, err := gh.UpsertMarkerComment(ctx, dashboard, marker, marker+"\n"+line); err != nil {
		return fmt.Errorf("book ledger entry for issue %d Job %d on issue %d: %w", e.Issue, e.Job, dashboard, err)
	}
	return nil
}

// LedgerEntries reads the dashboard's ledger: one entry per (issue, Job),
// the newest comment's when a Job has several. Only comments by the
// client's identity count; comments without a valid ledger line are
// skipped.
func LedgerEntries(ctx context.Context, gh *github.Client, dashboard int) ([]LedgerEntry, error) {
	comments, err := gh.Comments(ctx, dashboard)
	if err != nil {
		return nil, fmt.Errorf("read the day ledger on issue %d: %w", dashboard, err)
	}
	type key struct {
		issue, job int
		phase      string
	}
	at := map[key]int{}
	var out []LedgerEntry
	for _, c := range comments {
		if !strings.EqualFold(c.Author, gh.Identity()) {
			continue // anyone's comment: not the ledger
		}
		for _, l := range strings.Split(c.Body, "\n") {
			e, ok := ParseLedgerLine(l)
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

// DayCheck sums the ledger's entries for day (YYYY-MM-DD, UTC) and reports
// whether a Job may start: ok is false once any bound of budget is reached.
// The stage and implement verbs call it before a Job starts; a Job refused
// yields until the next day (class day_budget_exhausted).
func DayCheck(ctx context.Context, gh *github.Client, dashboard int, day string, budget DayBudget) (record.Spend, bool, error) {
	return dayCheck(ctx, gh, dashboard, day, budget, nil)
}

// dayCheck is DayCheck on the ledger as it will be once pending is booked:
// pending stands in for the entry of its (issue, Job, phase), or is added.
func dayCheck(ctx context.Context, gh *github.Client, dashboard int, day string, budget DayBudget, pending *LedgerEntry) (record.Spend, bool, error) {
	if _, err := time.Parse(time.DateOnly, day); err != nil {
		return record.Spend{}, false, fmt.Errorf("check the day budget: day %q is not a date (YYYY-MM-DD)", day)
	}
	entries, err := LedgerEntries(ctx, gh, dashboard)
	if err != nil {
		return record.Spend{}, false, err
	}
	if pending != nil {
		entries = slices.DeleteFunc(entries, func(e LedgerEntry) bool {
			return e.Issue == pending.Issue && e.Job == pending.Job && e.Phase == pending.Phase
		})
		entries = append(entries, *pending)
	}
	var spent record.Spend
	for _, e := range entries {
		if e.Day == day {
			spent = spent.Add(e.Spend())
		}
	}
	return spent, within(spent, budget), nil
}

// within reports whether spent is still under every bound of b.
func within(spent record.Spend, b DayBudget) bool {
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

// book writes the reported Job's share to the ledger, when there is a
// dashboard and a day budget, and the Job spent something. Without a day
// budget nothing reads the ledger (the dashboard shows spend from the
// records), so booking it would only spend requests.
func (r *reporter) book(ctx context.Context) error {
	if r.o.Dashboard == 0 || r.o.DayBudget.Zero() || r.out.JobSpend.Zero() {
		return nil
	}
	return AppendLedger(ctx, r.o.GitHub, r.o.Dashboard, r.ledgerEntry(r.out.JobSpend))
}

// ledgerEntry is the reported Job's entry in the day ledger for its share s.
func (r *reporter) ledgerEntry(s record.Spend) LedgerEntry {
	e := LedgerEntry{Day: Day(r.o.Clock.Now()), Issue: r.o.Issue, Job: r.job, RunID: r.o.RunID,
		USD: s.USD, TokensIn: s.TokensIn, TokensOut: s.TokensOut, ModelCalls: s.ModelCalls}
	if r.stage {
		e.Phase = PhaseStage
	}
	return e
}

// dayGate turns a continuation into a wait for the next day when the day's
// budget is spent: a Job dispatched now would only refuse to start. It runs
// before report's record write, so that the record says the item waits
// (and carries no intent mark of a dispatch that will not be sent); the
// Job's own share, which report books after that write, counts already.
func (r *reporter) dayGate(ctx context.Context) error {
	if r.d.action != ActionContinue || r.o.Dashboard == 0 || r.o.DayBudget.Zero() {
		return nil
	}
	changes := r.changes
	if r.stage {
		changes = r.stageChanges
	}
	var pending *LedgerEntry
	if _, s := changes(r.rec); !s.line.Spend.Zero() {
		e := r.ledgerEntry(s.line.Spend)
		pending = &e
	}
	day := Day(r.o.Clock.Now())
	spent, ok, err := dayCheck(ctx, r.o.GitHub, r.o.Dashboard, day, r.o.DayBudget, pending)
	if err != nil || ok {
		return err
	}
	r.d = decision{class: failure.DayBudgetExhausted, action: ActionYield,
		reason: fmt.Sprintf("the day's budget is spent on %s (%s); %s would need a Job today",
			day, budgetText(spent, r.o.DayBudget), r.ending())}
	r.out.Class, r.out.Action, r.out.Reason = r.d.class, r.d.action, r.o.Mask(r.d.reason)
	r.logf("report: issue #%d: %s", r.o.Issue, r.out.Reason)
	return nil
}

// budgetText says what was spent against each bound of b.
func budgetText(spent record.Spend, b DayBudget) string {
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
