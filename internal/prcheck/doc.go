// Package prcheck is the PR check job behind `roadmap checks`: it finds the
// OpenSpec change a commit carries, runs each task group's verify commands
// and the configured checks inside the isolation boundary, checks the before
// half of fail-to-pass in git worktrees, and reports the outcome as the
// roadmap/checks commit status, Actions annotations, outputs and a step
// summary. The verb in internal/cli only parses flags, wires the environment
// in and prints the Result.
//
// It lives apart from package checks, which runs commands for implement too
// and may import only the policy and the sandbox: the job needs git, GitHub,
// the configuration and the event on top of that.
package prcheck
