package strength

import (
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSites: each operator on a line of its own, and which one a line with
// several gets. body is a function body's line; the want is that line
// mutated, or "" for a line with nothing to mutate.
func TestSites(t *testing.T) {
	for _, tt := range []struct {
		name, results, body string
		op, want            string
	}{
		{"if negated", "", "if a < b { println() }", OpNegateCondition, "if !(a < b) { println() }"},
		{"not removed", "", "if !ok { println() }", OpNegateCondition, "if ok { println() }"},
		{"for negated", "", "for a < b { a++ }", OpNegateCondition, "for !(a < b) { a++ }"},
		{"equality", "bool", "return a == b", OpNegateComparison, "return a != b"},
		{"logical", "bool", "return ok && a > b", OpNegateComparison, "return ok || a > b"},
		{"plus", "int", "return a + b", OpArithmetic, "return a - b"},
		{"times", "int", "return a * b", OpArithmetic, "return a / b"},
		{"modulo", "int", "return a % b", OpArithmetic, "return a * b"},
		{"assign op", "", "a += b", OpArithmetic, "a -= b"},
		{"inc", "", "a++", OpArithmetic, "a--"},
		{"boundary", "bool", "return a <= b", OpBoundary, "return a < b"},
		{"return int", "int", "return a", OpReturnZero, "return 0"},
		{"return pair", "(int, error)", "return a, errX", OpReturnZero, "return 0, nil"},
		{"return named type", "T", "return T{a}", OpReturnZero, "return *new(T)"},
		{"return slice", "[]int", "return []int{a}", OpReturnZero, "return nil"},
		{"return a call's pair", "(int, error)", "return pair()", OpReturnZero, "return 0, nil"},
		{"lone false becomes true", "bool", "return false", OpReturnZero, "return true"},
		{"a zero return has nothing", "(int, error)", "return 0, nil", "", ""},
		{"call removed", "", "work(a)", OpRemoveCall, ""},
		{"logging is arid", "", `fmt.Printf("%d", a)`, "", ""},
		{"string concatenation is not arithmetic", "string", `return s + "!"`, OpReturnZero, `return ""`},
		{"a definition has nothing", "", "c := a", "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := "package p\n\nfunc f(a, b int, ok bool, s string) " + tt.results + " {\n\t" + tt.body + "\n}\n"
			fs, err := sitesOf("p.go", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			s, ok := fs.best[4]
			if tt.op == "" {
				if ok {
					t.Fatalf("site %+v on a line with nothing to mutate", s)
				}
				if !fs.code[4] {
					t.Error("the line is not counted as code")
				}
				return
			}
			if !ok {
				t.Fatalf("no site on %q", tt.body)
			}
			got := strings.Split(string(s.apply([]byte(src))), "\n")[3]
			if s.op != tt.op || got != "\t"+tt.want {
				t.Errorf("mutant = %s %q, want %s %q", s.op, got, tt.op, "\t"+tt.want)
			}
		})
	}
}

// TestSitesLines: what counts as a line of code, and constants.
func TestSitesLines(t *testing.T) {
	src := "package p\n\nimport \"fmt\"\n\n// Doc.\nconst k = 1 + 2\n\nfunc f() {\n\tfmt.Println(k)\n}\n"
	fs, err := sitesOf("p.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[int]bool{6: true, 8: true, 9: true}, fs.code); diff != "" {
		t.Errorf("code lines (-want +got):\n%s", diff)
	}
	if len(fs.best) != 0 {
		t.Errorf("sites %+v; a constant and a print have none", fs.best)
	}
}

// TestUnifiedDiff: a mutant's diff applies to the file and shows two lines
// of context.
func TestUnifiedDiff(t *testing.T) {
	src := []byte("package p\n\nfunc f(a, b int) int {\n\tc := a\n\treturn c + b\n}\n")
	fs, err := sitesOf("p/p.go", src)
	if err != nil {
		t.Fatal(err)
	}
	got := fs.best[5].unifiedDiff("p/p.go", src)
	want := "--- a/p/p.go\n+++ b/p/p.go\n@@ -3,4 +3,4 @@\n func f(a, b int) int {\n \tc := a\n-\treturn c + b\n+\treturn c - b\n }\n"
	if got != want {
		t.Errorf("diff:\n%s\nwant:\n%s", got, want)
	}
}

// TestSitesDeterministic: the same tree gives the same mutants.
func TestSitesDeterministic(t *testing.T) {
	a, err := sitesOf("c.go", []byte(sampleHead))
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		b, _ := sitesOf("c.go", []byte(sampleHead))
		if diff := cmp.Diff(a.best, b.best, cmp.AllowUnexported(site{})); diff != "" {
			t.Fatalf("sites differ between two reads (-first +again):\n%s", diff)
		}
	}
}

// FuzzSites: any source that parses gives sites whose mutants parse too,
// within the file's bounds; nothing panics.
func FuzzSites(f *testing.F) {
	f.Add(sampleHead)
	f.Add("package p\nfunc f() (int, error) { for i := 0; i < 3; i++ { g() }; return 1, nil }\n")
	f.Add("package p\nvar x = func() bool { return !(1 < 2) && true }\n")
	f.Fuzz(func(t *testing.T, src string) {
		fs, err := sitesOf("f.go", []byte(src))
		if err != nil {
			return
		}
		for line, s := range fs.best {
			if s.start < 0 || s.end > len(src) || s.start > s.end || s.line != line {
				t.Fatalf("site %+v out of bounds", s)
			}
			mut := s.apply([]byte(src))
			if _, err := parser.ParseFile(token.NewFileSet(), "m.go", mut, 0); err != nil && s.op != OpRemoveCall {
				t.Fatalf("the %s mutant of line %d does not parse: %v\n%s", s.op, line, err, mut)
			}
			_ = s.unifiedDiff("f.go", []byte(src))
		}
	})
}
