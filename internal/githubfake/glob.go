package githubfake

import (
	"regexp"
	"strings"
)

// filterGlob compiles one pattern of a workflow's branches, tags or paths
// filter the way GitHub's filter pattern cheat sheet describes it
// (https://docs.github.com/actions/reference/workflows-and-actions/workflow-syntax#filter-pattern-cheat-sheet):
// `*` is any run of characters but `/`, `**` any run including `/`, `?` makes
// the character before it optional and `+` repeats it, `[...]` is one of a
// set or range, and `\` makes the next character literal. For paths, a `**/`
// may also match no directory at all ("**/README.md" matches README.md). A
// leading `!` negates the pattern; the caller reads it. The pattern is
// matched against the whole name. A pattern that cannot be compiled (a
// reversed range) matches nothing.
func filterGlob(pattern string, path bool) *regexp.Regexp {
	var atoms []string
	rs := []rune(pattern)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case c == '\\' && i+1 < len(rs):
			i++
			atoms = append(atoms, regexp.QuoteMeta(string(rs[i])))
		case c == '*' && i+1 < len(rs) && rs[i+1] == '*':
			i++
			if path && i+1 < len(rs) && rs[i+1] == '/' && (i == 1 || rs[i-2] == '/') {
				i++
				atoms = append(atoms, `(?:.*/)?`)
				continue
			}
			atoms = append(atoms, `.*`)
		case c == '*':
			atoms = append(atoms, `[^/]*`)
		case (c == '?' || c == '+') && len(atoms) > 0:
			last := atoms[len(atoms)-1]
			if strings.HasSuffix(last, "?") || strings.HasSuffix(last, "+") || strings.HasSuffix(last, "*") || len([]rune(last)) > 1 {
				last = "(?:" + last + ")"
			}
			atoms[len(atoms)-1] = last + string(c)
		case c == '[':
			end := -1
			for j := i + 1; j < len(rs); j++ {
				if rs[j] == ']' {
					end = j
					break
				}
			}
			if end <= i+1 {
				atoms = append(atoms, regexp.QuoteMeta(string(c)))
				continue
			}
			var class strings.Builder
			class.WriteString("[")
			for j := i + 1; j < end; j++ {
				switch {
				case rs[j] == '-' && j > i+1 && j < end-1:
					class.WriteRune('-') // a range
				case rs[j] == '-' || rs[j] == '^':
					class.WriteString(`\` + string(rs[j])) // GitHub's sets have no negation
				default:
					class.WriteString(regexp.QuoteMeta(string(rs[j])))
				}
			}
			class.WriteString("]")
			atoms = append(atoms, class.String())
			i = end
		default:
			atoms = append(atoms, regexp.QuoteMeta(string(c)))
		}
	}
	re, err := regexp.Compile("^(?:" + strings.Join(atoms, "") + ")$")
	if err != nil {
		return nil
	}
	return re
}

// included says whether name is in the set a pattern list describes, read
// in order as GitHub documents for branches, tags and paths: a name matching
// a pattern is in, a later matching "!" pattern takes it out again, and a
// later positive one puts it back.
func included(patterns []string, name string, path bool) bool {
	in := false
	for _, p := range patterns {
		neg := strings.HasPrefix(p, "!")
		if neg {
			p = p[1:]
		}
		if re := filterGlob(p, path); re != nil && re.MatchString(name) {
			in = !neg
		}
	}
	return in
}
