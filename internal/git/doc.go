// Package git drives the git command line for implement: the work branch
// (roadmap/<issue>-<slug>), one commit per passed group carrying a
// `Roadmap-Group: N` trailer, a WIP commit when a Job yields mid-group, push
// with non-fast-forward and hook rejections told apart, ls-remote to reconcile
// the published_sha mark, rebase and merge with the list of conflicting files,
// and the group commits read back from the branch so a Job can trust git over
// a record that lags behind it.
//
// It runs the real git binary with the allow-listed part of the environment
// the caller injects (env.go: no token, no model key, nothing of the Actions
// runtime), plus GIT_TERMINAL_PROMPT=0, so a missing credential fails
// instead of waiting for a prompt no one will answer. No credential is ever
// put on a command line: Repo.Authenticate gives one, through the
// environment, to push, fetch and ls-remote alone. Every call takes a
// context and is killed when it ends. Failures are *Error values that keep git's stderr unmasked in
// a field, for the caller to mask before it writes it anywhere.
//
// The work tree is hostile (harden.go): nothing it or its .git holds runs in
// this package's git, and a repository nested in it is inert: never
// consulted, and refused by every commit (*NestedRepository, nested.go).
package git
