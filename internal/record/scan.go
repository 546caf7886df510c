package record

import "strings"

// line is one line of a body: body[start:end] is its text without the line end
// ("\n" or "\r\n"; a lone "\r" before the end of the body is dropped too), and
// next is where the following line starts.
type line struct {
	start, end, next int
}

func splitLines(body string) []line {
	lines := make([]line, 0, strings.Count(body, "\n")+1)
	for start := 0; start < len(body); {
		nl := strings.IndexByte(body[start:], '\n')
		next := len(body)
		end := len(body)
		if nl >= 0 {
			end = start + nl
			next = end + 1
		}
		if end > start && body[end-1] == '\r' {
			end--
		}
		lines = append(lines, line{start: start, end: end, next: next})
		start = next
	}
	return lines
}

// fence reads a line as a CommonMark code fence: up to three spaces, then three or
// more '`' or '~'. closer reports whether only blanks follow the run, which a
// closing fence needs. A backtick fence whose info string holds a backtick is no
// fence at all.
func fence(s string) (ch byte, n int, closer, ok bool) {
	i := 0
	for i < len(s) && i < 4 && s[i] == ' ' {
		i++
	}
	if i > 3 || i >= len(s) || (s[i] != '`' && s[i] != '~') {
		return 0, 0, false, false
	}
	ch = s[i]
	j := i
	for j < len(s) && s[j] == ch {
		j++
	}
	if j-i < 3 {
		return 0, 0, false, false
	}
	rest := s[j:]
	if ch == '`' && strings.IndexByte(rest, '`') >= 0 {
		return 0, 0, false, false
	}
	return ch, j - i, strings.Trim(rest, " \t") == "", true
}

// fencer tells which lines are inside a fenced code block. It departs from
// CommonMark in one way on purpose: a fence that never closes fences nothing,
// where CommonMark would run it to the end of the body. Otherwise a person's
// unclosed fence would swallow the record appended after it, and the next write
// would append a second one.
type fencer struct {
	// longest[c][i] is the longest closing run of '`' (c=0) or '~' (c=1) on
	// line i or later.
	longest [2][]int
	open    bool
	ch      byte
	n       int
}

func newFencer(body string, lines []line) *fencer {
	f := &fencer{}
	f.longest[0] = make([]int, len(lines)+1)
	f.longest[1] = make([]int, len(lines)+1)
	for i := len(lines) - 1; i >= 0; i-- {
		f.longest[0][i], f.longest[1][i] = f.longest[0][i+1], f.longest[1][i+1]
		ch, n, closer, ok := fence(body[lines[i].start:lines[i].end])
		if !ok || !closer {
			continue
		}
		c := fenceIndex(ch)
		f.longest[c][i] = max(f.longest[c][i], n)
	}
	return f
}

func fenceIndex(ch byte) int {
	if ch == '~' {
		return 1
	}
	return 0
}

// fenced reports whether line i (text s) is part of a code fence: an opening
// fence that closes later, a line inside, or the closing fence. Lines must be
// given in order.
func (f *fencer) fenced(i int, s string) bool {
	ch, n, closer, ok := fence(s)
	if f.open {
		if ok && closer && ch == f.ch && n >= f.n {
			f.open = false
		}
		return true
	}
	if ok && f.longest[fenceIndex(ch)][i+1] >= n {
		f.open, f.ch, f.n = true, ch, n
		return true
	}
	return false
}
