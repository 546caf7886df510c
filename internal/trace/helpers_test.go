package trace

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// clock is a fake clock the tests move by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock {
	return &clock{t: time.Date(2026, 11, 29, 10, 15, 2, 123456789, time.UTC)}
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// wordMasker replaces each listed word; the tests that need the real secret
// families use internal/redact.
type wordMasker []string

func (m wordMasker) Mask(s string) string {
	for _, w := range m {
		s = strings.ReplaceAll(s, w, "[masked]")
	}
	return s
}

// runner drives a Recorder the way implement does: each step advances the
// clock by the time it takes, then records it.
type runner struct {
	t   *testing.T
	clk *clock
	rec *Recorder
}

func newRunner(t *testing.T, job int) *runner {
	t.Helper()
	clk := newClock()
	rec, err := NewRecorder(&strings.Builder{}, wordMasker{"SECRET"}, clk.now, job)
	if err != nil {
		t.Fatal(err)
	}
	return &runner{t: t, clk: clk, rec: rec}
}

func (r *runner) add(took time.Duration, e Event) {
	r.t.Helper()
	r.clk.advance(took)
	if err := r.rec.Add(e); err != nil {
		r.t.Fatal(err)
	}
}

// phase records a span with nothing recorded inside it: it takes took.
func (r *runner) phase(group int, p Phase, took time.Duration, outcome string) {
	r.t.Helper()
	r.add(took, Event{Type: TypePhase, Group: group, Phase: p, Duration: took, Outcome: outcome})
}

// span records a span that began at start; what ran inside it already moved
// the clock, and closing it takes a moment more.
func (r *runner) span(group int, p Phase, start time.Time, outcome string) {
	r.t.Helper()
	r.clk.advance(200 * time.Millisecond)
	r.add(0, Event{Type: TypePhase, Group: group, Phase: p, Duration: r.clk.now().Sub(start), Outcome: outcome})
}

func (r *runner) marker(group int, p Phase, step, outcome string) {
	r.t.Helper()
	r.add(time.Second, Event{Type: TypePhase, Group: group, Phase: p, Step: step, Outcome: outcome})
}

func (r *runner) model(group int, in, out int64, usd float64, took time.Duration) {
	r.t.Helper()
	r.add(took, Event{Type: TypeModelCall, Group: group, Model: "gpt-4o-mini", TokensIn: in, TokensOut: out,
		USD: usd, Duration: took, Outcome: "ok"})
}

func (r *runner) tool(group int, name, args, class string) {
	r.t.Helper()
	r.add(300*time.Millisecond, Event{Type: TypeToolCall, Group: group, Tool: name, ArgsDigest: ArgsDigest(args),
		ResultClass: class, Duration: 300 * time.Millisecond})
}

func (r *runner) check(group int, cmd string, exit int, took time.Duration) {
	r.t.Helper()
	r.add(took, Event{Type: TypeCheckRun, Group: group, Step: "verify", Command: cmd, ExitCode: exit, Duration: took})
}

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run with -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}
