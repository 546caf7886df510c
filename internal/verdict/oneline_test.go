package verdict

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzOneLine: a reason or a model's text in a comment becomes one line of at
// most 300 bytes and an ellipsis, always valid UTF-8 when it was: the cut
// never splits a rune (a reason of 299 ASCII bytes then "é" once lost half of
// the "é").
func FuzzOneLine(f *testing.F) {
	f.Add(strings.Repeat("a", 299) + "é and more")
	f.Add(strings.Repeat("日本", 200))
	f.Add("two\nlines\tand  spaces")
	f.Fuzz(func(t *testing.T, s string) {
		got := OneLine(s)
		if strings.ContainsAny(got, "\n\r\t") {
			t.Fatalf("OneLine(%q) = %q: not one line", s, got)
		}
		if body := strings.TrimSuffix(got, "…"); len(body) > 300 {
			t.Fatalf("OneLine(%q) is %d bytes before the ellipsis, want at most 300", s, len(body))
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("OneLine(%q) = %q: a rune split", s, got)
		}
	})
}
