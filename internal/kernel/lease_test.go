package kernel

import (
	"strings"
	"testing"
	"time"
)

// notePhases are the phases a note may name in these tests: the kernel
// reads a holder's phase by name only.
var notePhases = phaseSet(Phase{Name: "stage"}, []Phase{{Name: "implement"}})

// TestLeaseNoteRoundTrip: the note a Job writes reads back as its holder,
// and notes that are not quite roadmap's are unreadable, never half read.
func TestLeaseNoteRoundTrip(t *testing.T) {
	h := Holder{Phase: "implement", RunID: 12044, Token: "0123456789abcdef", Since: time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)}
	got, ok := parseHolder(h.note(7), notePhases)
	if !ok || got != h {
		t.Fatalf("parseHolder(note) = %+v, %v; want %+v", got, ok, h)
	}
	for name, text := range map[string]string{
		"empty":          "",
		"no token":       "phase: implement\nrun: 1\nsince: 2026-12-02T09:00:00Z\n",
		"no run":         "phase: implement\ntoken: ab\nsince: 2026-12-02T09:00:00Z\n",
		"another phase":  "phase: report\nrun: 1\ntoken: ab\nsince: 2026-12-02T09:00:00Z\n",
		"a negative run": "phase: stage\nrun: -4\ntoken: ab\nsince: 2026-12-02T09:00:00Z\n",
		"a bad time":     "phase: stage\nrun: 4\ntoken: ab\nsince: yesterday\n",
		"too long":       "phase: stage\nrun: 4\ntoken: ab\nsince: 2026-12-02T09:00:00Z\n" + strings.Repeat("x", 5000),
	} {
		if got, ok := parseHolder(text, notePhases); ok {
			t.Errorf("%s: parseHolder = %+v, want unreadable", name, got)
		}
	}
	// A later repeat of a field does not override the first.
	twice := h.note(7) + "run: 1\n"
	if got, ok := parseHolder(twice, notePhases); !ok || got.RunID != h.RunID {
		t.Errorf("a repeated run field: %+v, %v; want the first (%d)", got, ok, h.RunID)
	}
}

// FuzzParseHolder: a lease's note is anyone's who can push; whatever it
// holds, reading it neither panics nor yields a holder that fails the
// checks a readable one passes.
func FuzzParseHolder(f *testing.F) {
	f.Add(Holder{Phase: "stage", RunID: 3, Token: "ab", Since: time.Unix(0, 0).UTC()}.note(1))
	f.Add("phase: implement\nrun: 99999999999999999999\ntoken: x\nsince: 2026-12-02T09:00:00Z")
	f.Add("\x00: \n: : :\nphase: : stage")
	f.Fuzz(func(t *testing.T, text string) {
		h, ok := parseHolder(text, notePhases)
		if !ok {
			return
		}
		if _, known := notePhases[h.Phase]; !known || h.Token == "" || h.Since.IsZero() || h.RunID < 0 {
			t.Fatalf("parseHolder(%q) = %+v: a readable holder must be whole", text, h)
		}
	})
}
