// Package tracker is the completion check of a tracker issue: an issue
// whose work is its children. It reads, together, the native
// sub-issues (REST, 100 a page, with each child's state in the list) and the
// issue references in its task list (- [ ] #12, - [x] owner/repo#34, read in
// one batched GraphQL query per 100), walks children that are trackers
// themselves to GitHub's 8 levels with cycle detection, and classifies each
// child as done, dropped, open or unverifiable. The tracker is complete only
// when it has children and none is open. docs/tracker.md describes what it
// reads, what it costs and what it leaves out.
package tracker
