package report

import (
	"context"

	"github.com/roadmap-dev/roadmap/internal/ledger"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/report/decide"
)

// The day ledger (internal/ledger): report books each Job's share after it
// ends, and turns a continuation into a wait when the day's budget is spent.

// book writes the reported Job's share to the ledger, when there is a day
// budget and the Job spent something: on the dashboard issue, else on the
// ledger issue roadmap keeps (opened on the first booking). Without a day
// budget nothing reads the ledger (the dashboard shows spend from the
// records), so booking it would only spend requests.
func (r *reporter) book(ctx context.Context) error {
	if r.o.DayBudget.Zero() || r.out.JobSpend.Zero() {
		return nil
	}
	where, err := ledger.Open(ctx, r.o.GitHub, r.o.Dashboard)
	if err != nil {
		return err
	}
	return ledger.Append(ctx, r.o.GitHub, where, r.ledgerEntry(r.out.JobSpend))
}

// ledgerEntry is the reported Job's entry in the day ledger for its share s.
func (r *reporter) ledgerEntry(s record.Spend) ledger.Entry {
	e := ledger.Entry{Day: ledger.Day(r.o.Clock.Now()), Issue: r.o.Issue, Job: r.job, RunID: r.o.RunID,
		USD: s.USD, TokensIn: s.TokensIn, TokensOut: s.TokensOut, ModelCalls: s.ModelCalls}
	if r.stage {
		e.Phase = ledger.PhaseStage
	}
	return e
}

// dayGate turns a continuation into a wait for the next day when the day's
// budget is spent: a Job dispatched now would only refuse to start. It runs
// before report's record write, so that the record says the item waits
// (and carries no intent mark of a dispatch that will not be sent); the
// Job's own share, which report books after that write, counts already.
func (r *reporter) dayGate(ctx context.Context) error {
	if r.d.Action != ActionContinue || r.o.DayBudget.Zero() {
		return nil
	}
	changes := r.changes
	if r.stage {
		changes = r.stageChanges
	}
	var pending *ledger.Entry
	if _, s := changes(r.rec); !s.line.Spend.Zero() {
		e := r.ledgerEntry(s.line.Spend)
		pending = &e
	}
	where, err := ledger.Find(ctx, r.o.GitHub, r.o.Dashboard)
	if err != nil || (where == 0 && pending == nil) {
		return err
	}
	day := ledger.Day(r.o.Clock.Now())
	var spent record.Spend
	ok := true
	if where > 0 {
		spent, ok, err = ledger.Check(ctx, r.o.GitHub, where, day, r.o.DayBudget, pending)
	} else {
		// No ledger yet: the Job's own share is the day's spend.
		spent, ok = ledger.Sum(day, r.o.DayBudget, []ledger.Entry{*pending})
	}
	if err != nil || ok {
		return err
	}
	r.d = decide.DaySpent(day, ledger.Text(spent, r.o.DayBudget), r.end)
	r.out.Class, r.out.Action, r.out.Reason = r.d.Class, r.d.Action, r.o.Mask(r.d.Reason)
	r.logf("report: issue #%d: %s", r.o.Issue, r.out.Reason)
	return nil
}
