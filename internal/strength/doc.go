// Package strength measures how strong a change's tests are by mutation on
// the changed lines: for each changed, covered line of Go code it makes one
// mutant with go/ast (a condition negated, a boundary shifted, arithmetic
// swapped, a return replaced by zero values, a call removed), writes it into
// the work tree, runs the group's verify tests behind the isolation boundary
// within a time budget, and restores the original bytes. A mutant the tests
// still pass on survived: the tests do not pin that line's behaviour.
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
