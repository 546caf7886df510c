// Package policy is the shell policy the agent's tools run under: one table,
// in configuration, that says which programs may run, with which arguments,
// for how long and with how much output kept. It splits a command string into
// argv without a shell (pipes, redirections, chaining and substitutions are
// refused), keeps every path inside the workspace (symlink escapes included),
// and runs tool processes in their own process group with a scrubbed
// environment: no token, key, secret or credential reaches them, and go and
// git are told not to download or prompt.
//
// The policy stops a model from reaching the network or the credentials by the
// obvious routes; it is not a sandbox against hostile repository code (a
// permitted `go test` runs whatever the repository's tests do). docs/policy.md
// says what it does and does not protect.
package policy
