// Package eval scores roadmap against its golden sets (testdata/golden/):
// `roadmap eval stage` judges plans with the plan gates and OpenSpec's
// validation (or runs a whole stage Job on recorded model exchanges) and
// scores the findings against the expected ones by F1, plus whether the plan
// is OpenSpec-valid as expected; `roadmap eval implement` replays recorded
// items through the real implement Job against the fake GitHub and a local
// bare remote and scores each the way SWE-bench does: FULL, PARTIAL or NO,
// from the fail-to-pass and pass-to-pass tests at the end. docs/eval.md is
// the reference.
//
// A golden set is a directory anyone can pass with --golden or --fixtures:
// its files are read with bounds, and a case that does not parse is an error
// naming the file, never a score.
package eval
