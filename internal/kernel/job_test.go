package kernel

import (
	"context"
	"testing"
	"time"
)

// The runner's timings after it sends SIGINT on cancel (DESIGN §6).
const (
	runnerSIGTERM = 7500 * time.Millisecond // SIGTERM 7.5 s after SIGINT
	runnerKill    = 10 * time.Second        // the kill 2.5 s after SIGTERM
)

// TestLastMarkContextFitsTheGrace: a Job the runner signalled writes its last
// mark on a context whose deadline is Grace after the signal reached it, and
// Grace ends before the runner's SIGTERM. The promise that a Job ends within
// the runner's grace is held here, on the deadline the Job sets itself;
// TestSignalForwarding (internal/cli) holds that SIGINT alone ends it, with
// its yielded mark written.
func TestLastMarkContextFitsTheGrace(t *testing.T) {
	if Grace <= 0 || Grace >= runnerSIGTERM || runnerSIGTERM >= runnerKill {
		t.Fatalf("Grace is %s; want a last mark bounded before the runner's SIGTERM (%s) and kill (%s)", Grace, runnerSIGTERM, runnerKill)
	}
	type key struct{}
	live, stop := context.WithCancel(context.WithValue(context.Background(), key{}, "job"))

	// A live context is the Job's own: no deadline of its own is added.
	ctx, cancel := lastMarkContext(live, func() time.Time { t.Fatal("a live context read the clock"); return time.Time{} })
	if ctx != live {
		t.Errorf("a live context was replaced")
	}
	cancel()
	if live.Err() != nil {
		t.Fatal("cancel of a live context's last mark cancelled the Job's context")
	}

	// Signalled: a fresh context, Grace after the moment it was asked for.
	stop()
	var asked time.Time
	ctx, cancel = lastMarkContext(live, func() time.Time { asked = time.Now(); return asked })
	defer cancel()
	if err := ctx.Err(); err != nil {
		t.Fatalf("the last mark's context is done at once: %v", err)
	}
	if dl, ok := ctx.Deadline(); !ok || !dl.Equal(asked.Add(Grace)) {
		t.Errorf("the last mark's deadline = %s (set %v); want Grace (%s) after it was asked for, %s", dl, ok, Grace, asked.Add(Grace))
	}
	if ctx.Value(key{}) != "job" {
		t.Error("the last mark's context lost the Job's values")
	}
	cancel()
	if ctx.Err() == nil {
		t.Error("cancel did not end the last mark's context")
	}

	// The exported one is the same, on the machine's clock.
	ctx, cancel = LastMarkContext(live)
	defer cancel()
	if _, ok := ctx.Deadline(); !ok || ctx.Err() != nil {
		t.Errorf("LastMarkContext of a signalled context: deadline set %v, err %v; want a live context with a deadline", ok, ctx.Err())
	}
}

// stepClock is a Job's clock a test moves by hand.
type stepClock struct{ now time.Time }

func (c *stepClock) Now() time.Time { return c.now }
func (c *stepClock) Sleep(ctx context.Context, d time.Duration) error {
	c.now = c.now.Add(d)
	return nil
}

// TestMarkDueAfterTheInterval: a mark that may wait is due once the mark
// interval has passed since the Job's last write (its start until then),
// and not before; a write starts the interval again.
func TestMarkDueAfterTheInterval(t *testing.T) {
	c := &stepClock{now: time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)}
	j := &Job{O: Options{Clock: c, MarkInterval: 10 * time.Minute}, wrote: c.now}
	for _, step := range []struct {
		after time.Duration
		wrote bool
		due   bool
	}{
		{0, false, false},
		{9*time.Minute + 59*time.Second, false, false},
		{time.Second, false, true}, // 10 min since the start
		{time.Hour, true, false},   // a write: the interval starts again
		{10 * time.Minute, false, true},
	} {
		c.now = c.now.Add(step.after)
		if step.wrote {
			j.wrote = c.now
		}
		if got := j.MarkDue(); got != step.due {
			t.Errorf("%s after the last write: MarkDue() = %v, want %v", c.now.Sub(j.wrote), got, step.due)
		}
	}
}
