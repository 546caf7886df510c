package explain

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestTermText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"group 2: Greeting 2", "group 2: Greeting 2"},
		{"naïve café ✓", "naïve café ✓"},
		{"a\tb\nc\r", `a\x09b\x0ac\x0d`},
		{"\x1b[1mbold", `\x1b[1mbold`},
		{"rtl \u202egnp.exe", `rtl \u202egnp.exe`},
		{"c1 \u009b control", `c1 \u009b control`},
		{"bad \xff byte", "bad \ufffd byte"},
	}
	for _, tt := range tests {
		if got := termText(tt.in); got != tt.want {
			t.Errorf("termText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzTermText: whatever the record holds, the printed text has no control
// character or bidirectional override left, and clean text is kept as is.
func FuzzTermText(f *testing.F) {
	for _, s := range []string{"group 2", "\x1b[2J", "a\tb", "\u202e", "\xff\xfe", "naïve"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := termText(s)
		if !utf8.ValidString(got) {
			t.Fatalf("termText(%q) = %q is not valid UTF-8", s, got)
		}
		for _, r := range got {
			if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
				t.Fatalf("termText(%q) = %q keeps %U", s, got, r)
			}
		}
		if termText(got) != got {
			t.Fatalf("termText is not idempotent on %q", s)
		}
		clean := utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool {
			return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
		}) < 0
		if clean && got != s {
			t.Fatalf("termText changed clean text %q to %q", s, got)
		}
	})
}
