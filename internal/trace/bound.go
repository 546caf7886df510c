package trace

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// RecordLimit is the bound of the trace copy in the issue record
// (implement.trace), in characters of its one-line JSON text (DESIGN §3).
const RecordLimit = 8192

// recordStringMax bounds each text field in the record copy, in characters, so
// one long command cannot push every other event out. The artifact keeps the
// whole text.
const recordStringMax = 200

// maxRecordNumber bounds the numbers ParseRecordCopy accepts for tokens and
// durations (about 35 years in milliseconds) and for times (tn and tn-t, in
// seconds either side of 1970), so arithmetic on them cannot overflow and
// every copy it accepts can be written again.
const maxRecordNumber = 1 << 40

// RecordCopy is the bounded copy of a trace kept in the issue record: the
// newest events, and how many older ones were dropped to fit.
type RecordCopy struct {
	Dropped int
	Events  []Event
}

// Bound returns the record copy of events (oldest first) and its text: the
// newest events whose compact JSON fits in limit characters, the count of the
// older ones dropped, and the text to store under implement.trace. The text is
// one line of ASCII (other characters are \u escapes), so its length in bytes,
// characters and UTF-16 units is the same, and '<', '>' and '&' are escaped, so
// it can never close the HTML comment that holds the record.
//
// In the copy, times keep whole seconds, durations whole milliseconds and each
// text field at most 200 characters (longer ones end in "..."); the returned
// RecordCopy holds the events exactly as ParseRecordCopy reads them back from
// the text. The text is at most limit characters unless limit is too small
// for a copy with no events, in which case that empty copy is returned.
//
// Events are encoded newest first, each at most twice, and only until the copy
// is full, so the cost is linear in the events kept, not in the whole trace.
func Bound(events []Event, limit int) (RecordCopy, string) {
	n := len(events)
	// Times count back from the newest event and the copy's job is the newest
	// event's, so an event encodes the same whichever older ones are dropped.
	var tn int64
	hasTN := false
	for i := n - 1; i >= 0; i-- {
		if !events[i].Time.IsZero() {
			tn, hasTN = events[i].Time.Unix(), true
			break
		}
	}
	job := 0
	if n > 0 {
		job = recordForm(events[n-1]).Job
	}
	enc := compactEncoder{job: job, tn: tn}

	// rest holds the encoded events after the first kept one, newest first;
	// restLen is their length with one comma each.
	var rest []string
	restLen := 0
	best, bestFirst := 0, ""
	for k := 1; k <= n; k++ {
		i := n - k
		if k > 1 {
			f := enc.event(events[i+1], events[i].Seq)
			rest = append(rest, f)
			restLen += len(f) + 1
		}
		if restLen > limit {
			break
		}
		// The first kept event counts its Seq from the number dropped before it.
		first := enc.event(events[i], i)
		total := len(header(i, job, tn, hasTN)) + len(first) + restLen + len("]}")
		if total <= limit {
			best, bestFirst = k, first
		}
	}

	dropped := n - best
	var b strings.Builder
	b.WriteString(header(dropped, job, tn, hasTN && best > 0))
	if best > 0 {
		b.WriteString(bestFirst)
		for j := best - 2; j >= 0; j-- {
			b.WriteByte(',')
			b.WriteString(rest[j])
		}
	}
	b.WriteString("]}")

	rc := RecordCopy{Dropped: dropped}
	for _, e := range events[dropped:] {
		rc.Events = append(rc.Events, recordForm(e))
	}
	return rc, b.String()
}

func header(dropped, job int, tn int64, withTN bool) string {
	h := `{"v":1,"dropped":` + strconv.Itoa(dropped)
	if job != 0 {
		h += `,"job":` + strconv.Itoa(job)
	}
	if withTN {
		h += `,"tn":` + strconv.FormatInt(tn, 10)
	}
	return h + `,"ev":[`
}

// Short type codes in the record copy. Any other type is written whole after
// "=", so it cannot be read as one of the codes.
var typeCodes = [...]struct {
	t    Type
	code string
}{
	{TypeModelCall, "m"}, {TypeToolCall, "x"}, {TypeCheckRun, "c"}, {TypeRetry, "r"}, {TypePhase, "p"},
}

func typeCode(t Type) string {
	for _, c := range typeCodes {
		if c.t == t {
			return c.code
		}
	}
	return "=" + string(t)
}

func typeOfCode(code string) Type {
	for _, c := range typeCodes {
		if c.code == code {
			return c.t
		}
	}
	return Type(strings.TrimPrefix(code, "="))
}

// compactEvent is an event in the record copy. Keys are short because the
// copy is bounded; s is left out when the event follows the one before it,
// j when it is the copy's job; t holds seconds before the copy's tn (the Unix
// time of the newest event).
type compactEvent struct {
	S   *int    `json:"s"`
	T   *int64  `json:"t"`
	K   string  `json:"k"`
	J   *int    `json:"j"`
	G   int     `json:"g"`
	St  string  `json:"st"`
	Ph  string  `json:"ph"`
	Mo  string  `json:"mo"`
	I   int64   `json:"i"`
	O   int64   `json:"o"`
	U   float64 `json:"u"`
	Tl  string  `json:"tl"`
	A   string  `json:"a"`
	Rc  string  `json:"rc"`
	Cmd string  `json:"cmd"`
	Ec  int     `json:"ec"`
	Re  string  `json:"re"`
	At  int     `json:"at"`
	W   int64   `json:"w"`
	D   int64   `json:"d"`
	Oc  string  `json:"oc"`
	Er  string  `json:"er"`
}

type compactCopy struct {
	V       int            `json:"v"`
	Dropped int            `json:"dropped"`
	Job     int            `json:"job"`
	TN      int64          `json:"tn"`
	Ev      []compactEvent `json:"ev"`
}

type compactEncoder struct {
	job int
	tn  int64
}

// event encodes e; prev is the Seq it is measured from.
func (c compactEncoder) event(e Event, prev int) string {
	e = recordForm(e)
	var b strings.Builder
	b.WriteByte('{')
	first := true
	key := func(k string) {
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.WriteByte('"')
		b.WriteString(k)
		b.WriteString(`":`)
	}
	str := func(k, v string) {
		if v != "" {
			key(k)
			writeASCIIString(&b, v)
		}
	}
	num := func(k string, v int64) {
		if v != 0 {
			key(k)
			b.WriteString(strconv.FormatInt(v, 10))
		}
	}
	if e.Seq != prev+1 {
		key("s")
		b.WriteString(strconv.Itoa(e.Seq))
	}
	if !e.Time.IsZero() {
		key("t")
		b.WriteString(strconv.FormatInt(c.tn-e.Time.Unix(), 10))
	}
	key("k")
	writeASCIIString(&b, typeCode(e.Type))
	if e.Job != c.job {
		key("j")
		b.WriteString(strconv.Itoa(e.Job))
	}
	num("g", int64(e.Group))
	str("st", e.Step)
	str("ph", string(e.Phase))
	str("mo", e.Model)
	num("i", e.TokensIn)
	num("o", e.TokensOut)
	if e.USD != 0 {
		key("u")
		b.WriteString(strconv.FormatFloat(e.USD, 'g', -1, 64))
	}
	str("tl", e.Tool)
	str("a", e.ArgsDigest)
	str("rc", e.ResultClass)
	str("cmd", e.Command)
	num("ec", int64(e.ExitCode))
	str("re", e.Reason)
	num("at", int64(e.Attempt))
	num("w", millis(e.Wait))
	num("d", millis(e.Duration))
	str("oc", e.Outcome)
	str("er", e.Error)
	b.WriteByte('}')
	return b.String()
}

// recordForm is e as the record copy holds it: times to the second, durations
// to the millisecond, text cleaned and cut, and numbers ParseRecordCopy
// would refuse (negative counts, costs and durations, times or amounts out
// of range) clamped, so every copy Bound writes parses back.
func recordForm(e Event) Event {
	if !e.Time.IsZero() {
		sec := e.Time.Unix()
		if sec < -maxRecordNumber || sec > maxRecordNumber {
			e.Time = time.Time{}
		} else {
			e.Time = time.Unix(sec, 0).UTC()
		}
	}
	e.Type = Type(cleanString(string(e.Type)))
	e.Job, e.Group, e.Attempt = max(e.Job, 0), max(e.Group, 0), max(e.Attempt, 0)
	e.Step = cleanString(e.Step)
	e.Phase = Phase(cleanString(string(e.Phase)))
	e.Model = cleanString(e.Model)
	e.TokensIn, e.TokensOut = clampCount(e.TokensIn), clampCount(e.TokensOut)
	if e.USD = finite(e.USD); e.USD < 0 {
		e.USD = 0
	}
	e.Tool = cleanString(e.Tool)
	e.ArgsDigest = cleanString(e.ArgsDigest)
	e.ResultClass = cleanString(e.ResultClass)
	e.Command = cleanString(e.Command)
	e.Reason = cleanString(e.Reason)
	e.Wait = time.Duration(clampCount(millis(e.Wait))) * time.Millisecond
	e.Duration = time.Duration(clampCount(millis(e.Duration))) * time.Millisecond
	e.Outcome = cleanString(e.Outcome)
	e.Error = cleanString(e.Error)
	return e
}

func clampCount(n int64) int64 { return min(max(n, 0), maxRecordNumber) }

// cleanString makes s valid UTF-8 (each bad byte becomes U+FFFD, as JSON
// decoding would) and cuts it to recordStringMax characters.
func cleanString(s string) string {
	if len(s) <= recordStringMax && utf8.ValidString(s) {
		return s
	}
	cut := utf8.RuneCountInString(s) > recordStringMax
	var b strings.Builder
	n := 0
	for _, r := range s { // ranging a string yields U+FFFD per bad byte
		if cut && n == recordStringMax-3 {
			b.WriteString("...")
			break
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// writeASCIIString writes s as a JSON string using only ASCII: everything
// outside printable ASCII, and < > &, as \u escapes.
func writeASCIIString(b *strings.Builder, s string) {
	const hexDigits = "0123456789abcdef"
	u4 := func(r rune) {
		b.WriteString(`\u`)
		b.WriteByte(hexDigits[r>>12&0xf])
		b.WriteByte(hexDigits[r>>8&0xf])
		b.WriteByte(hexDigits[r>>4&0xf])
		b.WriteByte(hexDigits[r&0xf])
	}
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20, r == '<', r == '>', r == '&', r == 0x7f:
			u4(r)
		case r < 0x80:
			b.WriteByte(byte(r))
		case r > 0xffff:
			r -= 0x10000
			u4(0xd800 + r>>10)
			u4(0xdc00 + r&0x3ff)
		default:
			u4(r)
		}
	}
	b.WriteByte('"')
}

// ParseRecordCopy reads the text Bound writes. The text comes from an issue
// body anyone with write access can edit, so it is checked: the version must
// be 1, counts and durations must not be negative, numbers must be in range.
func ParseRecordCopy(s string) (RecordCopy, error) {
	var c compactCopy
	if err := json.Unmarshal([]byte(s), &c); err != nil {
		return RecordCopy{}, fmt.Errorf("parse trace record copy: %w", err)
	}
	if c.V != 1 {
		return RecordCopy{}, fmt.Errorf("parse trace record copy: version %d, want 1", c.V)
	}
	if c.Dropped < 0 || c.Job < 0 {
		return RecordCopy{}, errors.New("parse trace record copy: negative dropped or job")
	}
	if c.TN < -maxRecordNumber || c.TN > maxRecordNumber {
		return RecordCopy{}, fmt.Errorf("parse trace record copy: tn %d out of range", c.TN)
	}
	rc := RecordCopy{Dropped: c.Dropped}
	prev := c.Dropped
	for i, ce := range c.Ev {
		e, err := ce.event(&c, prev)
		if err != nil {
			return RecordCopy{}, fmt.Errorf("parse trace record copy: event %d: %w", i+1, err)
		}
		prev = e.Seq
		rc.Events = append(rc.Events, e)
	}
	return rc, nil
}

func (ce compactEvent) event(c *compactCopy, prev int) (Event, error) {
	inRange := func(v int64) bool { return v >= 0 && v <= maxRecordNumber }
	if !inRange(ce.I) || !inRange(ce.O) || !inRange(ce.W) || !inRange(ce.D) ||
		ce.G < 0 || ce.At < 0 || ce.U < 0 {
		return Event{}, errors.New("negative or out-of-range number")
	}
	e := Event{
		Seq: prev + 1, Type: typeOfCode(ce.K), Job: c.Job, Group: ce.G, Step: ce.St,
		Phase: Phase(ce.Ph), Model: ce.Mo, TokensIn: ce.I, TokensOut: ce.O, USD: ce.U,
		Tool: ce.Tl, ArgsDigest: ce.A, ResultClass: ce.Rc, Command: ce.Cmd, ExitCode: ce.Ec,
		Reason: ce.Re, Attempt: ce.At, Wait: time.Duration(ce.W) * time.Millisecond,
		Duration: time.Duration(ce.D) * time.Millisecond, Outcome: ce.Oc, Error: ce.Er,
	}
	if ce.S != nil {
		e.Seq = *ce.S
	}
	if ce.J != nil {
		if *ce.J < 0 {
			return Event{}, errors.New("negative job")
		}
		e.Job = *ce.J
	}
	if ce.T != nil {
		if *ce.T < -2*maxRecordNumber || *ce.T > 2*maxRecordNumber {
			return Event{}, fmt.Errorf("time offset %d out of range", *ce.T)
		}
		abs := c.TN - *ce.T
		if abs < -maxRecordNumber || abs > maxRecordNumber {
			return Event{}, fmt.Errorf("time %d out of range", abs)
		}
		e.Time = time.Unix(abs, 0).UTC()
	}
	return e, nil
}
