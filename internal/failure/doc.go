// Package failure is the failure taxonomy of DESIGN §4 and the classifier that
// maps what a failed Job left behind (its log, its conclusion, its exit code,
// an in-process error) to exactly one class of that taxonomy.
//
// The taxonomy is one table in code (Table): every class has one action, the
// typed result that action leads to, and whether the product takes it without
// a person. The classifier (Classify) streams a GitHub Actions job log line by
// line in bounded memory and decides by a fixed, documented precedence
// (docs/taxonomy.md), so the same log always gives the same class and the line
// that decided it. ClassifyError does the same for a Go error in process.
//
// The package imports nothing internal: the GitHub layer, git, implement and
// report all depend on it, never the other way round.
package failure
