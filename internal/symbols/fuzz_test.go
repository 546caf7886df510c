package symbols

import (
	"strings"
	"testing"
)

// checkDecls: whatever the bytes, the scanner returns at most MaxDecls
// declarations, each an identifier written on its line, the lines in
// order and inside the file; and Code keeps the file's length and lines.
func checkDecls(t *testing.T, file string, src []byte) {
	code := Code(file, src)
	if len(code) != len(src) || strings.Count(string(code), "\n") != strings.Count(string(src), "\n") {
		t.Fatalf("Code changed the length or the lines of %q: %q", src, code)
	}
	ds := Declarations(file, src)
	if len(ds) > MaxDecls {
		t.Fatalf("%d declarations, more than %d", len(ds), MaxDecls)
	}
	id := ident
	if LangOf(file) == JS {
		id = jsIdent
	}
	ls := strings.Split(string(src), "\n")
	prev := 0
	for _, d := range ds {
		if d.Line < 1 || d.Line > len(ls) || d.End < d.Line || d.End > len(ls) || d.Line < prev {
			t.Fatalf("%+v: lines out of order or outside the file's %d", d, len(ls))
		}
		prev = d.Line
		if id(d.Name) != d.Name || d.Name == "_" || !strings.Contains(ls[d.Line-1], d.Name) {
			t.Fatalf("%+v: not an identifier written on line %d (%q)", d, d.Line, ls[d.Line-1])
		}
		if d.Recv != "" && id(d.Recv) != d.Recv {
			t.Fatalf("%+v: the receiver is not an identifier", d)
		}
	}
}

func FuzzPython(f *testing.F) {
	for _, s := range []string{"class A:\n    def m(self): pass\n", "@d\nasync def f(\n):\n", "x = '''\ndef", "X: int = 1\n\tdef", "r'\\", "\f\t class"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) { checkDecls(t, "m.py", src) })
}

func FuzzJS(f *testing.F) {
	for _, s := range []string{"export class A {\n  m() {}\n}\n", "`${`${'}'}`}`", "a = /[/]/ / 2", "/* x", "class { get\n", "}}}\nfunction f", "export type T<"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) { checkDecls(t, "a.tsx", src) })
}

func FuzzRust(f *testing.F) {
	for _, s := range []string{"impl<T> A for B<T> {\n    fn m() {}\n}\n", "r##\"\"#", "/* /* */", "'\\u{1F600}' 'a", "#[a(\n", "pub(in x) fn", "mod m {\nmod n {\nfn f"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) { checkDecls(t, "lib.rs", src) })
}
