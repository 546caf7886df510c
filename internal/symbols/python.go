package symbols

import "strings"

// pyScope is a def or class block still open, by its indentation.
type pyScope struct {
	indent int
	class  string // the class's name; "" for a def
	decl   int    // its index in the collector, -1 when not taken
}

// pythonDecls reads blanked Python: module-level def, async def and class
// (after any decorators), the methods of those classes (and of classes
// nested in them), and module-level assignments (const when the name is
// UPPER_CASE, by convention; var otherwise) and type aliases. A line inside
// open brackets, or after a backslash, continues a statement and is not
// read for one; a block ends at the next line indented no deeper.
func pythonDecls(code []byte) []Decl {
	var c collector
	var scopes []pyScope
	depth := 0 // open brackets
	cont := false
	lastLine := 0 // the last line that holds code
	closeTo := func(indent int) {
		for len(scopes) > 0 && scopes[len(scopes)-1].indent >= indent {
			if i := scopes[len(scopes)-1].decl; i >= 0 {
				c.out[i].End = max(lastLine, c.out[i].Line)
			}
			scopes = scopes[:len(scopes)-1]
		}
	}
	for n, l := range lines(code) {
		line := n + 1
		start := depth == 0 && !cont
		for k := 0; k < len(l); k++ {
			switch l[k] {
			case '(', '[', '{':
				depth++
			case ')', ']', '}':
				depth = max(depth-1, 0)
			}
		}
		trimmed := strings.TrimRight(l, " \t\f")
		cont = strings.HasSuffix(trimmed, "\\")
		rest := strings.TrimLeft(trimmed, " \t\f")
		if rest == "" {
			continue
		}
		if !start {
			lastLine = line
			continue
		}
		indent := pyIndent(l)
		closeTo(indent)
		lastLine = line
		inClass, inDef := "", false
		for _, s := range scopes {
			if s.class == "" {
				inDef = true
			}
		}
		if len(scopes) > 0 {
			inClass = scopes[len(scopes)-1].class
		}
		if r, ok := word(rest, "async"); ok {
			rest = r
		}
		if r, ok := word(rest, "def"); ok {
			d := Decl{Name: ident(r), Kind: "func", Line: line}
			if inClass != "" {
				d.Kind, d.Recv = "method", inClass
			}
			i := -1
			if !inDef && d.Name != "" {
				i = c.add(d)
			}
			scopes = append(scopes, pyScope{indent: indent, decl: i})
			continue
		}
		if r, ok := word(rest, "class"); ok {
			name := ident(r)
			i := -1
			if !inDef && name != "" {
				i = c.add(Decl{Name: name, Kind: "class", Line: line})
			}
			// A class without a name is no class: what it holds is not taken.
			scopes = append(scopes, pyScope{indent: indent, class: name, decl: i})
			continue
		}
		if indent > 0 || len(scopes) > 0 {
			continue
		}
		if r, ok := word(rest, "type"); ok {
			if name := ident(r); name != "" && strings.Contains(r, "=") {
				c.add(Decl{Name: name, Kind: "type", Line: line})
				continue
			}
		}
		if name := ident(rest); name != "" && pyAssigns(rest[len(name):]) && !pyKeywords[name] {
			kind := "var"
			if pyConstName(name) {
				kind = "const"
			}
			c.add(Decl{Name: name, Kind: kind, Line: line})
		}
	}
	lastLine = max(lastLine, 1)
	closeTo(-1)
	return c.out
}

// pyIndent is the width of l's indentation, a tab to the next multiple of 8
// as Python counts it.
func pyIndent(l string) int {
	w := 0
	for k := 0; k < len(l); k++ {
		switch l[k] {
		case ' ':
			w++
		case '\t':
			w = w/8*8 + 8
		case '\f':
			w = 0
		default:
			return w
		}
	}
	return w
}

// pyAssigns: what follows a name makes the statement an assignment to it
// ("= …", ": T = …", ": T"), not a comparison, a call or an augmented
// assignment.
func pyAssigns(s string) bool {
	s = strings.TrimLeft(s, " \t")
	switch {
	case strings.HasPrefix(s, "=="):
		return false
	case strings.HasPrefix(s, "="):
		return true
	case strings.HasPrefix(s, ":") && !strings.HasPrefix(s, ":="):
		return strings.TrimSpace(s[1:]) != ""
	}
	return false
}

// pyConstName: UPPER_CASE, at least one letter.
func pyConstName(name string) bool {
	letter := false
	for k := 0; k < len(name); k++ {
		switch c := name[k]; {
		case 'a' <= c && c <= 'z':
			return false
		case 'A' <= c && c <= 'Z':
			letter = true
		}
	}
	return letter
}

var pyKeywords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`False None True and as assert async await break class continue def del elif
		else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield
		match case type`) {
		pyKeywords[w] = true
	}
}
