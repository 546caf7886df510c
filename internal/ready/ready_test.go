package ready

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/review"
	"github.com/roadmap-dev/roadmap/internal/strength"
)

// TestStrength: a group's measurement is judged, kept over an earlier one
// of the same group, and a weak group's stop says why in the words that
// fit what was measured.
func TestStrength(t *testing.T) {
	survivor := strength.Mutant{File: "greet.go", Line: 3, Operator: "negate", Diff: "-if a\n+if !a\n", Status: strength.Survived}
	for _, tc := range []struct {
		name    string
		rep     strength.Report
		passed  bool
		outcome string
		task    string // a part of the repair task; "" is none
		stop    string // a part of the stop's reason
	}{
		{"strong", strength.Report{Generated: 4, Killed: 4, Score: 1, Passed: true}, true, "passed", "", ""},
		{"survivors go back to the agent", strength.Report{Generated: 4, Killed: 3, Survived: 1, Score: 0.75,
			Mutants: []strength.Mutant{survivor}, Reason: "score 0.75 under 0.80"}, false, "failed", "greet.go",
			"group 2: test strength 0.75 under the floor 0.80 (4 mutants: 3 killed, 1 survived, 0 timed out) after 3 rounds"},
		{"nothing covered: the task says what the tests miss", strength.Report{Generated: 2, NotCovered: 2, Reason: "0 mutants ran"}, false, "failed",
			"The group's tests do not measure its change: 0 mutants ran", "group 2: 0 mutants ran (after 3 rounds)"},
		{"every mutant timed out", strength.Report{Generated: 2, TimedOut: 2, Reason: "every mutant timed out"}, false, "failed",
			"every mutant timed out", "group 2: every mutant timed out (after 3 rounds)"},
		{"nothing to mutate is not measured and passes", strength.Report{Skipped: 2}, true, "unmeasured", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s State
			s.Strength(2, strength.Report{Generated: 1, Killed: 1, Score: 1, Passed: true}) // an earlier round
			m := s.Strength(2, tc.rep)
			if m.Passed != tc.passed || m.Outcome != tc.outcome || s.StrengthFailed() == tc.passed {
				t.Errorf("Strength = passed %v, outcome %q, failed %v; want %v, %q", m.Passed, m.Outcome, s.StrengthFailed(), tc.passed, tc.outcome)
			}
			if !strings.Contains(m.Task, tc.task) || (tc.task == "") != (m.Task == "") {
				t.Errorf("task = %q, want it to say %q", m.Task, tc.task)
			}
			if rows := s.Rows(nil); len(rows) != 1 || rows[0] != m.Row {
				t.Errorf("rows = %+v, want this measurement over the earlier round's", rows)
			}
			if tc.passed {
				return
			}
			f := s.StrengthStop(2, 3, 0.8)
			if f.Class != failure.TestsWeak || f.Task != m.Task || !strings.Contains(f.Reason, tc.stop) || f.Repairable {
				t.Errorf("StrengthStop = %+v, want tests_weak with the task and a reason saying %q", f, tc.stop)
			}
		})
	}
}

// TestStrengthRoundsAndRows: a round starts with nothing failed; a
// measurement that could not be made fails the round; this Job's rows go
// over the record's, in group order.
func TestStrengthRoundsAndRows(t *testing.T) {
	var s State
	if s.Measuring() {
		t.Error("a Job that measured nothing is measuring")
	}
	if got := s.Unmeasurable("the tests fail unmutated"); !s.StrengthFailed() || !strings.Contains(got, "could not be measured: the tests fail unmutated") {
		t.Errorf("Unmeasurable = %q, failed %v", got, s.StrengthFailed())
	}
	s.Round()
	if s.StrengthFailed() {
		t.Error("a new round starts failed")
	}
	s.Strength(3, strength.Report{Generated: 2, Killed: 2, Score: 1, Passed: true})
	recorded := []record.GroupStrength{{Group: 3, Score: 0.5}, {Group: 1, Score: 0.9}}
	want := []record.GroupStrength{{Group: 1, Score: 0.9}, {Group: 3, Generated: 2, Killed: 2, Score: 1}}
	if diff := cmp.Diff(want, s.Rows(recorded)); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}

func blocking(id string) review.Finding {
	return review.Finding{ID: id, File: "greet.go", Start: 7, Severity: review.SeverityBlocking, Title: "nil map write"}
}

// TestReview: the ledger follows the reviews of the heads, and the verdict
// is a pass, a repair with rounds left, or findings that stand.
func TestReview(t *testing.T) {
	advisory := review.Finding{ID: "a1", File: "x.go", Severity: review.SeverityAdvisory}
	before := record.ReviewLedger{SHA: "aaaaaaaaaa", Open: []record.OpenFinding{{ID: "f1"}, {ID: "f2"}},
		Closed: []record.ClosedFinding{{ID: "f0", Why: "dismissed by ana"}}}
	for _, tc := range []struct {
		name       string
		findings   []review.Finding
		round      int
		ok         bool
		repairable bool
		reason     string
		open       []string
		closed     []string
	}{
		{"no blocking finding passes the head; the old ones were repaired", []review.Finding{advisory}, 0, true, false, "",
			nil, []string{"f0", "f1", "f2"}},
		{"blocking findings with rounds left are repaired at the head", []review.Finding{blocking("f2"), blocking("f3")}, 1, false, true,
			"2 blocking finding(s) of the review at bbbbbbb", []string{"f2", "f3"}, []string{"f0", "f1"}},
		{"past the rounds they stand", []review.Finding{blocking("f3")}, 2, false, false,
			"1 blocking finding(s) of the review stand at bbbbbbb after 2 repair round(s): f3 greet.go:7; /roadmap dismiss ID", []string{"f3"}, []string{"f0", "f1", "f2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s State
			ledger := s.Ledger(before)
			ledger.Open, ledger.Closed = slices.Clone(ledger.Open), slices.Clone(ledger.Closed)
			got, f, ok := s.Review("bbbbbbbbbb", ledger, review.Result{Findings: tc.findings}, tc.round, 2)
			if ok != tc.ok || f.Repairable != tc.repairable || !strings.Contains(f.Reason, tc.reason) {
				t.Fatalf("Review = %+v, %v; want ok %v, repairable %v, a reason saying %q", f, ok, tc.ok, tc.repairable, tc.reason)
			}
			if !ok && (f.Class != failure.ReviewBlocked || !strings.Contains(f.Task, "greet.go")) {
				t.Errorf("failure = %+v, want review_blocked with the findings as the task", f)
			}
			var open, closed []string
			for _, o := range got.Open {
				open = append(open, o.ID)
			}
			for _, c := range got.Closed {
				closed = append(closed, c.ID)
			}
			if got.SHA != "bbbbbbbbbb" || !cmp.Equal(open, tc.open) || !cmp.Equal(closed, tc.closed) {
				t.Errorf("ledger = %s open %v closed %v; want bbbbbbbbbb open %v closed %v", got.SHA, open, closed, tc.open, tc.closed)
			}
			if again := s.Ledger(record.ReviewLedger{}); again.SHA != got.SHA {
				t.Errorf("the ledger this Job left is at %s, want %s", again.SHA, got.SHA)
			}
			if reviewed := s.Reviewed(); (reviewed == "bbbbbbbbbb") != tc.ok {
				t.Errorf("reviewed = %q with ok %v", reviewed, tc.ok)
			}
			lines := s.CommentLines(nil, "cccccccccc")
			if !strings.Contains(lines, "Review at bbbbbbb:") {
				t.Errorf("comment lines %q, want the review at the ledger's head", lines)
			}
		})
	}
}

// TestPassedAt: a head the ledger passed already is not reviewed again and
// may be marked ready; another is not.
func TestPassedAt(t *testing.T) {
	var s State
	if s.PassedAt(record.ReviewLedger{SHA: "aaa", Open: []record.OpenFinding{{ID: "f1"}}}, "aaa") || s.Reviewed() != "" {
		t.Error("a head with an open finding passed")
	}
	if !s.PassedAt(record.ReviewLedger{SHA: "aaa"}, "aaa") || s.Reviewed() != "aaa" {
		t.Errorf("the ledger's clean head did not pass (reviewed %q)", s.Reviewed())
	}
}

// TestF2PAndSides: only a `fails` command that passed before the group
// fails it; what a group beside others measured comes back to the Job.
func TestF2PAndSides(t *testing.T) {
	var s State
	for _, tc := range []struct {
		group int
		f     F2P
		ok    bool
	}{
		{3, F2P{Status: F2PHeld, Detail: "`go test -run TestX` failed before"}, true},
		{1, F2P{Status: F2PNotChecked, Detail: "no isolation boundary"}, true},
		{2, F2P{Status: F2PFailed, Detail: "passed before:\nthe test does not test it"}, false},
	} {
		if ok := s.SetF2P(tc.group, tc.f); ok != tc.ok {
			t.Errorf("SetF2P(group %d, %s) = %v, want %v", tc.group, tc.f.Status, ok, tc.ok)
		}
	}
	side := s.ForSide()
	if side.f2p != nil || side.strengths != nil {
		t.Fatal("a side starts with the Job's measurements")
	}
	side.SetF2P(4, F2P{Status: F2PHeld, Detail: "held"})
	side.Strength(4, strength.Report{Generated: 1, Killed: 1, Score: 1, Passed: true})
	s.Take(side)
	want := "\nFail-to-pass of this Job's groups:\n\n" +
		"- group 1: **not checked**: no isolation boundary\n" +
		"- group 2: **failed**: passed before: the test does not test it\n" +
		"- group 3: **held**: `go test -run TestX` failed before\n" +
		"- group 4: **held**: held\n"
	lines := s.CommentLines(nil, "")
	if !strings.HasPrefix(lines, want) || !strings.Contains(lines, "| 4 | 1 | 1 | 0 | 0 | 0 | 1.00 |") {
		t.Errorf("comment lines:\n%s\nwant the fail-to-pass in group order, then group 4's strength", lines)
	}
}
