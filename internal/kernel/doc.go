// Package kernel is the Job both phases run on: stage and implement are its
// two peers, each keeping only its own loop and options. A Job reads the issue
// and its record comment once, holds the spend (the item's before this Job and
// this Job's own), the Job's number, the notes and what the Job is doing; it is
// the one spend observer and the one writer of spend lines (the lines report
// reads back from a killed Job's log); every mark goes through its one write
// path, with the spend, the Job's number and its line of the phase's jobs key;
// and it gives the last mark a fresh context within the runner's SIGINT grace.
//
// What tells the phases apart comes in Options as a Phase, a descriptor each
// phase supplies (stage.Phase, implement.Phase): the kernel holds no branch
// on which phase it runs (deptest's TestNoPhaseSwitchInKernel).
//
// It lives below internal/job, which builds what a Job runs with (job.Open)
// and is the only caller of the two runners: stage and implement import the
// kernel, and internal/job imports them.
package kernel
