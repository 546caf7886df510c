package symbols

import (
	"bytes"
	"unicode/utf8"
)

// The lexers below blank what is not code: a comment, and the contents of a
// string literal (its quotes are kept), become spaces, line breaks are kept.
// What is left can be read for declarations line by line, and a quote or a
// brace inside a string or a comment cannot mislead the scanner. Each is one
// pass over its input; an unterminated literal runs to the end of its line
// (or of the file, for a kind that may span lines), never further.

func blankTo(out []byte, from, to int) {
	for k := from; k < to && k < len(out); k++ {
		if out[k] != '\n' {
			out[k] = ' '
		}
	}
}

// lineEnd is the index of the line break at or after i, or len(src).
func lineEnd(src []byte, i int) int {
	if j := bytes.IndexByte(src[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(src)
}

// blankPython: # comments; '…' "…" (to the end of the line at most) and
// ”'…”' """…""" strings, any prefix (r, b, f, u, …; the prefix is code,
// a backslash escapes the next byte in every kind, as Python's tokenizer
// treats it).
func blankPython(src []byte) []byte {
	out := bytes.Clone(src)
	for i := 0; i < len(src); {
		switch c := src[i]; c {
		case '#':
			j := lineEnd(src, i)
			blankTo(out, i, j)
			i = j
		case '\'', '"':
			triple := i+2 < len(src) && src[i+1] == c && src[i+2] == c
			open := 1
			if triple {
				open = 3
			}
			j := i + open
			for j < len(src) {
				if src[j] == '\\' {
					j += 2
					continue
				}
				if !triple && src[j] == '\n' {
					break
				}
				if src[j] == c && (!triple || j+2 < len(src) && src[j+1] == c && src[j+2] == c) {
					break
				}
				j++
			}
			j = min(j, len(src))
			blankTo(out, i+open, j)
			switch {
			case j < len(src) && src[j] == '\n':
				i = j
			case triple:
				i = min(j+3, len(src))
			default:
				i = min(j+1, len(src))
			}
		default:
			i++
		}
	}
	return out
}

// jsRegexAfter are the bytes after which a "/" starts a regular expression
// literal rather than a division.
var jsRegexAfter = [256]bool{'(': true, ',': true, '=': true, ':': true, '[': true, '!': true, '&': true,
	'|': true, '?': true, '{': true, '}': true, ';': true, '+': true, '-': true, '*': true, '%': true,
	'<': true, '>': true, '~': true, '^': true}

var jsRegexWords = map[string]bool{"return": true, "typeof": true, "case": true, "do": true, "else": true,
	"in": true, "of": true, "new": true, "delete": true, "void": true, "throw": true, "yield": true, "await": true}

// blankJS: // and /* */ comments; '…' "…" strings (to the end of the line
// at most); `…` template literals, whose ${…} expressions are code again
// (nested to any depth); /…/ regular expression literals where a division
// cannot stand (after an operator, a bracket or a keyword such as return).
func blankJS(src []byte) []byte {
	out := bytes.Clone(src)
	var tmpl []int // per open ${: the braces opened inside it
	inTemplate := false
	last := -1    // the last code byte that is not a blank
	noRegex := -1 // a regular expression that found no end: none starts again before this line break
	for i := 0; i < len(src); {
		c := src[i]
		if inTemplate {
			switch {
			case c == '\\':
				blankTo(out, i, i+2)
				i += 2
			case c == '`':
				inTemplate = false
				last = i
				i++
			case c == '$' && i+1 < len(src) && src[i+1] == '{':
				tmpl = append(tmpl, 0)
				inTemplate = false
				last = i + 1
				i += 2
			default:
				blankTo(out, i, i+1)
				i++
			}
			continue
		}
		switch {
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			j := lineEnd(src, i)
			blankTo(out, i, j)
			i = j
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			j := bytes.Index(src[i+2:], []byte("*/"))
			end := len(src)
			if j >= 0 {
				end = i + 2 + j + 2
			}
			blankTo(out, i, end)
			i = end
			continue
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(src) && src[j] != c && src[j] != '\n' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j, len(src))
			blankTo(out, i+1, j)
			if j < len(src) && src[j] == c {
				j++
			}
			last = j - 1
			i = j
			continue
		case c == '`':
			inTemplate = true
			i++
			continue
		case c == '{':
			if len(tmpl) > 0 {
				tmpl[len(tmpl)-1]++
			}
		case c == '}':
			if n := len(tmpl); n > 0 {
				if tmpl[n-1] == 0 {
					tmpl = tmpl[:n-1]
					inTemplate = true
					i++
					continue
				}
				tmpl[n-1]--
			}
		case c == '/' && i > noRegex && regexAllowed(src, last):
			if j, ok := jsRegexEnd(src, i); ok {
				blankTo(out, i+1, j)
				last = j
				i = j + 1
				continue
			}
			noRegex = lineEnd(src, i) // one scan per line at most
		}
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			last = i
		}
		i++
	}
	return out
}

// regexAllowed: a "/" after the code byte at last starts a regular
// expression.
func regexAllowed(src []byte, last int) bool {
	if last < 0 {
		return true
	}
	if c := src[last]; !identPart(c) && c != '$' {
		return jsRegexAfter[c]
	}
	k := last
	for k >= 0 && identPart(src[k]) {
		k--
	}
	return jsRegexWords[string(src[k+1:last+1])]
}

// jsRegexEnd is the index of the "/" that closes the regular expression
// opened at i; not ok when the line ends first (then it was a division).
func jsRegexEnd(src []byte, i int) (int, bool) {
	class := false
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\n':
			return 0, false
		case '\\':
			j++
		case '[':
			class = true
		case ']':
			class = false
		case '/':
			if !class {
				return j, true
			}
		}
	}
	return 0, false
}

// blankRust: // and nested /* */ comments; "…" strings (with b and c
// prefixes), raw strings r"…" r#"…"# (br, cr), which may span lines; and
// character literals ('a', '\n', '\u{1F600}'), told from lifetimes ('a) by
// the quote that closes them.
func blankRust(src []byte) []byte {
	out := bytes.Clone(src)
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			j := lineEnd(src, i)
			blankTo(out, i, j)
			i = j
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			depth, j := 1, i+2
			for j < len(src) && depth > 0 {
				switch {
				case src[j] == '/' && j+1 < len(src) && src[j+1] == '*':
					depth++
					j += 2
				case src[j] == '*' && j+1 < len(src) && src[j+1] == '/':
					depth--
					j += 2
				default:
					j++
				}
			}
			blankTo(out, i, j)
			i = j
		case c == '"':
			j := i + 1
			for j < len(src) && src[j] != '"' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j, len(src))
			blankTo(out, i+1, j)
			i = min(j+1, len(src))
		case (c == 'r' || c == 'b' || c == 'c') && (i == 0 || !identPart(src[i-1])):
			if j, ok := rustRaw(src, out, i); ok {
				i = j
			} else {
				i++
				for i < len(src) && identPart(src[i]) {
					i++ // the rest of the identifier: no literal starts inside it
				}
			}
		case c == '\'':
			i = rustQuote(src, out, i)
		default:
			i++
		}
	}
	return out
}

// rustRaw blanks a raw string starting at i (r, br or cr, then #s and a
// quote) and returns the index after it.
func rustRaw(src, out []byte, i int) (int, bool) {
	j := i
	if src[j] == 'b' || src[j] == 'c' {
		j++
	}
	if j >= len(src) || src[j] != 'r' {
		return 0, false
	}
	j++
	hashes := 0
	for j < len(src) && src[j] == '#' {
		hashes++
		j++
	}
	if j >= len(src) || src[j] != '"' {
		return 0, false
	}
	start := j + 1
	closer := append([]byte{'"'}, bytes.Repeat([]byte{'#'}, hashes)...)
	k := bytes.Index(src[start:], closer)
	if k < 0 {
		blankTo(out, start, len(src))
		return len(src), true
	}
	blankTo(out, start, start+k)
	return start + k + len(closer), true
}

// rustQuote blanks a character literal at i, or passes over a lifetime's
// quote, and returns the index after it.
func rustQuote(src, out []byte, i int) int {
	if i+1 >= len(src) {
		return i + 1
	}
	if src[i+1] == '\\' {
		for j := i + 2; j < len(src) && j < i+16 && src[j] != '\n'; j++ {
			if src[j] == '\'' {
				blankTo(out, i+1, j)
				return j + 1
			}
		}
		return i + 1
	}
	_, size := utf8.DecodeRune(src[i+1:])
	if j := i + 1 + size; j < len(src) && src[j] == '\'' && src[i+1] != '\n' {
		blankTo(out, i+1, j)
		return j + 1
	}
	return i + 1 // a lifetime, or a label
}
