// Package f2p decides fail-to-pass across a change: it runs a repository's
// tests at a base commit and at a head commit, each in a worktree of its own
// and inside the isolation boundary, and sorts every test into FAIL_TO_PASS
// (did not pass at the base, passes at the head), PASS_TO_PASS (passes at
// both) and broken (passed at the base, fails at the head). It is the logic
// of `roadmap ci fail-to-pass`.
//
// Test results come from `go test -json` (ParseGoTest), from JUnit XML files
// the test command writes (ParseJUnit), or, for any other command, from its
// exit code alone: one pseudo-test named by the command. Test output is
// written by code nobody here controls: both parsers bound what they read and
// keep, and are fuzzed.
//
// It is also the one place a task group's own fail-to-pass is decided, for
// implement (before it commits the group) and for the PR check (on the pushed
// history) alike: BeforeGroup is the rule for the tree before a group,
// GroupCheck makes that tree with the group's test files laid over it
// (IsTestFile) and runs the group's `fails` commands there through the
// caller's isolation boundary, and Judge decides fail→pass from the two
// sides. Neither caller chooses the before tree by a rule of its own.
package f2p
