package trace

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// FuzzReadJSONL: any artifact text reads without a panic; what reads back
// writes and reads back the same; a cut of a good artifact reads a prefix.
func FuzzReadJSONL(f *testing.F) {
	var good bytes.Buffer
	for _, e := range runLong(f, 12) {
		b, _ := json.Marshal(e)
		good.Write(b)
		good.WriteByte('\n')
	}
	f.Add(good.String())
	f.Add(good.String()[:good.Len()-17])
	f.Add("{\"seq\":1,\"type\":\"retry\"}\n\n{\"seq\":2")
	f.Add("{}\n{\"time\":\"2026-11-29T10:15:02.123456789Z\"}\r\n")
	f.Add("not json\n")
	f.Fuzz(func(t *testing.T, in string) {
		events, err := ReadJSONL(strings.NewReader(in))
		if err != nil {
			return
		}
		var out bytes.Buffer
		for _, e := range events {
			b, err := json.Marshal(e)
			if err != nil {
				t.Fatalf("marshal %+v: %v", e, err)
			}
			out.Write(b)
			out.WriteByte('\n')
		}
		again, err := ReadJSONL(&out)
		if err != nil {
			t.Fatalf("re-read: %v\n%s", err, out.String())
		}
		if diff := cmp.Diff(events, again, cmpopts.EquateEmpty(), cmpopts.EquateApproxTime(0)); diff != "" {
			t.Fatalf("round trip (-first +again):\n%s", diff)
		}
		// Bound takes whatever ReadJSONL gives and its copy parses back.
		rc, text := Bound(events, RecordLimit)
		parsed, err := ParseRecordCopy(text)
		if err != nil {
			t.Fatalf("parse bound copy: %v\n%s", err, text)
		}
		if diff := cmp.Diff(rc, parsed, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("bound copy round trip (-copy +parsed):\n%s", diff)
		}
	})
}

// FuzzParseSpendLines: any log reads without a panic; every entry found is a
// valid spend and formats back to a line that parses to the same entry.
func FuzzParseSpendLines(f *testing.F) {
	f.Add("2026-11-29T10:15:02.1234567Z roadmap::spend {\"job\":2,\"group\":2,\"call\":7,\"model\":\"gpt-4o-mini\",\"tokens_in\":812,\"tokens_out\":95,\"usd\":0.00021}\n")
	f.Add("\ufeffroadmap::spend {\"job\":0,\"group\":0,\"call\":1,\"model\":\"m\",\"tokens_in\":0,\"tokens_out\":0,\"usd\":1e-7}\r\nroadmap::spend {")
	f.Add("2026-11-29T10:15:02Z x\n2026-11-29T10:15:02.Z roadmap::spend {}\n")
	f.Add(strings.Repeat("a", 70000) + "\nroadmap::spend {\"job\":1}")
	f.Fuzz(func(t *testing.T, in string) {
		log, err := ParseSpendLines(strings.NewReader(in))
		if err != nil {
			t.Fatalf("reading from a string failed: %v", err)
		}
		if lines := strings.Count(in, "\n") + 1; len(log.Entries)+len(log.Booked)+log.Malformed > lines {
			t.Fatalf("%d entries + %d bookings + %d malformed from %d lines", len(log.Entries), len(log.Booked), log.Malformed, lines)
		}
		for _, e := range append(append([]SpendEntry(nil), log.Entries...), log.Booked...) {
			if e.Job < 0 || e.Group < 0 || e.Call < 1 || e.Model == "" || e.TokensIn < 0 || e.TokensOut < 0 ||
				e.USD < 0 || math.IsNaN(e.USD) || math.IsInf(e.USD, 0) {
				t.Fatalf("invalid entry %+v", e)
			}
			if !utf8.ValidString(e.Model) {
				// JSON decoding replaces bad bytes; a model is always valid text.
				t.Fatalf("model %q is not UTF-8", e.Model)
			}
			line := formatSpendLine(e)
			again, err := ParseSpendLines(strings.NewReader(line))
			if err != nil || len(again.Entries)+len(again.Booked) != 1 {
				t.Fatalf("line %q of entry %+v does not parse back: %v %+v", line, e, err, again)
			}
			back := append(again.Entries, again.Booked...)[0]
			if diff := cmp.Diff(e, back); diff != "" {
				t.Fatalf("spend line round trip (-entry +again):\n%s", diff)
			}
		}
	})
}

// FuzzParseRecordCopy: the record copy comes from an issue body anyone with
// write access can edit. Any text parses or fails without a panic; what
// parses is written again by Bound and reads back the same.
func FuzzParseRecordCopy(f *testing.F) {
	_, text := Bound(runLong(f, 200), RecordLimit)
	f.Add(text)
	_, small := Bound(runLong(f, 3), RecordLimit)
	f.Add(small)
	f.Add(`{"v":1,"dropped":0,"ev":[]}`)
	f.Add(`{"v":1,"dropped":3,"job":2,"tn":1795947302,"ev":[{"s":9,"t":4,"k":"zz","j":1,"u":1e300}]}`)
	f.Fuzz(func(t *testing.T, in string) {
		rc, err := ParseRecordCopy(in)
		if err != nil {
			return
		}
		rc2, text := Bound(rc.Events, 1<<30)
		if rc2.Dropped != 0 {
			t.Fatalf("dropped %d with no limit", rc2.Dropped)
		}
		again, err := ParseRecordCopy(text)
		if err != nil {
			t.Fatalf("Bound wrote a copy ParseRecordCopy refuses: %v\n%s", err, text)
		}
		if diff := cmp.Diff(rc2, again, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("round trip (-written +read):\n%s", diff)
		}
	})
}

// FuzzBound: events with any text and numbers fit the limit, and the copy
// parses back to what Bound returned.
func FuzzBound(f *testing.F) {
	f.Add("go test ./...", "gpt-4o-mini", int64(812), 0.00021, int64(1500), 3, 400)
	f.Add(strings.Repeat("\xff<>&\u2028😀", 80), "", int64(0), 0.0, int64(0), 50, 8192)
	f.Add("x", "y", int64(-5), math.Inf(1), int64(-1), 1, 10)
	f.Fuzz(func(t *testing.T, text, model string, tokens int64, usd float64, ms int64, n, limit int) {
		if n < 0 || n > 300 || limit < 0 || limit > 1<<16 {
			return
		}
		base := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
		var events []Event
		for i := 0; i < n; i++ {
			events = append(events, Event{
				Seq: i + 1, Time: base.Add(time.Duration(i) * 1500 * time.Millisecond), Type: Type([]Type{TypeModelCall, TypeCheckRun, "custom"}[i%3]),
				Job: 1 + i/100, Group: i % 4, Command: text, Model: model, Error: text, TokensIn: abs(tokens) % (1 << 40), USD: math.Abs(usd),
				Duration: time.Duration(abs(ms)%(1<<40)) * time.Millisecond, ExitCode: i % 3,
			})
		}
		rc, out := Bound(events, limit)
		_, empty := Bound(nil, 0)
		if len(out) > max(limit, len(empty)+24) {
			t.Fatalf("copy is %d long, limit %d", len(out), limit)
		}
		if rc.Dropped+len(rc.Events) != n {
			t.Fatalf("dropped %d + kept %d != %d", rc.Dropped, len(rc.Events), n)
		}
		for i := 0; i < len(out); i++ {
			if out[i] >= 0x80 || out[i] < 0x20 {
				t.Fatalf("non-ASCII byte in copy: %q", out)
			}
		}
		parsed, err := ParseRecordCopy(out)
		if err != nil {
			t.Fatalf("parse: %v\n%s", err, out)
		}
		if diff := cmp.Diff(rc, parsed, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("(-copy +parsed):\n%s", diff)
		}
	})
}

func abs(n int64) int64 {
	if n < 0 {
		return -(n + 1)
	}
	return n
}
