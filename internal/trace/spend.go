package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/text"
)

// SpendPrefix starts every spend line. It does not begin with "::", so the
// runner never reads a spend line as a workflow command.
const SpendPrefix = "roadmap::spend "

// maxSpendModel bounds the model name in a spend line, so a line stays short
// and the reader can skip any longer log line without parsing it.
const maxSpendModel = 200

// maxSpendLine is the longest log line the reader considers a spend line.
const maxSpendLine = 2048

// SpendEntry is the spend of one model call, as a spend line carries it.
type SpendEntry struct {
	Job   int `json:"job"`
	Group int `json:"group"`
	// Call numbers the model calls of the Job from 1, so (Job, Call) names a
	// call once across logs.
	Call  int    `json:"call"`
	Model string `json:"model"`
	// Booked marks the line printed just before the call's request goes
	// out: its numbers are the call's estimate (the request's input as the
	// agent estimates it, its max_tokens out, their price). The line
	// printed when the call ended (Booked false) settles it.
	Booked bool `json:"booked,omitempty"`
	// Estimated marks a settling line whose numbers are still the
	// booking: the call ended with no answer (the Job was stopped, or the
	// connection failed), so it may have been served and charged.
	Estimated bool    `json:"estimated,omitempty"`
	TokensIn  int64   `json:"tokens_in"`
	TokensOut int64   `json:"tokens_out"`
	USD       float64 `json:"usd"`
}

// SpendLine returns a line implement prints to its job log for each model
// call, without a newline: a booking just before the request goes out, and
// the settling line when the call ended,
//
//	roadmap::spend {"job":2,"group":2,"call":7,"model":"gpt-4o-mini","booked":true,"tokens_in":3120,"tokens_out":4096,"usd":0.00292}
//	roadmap::spend {"job":2,"group":2,"call":7,"model":"gpt-4o-mini","tokens_in":812,"tokens_out":95,"usd":0.00021}
//
// so a Job killed while its call is in flight leaves the booking. The model
// name is the only text; it passes the recorder's masker and is cut to 200
// characters. A zero Job is the recorder's Job. Negative or non-finite
// numbers are written as 0, so the line always parses.
func (r *Recorder) SpendLine(e SpendEntry) string {
	if e.Job == 0 {
		e.Job = r.job
	}
	e.Model = r.mask.Mask(e.Model)
	return formatSpendLine(e)
}

func formatSpendLine(e SpendEntry) string {
	e.Model = text.Cut(strings.ToValidUTF8(e.Model, "\uFFFD"), maxSpendModel)
	e.Job, e.Group, e.Call = max(e.Job, 0), max(e.Group, 0), max(e.Call, 0)
	e.TokensIn, e.TokensOut = max(e.TokensIn, 0), max(e.TokensOut, 0)
	if e.USD = finite(e.USD); e.USD < 0 {
		e.USD = 0
	}
	b, err := json.Marshal(e)
	if err != nil {
		// Unreachable: the struct holds only numbers made finite and a string.
		panic(fmt.Sprintf("encode spend line: %v", err))
	}
	return SpendPrefix + string(b)
}

// SpendFromEvent is the spend entry of a model_call event; call numbers it.
func SpendFromEvent(e Event, call int) SpendEntry {
	return SpendEntry{
		Job: e.Job, Group: e.Group, Call: call, Model: e.Model,
		TokensIn: e.TokensIn, TokensOut: e.TokensOut, USD: e.USD,
	}
}

// SpendLog is what a job log holds: the settling spend lines in order
// (Entries), the bookings in order (Booked), and the number of lines that
// carried the spend prefix but did not parse. A call with a booking and no
// settling line was in flight when the log ends.
type SpendLog struct {
	Entries   []SpendEntry
	Booked    []SpendEntry
	Malformed int
}

// Total sums the settled calls (Entries).
func (l SpendLog) Total() Totals {
	var t Totals
	for _, e := range l.Entries {
		t.TokensIn += e.TokensIn
		t.TokensOut += e.TokensOut
		t.USD += e.USD
		t.ModelCalls++
	}
	return t
}

// ParseSpendLines reads the spend lines out of a job log as GitHub serves it:
// an optional byte-order mark, each line optionally prefixed with the runner's
// timestamp ("2026-11-29T10:15:02.1234567Z "), CRLF or LF endings. A spend
// line must start with SpendPrefix right after the timestamp; text that only
// contains it further in (a tool echoing a log) is not spend. The log is
// streamed with a fixed buffer; lines longer than a spend line can be are
// skipped unread. Only a read error is returned as an error.
func ParseSpendLines(r io.Reader) (SpendLog, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var log SpendLog
	first := true
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// Far longer than any spend line: skip to the end of it.
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			first = false
			if err != nil && !errors.Is(err, io.EOF) {
				return log, fmt.Errorf("read job log: %w", err)
			}
			if err != nil {
				return log, nil
			}
			continue
		}
		if len(line) > 0 {
			if first {
				line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
			}
			first = false
			entry, isSpend, ok := parseSpendLine(line)
			switch {
			case ok && entry.Booked:
				log.Booked = append(log.Booked, entry)
			case ok:
				log.Entries = append(log.Entries, entry)
			case isSpend:
				log.Malformed++
			}
		}
		if errors.Is(err, io.EOF) {
			return log, nil
		}
		if err != nil {
			return log, fmt.Errorf("read job log: %w", err)
		}
	}
}

// parseSpendLine reads one log line. isSpend says the line carries the spend
// prefix; ok that it also parsed.
func parseSpendLine(line []byte) (e SpendEntry, isSpend, ok bool) {
	line = bytes.TrimRight(line, "\r\n")
	line = stripTimestamp(line)
	rest, found := bytes.CutPrefix(line, []byte(SpendPrefix))
	if !found {
		return SpendEntry{}, false, false
	}
	if len(line) > maxSpendLine {
		return SpendEntry{}, true, false
	}
	var w struct {
		Job       *int     `json:"job"`
		Group     *int     `json:"group"`
		Call      *int     `json:"call"`
		Model     *string  `json:"model"`
		Booked    bool     `json:"booked"`
		Estimated bool     `json:"estimated"`
		TokensIn  *int64   `json:"tokens_in"`
		TokensOut *int64   `json:"tokens_out"`
		USD       *float64 `json:"usd"`
	}
	// Unknown fields are allowed, so an older report reads a newer line.
	if err := json.Unmarshal(rest, &w); err != nil {
		return SpendEntry{}, true, false
	}
	if w.Job == nil || w.Group == nil || w.Call == nil || w.Model == nil ||
		w.TokensIn == nil || w.TokensOut == nil || w.USD == nil {
		return SpendEntry{}, true, false
	}
	e = SpendEntry{Job: *w.Job, Group: *w.Group, Call: *w.Call, Model: *w.Model, Booked: w.Booked, Estimated: w.Estimated,
		TokensIn: *w.TokensIn, TokensOut: *w.TokensOut, USD: *w.USD}
	if e.Booked {
		// A booking is an estimate by nature.
		e.Estimated = false
	}
	if e.Job < 0 || e.Group < 0 || e.Call < 1 || e.Model == "" || len(e.Model) > maxSpendModel ||
		e.TokensIn < 0 || e.TokensOut < 0 || e.USD < 0 || math.IsInf(e.USD, 0) {
		return SpendEntry{}, true, false
	}
	return e, true, true
}

// stripTimestamp removes the runner's line prefix: an RFC 3339 UTC time with
// an optional fraction, then one space.
func stripTimestamp(line []byte) []byte {
	// 2026-11-29T10:15:02Z is the shortest form.
	const layout = "dddd-dd-ddTdd:dd:dd"
	if len(line) < len(layout)+2 {
		return line
	}
	for i := 0; i < len(layout); i++ {
		c := line[i]
		if layout[i] == 'd' {
			if c < '0' || c > '9' {
				return line
			}
		} else if c != layout[i] {
			return line
		}
	}
	i := len(layout)
	if line[i] == '.' {
		i++
		start := i
		for i < len(line) && line[i] >= '0' && line[i] <= '9' {
			i++
		}
		if i == start {
			return line
		}
	}
	if i+1 < len(line) && line[i] == 'Z' && line[i+1] == ' ' {
		return line[i+2:]
	}
	return line
}
