// Package clock is the system clock behind the small Clock interfaces the
// packages that wait declare (internal/github, internal/llm, internal/implement,
// internal/report). Tests give those packages a fake clock
// instead, so no test sleeps for real.
package clock

import (
	"context"
	"time"
)

// Real is the system clock.
type Real struct{}

// Now returns the current time.
func (Real) Now() time.Time { return time.Now() }

// Sleep waits d, or until ctx is done, whichever comes first.
func (Real) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
