// Package strength measures how strong a change's tests are by mutation on
// the changed lines: for each changed, covered line of Go code it makes one
// mutant with go/ast (a condition negated, a boundary shifted, arithmetic
// swapped, a return replaced by zero values, a call removed), runs the
// group's verify tests on it behind the isolation boundary within a time
// budget, and leaves the tree as it was. A mutant the tests still pass on
// survived: the tests do not pin that line's behaviour.
//
// The tests never see a mutant's source: go builds it through -overlay and
// the test binaries run once the overlay is gone (hide.go). Only a command
// that cannot use an overlay (one that is not go test, build or vet) gets
// the mutant written into the tree, and the original bytes back after it. After a command's first kill it runs once
// more on the unmutated code the same way and must pass (the control run).
//
// The design follows Google's diff-based mutation testing (one mutant per
// changed, covered line; uninteresting lines skipped; survivors shown for
// review). Unlike tools that leave timed-out mutants out of the score, a
// timed-out mutant counts against it here, and a run in which no mutant was
// measured, or every one timed out, never passes. Changed files in languages
// with no mutation yet are named in the Report, never scored.
//
// The cover profile and every test output are written by code the model may
// have written: they are parsed defensively and bounded (ParseCoverProfile
// is fuzzed).
package strength
