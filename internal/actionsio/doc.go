// Package actionsio is how the roadmap binary talks to the GitHub Actions runner:
// inputs, outputs ($GITHUB_OUTPUT, with a random delimiter per value so untrusted
// text cannot forge another output), the step summary ($GITHUB_STEP_SUMMARY),
// masks and annotations (workflow commands on stdout).
//
// Workflow commands go through github.com/sethvargo/go-githubactions; the file
// commands are written here because that library uses a fixed delimiter.
// PlainLine makes model and tool text one line the runner cannot read as a
// workflow command; every line roadmap prints that holds such text passes it.
// Outside Actions (no GITHUB_OUTPUT) outputs are collected in memory so the
// command line and tests can read them.
package actionsio
