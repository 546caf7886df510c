// Package deptest holds the tests that keep the import direction of DESIGN §5:
// the pure packages (record, event, plan, redact, failure, trace, policy) import
// nothing internal (plan only the leaf nofollow, for its file I/O), the agent
// imports nothing internal but nofollow and declares the interfaces it needs,
// and only the phase packages wire things together. And
// production code never imports the fake GitHub (internal/githubfake): only the
// fake itself, the shared test world, the `roadmap dev` verbs, the demo, eval,
// fault and end-to-end harnesses and the tools may, besides any _test.go file.
// And no test bounds a time measured on the machine's clock
// (TestNoWallClockBounds, docs/testing.md).
package deptest
