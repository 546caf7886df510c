package eval

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/roadmap-dev/roadmap/internal/text"
)

// FuzzOneLine: a Job's text in the eval's report becomes one line of at most
// n bytes and an ellipsis, valid UTF-8 when it was: the cut never splits a
// rune.
func FuzzOneLine(f *testing.F) {
	f.Add(strings.Repeat("a", 9)+"é and more", 10)
	f.Add(strings.Repeat("日本", 50), 7)
	f.Add("two\nlines", 0)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 || n > 1000 {
			return
		}
		got := text.Short(s, n)
		if strings.ContainsAny(got, "\n\r\t") {
			t.Fatalf("text.Short(%q, %d) = %q: not one line", s, n, got)
		}
		if body := strings.TrimSuffix(got, "…"); len(body) > n {
			t.Fatalf("text.Short(%q, %d) is %d bytes before the ellipsis", s, n, len(body))
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("text.Short(%q, %d) = %q: a rune split", s, n, got)
		}
	})
}
