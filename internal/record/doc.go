// Package record reads and writes the issue record: the versioned block at the end
// of an issue body through which one run hands its state to the next (DESIGN §3,
// docs/record.md). Parse splits a body into the person's text and the block's keys,
// Apply merges a set of typed changes, and Render puts the block back at the end
// with its keys sorted, leaving every byte of the person's text as it was. The
// package is pure (no I/O, no internal imports) because every phase reads the
// record and its input is text that anyone with write access to the issue can edit.
package record
