package record

import (
	"strconv"
	"time"
)

// SetStoppedBy sets item.stopped_by to login (one line).
func (c *Changes) SetStoppedBy(login string) {
	c.set(KeyItemStoppedBy, fitHead(joinLines(login), MaxLine))
}

// SetBlockedBy sets item.blocked_by to the open blockers, as a person
// writes them (one line, cut at MaxLine).
func (c *Changes) SetBlockedBy(refs string) {
	c.set(KeyItemBlockedBy, fitHead(joinLines(refs), MaxLine))
}

// SetWaitingFor sets item.waiting_for to the issue whose claim this item waits for.
func (c *Changes) SetWaitingFor(issue int) { c.set(KeyItemWaitingFor, strconv.Itoa(issue)) }

// SetWakeAt sets item.wake_at, in UTC to the second.
func (c *Changes) SetWakeAt(t time.Time) {
	c.set(KeyItemWakeAt, t.UTC().Truncate(time.Second).Format(time.RFC3339))
}

// SetParallelism sets implement.parallelism.
func (c *Changes) SetParallelism(n int) { c.set(KeyImplementParallelism, strconv.Itoa(max(n, 1))) }
