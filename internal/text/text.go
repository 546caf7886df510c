// Package text holds the small string shapers several packages share, so a
// line shown to a person or a model is shortened one way: collapsed to one
// line, cut on a rune's start, never inside a character.
package text

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// OneLine collapses every run of white space, newlines included, to one
// blank and trims the ends.
func OneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// Short is OneLine cut to at most n bytes (on a rune's start) followed by
// "…" when it was longer.
func Short(s string, n int) string {
	s = OneLine(s)
	if len(s) > n {
		s = Cut(s, n) + "…"
	}
	return s
}

// Cut returns at most the first n bytes of s, shortened to a rune's start so
// no character is split.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:max(n, 0)]
}

// Safe is Short for hostile text shown to a person (a terminal, a comment):
// control characters, line and paragraph separators and invalid UTF-8
// become blanks first, so nothing in it can move the cursor, start a new
// line or forge one.
func Safe(s string, n int) string {
	return Short(strings.Map(func(r rune) rune {
		if r == utf8.RuneError || unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s), n)
}

// Fence is a Markdown code fence for s: backticks, at least three and one
// more than the longest run in s, so nothing in s can close it.
func Fence(s string) string {
	best, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, best+1))
}
