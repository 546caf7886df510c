package plan

import (
	"regexp"
	"strings"
	"unicode"
)

// OpenSpec is written in JavaScript and its rules are JavaScript regular
// expressions. Two of their atoms mean more there than in Go: `\s` is any
// Unicode space (an NBSP counts) and `.` stops at U+2028 and U+2029 as well as
// at \n and \r. jsRegexp translates those atoms so a pattern copied from
// OpenSpec's source matches the same lines here.

// jsSpaceClass is the body of JavaScript's `\s` character class.
const jsSpaceClass = `\t\n\v\f\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}`

// jsRegexp compiles a JavaScript pattern, translating `\s`, `\S` and `.`.
func jsRegexp(pattern string) *regexp.Regexp {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch {
		case c == '\\' && i+1 < len(pattern):
			n := pattern[i+1]
			i++
			switch {
			case n == 's' && inClass:
				b.WriteString(jsSpaceClass)
			case n == 's':
				b.WriteString("[" + jsSpaceClass + "]")
			case n == 'S' && !inClass:
				b.WriteString("[^" + jsSpaceClass + "]")
			default:
				b.WriteByte('\\')
				b.WriteByte(n)
			}
		case c == '[' && !inClass:
			inClass = true
			b.WriteByte(c)
			// A `]` right after `[` or `[^` is literal in Go but closes an empty
			// class in JavaScript; OpenSpec's patterns never write one.
		case c == ']' && inClass:
			inClass = false
			b.WriteByte(c)
		case c == '.' && !inClass:
			b.WriteString(`[^\n\r\x{2028}\x{2029}]`)
		default:
			b.WriteByte(c)
		}
	}
	return regexp.MustCompile(b.String())
}

// isJSSpace reports whether r is in JavaScript's `\s`, which is also what
// String.prototype.trim removes.
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

// jsTrim is String.prototype.trim.
func jsTrim(s string) string { return strings.TrimFunc(s, isJSSpace) }

// jsTrimEnd is String.prototype.trimEnd.
func jsTrimEnd(s string) string { return strings.TrimRightFunc(s, isJSSpace) }

// jsTrimStart is String.prototype.trimStart.
func jsTrimStart(s string) string { return strings.TrimLeftFunc(s, isJSSpace) }

// jsLower is String.prototype.toLowerCase, close enough for the ASCII titles
// OpenSpec compares with it.
func jsLower(s string) string { return strings.Map(unicode.ToLower, s) }
