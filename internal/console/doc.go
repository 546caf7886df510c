// Package console is one item's timeline across its Jobs, read the way a
// person follows a run: the stage and implement Jobs in order, each with its
// phase, group, spend, result and trace events, then — for a Job still
// running — what lands as it runs, with a status line (phase, group k of n,
// spend against the item budget, time left against the Job's deadline).
//
// It reads only what GitHub serves: the record comment (DESIGN §3), the
// run's jobs list, and a Job's log once that Job has completed (GitHub
// serves no REST log while a job runs). Every read a poll repeats is
// conditional, so a poll that finds nothing new is a free 304. Each event
// gets a sequence number the first time it is seen and is never printed
// again. Text from the record is untrusted: it is masked and one-lined
// before it reaches an event.
package console
