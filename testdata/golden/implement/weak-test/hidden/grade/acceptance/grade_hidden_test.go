// Package acceptance_test holds the acceptance for Grade, held back
// from the agent. It is a package of its own so that, at main, where Grade
// does not exist, only it fails to build: the grade package's own tests
// still run there.
package acceptance_test

import (
	"testing"

	"example.com/school/grade"
)

// TestHiddenGradeBands: 90 or more is an A, 80 to 89 a B, below 80 a C.
func TestHiddenGradeBands(t *testing.T) {
	for score, want := range map[int]string{
		100: "A", 95: "A", 90: "A",
		89: "B", 85: "B", 80: "B",
		79: "C", 50: "C", 0: "C",
	} {
		if got := grade.Grade(score); got != want {
			t.Errorf("Grade(%d) = %q, want %q", score, got, want)
		}
	}
}
