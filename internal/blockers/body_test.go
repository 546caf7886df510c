package blockers

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestBlockersFromBodyText(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []Ref
	}{
		{"blocked by", "Blocked by #12", []Ref{{Number: 12}}},
		{"with a reason after", "blocked by #3677 (must merge first)", []Ref{{Number: 3677}}},
		{"depends on another repository", "Depends on owner/repo#4", []Ref{{Repo: "owner/repo", Number: 4}}},
		{"the seed issue's sentences", "This issue is blocked by #3677 and needs a plan.\nStart this issue after #3677 and after the issue #4070.",
			[]Ref{{Number: 3677}, {Number: 4070}}},
		{"a list after the phrase", "Depends on #1, #2 and owner/repo#3 & #4; see #5", []Ref{{Number: 1}, {Number: 2}, {Repo: "owner/repo", Number: 3}, {Number: 4}}},
		{"blocked on, bold", "**Blocked on** #8", []Ref{{Number: 8}}},
		{"an issue URL", "Blocked by https://github.com/acme/widgets/issues/9.", []Ref{{Repo: "acme/widgets", Number: 9}}},
		{"a dependencies label", "Dependencies: #7, #8", []Ref{{Number: 7}, {Number: 8}}},
		{"a dependencies heading and its list", "## Dependencies\n\n- #21 the parser\n- [x] Port it (#22), then #23\n* acme/w#24\n\nOther text #25\n- #26",
			[]Ref{{Number: 21}, {Number: 22}, {Number: 23}, {Repo: "acme/w", Number: 24}}},
		{"a blocked-by label line and its list", "**Blocked by:**\n1. #31\n2. #32\n## Notes\n- #33", []Ref{{Number: 31}, {Number: 32}}},
		{"after, an order", "Do this only after #40. Pick it up after #41 merges.", []Ref{{Number: 40}, {Number: 41}}},
		{"after, a story", "It broke after #50 was merged. After #51 the parser is slow.", nil},
		{"after, the cue in another sentence", "Start early. It regressed after #52.", nil},
		{"said the other way", "This is not blocked by #60 and no longer depends on #61; it doesn't depend on #62.", nil},
		{"mentions are not blockers", "See #70, fixes #71, related to #72.", nil},
		{"not in fenced code", "```\nBlocked by #80\n```\n~~~md\nDepends on #81\n~~~\nBlocked by #82", []Ref{{Number: 82}}},
		{"not in inline code", "Write `Blocked by #90` to wait, or `depends on #91`.", nil},
		{"not in a comment", "<!-- Blocked by #100 -->\n<!--\nDepends on #101\n-->\nBlocked by #102", []Ref{{Number: 102}}},
		{"not struck through", "~~Blocked by #110~~ Blocked by #111", []Ref{{Number: 111}}},
		{"not quoted", "> Blocked by #120\nas #4071 says", nil},
		{"not glued", "blocked by abc#1, blocked by x/#2, blocked by #3x, blocked by &#39;", nil},
		{"each once", "Blocked by #5. Depends on #5 and ACME/W#6. After #5 merges, start. Blocked by acme/w#6", []Ref{{Number: 5}, {Repo: "ACME/W", Number: 6}}},
		{"a list stops at a word", "blocked by #1 (must merge first) and #2", []Ref{{Number: 1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, FromBody(tc.body)); diff != "" {
				t.Errorf("FromBody(%q) (-want +got):\n%s", tc.body, diff)
			}
		})
	}
	t.Run("a 10,000-reference body is bounded", func(t *testing.T) {
		var b strings.Builder
		b.WriteString("## Blocked by\n")
		for i := 1; i <= 10000; i++ {
			fmt.Fprintf(&b, "- #%d\n", i)
		}
		var line strings.Builder // one sentence of them
		line.WriteString("Blocked by ")
		for i := 1; i <= 10000; i++ {
			fmt.Fprintf(&line, "#%d, ", 20000+i)
		}
		for _, body := range []string{b.String(), line.String()} {
			got := FromBody(body)
			if len(got) != MaxRefs {
				t.Fatalf("%d references, want the first %d", len(got), MaxRefs)
			}
			if first := FromBody(body[:200])[0]; got[0] != first || got[MaxRefs-1].Number != first.Number+MaxRefs-1 {
				t.Errorf("first %v, last %v; want the first %d written, in order", got[0], got[MaxRefs-1], MaxRefs)
			}
		}
	})
}

// FuzzFromBody: the body is anyone's text. FromBody never panics, returns
// at most MaxRefs references, each with a positive number of at most nine
// digits and a repository that is empty or owner/name, and none twice.
func FuzzFromBody(f *testing.F) {
	for _, s := range []string{"Blocked by #12", "blocked by #3677 (must merge first)", "Depends on owner/repo#4, #5 and #6",
		"Start this issue after #3677 and after the issue #4070", "## Dependencies\n- [ ] #1\n- a/b#2", "```\nblocked by #1\n```",
		"<!-- blocked by #1", "~~blocked by #1~~", "> blocked by #1", "It broke after #3.", "not blocked by #4", "blocked by https://h/a/b/issues/5", "blocked by #1, #1 and A/b#2, a/B#2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		refs := FromBody(body)
		if len(refs) > MaxRefs {
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
			if k := keyOf(r); seen[k] {
				t.Fatalf("%v twice", k)
			} else {
				seen[k] = true
			}
		}
	})
}
