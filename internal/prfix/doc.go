// Package prfix decides what a repair Job does about the comments people
// left on an item's PR: a "changes requested" review, review comments on
// lines (with their threads of replies) and `/roadmap fix …` comments on
// the PR's conversation. Given what the PR shows, each author's permission
// and the comment ledger (implement.comments), it says which comments the
// Job addresses (one batch: a review with its line comments, or one
// comment), which it ignores and logs (authors without write access), and
// which permissions the Job must read first. After the Job, Settle gives
// the ledger to write, so no comment is addressed twice and none is
// forgotten.
//
// Like internal/next, the package is a pure decision: it imports no client
// of GitHub, git or a model, no file system, network or clock; the
// permissions and the time of the read are inputs (TestImportDirection
// holds it). docs/review.md, "A person's review", describes the rules.
package prfix
