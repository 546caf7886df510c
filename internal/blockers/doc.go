// Package blockers decides what an item waits for: the blockers a person
// wrote in its body (FromBody: "Blocked by #12", "Depends on owner/repo#4",
// "Start this issue after #3", a "Dependencies" list), whether the states
// of its blockers let it start (Decide: met, waiting, closed as not planned,
// or refused with a sentence for the issue: a pull request, an unreadable
// issue, the item itself, a cycle), the dependency cycle through an item
// (Cycle) and the waves in which unblocked items start (Order). It is pure:
// it reads no GitHub, no record and no clock. Its callers read the blockers'
// states (GitHub's issue dependencies and the body's references, unioned),
// write the label and the record's line, say a refusal on the issue, and
// start the items; docs/tracker.md describes the text forms and the verdicts.
package blockers
