package trace

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// runLong records n events of every type, as a long implement Job would.
func runLong(t testing.TB, n int) []Event {
	clk := newClock()
	rec, err := NewRecorder(&strings.Builder{}, wordMasker{}, clk.now, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		clk.advance(1700 * time.Millisecond)
		group := 1 + i/100
		var e Event
		switch i % 6 {
		case 0:
			e = Event{Type: TypeModelCall, Group: group, Model: "gpt-4o-mini", TokensIn: int64(800 + i), TokensOut: int64(90 + i%40),
				USD: 0.00021, Duration: 1200 * time.Millisecond, Outcome: "ok"}
		case 1:
			e = Event{Type: TypeToolCall, Group: group, Tool: "read", ArgsDigest: ArgsDigest(fmt.Sprint(i)), ResultClass: "ok",
				Duration: 15 * time.Millisecond}
		case 2:
			e = Event{Type: TypeCheckRun, Group: group, Step: "verify", Command: "go test ./internal/webhook -run TestBackoffSchedule",
				ExitCode: i % 2, Duration: 8 * time.Second}
		case 3:
			e = Event{Type: TypeRetry, Group: group, Reason: "rate_limited", Attempt: 1 + i%3, Wait: 30 * time.Second,
				Error: "secondary rate limit — über"}
		case 4:
			e = Event{Type: TypePhase, Group: group, Phase: PhaseAgent, Duration: 40 * time.Second, Outcome: "finished"}
		case 5:
			e = Event{Type: TypePhase, Group: group, Phase: PhaseGroupStarted, Step: "Compute the delay, capped at one hour"}
		}
		if err := rec.Add(e); err != nil {
			t.Fatal(err)
		}
	}
	return rec.Events()
}

// TestTraceBound: a run with 1,000 events keeps at most 8,192 characters in
// the record, the newest events, and the count dropped (issue 6).
func TestTraceBound(t *testing.T) {
	const n = 1000
	events := runLong(t, n)
	rc, text := Bound(events, RecordLimit)

	for name, length := range map[string]int{
		"bytes":        len(text),
		"characters":   utf8.RuneCountInString(text),
		"UTF-16 units": len(utf16.Encode([]rune(text))),
	} {
		if length > 8192 {
			t.Errorf("record copy is %d %s, want at most 8,192", length, name)
		}
	}
	if strings.ContainsAny(text, "\n\r") || strings.Contains(text, "-->") {
		t.Errorf("record copy is not one line safe inside an HTML comment: %q", text)
	}
	if rc.Dropped == 0 || len(rc.Events) == 0 {
		t.Fatalf("dropped %d, kept %d: 1,000 events cannot fit whole, some must be kept", rc.Dropped, len(rc.Events))
	}
	if got := rc.Dropped + len(rc.Events); got != n {
		t.Errorf("dropped %d + kept %d = %d, want %d", rc.Dropped, len(rc.Events), got, n)
	}
	// The newest are kept, in order, ending with the last event.
	for i, e := range rc.Events {
		if want := rc.Dropped + i + 1; e.Seq != want {
			t.Fatalf("kept event %d has seq %d, want %d", i, e.Seq, want)
		}
	}
	parsed, err := ParseRecordCopy(text)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rc, parsed); diff != "" {
		t.Errorf("the text does not parse back to the copy (-copy +parsed):\n%s", diff)
	}
	// What parses back is the events themselves, to the second.
	for i, e := range parsed.Events {
		orig := events[rc.Dropped+i]
		if !e.Time.Equal(orig.Time.Truncate(time.Second)) || e.Command != orig.Command || e.TokensIn != orig.TokensIn ||
			e.Duration != orig.Duration || e.Wait != orig.Wait || e.Error != orig.Error || e.Job != orig.Job {
			t.Fatalf("event seq %d parsed as %+v, recorded as %+v", e.Seq, e, orig)
		}
	}
	// The bound is used, not wasted: one more event would not have fitted.
	need := 0
	for _, e := range events {
		_, one := Bound([]Event{e}, 1<<20)
		_, none := Bound(nil, 1<<20)
		need = max(need, len(one)-len(none)+1)
	}
	if slack := RecordLimit - len(text); slack >= need {
		t.Errorf("copy leaves %d characters unused, room for another event (%d at most)", slack, need)
	}
}

func TestBoundKeepsEverythingThatFits(t *testing.T) {
	events := runLong(t, 12)
	rc, text := Bound(events, RecordLimit)
	if rc.Dropped != 0 || len(rc.Events) != 12 {
		t.Fatalf("dropped %d kept %d, want all 12 kept", rc.Dropped, len(rc.Events))
	}
	parsed, err := ParseRecordCopy(text)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rc, parsed); diff != "" {
		t.Errorf("(-copy +parsed):\n%s", diff)
	}
}

func TestBoundEdges(t *testing.T) {
	events := runLong(t, 20)
	for _, tc := range []struct {
		name      string
		events    []Event
		limit     int
		wantKept  int
		wantExact string
	}{
		{name: "no events", events: nil, limit: RecordLimit, wantExact: `{"v":1,"dropped":0,"ev":[]}`},
		{name: "limit below one event", events: events, limit: 40, wantExact: `{"v":1,"dropped":20,"job":3,"ev":[]}`},
		{name: "limit below the empty copy", events: events, limit: 5, wantExact: `{"v":1,"dropped":20,"job":3,"ev":[]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc, text := Bound(tc.events, tc.limit)
			if text != tc.wantExact {
				t.Errorf("text = %s, want %s", text, tc.wantExact)
			}
			if len(rc.Events) != tc.wantKept {
				t.Errorf("kept %d, want %d", len(rc.Events), tc.wantKept)
			}
			if _, err := ParseRecordCopy(text); err != nil {
				t.Error(err)
			}
		})
	}
	// Every limit from tiny to all-fit gives a copy within it that parses.
	_, all := Bound(events, 1<<20)
	prevKept := 0
	for limit := 40; limit <= len(all)+1; limit++ {
		rc, text := Bound(events, limit)
		if len(text) > limit {
			t.Fatalf("limit %d: text is %d long", limit, len(text))
		}
		if len(rc.Events) < prevKept {
			t.Fatalf("limit %d keeps %d events, a smaller limit kept %d", limit, len(rc.Events), prevKept)
		}
		prevKept = len(rc.Events)
	}
	if prevKept != len(events) {
		t.Errorf("with room for all, kept %d of %d", prevKept, len(events))
	}
}

// Long and odd text is cut and escaped so the copy stays ASCII and parses
// back to what Bound returned.
func TestBoundCutsAndEscapes(t *testing.T) {
	long := strings.Repeat("é", 300)
	e := Event{Seq: 1, Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Type: TypeCheckRun, Job: 1,
		Command: long, Error: "bad\xffbyte <!-- --> & \u2028 😀 \"q\" \\", Outcome: "tab\there"}
	rc, text := Bound([]Event{e}, RecordLimit)
	for i := 0; i < len(text); i++ {
		if text[i] >= 0x80 || text[i] < 0x20 {
			t.Fatalf("copy holds non-ASCII byte %#x at %d: %s", text[i], i, text)
		}
	}
	if strings.ContainsAny(text, "<>&") {
		t.Errorf("copy holds an HTML character: %s", text)
	}
	got := rc.Events[0]
	if n := utf8.RuneCountInString(got.Command); n != recordStringMax || !strings.HasSuffix(got.Command, "...") {
		t.Errorf("long command kept as %d characters ending %q, want %d ending ...", n, got.Command[len(got.Command)-5:], recordStringMax)
	}
	if want := "bad\uFFFDbyte <!-- --> & \u2028 😀 \"q\" \\"; got.Error != want {
		t.Errorf("error kept as %q, want %q", got.Error, want)
	}
	parsed, err := ParseRecordCopy(text)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rc, parsed); diff != "" {
		t.Errorf("(-copy +parsed):\n%s", diff)
	}
}

// Events from several Jobs keep their Job; seqs that restart are written.
func TestBoundSeveralJobs(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	events := []Event{
		{Seq: 1, Time: t0, Type: TypePhase, Job: 1, Phase: PhaseJobStarted},
		{Seq: 2, Time: t0.Add(time.Minute), Type: TypePhase, Job: 1, Phase: PhaseYielded},
		{Seq: 1, Time: t0.Add(time.Hour), Type: TypePhase, Job: 2, Phase: PhaseJobStarted},
		{Seq: 2, Type: TypeRetry, Job: 2, Reason: "no time"},
	}
	rc, text := Bound(events, RecordLimit)
	parsed, err := ParseRecordCopy(text)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(events, parsed.Events); diff != "" {
		t.Errorf("(-events +parsed):\n%s", diff)
	}
	if diff := cmp.Diff(rc, parsed); diff != "" {
		t.Errorf("(-copy +parsed):\n%s", diff)
	}
}

func TestParseRecordCopyRefuses(t *testing.T) {
	for _, in := range []string{
		``,
		`[]`,
		`{"v":2,"dropped":0,"ev":[]}`,
		`{"v":1,"dropped":-1,"ev":[]}`,
		`{"v":1,"dropped":0,"ev":[{"k":"m","i":-5}]}`,
		`{"v":1,"dropped":0,"ev":[{"k":"m","d":-5}]}`,
		`{"v":1,"dropped":0,"ev":[{"k":"m","j":-1}]}`,
		`{"v":1,"dropped":0,"tn":99999999999999999,"ev":[]}`,
		`{"v":1,"dropped":0,"tn":1,"ev":[{"k":"m","t":9999999999999999}]}`,
		`{"v":1,"dropped":0,"ev":[{"k":"m","u":-0.5}]}`,
		`{"v":1,"dropped":0,"ev":[{"k":"m"}]} trailing`,
	} {
		if _, err := ParseRecordCopy(in); err == nil {
			t.Errorf("ParseRecordCopy(%s) succeeded, want an error", in)
		}
	}
}

func BenchmarkBound(b *testing.B) {
	events := runLong(b, 1000)
	b.ResetTimer()
	for b.Loop() {
		Bound(events, RecordLimit)
	}
}
