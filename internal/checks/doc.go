// Package checks runs the scoped checks of a plan's task group: the group's
// verify commands and the configured ones (`go vet ./...`), each split into
// argv and run in the workspace by a Runner — in production the shell policy,
// through the adapter in policy.go. It also runs the fail-to-pass half that
// comes before a behaviour group's change: each `fails` command must fail on
// the tree without the change, then pass with it.
//
// A Report says what ran and how each command ended; when a check fails it
// keeps a bounded, masked tail of that command's output, the log implement
// records (implement.check_log) and hands to the next agent step. A command
// that fails is a finding in the Report; an error is returned only when a
// check could not be run at all (refused by the policy, a command that does
// not split, a cancelled context).
package checks
