// Package prbody renders the body of an item's pull request, so that it
// stays true whichever Job wrote it last: the line that closes the issue,
// what the PR is now (the plan awaiting approval, implementing, ready,
// stopped), and the plan's task list with its ticks. Stage writes it when it
// opens the draft PR; implement rewrites it in the writes it already makes
// (the mark-ready request, the Job's last PR write).
package prbody
