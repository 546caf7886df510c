package strength

import (
	"fmt"
	"sort"
	"strings"
)

// Summary is a few lines a person reads: the verdict, the counts, the
// score, and the changed files mutation did not measure, by language.
func (r Report) Summary() string {
	var b strings.Builder
	verdict := "passed"
	if !r.Passed {
		verdict = "failed: " + r.Reason
	}
	fmt.Fprintf(&b, "test strength %s\n", verdict)
	fmt.Fprintf(&b, "%d mutants generated: %d killed, %d survived, %d timed out, %d not covered, %d did not build; %d skipped\n",
		r.Generated, r.Killed, r.Survived, r.TimedOut, r.NotCovered, r.Errors, r.Skipped)
	if n := r.Measured(); n > 0 {
		fmt.Fprintf(&b, "score %.2f (%d of %d measured mutants killed; floor %.2f)\n", r.Score, r.Killed, n, r.Floor)
	} else {
		b.WriteString("no score: no mutant was measured\n")
	}
	if line := r.unsupportedLine(); line != "" {
		b.WriteString(line + "\n")
	}
	for _, n := range r.NotMeasured {
		b.WriteString("not measured, no score: " + n.String() + "\n")
	}
	return b.String()
}

// unsupportedLine says plainly which changed files mutation does not cover
// yet, grouped by language; "" when there are none.
func (r Report) unsupportedLine() string {
	if len(r.Unsupported) == 0 {
		return ""
	}
	by := map[string][]string{}
	for _, f := range r.Unsupported {
		lang := language(f)
		if lang == "" {
			lang = "other"
		}
		by[lang] = append(by[lang], f)
	}
	langs := make([]string, 0, len(by))
	for l := range by {
		langs = append(langs, l)
	}
	sort.Strings(langs)
	parts := make([]string, 0, len(langs))
	for _, l := range langs {
		parts = append(parts, fmt.Sprintf("%s (%s)", l, listCut(by[l], 5)))
	}
	return "mutation is not yet available for " + strings.Join(parts, ", ") + ": those changes were not measured and have no score"
}

// listCut joins the first n items and says how many more there are.
func listCut(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:n], ", ") + fmt.Sprintf(" and %d more", len(items)-n)
}

// maxRepairChars bounds the repair task's text, so it fits a small model's
// window whatever the survivors' diffs hold.
const maxRepairChars = 6000

// RepairTask is the instruction for a repair round on the survivors: for
// each, at most max of them (max <= 0: all that fit), "add a test that fails
// on this mutant" and the mutant as a diff. It is "" when nothing survived.
func (r Report) RepairTask(max int) string {
	var survivors []Mutant
	for _, m := range r.Mutants {
		if m.Status == Survived {
			survivors = append(survivors, m)
		}
	}
	if len(survivors) == 0 {
		return ""
	}
	if max <= 0 || max > len(survivors) {
		max = len(survivors)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The tests still pass when the changed code is broken on purpose: %d mutants survived. "+
		"For each mutant below, add a test that fails on this mutant and passes on the code as it is. "+
		"Do not change the code under test to get rid of the mutant, and do not apply the diffs: "+
		"each shows a change the tests must catch.\n", len(survivors))
	shown := 0
	for _, m := range survivors[:max] {
		diff := cut(m.Diff, maxRepairChars/3)
		if !strings.HasSuffix(diff, "\n") {
			diff += "\n"
		}
		fence := "```"
		for strings.Contains(diff, fence) {
			fence += "`"
		}
		part := fmt.Sprintf("\nMutant %d: %s:%d (%s)\n%sdiff\n%s%s\n", shown+1, m.File, m.Line, m.Operator, fence, diff, fence)
		if b.Len()+len(part) > maxRepairChars && shown > 0 {
			break
		}
		b.WriteString(part)
		shown++
	}
	if shown < len(survivors) {
		fmt.Fprintf(&b, "\n%d more mutants survived; they are not shown here.\n", len(survivors)-shown)
	}
	return b.String()
}
