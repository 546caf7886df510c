package gates

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// The premise and acceptance parsers read model and stranger text: they
// never panic, stay bounded, and give back only one-line text.
func FuzzParseCriteria(f *testing.F) {
	f.Add(issueBody)
	f.Add("Acceptance\n\n• one\n  two\nRelated: x\n")
	f.Add("**Acceptance criteria:**\n```\n- no\n```\n- [x] yes\n")
	f.Add("## Acceptance\n" + strings.Repeat("- x\n", 300))
	f.Fuzz(func(t *testing.T, body string) {
		cs := parseCriteria(body)
		if len(cs) > maxCriteria {
			t.Fatalf("%d criteria, more than %d", len(cs), maxCriteria)
		}
		for i, c := range cs {
			if c.n != i+1 {
				t.Fatalf("criterion %d numbered %d", i+1, c.n)
			}
			if len(c.text) > maxCriterionLen+len("…") || strings.ContainsAny(c.text, "\n\r") {
				t.Fatalf("criterion %q is not one bounded line", c.text)
			}
			if utf8.ValidString(body) && !utf8.ValidString(c.text) {
				t.Fatalf("criterion %q is not valid UTF-8", c.text)
			}
			_ = mapsTo(c, body)
		}
	})
}

func FuzzParsePremise(f *testing.F) {
	for _, s := range []string{
		"`a.go` exists", "`Total` is defined in `internal/price/price.go`",
		"`x` does not contain `y`", "`go test ./...` fails today", "the file `../x` exists",
		"`a` contains `b` `c`", "\x00`0\x01 exists", "``a`` exists`", "`Cart.Add()` is not declared in `p.go`.",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		p, ok := parsePremise(text)
		if !ok {
			return
		}
		switch p.kind {
		case premiseFails, premisePasses:
			if p.arg == "" {
				t.Fatalf("%q: a command premise with no command", text)
			}
		default:
			if p.path == "" || p.path != cleanRel(p.path) {
				t.Fatalf("%q: path %q is not a clean relative path", text, p.path)
			}
		}
		if (p.kind == premiseDefined || p.kind == premiseUndefined) && !goSymbolRe().MatchString(p.arg) {
			t.Fatalf("%q: symbol %q", text, p.arg)
		}
		md := newMD("proposal.md", []byte("## Premises\n\n- "+text+"\n"))
		if start, end, ok := md.section("premises"); !ok || len(md.bullets(start, end)) > end-start {
			t.Fatalf("%q: section not found again", text)
		}
	})
}
