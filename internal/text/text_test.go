package text

import (
	"strings"
	"testing"
)

func TestOneLine(t *testing.T) {
	if got, want := OneLine("  a\n\tb  c\r\n"), "a b c"; got != want {
		t.Errorf("OneLine = %q, want %q", got, want)
	}
}

func TestShort(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"a  b", 10, "a b"},
		{"abcdef", 3, "abc…"},
		{"aé b", 2, "a…"}, // é is two bytes: the cut steps back to its start
		{"日本", 4, "日…"},
		{"日本", 0, "…"},
	} {
		if got := Short(tt.in, tt.n); got != tt.want {
			t.Errorf("Short(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestCut(t *testing.T) {
	if got := Cut("añb", 2); got != "a" {
		t.Errorf("Cut(añb, 2) = %q, want a", got)
	}
	if got := Cut("ab", 5); got != "ab" {
		t.Errorf("Cut(ab, 5) = %q, want ab", got)
	}
}

// TestSafe: hostile text is one printable line: no control character, no
// line or paragraph separator, no invalid byte, cut on a rune's start.
func TestSafe(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"plain", 80, "plain"},
		{"a\x1b[2Jb", 80, "a [2Jb"},
		{"one\r\ntwo\u2028three\u2029four", 80, "one two three four"},
		{"bad \xff byte", 80, "bad byte"},
		{"\ttabs\t\tand\x00nul ", 80, "tabs and nul"},
		{strings.Repeat("é", 6), 5, "éé…"},
	} {
		if got := Safe(tc.in, tc.n); got != tc.want {
			t.Errorf("Safe(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

// TestFence: the fence is longer than any run of backticks in the text, and
// never shorter than three.
func TestFence(t *testing.T) {
	for in, want := range map[string]string{
		"":               "```",
		"a `b` c":        "```",
		"```go\nx\n```":  "````",
		"a ````` b `` c": "``````",
	} {
		if got := Fence(in); got != want {
			t.Errorf("Fence(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestUSD(t *testing.T) {
	for _, tt := range []struct {
		in   float64
		want string
	}{{0, "$0.00"}, {0.0026751, "$0.0027"}, {0.00999, "$0.0100"}, {0.01115415, "$0.01"}, {5, "$5.00"}, {-0.002, "$-0.0020"}} {
		if got := USD(tt.in); got != tt.want {
			t.Errorf("USD(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
