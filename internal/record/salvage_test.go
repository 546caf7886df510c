package record

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSalvage: a block a person broke reads as far as its lines read; the
// lines that do not are named, and a last good record gives back what the
// block lost, and nothing the person deleted on purpose.
func TestSalvage(t *testing.T) {
	const last = "**roadmap** · x\n\n<!-- roadmap:record v1\nimplement.attempt: 2\nimplement.group: 1\nimplement.result: yielded\n-->"
	lastRec, err := Parse(last)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		body     string
		last     *Record
		keys     map[Key]string
		unread   []int // lines
		restored []Key
		text     string
	}{
		{name: "a bad value, its key from the last record; a deleted key stays deleted",
			body: "**roadmap** · x\n\n<!-- roadmap:record v1\nimplement.attempt: 2\nimplement.group: one\n-->", last: lastRec,
			keys: map[Key]string{KeyImplementAttempt: "2", KeyImplementGroup: "1"}, unread: []int{5},
			restored: []Key{KeyImplementGroup}, text: "**roadmap** · x\n"},
		{name: "a line that names no key: every key the block lost",
			body: "**roadmap** · x\n\n<!-- roadmap:record v1\nimplement.attempt: 2\nwhat happened here?\n-->", last: lastRec,
			keys: map[Key]string{KeyImplementAttempt: "2", KeyImplementGroup: "1", KeyImplementResult: "yielded"}, unread: []int{5},
			restored: []Key{KeyImplementGroup, KeyImplementResult}, text: "**roadmap** · x\n"},
		{name: "no last record: the lines that read",
			body: "<!-- roadmap:record v1\nimplement.attempt: 2\nimplement.group: one\nimplement.group: 3\n-->\n",
			keys: map[Key]string{KeyImplementAttempt: "2", KeyImplementGroup: "3"}, unread: []int{3}},
		{name: "a key set twice keeps the first",
			body: "<!-- roadmap:record v1\nimplement.group: 2\nimplement.group: 3\n-->",
			keys: map[Key]string{KeyImplementGroup: "2"}, unread: []int{3}},
		{name: "no closing line: read to the end",
			body: "intro\n<!-- roadmap:record v1\nimplement.group: 2\n",
			keys: map[Key]string{KeyImplementGroup: "2"}, unread: []int{2}, text: "intro"},
		{name: "a second block is dropped, the text around kept",
			body: "a\n<!-- roadmap:record v1\nimplement.group: 2\n-->\nb\n<!-- roadmap:record v1\nimplement.group: 5\n-->\nc\n",
			keys: map[Key]string{KeyImplementGroup: "2"}, unread: []int{6, 7}, text: "a\nb\nc\n"},
		{name: "a NUL byte",
			body: "<!-- roadmap:record v1\nimplement.stopped: a\x00b\nimplement.group: 2\n-->",
			keys: map[Key]string{KeyImplementGroup: "2"}, unread: []int{2}},
		{name: "the first line gone: the last record whole",
			body: "**roadmap** · x\n\nimplement.attempt: 3\n-->", last: lastRec,
			keys: map[Key]string{KeyImplementAttempt: "2", KeyImplementGroup: "1", KeyImplementResult: "yielded"}, unread: []int{1},
			restored: []Key{KeyImplementAttempt, KeyImplementGroup, KeyImplementResult}, text: "**roadmap** · x\n\nimplement.attempt: 3\n-->"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, sv, err := Salvage(tc.body, tc.last)
			if err != nil {
				t.Fatalf("Salvage: %v", err)
			}
			got := map[Key]string{}
			for _, k := range r.Keys() {
				got[k], _ = r.Raw(k)
			}
			if diff := cmp.Diff(tc.keys, got); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
			var lines []int
			for _, u := range sv.Unread {
				lines = append(lines, u.Err.Line)
			}
			if diff := cmp.Diff(tc.unread, lines); diff != "" {
				t.Errorf("lines not read (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.restored, sv.Restored); diff != "" {
				t.Errorf("restored (-want +got):\n%s", diff)
			}
			if r.Text() != tc.text {
				t.Errorf("text = %q, want %q", r.Text(), tc.text)
			}
			body, err := RenderComment(r)
			if err != nil {
				t.Fatal(err)
			}
			back, err := Parse(body)
			if err != nil {
				t.Fatalf("the repaired comment does not read: %v\n%s", err, body)
			}
			for _, k := range r.Keys() {
				if v, _ := back.Raw(k); v != got[k] {
					t.Errorf("the repaired comment reads %s: %q, want %q", k, v, got[k])
				}
			}
		})
	}
	t.Run("a record of another version is not guessed at", func(t *testing.T) {
		if _, _, err := Salvage("<!-- roadmap:record v2\nimplement.group: x\n-->", lastRec); err == nil || !strings.Contains(err.Error(), "v2") {
			t.Errorf("Salvage of a v2 block: %v, want the version error", err)
		}
	})
	t.Run("a whole block is Parse's", func(t *testing.T) {
		r, sv, err := Salvage(last, lastRec)
		if err != nil || sv.Broken() || !r.Equal(lastRec) {
			t.Errorf("Salvage of a whole block: %v, %+v", err, sv)
		}
	})
}

// FuzzSalvage feeds Salvage any body: no input may panic, and what it
// salvages always renders to a comment that reads whole, so a repair
// never writes a block that breaks the next read.
func FuzzSalvage(f *testing.F) {
	for _, tc := range parseCases() {
		f.Add(tc.body)
	}
	f.Add("<!-- roadmap:record v1\nimplement.group: one\n")
	f.Add("a\n<!-- roadmap:record v1 x\nb\n<!-- roadmap:record v1\n-->\n")
	f.Add("```\n<!-- roadmap:record v1\n```\n<!-- roadmap:record v1\nx: \xff\n-->")
	last, _ := Parse("<!-- roadmap:record v1\nimplement.group: 2\nzeta.note: kept\n-->")
	f.Fuzz(func(t *testing.T, body string) {
		for _, l := range []*Record{nil, last} {
			r, _, err := Salvage(body, l)
			if err != nil {
				if pe, ok := err.(*ParseError); !ok || pe.Kind != KindVersion {
					t.Fatalf("Salvage error %v, want only a version error", err)
				}
				continue
			}
			out, err := RenderComment(r)
			if err != nil {
				var tl *TooLongError
				if errors.As(err, &tl) {
					continue
				}
				t.Fatalf("RenderComment: %v", err)
			}
			if _, err := Parse(out); err != nil {
				t.Fatalf("the salvaged record renders a comment that does not read: %v\n%q\nfrom %q", err, out, body)
			}
		}
	})
}
