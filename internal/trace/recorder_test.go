package trace

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestNewRecorderRefuses(t *testing.T) {
	clk := newClock()
	var typedNil *nilMasker
	for _, tc := range []struct {
		name string
		w    io.Writer
		m    Masker
		now  func() time.Time
		job  int
	}{
		{"no masker", &bytes.Buffer{}, nil, clk.now, 1},
		{"typed nil masker", &bytes.Buffer{}, typedNil, clk.now, 1},
		{"no writer", nil, wordMasker{}, clk.now, 1},
		{"no clock", &bytes.Buffer{}, wordMasker{}, nil, 1},
		{"negative job", &bytes.Buffer{}, wordMasker{}, clk.now, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := NewRecorder(tc.w, tc.m, tc.now, tc.job); err == nil {
				t.Fatal("NewRecorder succeeded, want an error")
			}
		})
	}
}

type nilMasker struct{}

func (*nilMasker) Mask(s string) string { return s }

// The artifact line format is read by scripts: its field names are fixed.
func TestEventJSONFieldNames(t *testing.T) {
	for _, tc := range []struct {
		e    Event
		want string
	}{
		{
			Event{Seq: 7, Time: time.Date(2026, 11, 29, 10, 15, 2, 5e8, time.UTC), Type: TypeModelCall, Job: 2, Group: 2,
				Model: "gpt-4o-mini", TokensIn: 812, TokensOut: 95, USD: 0.00021, Duration: 1500 * time.Millisecond, Outcome: "ok"},
			`{"seq":7,"time":"2026-11-29T10:15:02.5Z","type":"model_call","job":2,"group":2,"model":"gpt-4o-mini","tokens_in":812,"tokens_out":95,"usd":0.00021,"duration_ms":1500,"outcome":"ok"}`,
		},
		{
			Event{Seq: 8, Time: time.Date(2026, 11, 29, 10, 15, 3, 0, time.UTC), Type: TypeToolCall, Job: 2, Group: 2,
				Tool: "run", ArgsDigest: "0123456789abcdef", ResultClass: "refused", Duration: 20 * time.Millisecond},
			`{"seq":8,"time":"2026-11-29T10:15:03Z","type":"tool_call","job":2,"group":2,"tool":"run","args_digest":"0123456789abcdef","result_class":"refused","duration_ms":20}`,
		},
		{
			Event{Seq: 9, Time: time.Date(2026, 11, 29, 10, 15, 4, 0, time.UTC), Type: TypeCheckRun, Job: 2, Group: 2,
				Step: "verify", Command: "go test ./...", ExitCode: 1, Duration: 8 * time.Second},
			`{"seq":9,"time":"2026-11-29T10:15:04Z","type":"check_run","job":2,"group":2,"step":"verify","command":"go test ./...","exit_code":1,"duration_ms":8000}`,
		},
		{
			Event{Seq: 10, Time: time.Date(2026, 11, 29, 10, 15, 5, 0, time.UTC), Type: TypeRetry, Job: 2,
				Reason: "rate_limited", Attempt: 2, Wait: 30 * time.Second, Error: "secondary rate limit"},
			`{"seq":10,"time":"2026-11-29T10:15:05Z","type":"retry","job":2,"reason":"rate_limited","attempt":2,"wait_ms":30000,"error":"secondary rate limit"}`,
		},
		{
			Event{Seq: 11, Time: time.Date(2026, 11, 29, 10, 16, 5, 0, time.UTC), Type: TypePhase, Job: 2, Group: 2,
				Phase: PhasePush, Duration: 2 * time.Second, Outcome: "ok"},
			`{"seq":11,"time":"2026-11-29T10:16:05Z","type":"phase","job":2,"group":2,"phase":"push","duration_ms":2000,"outcome":"ok"}`,
		},
	} {
		t.Run(string(tc.e.Type), func(t *testing.T) {
			got, err := tc.e.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			var back Event
			if err := back.UnmarshalJSON(got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.e, back); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

// Each event is on disk as soon as Add returns: the artifact read after every
// Add holds every event added so far.
func TestRecorderWritesEachEventAtOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	clk := newClock()
	rec, err := NewRecorder(f, wordMasker{}, clk.now, 4)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range []Event{
		{Type: TypePhase, Phase: PhaseJobStarted},
		{Type: TypePhase, Group: 1, Phase: PhaseGroupStarted, Step: "Backoff"},
		{Type: TypeModelCall, Group: 1, Model: "m", TokensIn: 10, TokensOut: 2, USD: 0.001, Duration: 1234567 * time.Microsecond},
		{Type: TypeRetry, Group: 1, Reason: "transient", Attempt: 1, Wait: 1500 * time.Millisecond},
	} {
		clk.advance(time.Second)
		if err := rec.Add(e); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ReadJSONL(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != i+1 {
			t.Fatalf("after %d adds the artifact holds %d events", i+1, len(got))
		}
		if diff := cmp.Diff(rec.Events(), got); diff != "" {
			t.Errorf("artifact differs from the kept events (-kept +artifact):\n%s", diff)
		}
	}
	events := rec.Events()
	if got, want := events[2].Duration, 1235*time.Millisecond; got != want {
		t.Errorf("duration kept as %v, want %v (whole milliseconds)", got, want)
	}
	for i, e := range events {
		if e.Seq != i+1 || e.Job != 4 || e.Time.IsZero() || e.Time.Location() != time.UTC {
			t.Errorf("event %d: seq %d job %d time %v; want seq %d, job 4, a UTC time", i, e.Seq, e.Job, e.Time, i+1)
		}
	}
}

// A Job killed in the middle of a write leaves a cut last line: reading the
// artifact gives every whole event and no error, wherever the cut falls.
func TestReadJSONLKilledWriter(t *testing.T) {
	var buf bytes.Buffer
	clk := newClock()
	rec, err := NewRecorder(&buf, wordMasker{}, clk.now, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		clk.advance(time.Second)
		if err := rec.Add(Event{Type: TypeCheckRun, Command: "go test ./...", ExitCode: i, Duration: time.Second}); err != nil {
			t.Fatal(err)
		}
	}
	all := buf.Bytes()
	lineEnds := []int{}
	for i, c := range all {
		if c == '\n' {
			lineEnds = append(lineEnds, i+1)
		}
	}
	for cut := 0; cut <= len(all); cut++ {
		whole := 0
		for _, end := range lineEnds {
			if end <= cut {
				whole++
			}
		}
		got, err := ReadJSONL(bytes.NewReader(all[:cut]))
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		// A cut that drops only the final newline still leaves a whole event.
		if len(got) != whole && len(got) != whole+1 {
			t.Fatalf("cut at %d: %d events, want %d", cut, len(got), whole)
		}
		if diff := cmp.Diff(rec.Events()[:len(got)], got, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("cut at %d (-want +got):\n%s", cut, diff)
		}
	}
}

func TestReadJSONL(t *testing.T) {
	line := func(seq int) string {
		return `{"seq":` + string(rune('0'+seq)) + `,"time":"2026-11-29T10:15:02Z","type":"retry","reason":"x"}`
	}
	for _, tc := range []struct {
		name    string
		in      string
		want    int
		wantErr string
	}{
		{"empty", "", 0, ""},
		{"blank lines skipped", line(1) + "\n\n  \n" + line(2) + "\n", 2, ""},
		{"CRLF", line(1) + "\r\n" + line(2) + "\r\n", 2, ""},
		{"cut last line", line(1) + "\n" + line(2)[:20], 1, ""},
		{"last line without newline", line(1) + "\n" + line(2), 2, ""},
		{"bad middle line", line(1) + "\n{oops\n" + line(3) + "\n", 1, "line 2"},
		{"bad whole last line", line(1) + "\n{oops\n", 1, "line 2"},
		{"bad time", `{"seq":1,"time":"yesterday","type":"retry"}` + "\n", 0, "line 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadJSONL(strings.NewReader(tc.in))
			if tc.wantErr == "" && err != nil {
				t.Fatalf("error %v", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want one naming %q", err, tc.wantErr)
			}
			if len(got) != tc.want {
				t.Errorf("got %d events, want %d", len(got), tc.want)
			}
		})
	}
}

func TestAddRefusesInvalidEvents(t *testing.T) {
	for _, tc := range []struct {
		name string
		e    Event
	}{
		{"unknown type", Event{Type: "model"}},
		{"no type", Event{}},
		{"phase without phase", Event{Type: TypePhase}},
		{"negative tokens", Event{Type: TypeModelCall, TokensIn: -1}},
		{"NaN cost", Event{Type: TypeModelCall, USD: math.NaN()}},
		{"infinite cost", Event{Type: TypeModelCall, USD: math.Inf(1)}},
		{"negative cost", Event{Type: TypeModelCall, USD: -0.1}},
		{"negative duration", Event{Type: TypeCheckRun, Duration: -time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			rec, err := NewRecorder(&buf, wordMasker{}, newClock().now, 1)
			if err != nil {
				t.Fatal(err)
			}
			if err := rec.Add(tc.e); err == nil {
				t.Fatal("Add succeeded, want an error")
			}
			if buf.Len() != 0 || len(rec.Events()) != 0 {
				t.Errorf("a refused event was kept or written: %q", buf.String())
			}
		})
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestAddReportsWriteFailure(t *testing.T) {
	rec, err := NewRecorder(failingWriter{}, wordMasker{}, newClock().now, 1)
	if err != nil {
		t.Fatal(err)
	}
	err = rec.Add(Event{Type: TypeRetry, Reason: "transient"})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Add error = %v, want the write failure", err)
	}
	if got := len(rec.Events()); got != 1 {
		t.Errorf("kept %d events, want 1: the trace in memory still has it", got)
	}
}

// Every string field of Event passes the masker. The test finds the fields by
// reflection, so a field added later without masking fails here.
func TestEveryStringFieldMasked(t *testing.T) {
	const secret = "SECRET"
	var e Event
	v := reflect.ValueOf(&e).Elem()
	var names []string
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if f.Kind() != reflect.String || v.Type().Field(i).Name == "Type" {
			continue
		}
		f.SetString("x-" + secret + "-y")
		names = append(names, v.Type().Field(i).Name)
	}
	e.Type = TypePhase
	var buf bytes.Buffer
	rec, err := NewRecorder(&buf, wordMasker{secret}, newClock().now, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Add(e); err != nil {
		t.Fatal(err)
	}
	kept := reflect.ValueOf(rec.Events()[0])
	for _, name := range names {
		if got := kept.FieldByName(name).String(); got != "x-[masked]-y" {
			t.Errorf("field %s kept as %q, want it masked", name, got)
		}
	}
	if strings.Contains(buf.String(), secret) {
		t.Errorf("artifact holds the secret: %s", buf.String())
	}
}

// Many goroutines add at once: every event gets its own Seq, and the artifact
// holds whole lines in Seq order.
func TestRecorderConcurrent(t *testing.T) {
	var buf bytes.Buffer
	rec, err := NewRecorder(&buf, wordMasker{}, newClock().now, 1)
	if err != nil {
		t.Fatal(err)
	}
	const workers, each = 8, 100
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if err := rec.Add(Event{Type: TypeToolCall, Tool: "read", ResultClass: "ok"}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	got, err := ReadJSONL(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != workers*each {
		t.Fatalf("artifact holds %d events, want %d", len(got), workers*each)
	}
	for i, e := range got {
		if e.Seq != i+1 {
			t.Fatalf("line %d has seq %d", i+1, e.Seq)
		}
	}
	if diff := cmp.Diff(rec.Events(), got); diff != "" {
		t.Errorf("artifact differs from memory (-memory +artifact):\n%s", diff)
	}
}

func TestArgsDigest(t *testing.T) {
	a, b := ArgsDigest(`{"path":"a.go"}`), ArgsDigest(`{"path":"b.go"}`)
	if len(a) != 16 || a == b || a != ArgsDigest(`{"path":"a.go"}`) {
		t.Errorf("digests %q and %q: want 16 hex digits, equal for equal args, different otherwise", a, b)
	}
}

func TestEventDetail(t *testing.T) {
	for _, tc := range []struct {
		e    Event
		want string
	}{
		{Event{Type: TypeModelCall, Group: 2, Model: "gpt-4o-mini", TokensIn: 812, TokensOut: 95, USD: 0.00021, Duration: 1500 * time.Millisecond, Outcome: "ok"},
			"group 2 · gpt-4o-mini · tokens 812 in, 95 out · $0.0002 · 1.5s · ok"},
		{Event{Type: TypeCheckRun, Step: "verify", Command: "go test ./...", ExitCode: 1, Duration: 8 * time.Second},
			`verify · "go test ./..." · exit 1 · 8s`},
		{Event{Type: TypeRetry, Reason: "rate_limited", Attempt: 2, Wait: 30 * time.Second, Error: "secondary rate limit"},
			"rate_limited · attempt 2 · wait 30s · error: secondary rate limit"},
		{Event{Type: TypePhase, Group: 1, Phase: PhaseGroupStarted, Step: "Backoff"}, "group 1 · group_started · Backoff"},
	} {
		if got := tc.e.Detail(); got != tc.want {
			t.Errorf("Detail() = %q, want %q", got, tc.want)
		}
	}
}

func TestRecorderSetGroup(t *testing.T) {
	var buf bytes.Buffer
	r, err := NewRecorder(&buf, wordMasker{}, func() time.Time { return time.Unix(0, 0) }, 1)
	if err != nil {
		t.Fatal(err)
	}
	r.SetGroup(2)
	r.Add(Event{Type: TypeRetry, Reason: "429", Attempt: 1})            // a provider's retry: no group of its own
	r.Add(Event{Type: TypeCheckRun, Group: 3, Command: "go vet ./..."}) // names its group: kept
	r.SetGroup(0)
	r.Add(Event{Type: TypeRetry, Reason: "502", Attempt: 1})
	var got []int
	for _, e := range r.Events() {
		got = append(got, e.Group)
	}
	if want := []int{2, 3, 0}; !slices.Equal(got, want) {
		t.Errorf("groups = %v, want %v", got, want)
	}
}
