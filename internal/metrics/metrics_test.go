package metrics

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/roadmap-dev/roadmap/internal/items"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// at is a time in December 2026, the test's window, or before it when day
// is under 1 (day 0 is 30 November).
func at(day, hour int) int64 {
	return time.Date(2026, 12, day, hour, 0, 0, 0, time.UTC).Unix()
}

func usd(v float64) record.Spend { return record.Spend{USD: v} }

// line is a Job line: number, result, class, spend in USD, requests, at.
func line(job int, result record.Result, class string, v float64, requests int, when int64) record.JobOutcome {
	return record.JobOutcome{Job: job, RunID: int64(100 + job), Result: result, Failure: class, Spend: usd(v), Requests: requests, At: when}
}

// seeded is an item read from a record rendered and parsed as GitHub would
// hold it.
func seeded(t *testing.T, issue int, edit func(c *record.Changes)) items.Item {
	t.Helper()
	var c record.Changes
	edit(&c)
	body, err := record.Update("", c)
	if err != nil {
		t.Fatalf("issue %d: %v", issue, err)
	}
	rec, err := record.Parse(body)
	if err != nil {
		t.Fatalf("issue %d: %v", issue, err)
	}
	return items.Of(issue, "", rec)
}

func f(v float64) *float64 { return &v }

// seed is 13 items over mixed states. Spend is USD; requests per Job line.
func seed(t *testing.T) []items.Item {
	staged := func(day int, v float64, req int) record.JobOutcome {
		return line(1, record.ResultStaged, "", v, req, at(day, 0))
	}
	return []items.Item{
		// #1 ready: staged day 2 ($0.10, 2 req), one implement Job ready 4 h
		// later ($0.50, 10 req).
		seeded(t, 1, func(c *record.Changes) {
			c.SetStageState("staged")
			c.SetStageJobs([]record.JobOutcome{staged(2, 0.10, 2)})
			c.SetJobs([]record.JobOutcome{line(1, record.ResultReady, "", 0.50, 10, at(2, 4))})
			c.SetResult(record.ResultReady)
			c.SetSpend(usd(0.60))
		}),
		// #2 ready after a killed Job whose spend report recovered ($0.20):
		// staged day 3 ($0.10, 5 req), Job 1 killed (4 req), Job 2 (a
		// continuation) ready 10 h after staging ($0.30, 6 req).
		seeded(t, 2, func(c *record.Changes) {
			c.SetStageState("staged")
			c.SetStageJobs([]record.JobOutcome{staged(3, 0.10, 5)})
			c.SetJobs([]record.JobOutcome{line(1, "", "killed", 0.20, 4, at(3, 2)), line(2, record.ResultReady, "", 0.30, 6, at(3, 10))})
			c.SetResult(record.ResultReady)
			c.SetSpend(usd(0.60))
		}),
		// #3 ready in three implement Jobs (two continuations), 6 h after
		// staging; $0.10 and 3 req each, stage $0.10 and 2 req.
		seeded(t, 3, func(c *record.Changes) {
			c.SetStageState("staged")
			c.SetStageJobs([]record.JobOutcome{staged(4, 0.10, 2)})
			c.SetJobs([]record.JobOutcome{line(1, record.ResultYielded, "", 0.10, 3, at(4, 1)),
				line(2, record.ResultYielded, "", 0.10, 3, at(4, 2)), line(3, record.ResultReady, "", 0.10, 3, at(4, 6))})
			c.SetResult(record.ResultReady)
			c.SetSpend(usd(0.40))
		}),
		// #4 stopped on checks_failed on day 5 ($0.90, 8 req); staged
		// before the window (30 November, $0.10, 2 req).
		seeded(t, 4, func(c *record.Changes) {
			c.SetStageState("staged")
			c.SetStageJobs([]record.JobOutcome{staged(0, 0.10, 2)})
			c.SetJobs([]record.JobOutcome{line(1, record.ResultStopped, "checks_failed", 0.90, 8, at(5, 3))})
			c.SetResult(record.ResultStopped)
			c.SetFailure("checks_failed")
			c.SetSpend(usd(1.00))
		}),
		// #5 killed by the OOM killer and stopped by report: the line has no
		// result; its recovered spend is $0.40 (7 req); stage $0.10, 2 req.
		seeded(t, 5, func(c *record.Changes) {
			c.SetStageState("staged")
			c.SetStageJobs([]record.JobOutcome{staged(6, 0.10, 2)})
			c.SetJobs([]record.JobOutcome{line(1, "", "oom", 0.40, 7, at(6, 1))})
			c.SetResult(record.ResultStopped)
			c.SetFailure("oom")
			c.SetSpend(usd(0.50))
		}),
		// #6 stopped on checks_failed in November: outside the window.
		seeded(t, 6, func(c *record.Changes) {
			c.SetStageState("staged")
			c.SetStageJobs([]record.JobOutcome{line(1, record.ResultStaged, "", 0.50, 2, at(-20, 0))})
			c.SetJobs([]record.JobOutcome{line(1, record.ResultStopped, "checks_failed", 1.50, 5, at(-10, 0))})
			c.SetResult(record.ResultStopped)
			c.SetFailure("checks_failed")
			c.SetSpend(usd(2.00))
		}),
		// #7 implementing: staged for free, a Job running ($0.05, 2 req).
		seeded(t, 7, func(c *record.Changes) {
			c.SetStageState("staged")
			c.SetStageJobs([]record.JobOutcome{staged(7, 0, 2)})
			c.SetJobs([]record.JobOutcome{line(1, "", "", 0.05, 2, at(7, 1))})
			c.SetSpend(usd(0.05))
		}),
		// #8 waiting for the day's budget ($0.30, 4 req; stage free, 2 req).
		seeded(t, 8, func(c *record.Changes) {
			c.SetStageState("staged")
			c.SetStageJobs([]record.JobOutcome{staged(8, 0, 2)})
			c.SetJobs([]record.JobOutcome{line(1, record.ResultYielded, "day_budget_exhausted", 0.30, 4, at(8, 1))})
			c.SetResult(record.ResultYielded)
			c.SetFailure("day_budget_exhausted")
			c.SetWakeAt(time.Unix(at(9, 0), 0))
			c.SetSpend(usd(0.30))
		}),
		// #9 needs input: stage returned a question ($0.10, 3 req).
		seeded(t, 9, func(c *record.Changes) {
			c.SetStageState("returned")
			c.SetStageJobs([]record.JobOutcome{line(1, record.ResultReturned, "needs_input", 0.10, 3, at(9, 0))})
			c.SetSpend(usd(0.10))
		}),
		// #10 planning: a stage Job running ($0.10, 1 req).
		seeded(t, 10, func(c *record.Changes) {
			c.SetStageJobs([]record.JobOutcome{line(1, "", "", 0.10, 1, at(10, 0))})
			c.SetSpend(usd(0.10))
		}),
		// #11 staged ($0.10, 2 req).
		seeded(t, 11, func(c *record.Changes) {
			c.SetStageState("staged")
			c.SetStageJobs([]record.JobOutcome{staged(11, 0.10, 2)})
			c.SetSpend(usd(0.10))
		}),
		// #12 unknown: no record yet.
		seeded(t, 12, func(c *record.Changes) {}),
		// #13 ready, from lines written before they carried at: in no
		// window, counted only over all time. Stage $0.20 (3 req), implement
		// $0.50 (4 req).
		seeded(t, 13, func(c *record.Changes) {
			c.SetStageState("staged")
			c.SetStageJobs([]record.JobOutcome{line(1, record.ResultStaged, "", 0.20, 3, 0)})
			c.SetJobs([]record.JobOutcome{line(1, record.ResultReady, "", 0.50, 4, 0)})
			c.SetResult(record.ResultReady)
			c.SetSpend(usd(0.70))
		}),
	}
}

// TestMetrics checks every figure against values computed by hand from the
// seed above.
func TestMetrics(t *testing.T) {
	since := time.Unix(at(1, 0), 0).UTC()
	now := time.Unix(at(31, 0), 0).UTC()
	list := seed(t)

	t.Run("window", func(t *testing.T) {
		got := Compute(list, since, now)
		want := Report{
			Since: since, Now: now,
			// In the window: #1–#5 and #7–#11 (a Job line in December).
			// #6's lines are in November, #12 has none, #13's have no at.
			Items: 10,
			ByState: map[items.State]int{
				items.Planning: 1, items.Staged: 1, items.Implementing: 1, items.WaitingChecks: 0, items.NeedsInput: 1,
				items.WaitingBudget: 1, items.WaitingClaim: 0, items.WaitingBlockers: 0, items.Stopped: 2, items.Ready: 3, items.Unknown: 0,
			},
			// ready 3 (#1 #2 #3) + stopped 2 (#4 #5)
			Ended: 5,
			// 3 / 5
			SuccessRate: f(0.6),
			// implement Jobs of #1 #2 #3 #4 #5 #7 #8 = 1 2 3 1 1 1 1 → sorted
			// 1 1 1 1 1 2 3 → the 4th is 1
			MedianImplementJobs: f(1),
			// #1 4 h, #2 10 h, #3 6 h → sorted 4 6 10 → 6 h = 21,600 s
			MedianStageToReadySeconds: f(21600),
			StageToReadyItems:         3,
			// 0.60 + 0.60 + 0.40 + 1.00 + 0.50 + 0.05 + 0.30 + 0.10 + 0.10 + 0.10
			TotalSpend: usd(3.75),
			// the same less #4's stage Job in November (0.10)
			WindowSpend: usd(3.65),
			// 3.75 / 3 ready
			SpendPerReadyUSD: f(1.25),
			// #4 checks_failed (a stopped line), #5 oom (killed, stopped by
			// report); #6's checks_failed is in November
			StopsByClass: map[string]int{"checks_failed": 1, "oom": 1},
			// 1 + 2 + 3 + 1 + 1 + 1 + 1 implement Jobs; Job 2 of #2, Jobs 2
			// and 3 of #3 continued
			ImplementJobs: 10, Continuations: 3,
			// 3 / 10
			ContinuationRate: f(0.3),
			// #1 2+10, #2 5+4+6, #3 2+3+3+3, #4 8 (its stage is in
			// November), #5 2+7, #7 2+2, #8 2+4, #9 3, #10 1, #11 2
			// = 12 + 15 + 11 + 8 + 9 + 4 + 6 + 3 + 1 + 2
			JobRequests: 71,
			// 71 / 10
			RequestsPerItem: f(7.1),
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})

	t.Run("all time", func(t *testing.T) {
		got := Compute(list, time.Time{}, now)
		// Every item counts, and every line, at or none.
		want := Report{
			Now:   now,
			Items: 13,
			ByState: map[items.State]int{
				items.Planning: 1, items.Staged: 1, items.Implementing: 1, items.WaitingChecks: 0, items.NeedsInput: 1,
				items.WaitingBudget: 1, items.WaitingClaim: 0, items.WaitingBlockers: 0, items.Stopped: 3, items.Ready: 4, items.Unknown: 1,
			},
			// 4 ready + 3 stopped
			Ended: 7,
			// 4 / 7 = 0.571428571428… to nine decimals
			SuccessRate: f(0.571428571),
			// 1 2 3 1 1 1 1 1(#6) 1(#13) → the 5th of nine is 1
			MedianImplementJobs: f(1),
			// #13 has no staged time: still 4 6 10
			MedianStageToReadySeconds: f(21600),
			StageToReadyItems:         3,
			// 3.75 + 2.00 (#6) + 0.70 (#13)
			TotalSpend: usd(6.45),
			// every line: 3.65 + 0.10 (#4's stage) + 0.50 + 1.50 (#6) + 0.20 + 0.50 (#13)
			WindowSpend: usd(6.45),
			// 6.45 / 4
			SpendPerReadyUSD: f(1.6125),
			StopsByClass:     map[string]int{"checks_failed": 2, "oom": 1},
			// + #6's and #13's one Job each, neither a continuation
			ImplementJobs: 12, Continuations: 3,
			// 3 / 12
			ContinuationRate: f(0.25),
			// 71 + 2 (#4's stage) + 2 + 5 (#6) + 3 + 4 (#13)
			JobRequests: 87,
			// 87 / 13 = 6.692307692307… to nine decimals
			RequestsPerItem: f(6.692307692),
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})

	t.Run("an even count's median", func(t *testing.T) {
		// #2 (2 implement Jobs, 10 h) and #3 (3 Jobs, 6 h): the mean of the two.
		got := Compute([]items.Item{list[1], list[2]}, since, now)
		if got.MedianImplementJobs == nil || *got.MedianImplementJobs != 2.5 { // (2 + 3) / 2
			t.Errorf("median implement Jobs = %v, want 2.5", got.MedianImplementJobs)
		}
		if got.MedianStageToReadySeconds == nil || *got.MedianStageToReadySeconds != 28800 { // (6 h + 10 h) / 2 = 8 h
			t.Errorf("median stage to ready = %v, want 28800", got.MedianStageToReadySeconds)
		}
	})

	t.Run("nothing to measure", func(t *testing.T) {
		got := Compute(nil, since, now)
		if got.SuccessRate != nil || got.MedianImplementJobs != nil || got.MedianStageToReadySeconds != nil ||
			got.SpendPerReadyUSD != nil || got.ContinuationRate != nil || got.RequestsPerItem != nil {
			t.Errorf("an empty window has figures: %+v", got)
		}
		if len(got.ByState) != len(items.States) {
			t.Errorf("by_state has %d states, want all %d", len(got.ByState), len(items.States))
		}
	})
}
