// Package dashboard keeps the dashboard issue (label roadmap:dashboard): one
// issue whose body shows a person every item roadmap works on, what it
// costs today and this week against the budgets, the GitHub requests of the
// hour, stops by class over seven days, alerts, and two Mermaid charts; and
// whose checkboxes are commands (retry, stop, wake now) a person with write
// access ticks.
//
// The body is rendered from a state block at its end (a versioned JSON
// document in an HTML comment), which holds one line per item derived from
// that item's record (internal/items). Report upserts its item's line after
// a Job; the scheduled refresh rebuilds every line from the records. An
// update is one conditional read of the issue and, only when the rendered
// body differs, one write: an unchanged dashboard costs no write (Renovate's
// rule). The body is kept under GitHub's 65,536 characters: the items table
// is cut first, with a line saying how many it leaves out, never the
// commands or the state block.
//
// GitHub has no compare-and-swap on an issue body, so two reports writing
// at once can lose one item's line; it comes back at that item's next
// report or the next refresh, both of which derive it from the record, the
// truth. The day's budget is checked on the day ledger (internal/report),
// which is exact, not on this view.
//
// Everything in the body is untrusted when read back (people with write
// access can edit it): the state block is parsed defensively (fuzzed) and
// titles are masked and neutralised before they are shown.
package dashboard
