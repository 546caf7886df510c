package eval

import "math"

// Finding is one finding as a case expects it, or as the tool produced it,
// reduced to what the score compares.
type Finding struct {
	Rule string `json:"rule"`
	File string `json:"file"`
	// Line is 1-based; 0 in an expected finding matches any line.
	Line int `json:"line,omitempty"`
}

// matches reports whether produced finding p meets expected finding e: the
// same rule and file, and the same line when e gives one.
func (e Finding) matches(p Finding) bool {
	return e.Rule == p.Rule && e.File == p.File && (e.Line == 0 || e.Line == p.Line)
}

// Match pairs expected with produced findings one to one and returns the
// number of pairs (true positives). Expected findings that give a line are
// paired first, so a line-less expectation never takes the finding a precise
// one needs.
func Match(expected, produced []Finding) int {
	missed, _ := unmatched(expected, produced)
	return len(expected) - len(missed)
}

// F1 is the harmonic mean of precision and recall of produced against
// expected. No expected and none produced is a perfect 1; one side empty
// and the other not is 0.
func F1(expected, produced []Finding) (f1, precision, recall float64) {
	if len(expected) == 0 && len(produced) == 0 {
		return 1, 1, 1
	}
	tp := float64(Match(expected, produced))
	if len(produced) > 0 {
		precision = tp / float64(len(produced))
	}
	if len(expected) > 0 {
		recall = tp / float64(len(expected))
	}
	if precision+recall == 0 {
		return 0, precision, recall
	}
	return 2 * precision * recall / (precision + recall), precision, recall
}

// The weights of a stage case's score: the findings matter most; whether the
// plan is OpenSpec-valid as expected is a fifth.
const (
	WeightFindings = 0.8
	WeightValidity = 0.2
)

// StageScore is a stage case's score: 0.8·F1 + 0.2·validity, where validity
// is 1 when plan.Validate's OpenSpec verdict is the expected one.
func StageScore(f1 float64, validAsExpected bool) float64 {
	v := 0.0
	if validAsExpected {
		v = 1
	}
	return round(WeightFindings*f1 + WeightValidity*v)
}

// Verdict is an implement case's outcome, as SWE-bench names them.
type Verdict string

const (
	// Full: every expected F2P test fails at the base and passes at the end,
	// and every expected P2P test passes at both.
	Full Verdict = "FULL"
	// Partial: some of the expected tests hold, not all.
	Partial Verdict = "PARTIAL"
	// No: no expected F2P test passes at the end (or the item produced no
	// head to test).
	No Verdict = "NO"
)

// Score is the verdict as a number: FULL 1, PARTIAL 0.5, NO 0.
func (v Verdict) Score() float64 {
	switch v {
	case Full:
		return 1
	case Partial:
		return 0.5
	}
	return 0
}

// Judge is the verdict from the expected F2P and P2P tests and the tests the
// run sorted into F2P and P2P. A case with no expected F2P test cannot be
// FULL: an item that fixes nothing is not resolved.
func Judge(wantF2P, wantP2P, gotF2P, gotP2P []string) Verdict {
	f2p, p2p := set(gotF2P), set(gotP2P)
	fOK, pOK := 0, 0
	for _, t := range wantF2P {
		if f2p[t] {
			fOK++
		}
	}
	for _, t := range wantP2P {
		if p2p[t] {
			pOK++
		}
	}
	switch {
	case len(wantF2P) > 0 && fOK == len(wantF2P) && pOK == len(wantP2P):
		return Full
	case fOK == 0:
		return No
	}
	return Partial
}

func set(l []string) map[string]bool {
	m := make(map[string]bool, len(l))
	for _, s := range l {
		m[s] = true
	}
	return m
}

// Mean is the overall score of a set: the mean of its cases' scores, 0 for
// no case.
func Mean(scores []float64) float64 {
	if len(scores) == 0 {
		return 0
	}
	sum := 0.0
	for _, s := range scores {
		sum += s
	}
	return round(sum / float64(len(scores)))
}

// round keeps four decimals, so a score prints and compares the same way
// everywhere (0.1+0.2 is not 0.3 in floating point).
func round(x float64) float64 { return math.Round(x*1e4) / 1e4 }
