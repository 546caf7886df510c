package symbols

import "strings"

// jsDecls reads blanked JavaScript or TypeScript: at the top level (after
// export, default, declare, async, abstract) function and generator
// declarations, class, interface, type, enum and namespace-free const, let
// and var declarations (the first name of each); in a top-level class's
// body its methods (after static, async, get, set and TypeScript's
// modifiers), arrow-function fields among them.
func jsDecls(code []byte) []Decl {
	var b blocks
	ls := lines(code)
	for n, l := range ls {
		line := n + 1
		if in, ok := b.in(); ok {
			rest := strings.TrimLeft(l, " \t\f\v")
			switch in.kind {
			case "":
				jsTop(&b, rest, line)
			case "class":
				if name := jsMethod(rest); name != "" {
					b.decl(Decl{Name: name, Recv: in.recv, Kind: "method", Line: line})
				}
			}
		}
		b.walk(l, line)
	}
	return b.finish(lastLine(ls))
}

func jsTop(b *blocks, rest string, line int) {
	for {
		r, ok := "", false
		for _, m := range []string{"export", "default", "declare", "async", "abstract"} {
			if r, ok = word(rest, m); ok {
				break
			}
		}
		if !ok {
			break
		}
		rest = r
	}
	if r, ok := word(rest, "function"); ok {
		r = strings.TrimLeft(r, "* \t")
		b.decl(Decl{Name: jsIdent(r), Kind: "func", Line: line})
		return
	}
	if r, ok := word(rest, "class"); ok {
		name := jsIdent(r)
		b.decl(Decl{Name: name, Kind: "class", Line: line})
		if name != "" {
			b.contain("class", name)
		}
		return
	}
	for _, kw := range []string{"interface", "enum", "type", "const", "let", "var"} {
		r, ok := word(rest, kw)
		if !ok {
			continue
		}
		if kw == "const" {
			if e, ok := word(r, "enum"); ok {
				kw, r = "enum", e
			}
		}
		name := jsIdent(r)
		if kw == "type" && !strings.HasPrefix(strings.TrimLeft(r[len(name):], " \t"), "=") && !strings.HasPrefix(strings.TrimLeft(r[len(name):], " \t"), "<") {
			return // "type" as a name, not an alias
		}
		b.decl(Decl{Name: name, Kind: kw, Line: line})
		return
	}
}

// jsMethod is the name a class body's line declares as a method, "" when
// it declares none (a field, a statement of a static block).
func jsMethod(rest string) string {
	for {
		r, ok := "", false
		for _, m := range []string{"public", "private", "protected", "static", "async", "readonly", "abstract",
			"override", "declare", "accessor", "get", "set"} {
			if r, ok = word(rest, m); ok && r != "" && (r[0] == '#' || jsIdentStart(r[0]) || r[0] == '*') {
				break
			}
			ok = false
		}
		if !ok {
			break
		}
		rest = r
	}
	rest = strings.TrimLeft(rest, "*# \t")
	name := jsIdent(rest)
	if name == "" || jsKeywords[name] {
		return ""
	}
	after := strings.TrimLeft(rest[len(name):], " \t?!")
	if strings.HasPrefix(after, "<") {
		// generics: the parameter list follows the closing bracket
		if k := strings.IndexByte(after, '('); k > 0 {
			after = after[k:]
		}
	}
	if strings.HasPrefix(after, "(") {
		return name
	}
	if strings.HasPrefix(after, ":") {
		if k := strings.IndexByte(after, '='); k > 0 && !strings.HasPrefix(after[k:], "=>") {
			after = after[k:]
		}
	}
	if strings.HasPrefix(after, "=") && !strings.HasPrefix(after, "==") && strings.Contains(after, "=>") {
		v := strings.TrimLeft(after[1:], " \t")
		if r, ok := word(v, "async"); ok {
			v = r
		}
		if strings.HasPrefix(v, "(") || jsIdent(v) != "" {
			return name
		}
	}
	return ""
}

func jsIdentStart(c byte) bool { return identStart(c) || c == '$' }

// jsIdent is the identifier at the start of s, "" if none ($ counts).
func jsIdent(s string) string {
	if s == "" || !jsIdentStart(s[0]) {
		return ""
	}
	i := 1
	for i < len(s) && (identPart(s[i]) || s[i] == '$') {
		i++
	}
	return s[:i]
}

var jsKeywords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`if for while switch catch return function do else try finally throw new
		typeof delete void await yield super this import export case default break continue with`) {
		jsKeywords[w] = true
	}
}
