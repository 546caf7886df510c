package kernel

import (
	"fmt"
	"strings"
	"testing"
)

// TestPointerNoteRoundTrip: the note a Job writes for an issue's record
// pointer reads back as its comment id, and a note for another issue, with
// no id, a bad id or too long reads as no pointer.
func TestPointerNoteRoundTrip(t *testing.T) {
	note := fmt.Sprintf("roadmap record: issue #%d\n\ncomment: %d\n", 7, 4242)
	if got := parsePointer(note, 7); got != 4242 {
		t.Fatalf("parsePointer = %d, want 4242", got)
	}
	for name, text := range map[string]string{
		"another issue": "roadmap record: issue #8\n\ncomment: 4242\n",
		"no id":         "roadmap record: issue #7\n",
		"a negative id": "roadmap record: issue #7\n\ncomment: -3\n",
		"not a number":  "roadmap record: issue #7\n\ncomment: 12ab\n",
		"a lease note":  "roadmap lease: issue #7\n\ncomment: 4242\n",
		"too long":      note + strings.Repeat("x", 5000),
	} {
		if got := parsePointer(text, 7); got != 0 {
			t.Errorf("%s: parsePointer = %d, want no pointer", name, got)
		}
	}
}

// FuzzParsePointer: a pointer's note is anyone's who can push; whatever it
// holds, reading it neither panics nor yields an id that is not positive.
func FuzzParsePointer(f *testing.F) {
	f.Add("roadmap record: issue #1\n\ncomment: 99\n")
	f.Add("roadmap record: issue #1\ncomment: 99999999999999999999999\n")
	f.Add("\x00\ncomment: ")
	f.Fuzz(func(t *testing.T, text string) {
		if id := parsePointer(text, 1); id < 0 {
			t.Fatalf("parsePointer(%q) = %d", text, id)
		}
	})
}
