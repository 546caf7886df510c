package ready

import (
	"fmt"
	"sort"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/strength"
	"github.com/roadmap-dev/roadmap/internal/verdict"
)

// Measured is the verdict on one measurement of a group's test strength.
type Measured struct {
	Row    record.GroupStrength
	Passed bool
	// Task is the repair task of a weak group (the survivors as diffs, or
	// what the tests miss); "" when it passed.
	Task string
	// Outcome is the trace's word (passed, failed, unmeasured); Line the
	// log's and the PR comment's.
	Outcome, Line string
}

// Round starts a round of a group's checks: nothing has failed in it yet.
func (s *State) Round() { s.strengthFailed = false }

// Unmeasurable notes that group's tests could not be measured (the
// unmutated tests fail, or git could not say what changed) and returns
// what the agent sees, as it sees a failing check's log.
func (s *State) Unmeasurable(why string) string {
	s.strengthFailed = true
	return "roadmap: test strength could not be measured: " + why
}

// Strength judges group's measurement rep and keeps it.
func (s *State) Strength(group int, rep strength.Report) Measured {
	gs := record.GroupStrength{Group: group, Generated: rep.Generated, Killed: rep.Killed, Survived: rep.Survived,
		NotCovered: rep.NotCovered, TimedOut: rep.TimedOut, Score: rep.Score}
	passed, why := strengthVerdict(rep)
	if why != "" {
		gs.Score, gs.Unmeasured = 0, why
	}
	s.strengths = upsertStrength(s.strengths, gs)
	s.last = rep
	s.strengthFailed = !passed
	m := Measured{Row: gs, Passed: passed, Outcome: strengthOutcome(gs, passed), Line: strengthLine(gs)}
	if !passed {
		m.Task = strengthTask(rep)
	}
	return m
}

// StrengthFailed says the last failing round of a group was its test
// strength, not a check: its stop is StrengthStop's.
func (s *State) StrengthFailed() bool { return s.strengthFailed }

// StrengthStop is a group's stop when its last failing round was the test
// strength, after rounds repair rounds, under floor.
func (s *State) StrengthStop(group, rounds int, floor float64) verdict.Failure {
	rep := s.last
	reason := fmt.Sprintf("group %d: test strength %.2f under the floor %.2f (%d mutants: %d killed, %d survived, %d timed out) after %d rounds",
		group, rep.Score, floor, rep.Generated, rep.Killed, rep.Survived, rep.TimedOut, rounds)
	if rep.Reason != "" && rep.Measured() == 0 || rep.TimedOut == rep.Measured() {
		reason = fmt.Sprintf("group %d: %s (after %d rounds)", group, rep.Reason, rounds)
	}
	return verdict.Failure{Class: failure.TestsWeak, Reason: reason, Task: strengthTask(rep)}
}

// Measuring says this Job measured a group's strength: its rows ride on
// the group's mark.
func (s *State) Measuring() bool { return len(s.strengths) > 0 }

// Rows is every group's strength: recorded (earlier Jobs'), with this Job's
// measurements over them, in group order.
func (s *State) Rows(recorded []record.GroupStrength) []record.GroupStrength {
	rows := recorded
	for _, g := range s.strengths {
		rows = upsertStrength(rows, g)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Group < rows[j].Group })
	return rows
}

// strengthTask is the repair instruction of a weak group: the survivors as
// diffs, or, when none survived (nothing covered, every mutant timed out),
// what the tests miss.
func strengthTask(rep strength.Report) string {
	if task := rep.RepairTask(5); task != "" {
		return task
	}
	return fmt.Sprintf("The group's tests do not measure its change: %s. Add tests that run the changed lines and check what they do, quickly enough to finish within the time budget of a mutant's run.", rep.Reason)
}

// strengthVerdict is whether a group's measurement lets it pass, and, when
// no score stands for it, why. Nothing this group changed could be mutated
// (no Go code, only lines with nothing to mutate), or no mutant made for it
// builds (the mutation's limit, which no test the agent adds can lift): the
// group is not measured and goes on, and says so. Mutants that built and
// that no test ran (not covered), or that all timed out, never pass.
func strengthVerdict(rep strength.Report) (bool, string) {
	switch {
	case rep.Generated == 0:
		return true, unmeasured(rep)
	case rep.Errors == rep.Generated:
		return true, fmt.Sprintf("none of the %d mutants of its changed lines builds", rep.Errors)
	}
	return rep.Passed, ""
}

// unmeasured says why a group has no score.
func unmeasured(rep strength.Report) string {
	var parts []string
	for _, n := range rep.NotMeasured {
		parts = append(parts, n.String())
	}
	if len(rep.Unsupported) > 0 {
		parts = append(parts, "mutation is not yet available for "+strings.Join(languagesOf(rep.Unsupported), ", "))
	}
	if rep.Skipped > 0 {
		parts = append(parts, fmt.Sprintf("%d changed lines with nothing to mutate", rep.Skipped))
	}
	if len(parts) == 0 {
		return "no changed line of Go, Python or JavaScript code"
	}
	return strings.Join(parts, "; ")
}

// languagesOf names the file types of unsupported files, each once.
func languagesOf(files []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range files {
		ext := f
		if i := strings.LastIndexByte(f, '.'); i >= 0 {
			ext = f[i:]
		}
		if !seen[ext] {
			seen[ext] = true
			out = append(out, ext)
		}
	}
	sort.Strings(out)
	return out
}

func upsertStrength(gs []record.GroupStrength, g record.GroupStrength) []record.GroupStrength {
	for i := range gs {
		if gs[i].Group == g.Group {
			gs[i] = g
			return gs
		}
	}
	return append(gs, g)
}

func strengthOutcome(g record.GroupStrength, passed bool) string {
	switch {
	case g.Unmeasured != "":
		return "unmeasured"
	case passed:
		return "passed"
	}
	return "failed"
}

// strengthLine is a group's strength in the words of the log and the PR
// comment.
func strengthLine(g record.GroupStrength) string {
	if g.Unmeasured != "" {
		return "not measured: " + g.Unmeasured
	}
	return fmt.Sprintf("score %.2f: %d mutants, %d killed, %d survived, %d not covered, %d timed out",
		g.Score, g.Generated, g.Killed, g.Survived, g.NotCovered, g.TimedOut)
}
