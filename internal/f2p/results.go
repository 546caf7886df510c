package f2p

import (
	"fmt"
	"sort"
)

// Status is how one test ended in one run.
type Status string

const (
	Pass Status = "pass"
	Fail Status = "fail"
	Skip Status = "skip"
)

// Limits on what a parser keeps from output nobody here controls.
const (
	// MaxTests is the most distinct tests one run may report.
	MaxTests = 200_000
	// MaxNameLen bounds a test's name in bytes; a longer one is cut.
	MaxNameLen = 1024
	// MaxLine bounds one line of `go test -json`; a longer line is skipped
	// (go test writes a test's output in lines of its own, far shorter).
	MaxLine = 1 << 20
)

// Test is one test's result in one run.
type Test struct {
	Name string
	// Group is what the test belongs to (its Go package, its JUnit suite
	// file); a test absent from a run whose group failed as a whole did not
	// pass there.
	Group  string
	Status Status
}

// Results are the tests of one run.
type Results struct {
	Tests map[string]Test
	// FailedGroups are the groups whose run failed as a whole: a Go package
	// that did not build, or whose test binary died between tests.
	FailedGroups map[string]bool
	// FailedRun: the run failed as a whole and reported no test (a JUnit
	// runner whose build failed wrote no report); no test passed in it.
	FailedRun bool
}

func newResults() *Results {
	return &Results{Tests: map[string]Test{}, FailedGroups: map[string]bool{}}
}

// set records a test's status. A test reported twice (a rerun, two JUnit
// files) keeps its worst status: a failure is not hidden by a later pass.
func (r *Results) set(t Test) error {
	t.Name = cut(t.Name, MaxNameLen)
	old, seen := r.Tests[t.Name]
	if !seen && len(r.Tests) >= MaxTests {
		return fmt.Errorf("more than %d tests in one run", MaxTests)
	}
	if seen && rank(old.Status) > rank(t.Status) {
		t.Status = old.Status
	}
	r.Tests[t.Name] = t
	return nil
}

func rank(s Status) int {
	switch s {
	case Fail:
		return 2
	case Skip:
		return 1
	}
	return 0
}

// passed reports whether the run passed the test.
func (r *Results) passed(name string) bool {
	t, ok := r.Tests[name]
	return ok && t.Status == Pass
}

// failed reports whether the run failed the test: it failed, or it is absent
// and its group failed as a whole.
func (r *Results) failed(name, group string) bool {
	if t, ok := r.Tests[name]; ok {
		return t.Status == Fail
	}
	return r.FailedRun || group != "" && r.FailedGroups[group]
}

// Compare sorts the tests of a base run and a head run. Every list is sorted.
func Compare(base, head *Results) Report {
	rep := Report{F2P: []string{}, P2P: []string{}, Broken: []string{}, Failing: []string{}}
	for name, t := range head.Tests {
		switch {
		case t.Status == Pass && base.passed(name):
			rep.P2P = append(rep.P2P, name)
		case t.Status == Pass:
			// Failed, skipped or absent at the base.
			rep.F2P = append(rep.F2P, name)
		case t.Status == Fail && !base.passed(name):
			rep.Failing = append(rep.Failing, name)
		}
	}
	for name, t := range base.Tests {
		if t.Status == Pass && head.failed(name, t.Group) {
			rep.Broken = append(rep.Broken, name)
		}
	}
	for _, l := range [][]string{rep.F2P, rep.P2P, rep.Broken, rep.Failing} {
		sort.Strings(l)
	}
	rep.Passed = len(rep.F2P) > 0 && len(rep.Broken) == 0
	return rep
}

// cut shortens s to at most n bytes on a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
