package gates

import (
	"bytes"
	"path"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/symbols"
)

// srcFile is one Python, JavaScript/TypeScript or Rust file of the
// repository: its code with comments and strings blanked, for uses, and its
// declarations, for the function a use is in.
type srcFile struct {
	rel   string
	lang  symbols.Lang
	code  []byte
	decls []symbols.Decl
	test  bool
}

func (ix *goIndex) addOther(rel string, lang symbols.Lang, src []byte) {
	f := &srcFile{rel: rel, lang: lang, code: symbols.Code(rel, src), decls: symbols.Declarations(rel, src), test: isTestFile(rel)}
	ix.other = append(ix.other, f)
	if f.test {
		return
	}
	for _, d := range otherDecls(rel, lang, f.decls) {
		ix.decls[d.name] = append(ix.decls[d.name], d)
	}
}

// otherDecls are the index's declarations of a file of another language
// than Go, a method by Type.method as in Go.
func otherDecls(rel string, lang symbols.Lang, ds []symbols.Decl) []decl {
	out := make([]decl, 0, len(ds))
	for _, d := range ds {
		out = append(out, decl{name: d.Qualified(), file: rel, line: d.Line, lang: lang})
	}
	return out
}

// textUses finds the references to d, declared in a language other than
// Go, in the repository's files of that language: its name as a whole word
// of their code (comments and strings left out), and for a method only
// after "." (or Rust's "::"). Without Go's package and import rules, and
// without types, every file that writes the name counts, whatever it
// refers to there; the declaration itself does not.
func (ix *goIndex) textUses(d decl) []use {
	name, method := d.name, false
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name, method = name[i+1:], true
	}
	var out []use
	for _, f := range ix.other {
		if f.lang != d.lang {
			continue
		}
		line, counted := 1, 0
		for from := 0; from < len(f.code); {
			i := bytes.Index(f.code[from:], []byte(name))
			if i < 0 {
				break
			}
			i += from
			from = i + len(name)
			end := i + len(name)
			if i > 0 && wordByte(f.code[i-1]) || end < len(f.code) && wordByte(f.code[end]) {
				continue
			}
			if method && !(i > 0 && f.code[i-1] == '.' || i > 1 && f.code[i-2] == ':' && f.code[i-1] == ':') {
				continue
			}
			line += bytes.Count(f.code[counted:i], []byte("\n"))
			counted = i
			if f.rel == d.file && line == d.line {
				continue // the declaration itself
			}
			out = append(out, use{file: f.rel, fn: enclosing(f.decls, line), line: line, test: f.test})
		}
	}
	return out
}

// wordByte: a byte of an identifier, in any of the languages ($ in
// JavaScript).
func wordByte(c byte) bool { return isIdentByte(c) || c == '$' }

// enclosing is the innermost function or method of ds whose body holds
// line, as Type.method for a method; "" at the top level.
func enclosing(ds []symbols.Decl, line int) string {
	fn, span := "", -1
	for _, d := range ds {
		if (d.Kind == "func" || d.Kind == "method") && d.Line <= line && line <= d.End && (span < 0 || d.End-d.Line < span) {
			fn, span = d.Qualified(), d.End-d.Line
		}
	}
	return fn
}

// isTestFile reports whether rel is a test: a Go _test.go file; in another
// language a file by the usual names (test_x.py, x_test.py, x.test.ts,
// x.spec.js) or one under a tests, test, __tests__ or spec directory.
func isTestFile(rel string) bool {
	if path.Ext(rel) == ".go" {
		return strings.HasSuffix(rel, "_test.go")
	}
	if isTestPath(rel) {
		return true
	}
	for _, dir := range strings.Split(path.Dir(rel), "/") {
		switch dir {
		case "tests", "test", "__tests__", "spec":
			return true
		}
	}
	return false
}
