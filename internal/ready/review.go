package ready

import (
	"fmt"
	"slices"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/review"
	"github.com/roadmap-dev/roadmap/internal/verdict"
)

// Ledger is the review ledger as this Job left it, else recorded (the
// record's, as earlier Jobs left it).
func (s *State) Ledger(recorded record.ReviewLedger) record.ReviewLedger {
	if s.ledger != nil {
		return *s.ledger
	}
	return recorded
}

// PassedAt says ledger has the review passed at head already: head is not
// reviewed again, and may be marked ready.
func (s *State) PassedAt(ledger record.ReviewLedger, head string) bool {
	if !ledger.PassedAt(record.SHA(head)) {
		return false
	}
	s.reviewed = head
	return true
}

// Reviewed is the head the review passed at ("" when none did): the PR is
// marked ready only there.
func (s *State) Reviewed() string { return s.reviewed }

// Review judges res, the review of head, against ledger: the blocking
// findings of the review before it that this one does not raise were
// repaired and are closed, never raised again; this one's are open. It
// returns the ledger to write. No blocking finding passes head. Blocking
// findings are repairable while round (the repair rounds they had) is
// below rounds; past them they stand and the item stops (review_blocked).
func (s *State) Review(head string, ledger record.ReviewLedger, res review.Result, round, rounds int) (record.ReviewLedger, verdict.Failure, bool) {
	s.res = &res
	blocking := res.Blocking()
	// Close deletes from Open: the loop reads a copy, or the finding after
	// a closed one would be skipped and an empty id closed.
	for _, f := range slices.Clone(ledger.Open) {
		if !containsFinding(blocking, f.ID) {
			ledger.Close(f.ID, review.Repaired)
		}
	}
	ledger.SHA, ledger.Open = record.SHA(head), nil
	for _, f := range blocking {
		ledger.Open = append(ledger.Open, record.OpenFinding{ID: f.ID, File: f.File, Line: f.Start, Title: f.Title})
	}
	s.ledger = &ledger
	if len(blocking) == 0 {
		s.reviewed = head
		return ledger, verdict.Failure{}, true
	}
	fail := verdict.Failure{Class: failure.ReviewBlocked, Task: review.RepairTask(blocking)}
	if round >= rounds {
		fail.Reason = fmt.Sprintf("%d blocking finding(s) of the review stand at %s after %d repair round(s): %s; /roadmap dismiss ID or a fix and /roadmap retry",
			len(blocking), short(head), round, Standing(blocking))
		return ledger, fail, false
	}
	fail.Reason, fail.Repairable = fmt.Sprintf("%d blocking finding(s) of the review at %s", len(blocking), short(head)), true
	return ledger, fail, false
}

// Standing names blocking findings as the stop says them: "ID file:line".
func Standing(blocking []review.Finding) string {
	ids := make([]string, len(blocking))
	for i, f := range blocking {
		ids[i] = fmt.Sprintf("%s %s:%d", f.ID, f.File, f.Start)
	}
	return strings.Join(ids, ", ")
}

func containsFinding(fs []review.Finding, id string) bool {
	for _, f := range fs {
		if f.ID == id {
			return true
		}
	}
	return false
}
