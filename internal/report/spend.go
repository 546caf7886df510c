package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// parseSpend reads the implement action's spend output.
func parseSpend(s string) (record.Spend, error) {
	var sp record.Spend
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sp); err != nil {
		return record.Spend{}, fmt.Errorf("%q is not a spend object: %w", s, err)
	}
	if sp.TokensIn < 0 || sp.TokensOut < 0 || sp.USD < 0 || sp.ModelCalls < 0 {
		return record.Spend{}, errors.New("a spend cannot be negative")
	}
	return sp, nil
}

// unmarked returns the spend of the Job's model calls that its last mark did
// not include: the calls of Job job numbered above marked (the model calls
// the Job's line counts), each counted once, as its settling line says, or,
// for a call the log shows booked and never settled (the Job was killed
// while it was in flight), at its booking. estimated is how many of them are
// at their booked estimate (a settling line can say so too: a call that
// ended with no answer), and their spend.
func unmarked(log trace.SpendLog, job, marked int) (s, estimated record.Spend) {
	pick := func(entries []trace.SpendEntry) map[int]trace.SpendEntry {
		m := map[int]trace.SpendEntry{}
		for _, e := range entries {
			if e.Job != job || e.Call <= marked {
				continue
			}
			if _, seen := m[e.Call]; !seen {
				m[e.Call] = e
			}
		}
		return m
	}
	settled, booked := pick(log.Entries), pick(log.Booked)
	calls := make([]trace.SpendEntry, 0, len(settled)+len(booked))
	for _, e := range settled {
		calls = append(calls, e)
	}
	for c, e := range booked {
		if _, ok := settled[c]; !ok {
			calls = append(calls, e)
		}
	}
	// Sum in call order, so the nano-dollar rounding of Spend.Add is the
	// same as the runner's, which adds the calls as they happen.
	sort.Slice(calls, func(a, b int) bool { return calls[a].Call < calls[b].Call })
	for _, e := range calls {
		c := record.Spend{TokensIn: e.TokensIn, TokensOut: e.TokensOut, USD: e.USD, ModelCalls: 1}
		s = s.Add(c)
		if e.Booked || e.Estimated {
			estimated = estimated.Add(c)
		}
	}
	return s, estimated
}

// jobsFromLog returns the Job numbers the log's spend lines name, bookings
// included (a Job killed in its first call has only a booking).
func jobsFromLog(log trace.SpendLog) []int {
	seen := map[int]bool{}
	var out []int
	for _, e := range append(append([]trace.SpendEntry(nil), log.Entries...), log.Booked...) {
		if e.Job > 0 && !seen[e.Job] {
			seen[e.Job] = true
			out = append(out, e.Job)
		}
	}
	sort.Ints(out)
	return out
}
