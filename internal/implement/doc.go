// Package implement is the group runner: one GitHub job (a "Job") of the
// implement stage. For each task group of the plan not yet passed it runs an
// agent step with repair rounds against the group's scoped checks, commits,
// pushes and writes the group mark; then it watches the PR checks and marks
// the PR ready. Every Job ends by writing its typed result as the last mark.
//
// The runner is crash-only: everything a continuation needs is in git (group
// commits found by trailer) and in the issue record (marks), so a Job killed
// at any moment is resumed by the next Job without repeating passed work or
// losing spend. docs/implement.md describes the phases and the bounds.
package implement
