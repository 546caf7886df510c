package text

import "testing"

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
