package verdict

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestOneLine: a reason or a note is one line of at most 300 bytes and an
// ellipsis, never cut inside a rune.
func TestOneLine(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"spaces and newlines collapse", "  PR check\n\ttest\r\nfailed  ", "PR check test failed"},
		{"300 bytes stay whole", strings.Repeat("a", 300), strings.Repeat("a", 300)},
		{"past 300 bytes it is cut", strings.Repeat("a", 301), strings.Repeat("a", 300) + "…"},
		{"never inside a rune", strings.Repeat("a", 299) + "é tail", strings.Repeat("a", 299) + "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := OneLine(tc.in)
			if got != tc.want || !utf8.ValidString(got) {
				t.Errorf("OneLine = %q, want %q", got, tc.want)
			}
		})
	}
}
