// Package sandbox is the isolation boundary every process the model's work can
// influence runs inside: the agent's tool commands, the group checks, verify
// and `fails` commands and fail-to-pass runs.
//
// The boundary is the operating system, not a parser of command lines: model-
// written code (a test, a Makefile, a go run) may do anything its user may do,
// so that user must be one that can reach no credential. On Linux, with root
// (a container, a test machine, or roadmap re-run under passwordless sudo on a
// hosted runner), each command runs as a uid of the boundary's own, in fresh
// PID, mount and network namespaces (nothing it starts outlives it; only its
// own loopback, or no network), under Landlock (it writes only the work tree,
// not its .git, and its own HOME; it reads only the system, the toolchains and
// the module cache), under a system-call filter (no UNIX sockets, no user
// namespaces, no keyring: seccomp_linux.go), with a fresh session keyring, no
// inherited descriptor and an environment built from an allow-list; Close
// kills whatever of the boundary's is still running. The
// namespaces' first process is this package's init (kernel_linux.go): the same
// binary, re-executed under the name roadmap-sandbox-init. Where that cannot be set up the
// boundary is unavailable and callers refuse to run model-written commands,
// unless the configuration says `isolation: none` (then every summary says the
// run was not isolated). docs/isolation.md has the threat model.
package sandbox
