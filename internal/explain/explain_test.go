package explain

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/roadmap-dev/roadmap/internal/record"
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

// TestExplainNamesModels: explain reads item.models into Models and prints
// each role's model in the roles' order.
func TestExplainNamesModels(t *testing.T) {
	var ch record.Changes
	ch.SetModels(nil, map[string]string{"reviewer": "large", "planner": "small", "verifier": "large", "implementer": "small"})
	rec, err := record.Parse("Body.\n")
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Apply(ch); err != nil {
		t.Fatal(err)
	}
	o := FromRecord(7, "An item", rec)
	if o.Models["verifier"] != "large" || o.Models["implementer"] != "small" {
		t.Errorf("Models = %v", o.Models)
	}
	var b strings.Builder
	if err := Print(&b, o); err != nil {
		t.Fatal(err)
	}
	if want := "models: planner small · verifier large · implementer small · reviewer large (item.models)"; !strings.Contains(b.String(), want) {
		t.Errorf("explain's text lacks %q:\n%s", want, b.String())
	}
}
