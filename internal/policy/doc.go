// Package policy is the shell policy the agent's tools run under: one table,
// in configuration, that says which programs may run, with which arguments,
// for how long and with how much output kept. It splits a command string into
// argv without a shell (pipes, redirections, chaining and substitutions are
// refused), keeps every path inside the workspace (symlink escapes included),
// and runs tool processes in their own process group with a scrubbed
// environment: no token, key, secret or credential reaches them, and go and
// git are told not to download or prompt.
//
// The table says which commands are sensible for the agent, reading options
// the way each program does (bundles, abbreviations, Go's two dashes); it is
// not the security boundary (a permitted `go test` runs whatever the
// repository's tests do). docs/policy.md says what it is and is not, and
// docs/isolation.md describes the boundary.
package policy
