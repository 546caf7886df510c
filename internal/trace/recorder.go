package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"sync"
	"time"
)

// Masker hides secrets and private host names in text. internal/redact
// provides the real one; every string an event carries passes it before the
// event is kept or written.
type Masker interface {
	Mask(string) string
}

// Recorder keeps the events of one Job in order and writes each one to the
// artifact as it is added. It is safe for concurrent use.
type Recorder struct {
	w    io.Writer
	mask Masker
	now  func() time.Time
	job  int

	mu     sync.Mutex
	seq    int
	group  int // stamped on events that name no group (SetGroup)
	events []Event
	buf    bytes.Buffer
}

// NewRecorder returns a Recorder for Job job that writes JSONL to w. The
// masker is required, so no event can be kept unmasked; w receives one
// complete line per Write call and is not buffered here: when Add returns, the
// line is in the kernel (for a file), where a killed process cannot lose it.
// Pass io.Discard to keep events only in memory.
func NewRecorder(w io.Writer, m Masker, now func() time.Time, job int) (*Recorder, error) {
	if isNil(m) {
		return nil, errors.New("new trace recorder: a masker is required")
	}
	if w == nil {
		return nil, errors.New("new trace recorder: a writer is required (io.Discard keeps events in memory only)")
	}
	if now == nil {
		return nil, errors.New("new trace recorder: a clock is required")
	}
	if job < 0 {
		return nil, fmt.Errorf("new trace recorder: job %d is negative", job)
	}
	return &Recorder{w: w, mask: m, now: now, job: job}, nil
}

// isNil catches a typed nil pointer inside the interface as well, which would
// otherwise pass the nil check and panic on the first Mask.
func isNil(m Masker) bool {
	if m == nil {
		return true
	}
	v := reflect.ValueOf(m)
	switch v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Func, reflect.Interface, reflect.Slice, reflect.Chan:
		return v.IsNil()
	}
	return false
}

// SetGroup makes n the group of the events added from now on that name none
// (0 clears it): events recorded by code that does not know the group, such
// as a model provider's retries, still land in their group on the timeline.
func (r *Recorder) SetGroup(n int) {
	r.mu.Lock()
	r.group = n
	r.mu.Unlock()
}

// Add masks e, gives it the next Seq, stamps Time (when e.Time is zero), the
// Job (when e.Job is zero) and the group set by SetGroup (when e.Group is
// zero), keeps it and writes it as one JSONL line. Durations
// are kept to the millisecond, as the artifact holds them, so Events and
// ReadJSONL of the artifact agree. An event that fails validation is neither
// kept nor written. When the write fails the event is still kept in memory
// and the error is returned.
func (r *Recorder) Add(e Event) error {
	if err := validate(e); err != nil {
		return fmt.Errorf("add trace event: %w", err)
	}
	e = maskEvent(e, r.mask)
	e.Duration = e.Duration.Round(time.Millisecond)
	e.Wait = e.Wait.Round(time.Millisecond)
	if e.Job == 0 {
		e.Job = r.job
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	if e.Group == 0 {
		e.Group = r.group
	}
	r.seq++
	e.Seq = r.seq
	if e.Time.IsZero() {
		e.Time = r.now()
	}
	// UTC also drops the monotonic reading, so the kept event equals the one
	// read back from the artifact.
	e.Time = e.Time.UTC()
	r.events = append(r.events, e)

	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("add trace event %d: encode: %w", e.Seq, err)
	}
	r.buf.Reset()
	r.buf.Write(line)
	r.buf.WriteByte('\n')
	// One Write per line: a concurrent reader or a kill sees whole lines, or a
	// cut last line that ReadJSONL tolerates.
	if _, err := r.w.Write(r.buf.Bytes()); err != nil {
		return fmt.Errorf("add trace event %d: write artifact: %w", e.Seq, err)
	}
	return nil
}

// Events returns a copy of the events kept so far, in order.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}

// Job returns the Job number the recorder stamps on events.
func (r *Recorder) Job() int { return r.job }

func validate(e Event) error {
	if !e.Type.Known() {
		return fmt.Errorf("unknown event type %q", e.Type)
	}
	if e.Type == TypePhase && e.Phase == "" {
		return errors.New("phase event without a phase")
	}
	if e.TokensIn < 0 || e.TokensOut < 0 {
		return fmt.Errorf("%s event: negative tokens (%d in, %d out)", e.Type, e.TokensIn, e.TokensOut)
	}
	if math.IsNaN(e.USD) || math.IsInf(e.USD, 0) || e.USD < 0 {
		return fmt.Errorf("%s event: usd %v is not a cost", e.Type, e.USD)
	}
	if e.Group < 0 || e.Job < 0 || e.Attempt < 0 {
		return fmt.Errorf("%s event: negative group, job or attempt", e.Type)
	}
	if e.Duration < 0 || e.Wait < 0 {
		return fmt.Errorf("%s event: negative duration or wait", e.Type)
	}
	return nil
}

// maskEvent passes every free-text field through m (Type is not free text:
// validate admits only the known names). A new string field must be added
// here; TestEveryStringFieldMasked fails until it is.
func maskEvent(e Event, m Masker) Event {
	e.Step = m.Mask(e.Step)
	e.Model = m.Mask(e.Model)
	e.Tool = m.Mask(e.Tool)
	e.ArgsDigest = m.Mask(e.ArgsDigest)
	e.ResultClass = m.Mask(e.ResultClass)
	e.Command = m.Mask(e.Command)
	e.Reason = m.Mask(e.Reason)
	e.Phase = Phase(m.Mask(string(e.Phase)))
	e.Outcome = m.Mask(e.Outcome)
	e.Error = m.Mask(e.Error)
	return e
}

// maxLine bounds one artifact line when reading it back. The Recorder writes
// far shorter lines; the bound keeps a corrupt artifact from taking memory.
const maxLine = 4 << 20

// ReadJSONL reads an artifact back. A last line without its newline that does
// not parse is the cut-off write of a killed Job: it is dropped, not an error.
// Any other line that does not parse is an error naming the line. Blank lines
// are skipped.
func ReadJSONL(r io.Reader) ([]Event, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var events []Event
	for n := 1; ; n++ {
		line, complete, err := readLine(br)
		if err != nil {
			return events, fmt.Errorf("read trace line %d: %w", n, err)
		}
		if line == nil && !complete {
			return events, nil
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			if !complete {
				return events, nil
			}
			continue
		}
		var e Event
		if err := json.Unmarshal(line, &e); err != nil {
			if !complete {
				return events, nil
			}
			return events, fmt.Errorf("read trace line %d: %w", n, err)
		}
		events = append(events, e)
		if !complete {
			return events, nil
		}
	}
}

// readLine returns the next line without its newline. complete is false when
// the input ended before a newline (line holds what there was, nil at EOF).
func readLine(br *bufio.Reader) (line []byte, complete bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > maxLine {
			return nil, false, fmt.Errorf("line longer than %d bytes", maxLine)
		}
		line = append(line, chunk...)
		switch {
		case err == nil:
			return line[:len(line)-1], true, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(line) == 0 {
				return nil, false, nil
			}
			return line, false, nil
		default:
			return nil, false, err
		}
	}
}
