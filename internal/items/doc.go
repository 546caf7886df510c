// Package items says what state an item is in and what it has cost, from
// its record alone: the one reading the dashboard, `roadmap metrics` and the
// alerts share, so that a person sees the same state in all three.
//
// An item is an issue roadmap works on. Its record (internal/record) holds
// every Job's line (stage.jobs, implement.jobs: result, class, spend, the
// GitHub requests it made, and since this package the time the line last
// changed) and the item's typed state (implement.result, stage.state,
// item.wake_at, …). Of is a pure function of those: no request, no clock
// but the one passed in.
package items
