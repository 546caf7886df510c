package gates

import (
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/plan"
)

// newMD splits a Markdown file into lines and marks fenced code.
func newMD(rel string, src []byte) *mdFile {
	text := strings.TrimPrefix(string(src), "\ufeff")
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	lines := strings.Split(text, "\n")
	code := make([]bool, len(lines))
	var fence byte
	n := 0
	for i, l := range lines {
		t := strings.TrimLeft(l, " ")
		if len(l)-len(t) > 3 {
			if fence != 0 {
				code[i] = true
			}
			continue
		}
		run := 0
		for run < len(t) && (t[run] == '`' || t[run] == '~') && t[run] == t[0] {
			run++
		}
		switch {
		case fence == 0 && run >= 3:
			fence, n = t[0], run
			code[i] = true
		case fence != 0:
			code[i] = true
			if run >= n && t[0] == fence && strings.TrimSpace(t[run:]) == "" {
				fence = 0
			}
		}
	}
	return &mdFile{rel: rel, lines: lines, code: code}
}

var headingRe = lazyRegexp(`^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$`)

// heading returns the level and text of a Markdown heading line, or 0.
func heading(line string) (int, string) {
	m := headingRe().FindStringSubmatch(line)
	if m == nil {
		return 0, ""
	}
	return len(m[1]), strings.TrimSpace(m[2])
}

// section returns the 0-based line range [start, end) of the body of the
// first heading (of any level) whose text, case-folded and stripped of
// trailing colons, is one of titles; ok false when there is none.
func (m *mdFile) section(titles ...string) (start, end int, ok bool) {
	level := 0
	for i, l := range m.lines {
		if m.code[i] {
			continue
		}
		lv, text := heading(l)
		if lv == 0 {
			continue
		}
		if level != 0 {
			if lv <= level {
				return start, i, true
			}
			continue
		}
		norm := strings.ToLower(strings.TrimRight(text, ": "))
		for _, t := range titles {
			if norm == t {
				level, start = lv, i+1
			}
		}
	}
	if level == 0 {
		return 0, 0, false
	}
	return start, len(m.lines), true
}

var bulletRe = lazyRegexp(`^([ \t]*)(?:[-*+•]|\d{1,3}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?(.*)$`)

// item is one bullet of a list, its continuation lines joined.
type item struct {
	text string
	line int // 1-based
}

// bullets returns the bullets of lines [start, end) of m: top-level list
// items, with indented continuation lines joined to them. Fenced code is
// skipped.
func (m *mdFile) bullets(start, end int) []item {
	var out []item
	for i := start; i < end && i < len(m.lines); i++ {
		if m.code[i] {
			continue
		}
		l := m.lines[i]
		if b := bulletRe().FindStringSubmatch(l); b != nil && len(b[1]) < 2 {
			out = append(out, item{text: strings.TrimSpace(b[2]), line: i + 1})
			continue
		}
		if len(out) > 0 && strings.TrimSpace(l) != "" && (strings.HasPrefix(l, "  ") || strings.HasPrefix(l, "\t")) {
			out[len(out)-1].text += " " + strings.TrimSpace(l)
		}
	}
	return out
}

// codeSpans returns the contents of the inline code spans of s, in order.
func codeSpans(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		n := 0
		for i+n < len(s) && s[i+n] == '`' {
			n++
		}
		end := closing(s, i+n, n)
		if end < 0 {
			i += n
			continue
		}
		out = append(out, strings.TrimSpace(s[i+n:end]))
		i = end + n
	}
	return out
}

// closing returns the index of the next run of exactly n backticks at or
// after i, or -1.
func closing(s string, i, n int) int {
	for i < len(s) {
		if s[i] != '`' {
			i++
			continue
		}
		k := 0
		for i+k < len(s) && s[i+k] == '`' {
			k++
		}
		if k == n {
			return i
		}
		i += k
	}
	return -1
}

// stripSpans replaces each code span of s with a placeholder "\x00N\x01" (N
// its index in codeSpans(s)), so wording can be read apart from the code.
func stripSpans(s string) string {
	var b strings.Builder
	k := 0
	for i := 0; i < len(s); {
		if s[i] != '`' {
			if s[i] != 0 && s[i] != 1 {
				b.WriteByte(s[i])
			}
			i++
			continue
		}
		n := 0
		for i+n < len(s) && s[i+n] == '`' {
			n++
		}
		end := closing(s, i+n, n)
		if end < 0 {
			b.WriteString(s[i : i+n])
			i += n
			continue
		}
		b.WriteString("\x00" + strconv.Itoa(k) + "\x01")
		k++
		i = end + n
	}
	return b.String()
}

// taskBody is a task's text without its trailing verify clause.
func taskBody(text, verify string) string {
	if verify == "" {
		return text
	}
	low := strings.ToLower(text)
	for i := strings.LastIndex(low, "verify:"); i >= 0; i = strings.LastIndex(low[:i], "verify:") {
		rest := strings.TrimLeft(text[i+len("verify:"):], " \t")
		if strings.HasPrefix(rest, "`") {
			return strings.TrimRight(strings.TrimSpace(text[:i]), ";,")
		}
	}
	return text
}

// knownExt are the extensions that make a code span a path.
var knownExt = map[string]bool{
	"go": true, "mod": true, "sum": true, "md": true, "txt": true, "yaml": true, "yml": true,
	"json": true, "toml": true, "sh": true, "bash": true, "py": true, "js": true, "mjs": true,
	"ts": true, "tsx": true, "jsx": true, "rs": true, "java": true, "kt": true, "c": true,
	"h": true, "cc": true, "cpp": true, "hpp": true, "rb": true, "proto": true, "sql": true,
	"html": true, "css": true, "golden": true, "txtar": true, "cfg": true, "ini": true,
	"lock": true, "xml": true, "mk": true, "tmpl": true, "tf": true, "cs": true, "swift": true,
	"php": true, "env": true, "csv": true, "svg": true, "png": true,
}

// knownNames are extensionless file names that are paths on their own.
var knownNames = map[string]bool{
	"Makefile": true, "Dockerfile": true, "README": true, "LICENSE": true, "CHANGELOG": true,
	"go.mod": true, "go.sum": true, "Justfile": true, "Rakefile": true, "Gemfile": true,
}

var pathCharsRe = lazyRegexp(`^[A-Za-z0-9_.@+\-/]+$`)

// asPath reads a code span as a repository path: a clean relative path, or
// "" when the span is not one. A span is a path when it has a slash and no
// domain-like first element (an import path), or a known extension or name.
// "./x/..." (a Go package pattern) is the directory x.
func asPath(span string) string {
	span = strings.TrimSpace(span)
	if len(span) > 300 || !pathCharsRe().MatchString(span) || strings.HasPrefix(span, "-") {
		return ""
	}
	clean := cleanRel(span)
	if clean == "" {
		return ""
	}
	base := path.Base(clean)
	if strings.Contains(clean, "/") {
		first := clean[:strings.IndexByte(clean, '/')]
		if strings.Contains(first, ".") && !strings.HasPrefix(span, "./") {
			return "" // github.com/x/y: an import path, not a file here
		}
		return clean
	}
	if knownNames[base] {
		return clean
	}
	if i := strings.LastIndexByte(base, '.'); i > 0 && knownExt[base[i+1:]] {
		return clean
	}
	return ""
}

// commandPaths returns the path-like words of a command line.
func commandPaths(cmd string) []string {
	var out []string
	for _, w := range strings.Fields(cmd) {
		w = strings.Trim(w, `'"`)
		if p := asPath(w); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// isTestPath reports whether a path is a test file by the common conventions.
func isTestPath(p string) bool {
	base := path.Base(p)
	switch {
	case strings.HasSuffix(base, "_test.go"):
		return true
	case strings.HasPrefix(base, "test_") && strings.HasSuffix(base, ".py"):
		return true
	case strings.Contains(base, ".test.") || strings.Contains(base, ".spec."):
		return true
	case strings.HasSuffix(strings.TrimSuffix(base, path.Ext(base)), "_test"):
		return true
	}
	return false
}

// codeExt are the extensions of source code whose change can change behaviour.
var codeExt = map[string]bool{
	".go": true, ".py": true, ".js": true, ".mjs": true, ".ts": true, ".tsx": true, ".jsx": true,
	".rs": true, ".java": true, ".kt": true, ".c": true, ".h": true, ".cc": true, ".cpp": true,
	".hpp": true, ".rb": true, ".sh": true, ".bash": true, ".cs": true, ".swift": true, ".php": true,
}

// isCodePath reports whether p is non-test source code.
func isCodePath(p string) bool {
	return codeExt[path.Ext(p)] && !isTestPath(p) && !strings.Contains("/"+p, "/testdata/")
}

// listed joins names for a message, at most maxListed of them.
func listed(names []string) string {
	if len(names) <= maxListed {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:maxListed], ", ") + ", and " + strconv.Itoa(len(names)-maxListed) + " more"
}

// TaskPaths returns the repository paths the plan's tasks name: the code
// spans of each task's text that read as paths, and the path-like words of
// its verify command, read the way the group-order gate reads them (a Go
// package pattern "./x/..." is the directory x). Each is clean and
// repository-relative; none climbs out with "..". Sorted, each once. The
// claims an implement Job takes are built from them (internal/claims).
func TaskPaths(t *plan.Tasks) []string {
	if t == nil {
		return nil
	}
	seen := map[string]bool{}
	for _, g := range t.Groups {
		for _, tk := range g.Tasks {
			for _, sp := range codeSpans(taskBody(tk.Text, tk.Verify)) {
				if p := asPath(sp); p != "" {
					seen[p] = true
				}
			}
			for _, p := range commandPaths(tk.Verify) {
				seen[p] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
