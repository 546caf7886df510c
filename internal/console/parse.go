package console

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// DoingGroups reads "group K of N" from the record comment's first line,
// where a running implement Job says what it does ("implementing group 2
// of 3: …"). It returns 0, 0 when the line says no such thing or the
// numbers make no sense (K from 1 to N, N at most record.MaxCount).
func DoingGroups(body string) (k, n int) {
	first, _, _ := strings.Cut(body, "\n")
	const word = "group "
	for rest := first; ; {
		i := strings.Index(rest, word)
		if i < 0 {
			return 0, 0
		}
		rest = rest[i+len(word):]
		a, tail, ok := leadingInt(rest)
		if !ok {
			continue
		}
		tail, found := strings.CutPrefix(tail, " of ")
		if !found {
			continue
		}
		b, _, ok := leadingInt(tail)
		if ok && a >= 1 && a <= b && b <= record.MaxCount {
			return a, b
		}
	}
}

// leadingInt reads the decimal number s starts with (at most six digits).
func leadingInt(s string) (int, string, bool) {
	i := 0
	for i < len(s) && i < 7 && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 || i > 6 {
		return 0, s, false
	}
	v, err := strconv.Atoi(s[:i])
	return v, s[i:], err == nil
}

// LogCalls reads the model calls of Job job from its log, as GitHub serves
// a completed job's log: the settling spend lines (trace.ParseSpendLines),
// each call once, in the order printed. Lines of other Jobs (a runner that
// ran several) and bookings are left out: a booking is settled by the line
// after it, or was in flight when the Job was killed.
func LogCalls(r io.Reader, job int) ([]trace.SpendEntry, error) {
	log, err := trace.ParseSpendLines(r)
	if err != nil {
		return nil, fmt.Errorf("read spend lines: %w", err)
	}
	seen := map[int]bool{}
	var out []trace.SpendEntry
	for _, e := range log.Entries {
		if e.Job != job || seen[e.Call] {
			continue
		}
		seen[e.Call] = true
		out = append(out, e)
	}
	return out, nil
}
