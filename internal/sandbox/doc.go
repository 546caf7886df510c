// Package sandbox is the isolation boundary every process the model's work can
// influence runs inside: the agent's tool commands, the group checks, verify
// and `fails` commands and fail-to-pass runs.
//
// The boundary is the operating system, not a parser of command lines: model-
// written code (a test, a Makefile, a go run) may do anything its user may do,
// so that user must be one that can reach no credential. On Linux, with root
// (a container, a test machine, or roadmap re-run under passwordless sudo on a
// hosted runner), processes run as a separate unprivileged user that owns the
// work tree but not its .git, cannot enter the runner's temporary folder, its
// workflow command files or its home, has its own HOME and caches, and gets an
// environment built from an allow-list. Where that cannot be set up the
// boundary is unavailable and callers refuse to run model-written commands,
// unless the configuration says `isolation: none` (then every summary says the
// run was not isolated). docs/isolation.md has the threat model.
package sandbox
