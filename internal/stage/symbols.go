package stage

import (
	"bytes"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/symbols"
)

// The symbols an issue names, and where the repository declares them: the
// planner's prompt puts the files that declare or use them first, with an
// index of the declarations, so a plan starts from the code the issue is
// about rather than from file names that happen to share its words.

const (
	// maxNamedSymbols bounds the identifiers taken from one issue.
	maxNamedSymbols = 16
	// maxSymbolScan bounds the bytes read to look for them, over all files;
	// a file larger than maxSymbolFile is not read for them.
	maxSymbolScan = 8 << 20
	maxSymbolFile = 256 << 10
)

// namedSymbols are the identifiers the issue names as code, in the order
// they first appear, at most maxNamedSymbols: in a code span (`Hello`,
// `greet.Hello`, `Hello()`) any identifier with a capital letter, an
// underscore or a call's parenthesis; in prose a word written as code —
// mixedCase or PascalCase with an inner capital (NewClient, parseArgs),
// snake_case, or a word followed by "(" (Hello("Ada")). Sentence words
// ("The", "Add") are not symbols. The issue is untrusted text: whatever it
// holds, the result is a short list of plain identifiers.
func namedSymbols(issue string) []string {
	var out []string
	seen := map[string]bool{}
	inSpan := false
	for i := 0; i < len(issue) && len(out) < maxNamedSymbols; {
		c := issue[i]
		if c == '`' {
			inSpan = !inSpan
			i++
			continue
		}
		if !identStart(c) {
			i++
			continue
		}
		j := i
		for j < len(issue) && identPart(issue[j]) {
			j++
		}
		word := issue[i:j]
		// A word glued to a letter-like byte before it (a UTF-8 letter, say)
		// is part of a longer word, not an identifier.
		glued := i > 0 && issue[i-1] >= 0x80
		call := j < len(issue) && issue[j] == '('
		i = j
		if glued || len(word) < 3 || len(word) > 64 || goWords[word] || seen[word] {
			continue
		}
		if innerCapital(word) || snake(word) || call || inSpan && hasCapital(word) {
			seen[word] = true
			out = append(out, word)
		}
	}
	return out
}

func identStart(c byte) bool { return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func identPart(c byte) bool  { return identStart(c) || '0' <= c && c <= '9' }

// innerCapital: a capital after a lower-case letter or a digit (parseArgs,
// NewClient, TestHello2X), not an acronym alone (HTTP) or a capitalised word.
func innerCapital(w string) bool {
	for i := 1; i < len(w); i++ {
		p := w[i-1]
		if 'A' <= w[i] && w[i] <= 'Z' && ('a' <= p && p <= 'z' || '0' <= p && p <= '9') {
			return true
		}
	}
	return false
}

// snake: an underscore between two letters or digits (max_jobs).
func snake(w string) bool {
	for i := 1; i+1 < len(w); i++ {
		if w[i] == '_' && w[i-1] != '_' && w[i+1] != '_' {
			return true
		}
	}
	return false
}

func hasCapital(w string) bool {
	for i := 0; i < len(w); i++ {
		if 'A' <= w[i] && w[i] <= 'Z' {
			return true
		}
	}
	return false
}

// goWords are keywords and predeclared names of the languages the index
// reads (Go, Python, JavaScript/TypeScript, Rust): an issue that writes
// `return`, `string`, `None` or `Option` names no symbol of the repository.
var goWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`break case chan const continue default defer else fallthrough for func go goto if
		import interface map package range return select struct switch type var
		any bool byte comparable complex64 complex128 error float32 float64 int int8 int16 int32 int64
		rune string uint uint8 uint16 uint32 uint64 uintptr true false iota nil
		append cap clear close complex copy delete imag len make max min new panic print println real recover

		None True False and def del elif except finally from global lambda nonlocal not pass raise try
		while with yield async await self cls dict list tuple set str float print isinstance super

		undefined null this typeof instanceof function let void throw catch class extends export
		number boolean object unknown never symbol bigint Promise Array Object String Number Boolean

		Self fn impl pub mod crate use mut ref match loop where dyn unsafe extern trait enum static
		Some Ok Err Option Result Vec Box usize isize u8 u16 u32 u64 u128 i8 i16 i32 i64 i128 f32 f64 str`) {
		goWords[w] = true
	}
}

// declaration is where a file declares a named symbol.
type declaration struct {
	symbol, file, kind string
	line               int
}

// declarations are the declarations of a file among want, by the symbols
// index: Go's parser for Go, a declaration scanner for Python,
// JavaScript/TypeScript and Rust. A method is shown with its type.
func declarations(file string, src []byte, want map[string]bool) []declaration {
	var out []declaration
	for _, d := range symbols.Declarations(file, src) {
		if !want[d.Name] {
			continue
		}
		kind := d.Kind
		if d.Recv != "" {
			kind += " of " + d.Recv
		}
		out = append(out, declaration{symbol: d.Name, file: file, kind: kind, line: d.Line})
	}
	return out
}

// usesWord: src holds w as a whole word (not inside a longer identifier).
func usesWord(src []byte, w string) bool {
	for from := 0; ; {
		i := bytes.Index(src[from:], []byte(w))
		if i < 0 {
			return false
		}
		i += from
		end := i + len(w)
		if (i == 0 || !identPart(src[i-1])) && (end == len(src) || !identPart(src[end])) {
			return true
		}
		from = i + 1
	}
}

// symbolScan is what the repository says of the issue's symbols: the
// declarations found, and per file how many of the symbols it declares and
// how many it only uses.
type symbolScan struct {
	decls            []declaration
	declares, refers map[string]int
	// users are the first few files that use each symbol.
	users map[string][]string
	// callers and tests are, of the files that use a symbol and do not
	// declare it, the first few that are not tests and that are: what a
	// change to the symbol must keep working, and what shows it does.
	callers, tests map[string][]string
}

// maxUsersListed bounds the files the index names for a symbol that has no
// declaration the index reads.
const maxUsersListed = 3

// scanSymbols reads the files (repository-relative, slash-separated) with
// read, at most maxSymbolScan bytes in all, for the symbols: Go, Python,
// JavaScript/TypeScript and Rust files for their declarations (package
// symbols), every file by text for a use.
func scanSymbols(files, symbols []string, read func(rel string, max int64) (string, error)) symbolScan {
	s := symbolScan{declares: map[string]int{}, refers: map[string]int{}, users: map[string][]string{},
		callers: map[string][]string{}, tests: map[string][]string{}}
	if len(symbols) == 0 {
		return s
	}
	want := map[string]bool{}
	for _, sym := range symbols {
		want[sym] = true
	}
	budget := int64(maxSymbolScan)
	for _, f := range files {
		if budget <= 0 {
			break
		}
		if strings.HasPrefix(f, "openspec/") {
			continue
		}
		data, err := read(f, maxSymbolFile+1)
		if err != nil || len(data) > maxSymbolFile || strings.IndexByte(data, 0) >= 0 {
			continue // unreadable, too large, or not text
		}
		budget -= int64(len(data))
		src := []byte(data)
		var used []string
		for _, sym := range symbols {
			if usesWord(src, sym) {
				used = append(used, sym)
				if len(s.users[sym]) < maxUsersListed {
					s.users[sym] = append(s.users[sym], f)
				}
			}
		}
		if len(used) == 0 {
			continue
		}
		declared := map[string]bool{}
		for _, d := range declarations(f, src, want) {
			s.decls = append(s.decls, d)
			declared[d.symbol] = true
		}
		s.declares[f] = len(declared)
		s.refers[f] = len(used) - len(declared)
		for _, sym := range used {
			by := s.callers
			if isTestFile(f) {
				by = s.tests
			} else if declared[sym] {
				continue
			}
			if len(by[sym]) < maxUsersListed {
				by[sym] = append(by[sym], f)
			}
		}
	}
	return s
}

// isTestFile reports whether a repository file is a test by the naming of
// the common languages: Go's _test.go, Python's test_*.py and *_test.py,
// JavaScript's *.test.* and *.spec.*, or any file under a tests, test,
// __tests__ or spec folder.
func isTestFile(rel string) bool {
	base := path.Base(rel)
	switch {
	case strings.HasSuffix(base, "_test.go"),
		strings.HasSuffix(base, ".py") && (strings.HasPrefix(base, "test_") || strings.HasSuffix(base, "_test.py")),
		strings.Contains(base, ".test.") || strings.Contains(base, ".spec."):
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

// part is the index as a prompt part at priority.
func (s symbolScan) part(symbols []string, priority int) agent.ContextPart {
	return agent.ContextPart{Name: "Where the symbols the issue names are declared", Text: capBytes(s.index(symbols), 2000), Priority: priority}
}

// index is the prompt's list of where each symbol is declared, in the
// issue's order. A symbol with no declaration the index reads names the
// first files that use it (another language, a configuration key); one found
// nowhere says so, for the planner to treat as new (or as a premise to
// check).
func (s symbolScan) index(symbols []string) string {
	by := map[string][]declaration{}
	for _, d := range s.decls {
		by[d.symbol] = append(by[d.symbol], d)
	}
	var b strings.Builder
	for _, sym := range symbols {
		ds := by[sym]
		if len(ds) == 0 {
			if us := s.users[sym]; len(us) > 0 {
				fmt.Fprintf(&b, "%s: no declaration found; used in %s\n", sym, strings.Join(us, ", "))
			} else {
				fmt.Fprintf(&b, "%s: declared nowhere in the repository and used nowhere\n", sym)
			}
			continue
		}
		sort.SliceStable(ds, func(i, j int) bool { return ds[i].file < ds[j].file })
		var at []string
		for _, d := range ds {
			at = append(at, fmt.Sprintf("%s:%d (%s)", d.file, d.line, d.kind))
		}
		fmt.Fprintf(&b, "%s: %s; called from %s; tested in %s\n", sym, strings.Join(at, ", "),
			orNone(s.callers[sym], "no other file"), orNone(s.tests[sym], "no test file (plan one)"))
	}
	return b.String()
}

// orNone lists files, or says none.
func orNone(files []string, none string) string {
	if len(files) == 0 {
		return none
	}
	return strings.Join(files, ", ")
}
