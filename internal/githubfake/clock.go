package githubfake

import (
	"context"
	"sync"
	"time"
)

// Clock is the fake's sense of time: rate-limit windows, timestamps and log
// URL expiry all read it, so a test can move time without sleeping.
type Clock interface {
	Now() time.Time
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

// ManualClock is a clock that moves only when told. Sleep advances it at once
// and records the duration, so it also serves a client that waits through an
// injected clock (internal/github's Clock): a test shares one ManualClock
// between the client and the fake and asserts the exact waits.
type ManualClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

// NewManualClock returns a clock that reads t until it is advanced.
func NewManualClock(t time.Time) *ManualClock { return &ManualClock{now: t} }

// Now returns the clock's current time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Sleep advances the clock by d (no real waiting) and records d. It fails only
// when ctx is already done, as a real sleep would.
func (c *ManualClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	c.sleeps = append(c.sleeps, d)
	if d > 0 {
		c.now = c.now.Add(d)
	}
	c.mu.Unlock()
	return nil
}

// Sleeps returns every duration passed to Sleep, in order.
func (c *ManualClock) Sleeps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}
