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
// IsTestFile is the rule by which implement lays a group's test files over the
// tree before the group, for the group's own fail-to-pass.
package f2p
