package ready

import (
	"fmt"
	"sort"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/review"
	"github.com/roadmap-dev/roadmap/internal/strength"
	"github.com/roadmap-dev/roadmap/internal/verdict"
)

// State is the checks before ready as one Job left them.
type State struct {
	// f2p is the fail-to-pass of this Job's groups.
	f2p map[int]F2P
	// strengths is this Job's test strength per group; last the last
	// measurement, and strengthFailed whether the last failing round was
	// the test strength, not a check.
	strengths      []record.GroupStrength
	last           strength.Report
	strengthFailed bool
	// res is the last review, ledger the ledger as this Job left it, and
	// reviewed the head the review passed at (ready only there).
	res      *review.Result
	ledger   *record.ReviewLedger
	reviewed string
}

// ForSide is the state a group that runs beside others starts with: the
// review's part shared, none of this Job's groups' measurements (Take
// brings the side's back).
func (s State) ForSide() State {
	s.f2p, s.strengths = nil, nil
	return s
}

// Take brings what a group run beside others measured into s: its
// fail-to-pass and test strength.
func (s *State) Take(side State) {
	for n, f := range side.f2p {
		s.SetF2P(n, f)
	}
	for _, gs := range side.strengths {
		s.strengths = upsertStrength(s.strengths, gs)
	}
}

// CommentLines are the PR comment's lines on the checks before ready: this
// Job's fail-to-pass, every group's test strength (recorded holds the
// earlier Jobs'), the surviving mutants of a weak group, and the review's
// findings; head is the head when no review left a ledger.
func (s *State) CommentLines(recorded []record.GroupStrength, head string) string {
	return s.f2pLines() + s.qualityLines(recorded, head)
}

func (s *State) f2pLines() string {
	if len(s.f2p) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nFail-to-pass of this Job's groups:\n\n")
	groups := make([]int, 0, len(s.f2p))
	for n := range s.f2p {
		groups = append(groups, n)
	}
	sort.Ints(groups)
	for _, n := range groups {
		f := s.f2p[n]
		fmt.Fprintf(&b, "- group %d: **%s**: %s\n", n, f.Status, verdict.OneLine(f.Detail))
	}
	return b.String()
}

func (s *State) qualityLines(recorded []record.GroupStrength, head string) string {
	var b strings.Builder
	if rows := s.Rows(recorded); len(rows) > 0 {
		b.WriteString("\nTest strength (mutants on each group's changed, covered lines):\n\n")
		b.WriteString("| group | mutants | killed | survived | not covered | timed out | score |\n|---|---|---|---|---|---|---|\n")
		for _, g := range rows {
			if g.Unmeasured != "" {
				fmt.Fprintf(&b, "| %d | — | — | — | — | — | not measured: %s |\n", g.Group, verdict.OneLine(g.Unmeasured))
				continue
			}
			fmt.Fprintf(&b, "| %d | %d | %d | %d | %d | %d | %.2f |\n", g.Group, g.Generated, g.Killed, g.Survived, g.NotCovered, g.TimedOut, g.Score)
		}
		if s.strengthFailed && len(s.last.Mutants) > 0 {
			b.WriteString("\nSurviving mutants, each a change the tests did not notice:\n\n")
			b.WriteString(s.last.RepairTask(3))
			b.WriteString("\n")
		}
	}
	if s.res != nil {
		at := head
		if s.ledger != nil {
			at = string(s.ledger.SHA)
		}
		fmt.Fprintf(&b, "\nReview at %s: %d finding(s), %d blocking.\n", short(at), len(s.res.Findings), len(s.res.Blocking()))
		if len(s.res.Findings) > 0 {
			b.WriteString("\n")
			b.WriteString(s.res.Table())
			b.WriteString("\nA person with write access dismisses a finding with `/roadmap dismiss ID` on the issue; it is never raised again.\n")
		}
	}
	return b.String()
}

func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}
