// Package cilayout holds TestNothingDroppedFromCI, the check that the CI
// layout of docs/testing.md drops nothing: every test of every package, every
// fault kind, every mutant and every end-to-end scenario runs on every change,
// itself or through the sample that stands for it, and what runs only on a
// schedule says what stands for it per change.
//
//	go test ./tools/cilayout -run TestNothingDroppedFromCI [-update]
//
// It reads the code (go list, go/parser, the Makefile and scripts as text)
// and runs none of the suites, so it takes seconds. -update rewrites
// testdata/tests.golden, the tests the check started from, to the tests the
// code has now: a test removed on purpose shows as a line gone from it.
package cilayout
