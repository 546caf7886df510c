package ready

import (
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/strength"
)

// TestStrengthVerdict: a group is unmeasured only when nothing could be
// mutated or no mutant builds; a weak, uncovered or all-timed-out group
// never passes; a measured one passes as the report says.
func TestStrengthVerdict(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rep    strength.Report
		passed bool
		why    string // in the unmeasured reason; "" is measured
	}{
		{"nothing to mutate", strength.Report{Skipped: 3, Reason: "0 mutants ran"}, true, "nothing to mutate"},
		{"another language", strength.Report{Unsupported: []string{"app.py"}}, true, ".py"},
		{"no mutant builds", strength.Report{Generated: 2, Errors: 2}, true, "builds"},
		{"nothing covered", strength.Report{Generated: 2, NotCovered: 2, Reason: "0 mutants ran"}, false, ""},
		{"every mutant timed out", strength.Report{Generated: 2, TimedOut: 2}, false, ""},
		{"some do not build, the rest survive", strength.Report{Generated: 3, Errors: 1, Survived: 2}, false, ""},
		{"measured and strong", strength.Report{Generated: 3, Killed: 3, Score: 1, Passed: true}, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			passed, why := strengthVerdict(tc.rep)
			if passed != tc.passed || (tc.why == "") != (why == "") || !strings.Contains(why, tc.why) {
				t.Errorf("strengthVerdict = %v, %q; want %v, a reason with %q", passed, why, tc.passed, tc.why)
			}
		})
	}
}
