package report

import (
	"math"

	"github.com/roadmap-dev/roadmap/internal/record"
)

// spendLost is the failure word of a killed Job's line in implement.jobs when
// its log was gone, or its tail lost with a runner that lost communication:
// the spend of its calls after its last mark (after the log's last line) is
// unknown. implement.failure keeps the class.
const spendLost = "spend_lost"

// settled is the reported Job's line and the item's spend as report leaves
// them in a record.
type settled struct {
	line      record.JobOutcome
	item      record.Spend
	recovered record.Spend
	// estimated is the part of recovered at booked estimates (its
	// ModelCalls count them); itemEstimated the item's
	// implement.spend_estimated with them.
	estimated     record.Spend
	itemEstimated int
	lost          bool
	// touched: the line or the spend changes.
	touched bool
	// setResult: the runner's final mark is missing; report writes the
	// typed result from the outputs.
	setResult bool
}

// settle computes the Job's line and the item's spend from cur. It depends
// only on cur and the Job's facts, so applying it to a record that already
// holds it changes nothing: a second report for the same Job adds no spend.
func (r *reporter) settle(cur *record.Record) settled {
	jobs, _ := cur.Jobs()
	item, _ := cur.Spend()
	line, ok := findLine(jobs, func(j record.JobOutcome) bool { return j.Job == r.job })
	if !ok {
		line = record.JobOutcome{Job: r.job, RunID: r.o.RunID}
		line.Group, _ = cur.Group()
	}
	if line.RunID == 0 {
		line.RunID = r.o.RunID
	}
	s := settled{line: line, item: item, itemEstimated: cur.SpendEstimated()}
	if r.facts != nil {
		r.recover(&s, ok)
		return s
	}
	if ok && line.Result == r.end.Result {
		return s
	}
	// The outputs carry a result the record lacks: the final mark was lost.
	s.touched, s.setResult = true, true
	s.line.Result, s.line.Failure = r.end.Result, r.end.Class
	s.line.Group = max(s.line.Group, r.o.Group)
	if out, err := parseSpend(r.o.Spend); err == nil && out.ModelCalls > item.ModelCalls {
		diff := subSpend(out, item)
		s.line.Spend = s.line.Spend.Add(diff)
		s.item = out
	}
	return s
}

// recover adds to s what the log of a Job that wrote no result holds past
// its line's calls (hadLine: the record had a line for it): settled calls as
// they settled, calls booked and never settled at their booking, and says
// the spend is lost when the log is gone or its tail is.
func (r *reporter) recover(s *settled, hadLine bool) {
	line := s.line
	s.lost = r.facts.logGone || r.facts.tailLost
	want := string(r.end.Killed)
	if s.lost {
		want = spendLost
	}
	s.touched = !hadLine || line.Failure != want || line.Result != ""
	s.line.Result, s.line.Failure = "", want
	if r.facts.logGone {
		return
	}
	add, est := unmarked(r.facts.spend, r.job, line.Spend.ModelCalls)
	if !add.Zero() {
		s.recovered, s.estimated, s.touched = add, est, true
		s.line.Spend = line.Spend.Add(add)
		s.item = s.item.Add(add)
		s.itemEstimated += est.ModelCalls
	}
}

// note copies the settled spend into the outcome.
func (r *reporter) note(s settled) {
	r.out.SpendRecovered, r.out.SpendLost, r.out.SpendEstimated = s.recovered, s.lost, s.estimated
	r.out.Spend, r.out.JobSpend = s.item, s.line.Spend
}

// subSpend is a - b, never below zero, USD rounded as Spend.Add rounds it.
func subSpend(a, b record.Spend) record.Spend {
	return record.Spend{
		TokensIn:   max(a.TokensIn-b.TokensIn, 0),
		TokensOut:  max(a.TokensOut-b.TokensOut, 0),
		USD:        max(math.Round((a.USD-b.USD)*1e9)/1e9, 0),
		ModelCalls: max(a.ModelCalls-b.ModelCalls, 0),
	}
}
