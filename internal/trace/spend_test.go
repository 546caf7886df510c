package trace

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func newTestRecorder(t testing.TB, m Masker, job int) *Recorder {
	t.Helper()
	rec, err := NewRecorder(io.Discard, m, newClock().now, job)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func TestSpendLineFormat(t *testing.T) {
	rec := newTestRecorder(t, wordMasker{}, 2)
	for _, tc := range []struct {
		name string
		e    SpendEntry
		want string
	}{
		{"the documented example", SpendEntry{Group: 2, Call: 7, Model: "gpt-4o-mini", TokensIn: 812, TokensOut: 95, USD: 0.00021},
			`roadmap::spend {"job":2,"group":2,"call":7,"model":"gpt-4o-mini","tokens_in":812,"tokens_out":95,"usd":0.00021}`},
		{"a booking: the call's estimate, before its request goes out", SpendEntry{Group: 2, Call: 7, Model: "gpt-4o-mini", Booked: true, TokensIn: 3120, TokensOut: 4096, USD: 0.00292},
			`roadmap::spend {"job":2,"group":2,"call":7,"model":"gpt-4o-mini","booked":true,"tokens_in":3120,"tokens_out":4096,"usd":0.00292}`},
		{"settled at its booking: no answer", SpendEntry{Group: 2, Call: 8, Model: "gpt-4o-mini", Estimated: true, TokensIn: 3120, TokensOut: 4096, USD: 0.00292},
			`roadmap::spend {"job":2,"group":2,"call":8,"model":"gpt-4o-mini","estimated":true,"tokens_in":3120,"tokens_out":4096,"usd":0.00292}`},
		{"explicit job, zero spend", SpendEntry{Job: 5, Call: 1, Model: "replay"},
			`roadmap::spend {"job":5,"group":0,"call":1,"model":"replay","tokens_in":0,"tokens_out":0,"usd":0}`},
		{"impossible numbers written as zero", SpendEntry{Job: 2, Call: 3, Model: "m", TokensIn: -4, USD: math.NaN()},
			`roadmap::spend {"job":2,"group":0,"call":3,"model":"m","tokens_in":0,"tokens_out":0,"usd":0}`},
		{"model name on one line", SpendEntry{Call: 1, Model: "a\nroadmap::spend {}"},
			`roadmap::spend {"job":2,"group":0,"call":1,"model":"a\nroadmap::spend {}","tokens_in":0,"tokens_out":0,"usd":0}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := rec.SpendLine(tc.e); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestSpendLineMasksModel(t *testing.T) {
	const token = "ghp_0123456789abcdefghijklmnopqrstuvwxyz"
	rec := newTestRecorder(t, wordMasker{token}, 1)
	line := rec.SpendLine(SpendEntry{Call: 1, Model: "openai/" + token})
	if strings.Contains(line, token) || !strings.Contains(line, `"model":"openai/[masked]"`) {
		t.Errorf("spend line does not mask the model name: %s", line)
	}
}

func TestSpendLineRoundTrip(t *testing.T) {
	rec := newTestRecorder(t, wordMasker{}, 4)
	entries := []SpendEntry{
		{Job: 4, Group: 1, Call: 1, Model: "gpt-4o-mini", TokensIn: 812, TokensOut: 95, USD: 0.00021},
		{Job: 4, Group: 1, Call: 2, Model: "claude-sonnet-4-5@20250929", TokensIn: 1, TokensOut: 0, USD: 1e-9},
		{Job: 4, Group: 2, Call: 3, Model: strings.Repeat("ü", 150), TokensIn: 1 << 40, TokensOut: 7, USD: 12.5},
	}
	var log bytes.Buffer
	for _, e := range entries {
		fmt.Fprintf(&log, "2026-11-29T10:15:02.1234567Z %s\n", rec.SpendLine(e))
	}
	got, err := ParseSpendLines(&log)
	if err != nil {
		t.Fatal(err)
	}
	entries[2].Model = strings.Repeat("ü", 100) // cut to 200 bytes
	if diff := cmp.Diff(SpendLog{Entries: entries}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestSpendFromEvent(t *testing.T) {
	e := Event{Type: TypeModelCall, Job: 3, Group: 2, Model: "m", TokensIn: 10, TokensOut: 4, USD: 0.5}
	want := SpendEntry{Job: 3, Group: 2, Call: 9, Model: "m", TokensIn: 10, TokensOut: 4, USD: 0.5}
	if diff := cmp.Diff(want, SpendFromEvent(e, 9)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestParseSpendLines(t *testing.T) {
	good := func(call int) string {
		return fmt.Sprintf(`roadmap::spend {"job":2,"group":1,"call":%d,"model":"m","tokens_in":100,"tokens_out":10,"usd":0.5}`, call)
	}
	log := strings.Join([]string{
		"\ufeff2026-11-29T10:15:02.1234567Z ##[group]Run roadmap implement",
		"2026-11-29T10:15:03.0000000Z " + good(1),
		// Without a timestamp (a log read from the step's own output).
		good(2),
		// CRLF line end and a timestamp without a fraction.
		"2026-11-29T10:15:04Z " + good(3) + "\r",
		// A tool echoing a spend line inside other text is not spend.
		"2026-11-29T10:15:05.1Z $ cat out.log: " + good(99),
		"2026-11-29T10:15:05.1Z   " + good(98),
		// Malformed spend lines are counted.
		"2026-11-29T10:15:06.1Z roadmap::spend {not json",
		"2026-11-29T10:15:06.2Z roadmap::spend {\"job\":2,\"call\":4}",
		"2026-11-29T10:15:06.3Z roadmap::spend {\"job\":2,\"group\":1,\"call\":0,\"model\":\"m\",\"tokens_in\":1,\"tokens_out\":1,\"usd\":0}",
		"2026-11-29T10:15:06.4Z roadmap::spend {\"job\":2,\"group\":1,\"call\":5,\"model\":\"m\",\"tokens_in\":-1,\"tokens_out\":1,\"usd\":0}",
		"2026-11-29T10:15:06.5Z " + good(6) + " trailing",
		"2026-11-29T10:15:06.6Z roadmap::spend " + strings.Repeat("x", 3000),
		// A line far longer than any spend line is skipped unread.
		"2026-11-29T10:15:07.1Z " + strings.Repeat("y", 200<<10) + good(97),
		"2026-11-29T10:15:08.1Z " + good(7),
		// The last line has no newline.
		"2026-11-29T10:15:09.1Z " + good(8),
	}, "\n")
	got, err := ParseSpendLines(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	var calls []int
	for _, e := range got.Entries {
		calls = append(calls, e.Call)
	}
	if diff := cmp.Diff([]int{1, 2, 3, 7, 8}, calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if got.Malformed != 6 {
		t.Errorf("malformed = %d, want 6", got.Malformed)
	}
	want := Totals{TokensIn: 500, TokensOut: 50, USD: 2.5, ModelCalls: 5}
	if diff := cmp.Diff(want, got.Total()); diff != "" {
		t.Errorf("total (-want +got):\n%s", diff)
	}
}

type failingReader struct{ after io.Reader }

func (r *failingReader) Read(p []byte) (int, error) {
	n, err := r.after.Read(p)
	if err == io.EOF {
		return n, fmt.Errorf("connection reset")
	}
	return n, err
}

func TestParseSpendLinesReadError(t *testing.T) {
	rec := newTestRecorder(t, wordMasker{}, 1)
	in := &failingReader{after: strings.NewReader(rec.SpendLine(SpendEntry{Call: 1, Model: "m"}) + "\n")}
	got, err := ParseSpendLines(in)
	if err == nil || !strings.Contains(err.Error(), "connection reset") {
		t.Fatalf("error = %v, want the read failure", err)
	}
	if len(got.Entries) != 1 {
		t.Errorf("entries before the failure = %d, want 1", len(got.Entries))
	}
}

// syntheticLog streams a job log of size bytes without holding it or
// allocating: runner lines with timestamps, one spend line in every 1,000.
type syntheticLog struct {
	size, written int
	line          int
	pending       []byte
}

var (
	syntheticSpend = []byte("2026-11-29T10:15:02.1234567Z roadmap::spend {\"job\":1,\"group\":1,\"call\":1,\"model\":\"gpt-4o-mini\",\"tokens_in\":812,\"tokens_out\":95,\"usd\":0.00021}\n")
	syntheticOther = []byte("2026-11-29T10:15:02.1234567Z ok  \tgithub.com/example/project/internal/webhook\t0.412s\tcoverage: 81.2% of statements\n")
)

func (l *syntheticLog) Read(p []byte) (int, error) {
	if l.written >= l.size {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && l.written < l.size {
		if len(l.pending) == 0 {
			l.line++
			l.pending = syntheticOther
			if l.line%1000 == 0 {
				l.pending = syntheticSpend
			}
		}
		c := min(copy(p[n:], l.pending), l.size-l.written)
		l.pending = l.pending[c:]
		n += c
		l.written += c
	}
	return n, nil
}

// Memory for reading a job log does not grow with the log: 20 MB of log is
// read with a fixed buffer plus the entries found. The synthetic log
// allocates nothing, so all allocation counted is the parser's.
func TestParseSpendLinesBoundedMemory(t *testing.T) {
	const size = 20 << 20
	log := &syntheticLog{size: size}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err := ParseSpendLines(log)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if want := log.line / 1000; len(got.Entries) != want || got.Malformed != 0 {
		t.Fatalf("found %d entries, %d malformed; want %d entries", len(got.Entries), got.Malformed, want)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
		t.Errorf("reading a %d-byte log allocated %d bytes; want a bounded buffer", size, alloc)
	}
}

func BenchmarkParseSpendLines(b *testing.B) {
	const size = 50 << 20
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseSpendLines(&syntheticLog{size: size}); err != nil {
			b.Fatal(err)
		}
	}
}
