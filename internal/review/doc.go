// Package review is the independent review of a change before it is marked
// ready: a reviewer model reads the diff against the plan, the issue's
// acceptance criteria and the groups' tests and answers with typed findings;
// a second call tries to refute each blocking one. Everything the models
// write is untrusted: findings are parsed defensively and bounded, a finding
// whose quoted code is not in the head (read inside the work tree, through
// no symlink) is dropped, and a finding the ledger holds as repaired or
// dismissed is never raised again.
package review
