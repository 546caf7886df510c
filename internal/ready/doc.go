// Package ready holds the checks before ready of an implement Job as one
// state its loop keeps (docs/review.md, docs/strength.md): each group's
// fail-to-pass, the test strength of each group's changed lines and whether
// a group's last failing round was it, and the independent review of the
// whole diff at the head with its ledger and the head it passed at. The
// loop runs the measurements (the tree before a group, the mutants, the
// reviewer); this package judges what they found, returns a verdict.Failure
// where it ends a step, and renders the lines of the PR comment.
package ready
