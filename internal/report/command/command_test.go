package command

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		body string
		want Command // the zero Command: none
	}{
		{"/roadmap stop", Command{Verb: Stop, Via: "a `/roadmap stop` comment"}},
		{"\n  /roadmap retry  \nplease", Command{Verb: Retry, Via: "a `/roadmap retry` comment"}},
		{"/roadmap stop the plan is wrong", Command{Verb: Stop, Via: "a `/roadmap stop` comment"}},
		{"please /roadmap stop", Command{}},
		{"/roadmap", Command{}},
		{"/roadmap delete-everything", Command{}},
		{"/roadmapstop", Command{}},
		{"", Command{}},
		// A dismiss names the findings: ids up to the first word that is
		// not one (the note), lower-cased, each once; none is no command.
		{"/roadmap dismiss a1b2c3d4e5f6", dismiss("a1b2c3d4e5f6")},
		{"\n /roadmap dismiss A1B2C3D4E5F6, 00ff00ff00ff the quote is test data", dismiss("a1b2c3d4e5f6", "00ff00ff00ff")},
		{"/roadmap dismiss a1b2c3d4e5f6 a1b2c3d4e5f6", dismiss("a1b2c3d4e5f6")},
		{"/roadmap dismiss because", Command{}},
		{"/roadmap dismiss", Command{}},
		{"please /roadmap dismiss a1b2c3d4e5f6", Command{}},
		{"/roadmap dismiss ../../etc", Command{}},
		{"/roadmap dismiss 000000000001 000000000002 000000000003 000000000004 000000000005 000000000006 000000000007 000000000008 000000000009 00000000000a 00000000000b",
			dismiss("000000000001", "000000000002", "000000000003", "000000000004", "000000000005", "000000000006", "000000000007", "000000000008", "000000000009", "00000000000a")},
	} {
		got, ok := Parse(tc.body)
		if diff := cmp.Diff(tc.want, got); diff != "" || ok != (tc.want.Verb != "") {
			t.Errorf("Parse(%q) ok = %v (-want +got):\n%s", tc.body, ok, diff)
		}
	}
}

func dismiss(ids ...string) Command {
	return Command{Verb: Dismiss, IDs: ids, Via: "a `/roadmap dismiss` comment"}
}

// TestLabelAndBox: the stop label and the dashboard's stop and retry boxes
// are the same commands a comment gives; anything else is none.
func TestLabelAndBox(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  func() (Command, bool)
		want Command
	}{
		{"the stop label", func() (Command, bool) { return Label("roadmap:stop", "roadmap:stop") }, Command{Verb: Stop, Via: "the roadmap:stop label"}},
		{"another label", func() (Command, bool) { return Label("bug", "roadmap:stop") }, Command{}},
		{"no label", func() (Command, bool) { return Label("", "") }, Command{}},
		{"the retry box", func() (Command, bool) { return Box("retry") }, Command{Verb: Retry, Via: "the dashboard's retry box"}},
		{"the stop box", func() (Command, bool) { return Box("stop") }, Command{Verb: Stop, Via: "the dashboard's stop box"}},
		{"the wake box", func() (Command, bool) { return Box("wake") }, Command{}},
		{"a dismiss box", func() (Command, bool) { return Box("dismiss") }, Command{}},
	} {
		got, ok := tc.got()
		if diff := cmp.Diff(tc.want, got); diff != "" || ok != (tc.want.Verb != "") {
			t.Errorf("%s: ok = %v (-want +got):\n%s", tc.name, ok, diff)
		}
	}
}

// FuzzParse: any comment body parses without a panic, and a command it
// gives has a verb of the table and, for a dismiss, the ids it names.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"/roadmap stop", "/roadmap dismiss a1b2c3d4e5f6 note", "\n\n/roadmap retry x", "/roadmap"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		c, ok := Parse(body)
		if !ok {
			return
		}
		switch c.Verb {
		case Stop, Retry:
			if len(c.IDs) != 0 {
				t.Errorf("Parse(%q) = %+v: a %s names no ids", body, c, c.Verb)
			}
		case Dismiss:
			if len(c.IDs) == 0 || len(c.IDs) > maxDismiss {
				t.Errorf("Parse(%q) = %d ids", body, len(c.IDs))
			}
		default:
			t.Errorf("Parse(%q) = verb %q, not in the table", body, c.Verb)
		}
	})
}
