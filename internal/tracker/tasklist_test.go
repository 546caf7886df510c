package tracker

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestParseTaskList(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []Ref
	}{
		{"plain", "- [ ] #12\n- [x] #13", []Ref{{Number: 12}, {Number: 13, Checked: true}}},
		{"other repository", "- [X] octo/cat.js#34", []Ref{{Repo: "octo/cat.js", Number: 34, Checked: true}}},
		{"bare reference inside the line", "* [ ] Port the parser (#7), see notes", []Ref{{Number: 7}}},
		{"numbered and nested", "1. [ ] #1\n   - [ ] #2", []Ref{{Number: 1}, {Number: 2}}},
		{"an issue URL", "- [ ] https://github.com/acme/widgets/issues/9", []Ref{{Repo: "acme/widgets", Number: 9}}},
		{"each once", "- [ ] #5\n- [x] #5", []Ref{{Number: 5}}},
		{"not a task list", "#12\n- #13\nSee #14", nil},
		{"not in fenced code", "```\n- [ ] #1\n```\n- [ ] #2", []Ref{{Number: 2}}},
		{"not in inline code", "- [ ] `#1` and #2", []Ref{{Number: 2}}},
		{"not glued to a word or an entity", "- [ ] abc#1 &#39; x/#3 #4x", nil},
		{"too many digits", "- [ ] #1234567890", nil},
		{"zero", "- [ ] #0", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ParseTaskList(tc.body)); diff != "" {
				t.Errorf("ParseTaskList(%q) (-want +got):\n%s", tc.body, diff)
			}
		})
	}
}

func TestParseTaskListBounded(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 3000; i++ {
		b.WriteString("- [ ] #")
		b.WriteString(strings.Repeat("1", 1) + string(rune('0'+i%10)) + strings.Repeat("0", i%7))
		b.WriteString("\n")
	}
	if got := len(ParseTaskList(b.String())); got > maxRefs {
		t.Errorf("%d references, want at most %d", got, maxRefs)
	}
}

// FuzzParseTaskList: the body is anyone's text. The parser never panics,
// returns at most maxRefs references, each with a positive number of at
// most nine digits, a repository that is empty or owner/name with GitHub's
// characters, and none twice.
func FuzzParseTaskList(f *testing.F) {
	for _, s := range []string{"- [ ] #12", "- [x] owner/repo#34\n* [ ] (#5)", "```\n- [ ] #1\n```", "> - [X] https://github.com/a/b/issues/3",
		"- [ ] `#1` #2 &#39; a#3", "1) [ ] #99999999999", "- [ ] a/b#1 a/b#1 A/B#1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		refs := ParseTaskList(body)
		if len(refs) > maxRefs {
			t.Fatalf("%d references", len(refs))
		}
		seen := map[Ref]bool{}
		for _, r := range refs {
			if r.Number <= 0 || r.Number > 999999999 {
				t.Fatalf("number %d", r.Number)
			}
			if r.Repo != "" {
				owner, name, ok := strings.Cut(r.Repo, "/")
				if !ok || owner == "" || name == "" || strings.ContainsAny(name, "/ \n\"\\") || !utf8.ValidString(r.Repo) {
					t.Fatalf("repository %q", r.Repo)
				}
			}
			k := Ref{Repo: strings.ToLower(r.Repo), Number: r.Number}
			if seen[k] {
				t.Fatalf("%v twice", k)
			}
			seen[k] = true
		}
	})
}
