// Package e2e runs the project's real workflows and actions end to end with
// nektos/act on the host (no Docker, no network but loopback), against
// servers the tests start. Its driver snapshots the source tree into a fresh
// git repository with a bare origin, stands in for every remote action act
// would otherwise fetch, runs act with a scrubbed environment, and turns act's
// JSON log into job and step results the tests assert on.
//
// The scenarios play one issue's whole life through the example caller and
// the reusable roadmap workflow: a Job that yields and its continuation
// (TestE2EYieldAndContinue), a Job killed with SIGKILL and its continuation
// (TestE2EKilled), against the demo's fake GitHub and replay model.
//
// The tests skip unless ROADMAP_E2E=1; `make e2e` installs the pinned act and
// sets it. docs/e2e.md explains the flags, the guarded steps and act's limits.
package e2e
