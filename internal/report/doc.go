// Package report is the service side of the implement stage: the step that runs
// after every implement Job, whatever happened to it (a job with `needs:
// implement` and `if: always()`). It reads how the Job ended — the typed result
// the runner wrote, or, for a Job that was killed and wrote none, the job's
// conclusion and log — gives the ending exactly one failure class of the
// taxonomy (internal/failure), and takes that class's one action: a
// continuation Job, a return to stage, a question to a person, a wait for the
// next day, or a stop with its comment, label and commit status.
//
// A killed Job's spend since its last mark is read back from the spend lines in
// its log and added to the record, so the item's recorded spend equals the sum
// of every model call made. Spend per day across items is kept in an
// append-only ledger of comments on a dashboard issue (DayCheck).
//
// What the action is (the class's action and its caps) is decided apart,
// in internal/report/decide, and what a person's command says is read in
// internal/report/command; both are pure, and report keeps the effects.
//
// Run reads the issue once and writes the record at most once; Resume handles a
// reply to a needs-input question. docs/report.md is the reference.
package report
