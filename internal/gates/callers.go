package gates

import (
	"bytes"
	"context"
	"path"
	"sort"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/plan"
)

// citation is a code span of the plan at a file and line.
type citation struct {
	span string
	file string
	line int
}

// citations returns the code spans of the named plan files, in file and line
// order, fenced code left out.
func (s *state) citations(names ...string) []citation {
	var out []citation
	for _, name := range names {
		md := s.docs[name]
		if md == nil {
			continue
		}
		for i, l := range md.lines {
			if md.code[i] {
				continue
			}
			for _, sp := range codeSpans(l) {
				out = append(out, citation{span: sp, file: md.rel, line: i + 1})
			}
		}
	}
	return out
}

// planText is every line of the plan's proposal, design and tasks.
func (s *state) planText() string {
	var b strings.Builder
	for _, name := range []string{"proposal.md", "design.md", "tasks.md"} {
		if md := s.docs[name]; md != nil {
			b.WriteString(strings.Join(md.lines, "\n"))
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// names reports whether text names word as a whole word (a path, a base
// name, a function name).
func names(text, word string) bool {
	if word == "" {
		return false
	}
	for i := 0; i <= len(text)-len(word); {
		j := strings.Index(text[i:], word)
		if j < 0 {
			return false
		}
		j += i
		before := j == 0 || !isIdentByte(text[j-1])
		after := j+len(word) == len(text) || !isIdentByte(text[j+len(word)])
		if before && after {
			return true
		}
		i = j + 1
	}
	return false
}

func isIdentByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// callersAndTests checks that a plan which changes a symbol names the code
// that calls it and the tests that exercise it (#3012): a plan blind to its
// callers breaks them in a later group, or in CI.
func callersAndTests(ctx context.Context, s *state) error {
	text := s.planText()
	ix := s.goSource()
	seen := map[string]bool{}
	for _, c := range s.citations("tasks.md", "design.md") {
		if err := ctx.Err(); err != nil {
			return err
		}
		if p := asPath(c.span); p != "" {
			if path.Ext(p) != ".go" && !seen[p] {
				seen[p] = true
				s.fileReferrers(c, p, text)
			}
			continue
		}
		for _, d := range narrow(ix.resolve(c.span), text) {
			key := d.file + "\x00" + d.name
			if seen[key] {
				continue
			}
			seen[key] = true
			s.symbolUsers(c, d, ix.uses(d), text)
		}
	}
	return nil
}

func (s *state) symbolUsers(c citation, d decl, uses []use, text string) {
	type who struct {
		file string
		fns  []string
	}
	byFile := map[string]*who{}
	var order []string
	for _, u := range uses {
		if u.file == d.file {
			continue // the symbol's own file changes with it
		}
		w := byFile[u.file]
		if w == nil {
			w = &who{file: u.file}
			byFile[u.file] = w
			order = append(order, u.file)
		}
		if u.fn != "" && !contains(w.fns, u.fn) {
			w.fns = append(w.fns, u.fn)
		}
	}
	sort.Strings(order)
	var callers, tests []string
	for _, f := range order {
		w := byFile[f]
		named := names(text, f) || names(text, path.Base(f))
		for _, fn := range w.fns {
			last := fn[strings.LastIndexByte(fn, '.')+1:]
			named = named || names(text, fn) || names(text, last)
		}
		if named {
			continue
		}
		label := f
		if len(w.fns) > 0 {
			label += " (" + listed(w.fns) + ")"
		}
		if isTestFile(f) {
			tests = append(tests, label)
		} else {
			callers = append(callers, label)
		}
	}
	if len(callers)+len(tests) == 0 {
		return
	}
	var parts []string
	if len(callers) > 0 {
		parts = append(parts, "callers the plan does not name: "+listed(callers))
	}
	if len(tests) > 0 {
		parts = append(parts, "tests the plan does not name: "+listed(tests))
	}
	s.add(plan.LevelError, CallersAndTests, c.file, c.line, "the plan changes `%s` (%s:%d), which has %s; name each in the task that updates it", d.name, d.file, d.line, strings.Join(parts, "; and "))
}

// textExts are the non-Go files searched for references to a cited file:
// code and configuration that can run it or load it. Prose (Markdown, text)
// mentioning a file is not a caller.
var proseExt = map[string]bool{".md": true, ".txt": true, ".rst": true, ".adoc": true}

var binaryish = lazyRegexp(`\x00`)

// fileReferrers checks a cited non-Go file: the repository's other files
// that mention its path (a plain text search) must be named in the plan.
func (s *state) fileReferrers(c citation, p, text string) {
	if !s.present(p) || strings.HasPrefix(p, "openspec/") {
		return
	}
	s.walk()
	var missing []string
	for _, f := range s.files {
		if f == p || proseExt[path.Ext(f)] || strings.Contains("/"+f, "/testdata/") {
			continue
		}
		src, err := s.readFile(f, maxRepoFile)
		if err != nil || binaryish().Match(src[:min(len(src), 512)]) {
			continue
		}
		if !bytes.Contains(src, []byte(p)) {
			continue
		}
		if names(text, f) || names(text, path.Base(f)) {
			continue
		}
		missing = append(missing, f)
	}
	if len(missing) > 0 {
		s.add(plan.LevelError, CallersAndTests, c.file, c.line, "the plan changes %s, which %s refer to by path; name each in the task that updates it", p, listed(missing))
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// narrow keeps, of the declarations a span resolves to in several packages,
// those whose package directory or file the plan names: `Run` alone is a
// word in many packages, and the plan says which it means by the paths it
// names. When it names none of them, the span is ambiguous and left out.
func narrow(ds []decl, text string) []decl {
	dirs := map[string]bool{}
	for _, d := range ds {
		dirs[path.Dir(d.file)] = true
	}
	if len(dirs) < 2 {
		return ds
	}
	var out []decl
	for _, d := range ds {
		if strings.Contains(text, path.Dir(d.file)) || names(text, d.file) {
			out = append(out, d)
		}
	}
	return out
}
