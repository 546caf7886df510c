package redact

import "strings"

// Configured secrets are found even when separators were put inside them: a
// model that prints a token in pieces (on several lines, in groups with
// spaces between) or with zero-width characters between its letters. The
// literal automaton holds each form with its separators removed, and the
// scan skips separators in the text, so one pass finds a form whole or in
// pieces; a match is mapped back to the bytes it covers, separators and all.
//
// Separators are ASCII blanks and line breaks and the zero-width characters
// U+200B, U+200C, U+200D, U+2060 and U+FEFF. Two bounds keep a match from
// gathering letters spread over a text: a run of more than maxGap separators
// ends any match under way, and a match whose separators take more than the
// Masker's slack (half the window overlap, 8 KiB) is not taken. The slack
// also keeps every match shorter than the overlap of a long line's windows,
// so a window sees each match it owns whole.

// maxGap is the longest run of separators inside one configured secret.
const maxGap = 16

// sepByte is 1 for a byte that is a separator by itself and 2 for the
// first byte of a zero-width character's encoding.
var sepByte = func() (t [256]uint8) {
	for _, c := range []byte(" \t\n\v\f\r") {
		t[c] = 1
	}
	t[0xE2], t[0xEF] = 2, 2
	return t
}()

// zeroWidth reports whether a, b, c encode U+200B, U+200C, U+200D, U+2060
// or U+FEFF.
func zeroWidth(a, b, c byte) bool {
	switch a {
	case 0xE2:
		return b == 0x80 && (c == 0x8B || c == 0x8C || c == 0x8D) || b == 0x81 && c == 0xA0
	case 0xEF:
		return b == 0xBB && c == 0xBF
	}
	return false
}

// sepAt is the length of the separator that starts at b[i], 0 for none.
func sepAt[T string | []byte](b T, i int) int {
	switch sepByte[b[i]] {
	case 1:
		return 1
	case 2:
		if i+2 < len(b) && zeroWidth(b[i], b[i+1], b[i+2]) {
			return 3
		}
	}
	return 0
}

// sepBefore is the length of the separator that ends just before b[i], 0
// for none. It agrees with a forward scan from the start of b.
func sepBefore[T string | []byte](b T, i int) int {
	c := b[i-1]
	if sepByte[c] == 1 {
		return 1
	}
	if i >= 3 && zeroWidth(b[i-3], b[i-2], c) {
		return 3
	}
	return 0
}

// squeeze removes the separators from s.
func squeeze(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if n := sepAt(s, i); n > 0 {
			i += n
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// litState carries the scan for configured secrets from one line to the
// next, so a secret split across lines is found.
type litState struct {
	s   int32 // the automaton's state
	gap int32 // separators since the last byte that was not one
}

// sep counts n separators: a run longer than maxGap ends the match under way.
func (st *litState) sep(n int32) {
	st.gap += n
	if st.gap > maxGap {
		st.s = 0
	}
}

// litMatch is a match of the literal automaton: end is just past its last
// byte, n the number of bytes it has without its separators.
type litMatch struct{ end, n int }

// scanSplit runs the automaton over b from st, skipping separators, and
// appends every match to ms.
func scanSplit[T string | []byte](a *ac, b T, st *litState, ms []litMatch) []litMatch {
	s, gap := st.s, st.gap
	w := int32(a.width)
	for i := 0; i < len(b); i++ {
		c := b[i]
		if k := sepByte[c]; k != 0 {
			if k == 1 || i+2 < len(b) && zeroWidth(c, b[i+1], b[i+2]) {
				if k == 2 {
					i += 2
				}
				if gap++; gap > maxGap {
					s = 0
				}
				continue
			}
		}
		gap = 0
		s = a.delta[s*w+int32(a.class[c])]
		if n := a.maxLen[s]; n != 0 {
			ms = append(ms, litMatch{end: i + 1, n: int(n)})
		}
	}
	st.s, st.gap = s, gap
	return ms
}

// mayHold reports whether some configured secret could occur in s: a cheap
// test that never says no when Mask would mask one.
func (a *ac) mayHold(s string) bool {
	st, gap := int32(0), 0
	w := int32(a.width)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if k := sepByte[c]; k != 0 {
			if k == 1 || i+2 < len(s) && zeroWidth(c, s[i+1], s[i+2]) {
				if k == 2 {
					i += 2
				}
				if gap++; gap > maxGap {
					st = 0
				}
				continue
			}
		}
		gap = 0
		st = a.delta[st*w+int32(a.class[c])]
		if a.maxLen[st] != 0 {
			return true
		}
	}
	return false
}

// walkBack returns where the last n bytes of b[:end] that are not
// separators begin: the start of a match that ends at end.
func walkBack[T string | []byte](b T, end, n int) int {
	i := end
	for n > 0 && i > 0 {
		if k := sepBefore(b, i); k > 0 {
			i -= k
			continue
		}
		i--
		n--
	}
	return i
}

// slack is how many separator bytes a match may hold.
func (m *Masker) slack() int { return m.overlap / 2 }

// findLits appends a span for every configured secret in b, scanned on its
// own (a line or a window of one).
func (m *Masker) findLits(b []byte, sp []span) []span {
	var st litState
	ms := scanSplit(m.lits, b, &st, nil)
	for _, x := range ms {
		start := walkBack(b, x.end, x.n)
		if x.end-start-x.n <= m.slack() {
			sp = append(sp, span{start: start, end: x.end})
		}
	}
	return sp
}

// Contains reports whether s holds one of the configured secrets
// (Config.Secrets), in any form the masker finds: exact, escaped, encoded,
// reversed, split by blanks or line breaks, or interleaved with zero-width
// characters. Only the configured secrets are asked: the families, private
// hosts and addresses favour recall and would refuse ordinary code. A
// secret inside a placeholder (a configured "masked" in "[masked]") does
// not count, as Mask leaves it. Contains is what a push is checked with.
func (m *Masker) Contains(s string) bool {
	if m.lits == nil {
		return false
	}
	var st litState
	ph := string(m.placeholder)
	for _, x := range scanSplit(m.lits, s, &st, nil) {
		start := walkBack(s, x.end, x.n)
		if x.end-start-x.n > m.slack() {
			continue
		}
		if x.end-start <= len(ph) {
			lo, hi := max(0, x.end-len(ph)), min(len(s), start+len(ph))
			if strings.Contains(s[lo:hi], ph) {
				continue // inside a placeholder
			}
		}
		return true
	}
	return false
}
