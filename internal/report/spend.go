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
// not include: the spend lines of Job job whose call number is above marked
// (the model calls the Job's line in implement.jobs counts). A call number
// seen twice counts once: (job, call) names one model call.
func unmarked(log trace.SpendLog, job, marked int) record.Spend {
	seen := map[int]bool{}
	var calls []trace.SpendEntry
	for _, e := range log.Entries {
		if e.Job != job || e.Call <= marked || seen[e.Call] {
			continue
		}
		seen[e.Call] = true
		calls = append(calls, e)
	}
	// Sum in call order, so the nano-dollar rounding of Spend.Add is the
	// same as the runner's, which adds the calls as they happen.
	sort.Slice(calls, func(a, b int) bool { return calls[a].Call < calls[b].Call })
	var s record.Spend
	for _, e := range calls {
		s = s.Add(record.Spend{TokensIn: e.TokensIn, TokensOut: e.TokensOut, USD: e.USD, ModelCalls: 1})
	}
	return s
}

// jobsFromLog returns the Job numbers the log's spend lines name.
func jobsFromLog(log trace.SpendLog) []int {
	seen := map[int]bool{}
	var out []int
	for _, e := range log.Entries {
		if e.Job > 0 && !seen[e.Job] {
			seen[e.Job] = true
			out = append(out, e.Job)
		}
	}
	sort.Ints(out)
	return out
}
