package redact

import (
	"bytes"
	"cmp"
	"slices"
	"strings"
)

// DefaultPlaceholder replaces each masked span. It is short, obviously not a
// secret, and no rule matches it, so masking masked text changes nothing.
const DefaultPlaceholder = "[masked]"

// MinSecretLength is the shortest configured secret that is masked. Shorter
// values ("true", "1", a short user name) would mask ordinary words.
const MinSecretLength = 6

const (
	// defaultMaxLine is the longest line kept whole; longer lines are masked
	// in windows of this size.
	defaultMaxLine = 64 << 10
	// defaultOverlap is how far consecutive windows overlap. A match's
	// beginning (a key, a header name, a scheme, a token's prefix: at most
	// a few hundred bytes) is shorter than this, so the window in which a
	// match begins before the overlap sees its beginning whole and masks it;
	// a value that runs past the window's end is masked on in the next (see
	// Writer.window). Nothing bounds a value's length.
	defaultOverlap = 16 << 10
	// maxFixpoint bounds the extra passes over a line whose masking exposed a
	// new match (a masked span can become a word boundary for another rule).
	maxFixpoint = 3
)

// Config says what a Masker masks beyond the built-in secret families.
type Config struct {
	// Secrets are exact values to mask, also in their base64, JSON and URL
	// escaped, hex, percent-encoded and reversed forms, and in pieces
	// (split by blanks or line breaks, or interleaved with zero-width
	// characters). Values shorter than MinSecretLength are ignored; a
	// multi-line value is masked line by line.
	Secrets []string
	// PrivateSuffixes are host-name suffixes whose hosts are masked. nil
	// means DefaultPrivateSuffixes; an empty non-nil slice masks no host
	// names. A leading dot is added when missing.
	PrivateSuffixes []string
	// Placeholder replaces each masked span; "" means DefaultPlaceholder. It
	// must not contain a newline and should not look like a secret.
	Placeholder string
}

// DefaultPrivateSuffixes returns the host-name suffixes masked by default:
// names that resolve only inside a private network.
func DefaultPrivateSuffixes() []string {
	return []string{".internal", ".local", ".corp", ".lan", ".home.arpa", ".intranet", ".private"}
}

// Masker masks secrets in text. It is immutable after New and safe for
// concurrent use; a Writer from it is not.
type Masker struct {
	placeholder []byte
	lits        *ac // configured secrets and their encodings; nil when none
	trig        *ac // keywords that select which rules run on a line
	rules       []rule
	pemBit      uint64
	suffixes    [][]byte
	maxLine     int
	overlap     int
}

// span is a half-open byte range [start, end) to mask. cont marks a span
// that continues one already replaced by a placeholder in the previous
// window of a long line. head is how far before start the match that found
// it begins (a key, a header name, a URL's scheme): the window holding that
// beginning is the one that masks the span. carry is what the span runs on
// over when a window's end cuts it.
type span struct {
	start, end int
	head       int
	cont       bool
	carry      carryKind
}

// New returns a Masker for cfg.
func New(cfg Config) *Masker {
	m := &Masker{
		placeholder: []byte(DefaultPlaceholder),
		maxLine:     defaultMaxLine,
		overlap:     defaultOverlap,
	}
	if cfg.Placeholder != "" && !strings.ContainsAny(cfg.Placeholder, "\r\n") {
		m.placeholder = []byte(cfg.Placeholder)
	}
	suffixes := cfg.PrivateSuffixes
	if suffixes == nil {
		suffixes = DefaultPrivateSuffixes()
	}
	for _, s := range suffixes {
		s = strings.ToLower(strings.TrimSpace(s))
		if s == "" || s == "." {
			continue
		}
		if !strings.HasPrefix(s, ".") {
			s = "." + s
		}
		m.suffixes = append(m.suffixes, []byte(s))
	}
	if lits := secretForms(cfg.Secrets); len(lits) > 0 {
		m.lits = newAC(lits, nil, false)
	}
	m.rules = builtinRules(m.suffixes)
	var pats []string
	var bits []uint64
	for i, r := range m.rules {
		if r.name == "pem-private-key" {
			m.pemBit = 1 << i
		}
		for _, t := range r.triggers {
			pats = append(pats, t)
			bits = append(bits, 1<<i)
		}
	}
	m.trig = newAC(pats, bits, true)
	return m
}

// Mask returns s with every secret replaced by the placeholder. Lines are
// masked as the Writer masks them, so Mask(s) equals streaming s through
// NewWriter however s is split into writes.
func (m *Masker) Mask(s string) string {
	if !m.mayMatch(s) {
		return s
	}
	var b bytes.Buffer
	b.Grow(len(s) + len(s)/8)
	w := m.NewWriter(&b)
	_, _ = w.Write([]byte(s))
	_ = w.Close()
	return b.String()
}

// mayMatch reports whether any rule or configured secret could match in s.
// Every rule is gated by a trigger keyword, so false means s is unchanged.
func (m *Masker) mayMatch(s string) bool {
	if m.lits != nil && m.lits.mayHold(s) {
		return true
	}
	return m.trig.anyString(s)
}

// spans appends the spans to mask in line to sp. open reports a PEM private
// key that begins on the line and does not end on it. With lits the
// configured secrets are looked for in line alone; without, the caller has
// found them (the Writer scans for them across lines).
func (m *Masker) spans(line []byte, sp []span, lits bool) (_ []span, open bool) {
	if lits && m.lits != nil {
		sp = m.findLits(line, sp)
	}
	bits := m.trig.scanBits(line)
	if bits == 0 {
		return sp, false
	}
	for i := range m.rules {
		bit := uint64(1) << i
		if bits&bit == 0 {
			continue
		}
		n := len(sp)
		if bit == m.pemBit {
			var o bool
			sp, o = findPEM(line, sp)
			open = open || o
		} else {
			sp = m.rules[i].find(m, line, sp)
		}
		for k := n; k < len(sp); k++ {
			if sp[k].carry == carryToken {
				sp[k].carry = m.rules[i].carry
			}
		}
	}
	return sp, open
}

// normalize sorts and merges spans so each masked region gets one
// placeholder. Placeholders already in the line are kept whole: a span inside
// one is dropped (a configured secret such as "masked" must not mask the
// placeholder) and a span overlapping one grows to cover it.
func (m *Masker) normalize(line []byte, sp []span) []span {
	if len(sp) == 0 {
		return sp
	}
	// Placeholders already in the line, in order.
	var phs []span
	for off := 0; off < len(line); {
		i := bytes.Index(line[off:], m.placeholder)
		if i < 0 {
			break
		}
		phs = append(phs, span{start: off + i, end: off + i + len(m.placeholder)})
		off += i + len(m.placeholder)
	}
	for k := range sp {
		s := &sp[k]
		// The first placeholder ending after the span starts; placeholders
		// do not overlap, so the ones the span touches follow it.
		j, _ := slices.BinarySearchFunc(phs, s.start, func(p span, start int) int { return cmp.Compare(p.end, start+1) })
		for ; j < len(phs) && phs[j].start < s.end; j++ {
			p := phs[j]
			if s.start >= p.start && s.end <= p.end && !s.cont {
				s.end = s.start // inside a placeholder: drop
				break
			}
			s.head = max(0, s.head-(s.start-min(s.start, p.start)))
			s.start = min(s.start, p.start)
			s.end = max(s.end, p.end)
		}
	}
	for k := range sp {
		st := escapeStart(line, sp[k].start)
		sp[k].head = max(0, sp[k].head-(sp[k].start-st))
		sp[k].start = st
		if s := &sp[k]; s.end > s.start && s.end < len(line) && escaping(line[s.start:s.end]) {
			s.end-- // leave the backslash with the character it escapes
		}
	}
	slices.SortFunc(sp, func(x, y span) int {
		if x.start != y.start {
			return x.start - y.start
		}
		return y.end - x.end
	})
	out := sp[:0]
	for _, s := range sp {
		if s.end <= s.start {
			continue
		}
		if n := len(out); n > 0 && s.start <= out[n-1].end {
			o := &out[n-1]
			if s.end > o.end {
				o.end, o.carry = s.end, s.carry
			}
			o.head = max(o.head, o.start-(s.start-s.head)) // the earlier beginning
			o.cont = o.cont || s.cont
			continue
		}
		out = append(out, s)
	}
	return out
}

// apply appends line to dst with the (normalized) spans replaced by the
// placeholder and returns the number of placeholders written.
func (m *Masker) apply(dst, line []byte, sp []span) ([]byte, int) {
	prev, n := 0, 0
	for _, s := range sp {
		dst = append(dst, line[prev:s.start]...)
		if !s.cont {
			dst = append(dst, m.placeholder...)
			n++
		}
		prev = s.end
	}
	return append(dst, line[prev:]...), n
}

// maskLine appends the masked form of a whole line to dst. forced spans are
// masked in addition to what the rules find; they hold the configured
// secrets, which the Writer finds across lines. Masking is repeated on the
// result until it is stable (bounded), which makes Mask idempotent even when
// a placeholder creates a boundary another rule needs.
func (m *Masker) maskLine(dst, line []byte, forced []span, scratch *[]span) (_ []byte, open bool, n int) {
	sp, open := m.spans(line, append((*scratch)[:0], forced...), false)
	sp = m.normalize(line, sp)
	*scratch = sp
	if len(sp) == 0 {
		return append(dst, line...), open, 0
	}
	cur, n := m.apply(nil, line, sp)
	for range maxFixpoint {
		sp, _ = m.spans(cur, sp[:0], true)
		sp = m.normalize(cur, sp)
		if len(sp) == 0 {
			break
		}
		var k int
		cur, k = m.apply(nil, cur, sp)
		n += k
	}
	*scratch = sp
	return append(dst, cur...), open, n
}

// escaping reports whether b ends in an odd run of backslashes: its last
// byte escapes whatever follows.
func escaping(b []byte) bool {
	n := 0
	for i := len(b) - 1; i >= 0 && b[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// escapeStart moves a span start that falls inside an escape sequence ("\n",
// "\u00e9") back to its backslash, so masked JSON text stays valid JSON.
func escapeStart(line []byte, start int) int {
	for bs := start - 1; bs >= 0 && bs >= start-5; bs-- {
		if line[bs] != '\\' || !escaping(line[:bs+1]) {
			continue
		}
		if bs == start-1 || (line[bs+1] == 'u' && start <= bs+5) {
			return bs
		}
		break
	}
	return start
}
