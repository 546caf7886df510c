package symbols

import "strings"

// rustDecls reads blanked Rust: the items of the top level and of inline
// modules (fn, struct, enum, union, trait, type, const, static, mod,
// macro_rules!), after attributes written on the same line, visibility
// (pub, pub(crate), …) and qualifiers (const fn, async, unsafe, extern
// "C"); and the methods of impl and trait blocks, as methods of the impl's
// self type (its last path segment, without generics) or of the trait.
func rustDecls(code []byte) []Decl {
	var b blocks
	ls := lines(code)
	for n, l := range ls {
		line := n + 1
		if in, ok := b.in(); ok {
			rustItem(&b, in, strings.TrimLeft(l, " \t\f\v"), line)
		}
		b.walk(l, line)
	}
	return b.finish(lastLine(ls))
}

func rustItem(b *blocks, in container, rest string, line int) {
	rest = rustAttrs(rest)
	if r, ok := word(rest, "pub"); ok {
		rest = r
		if strings.HasPrefix(rest, "(") {
			if k := strings.IndexByte(rest, ')'); k > 0 {
				rest = strings.TrimLeft(rest[k+1:], " \t")
			}
		}
	}
	for {
		r, ok := "", false
		for _, q := range []string{"default", "async", "unsafe", "auto", "extern", "safe"} {
			if r, ok = word(rest, q); ok {
				break
			}
		}
		if !ok {
			if r, ok = word(rest, "const"); ok {
				if _, fn := word(r, "fn"); !fn {
					if _, u := word(r, "unsafe"); !u {
						if _, a := word(r, "async"); !a {
							if _, e := word(r, "extern"); !e {
								ok = false
							}
						}
					}
				}
			}
		}
		if !ok {
			break
		}
		if strings.HasPrefix(r, `"`) { // extern "C"
			if k := strings.IndexByte(r[1:], '"'); k >= 0 {
				r = strings.TrimLeft(r[k+2:], " \t")
			}
		}
		rest = r
	}
	if r, ok := word(rest, "fn"); ok {
		d := Decl{Name: rustIdent(r), Kind: "func", Line: line}
		if in.kind == "impl" || in.kind == "trait" {
			d.Kind, d.Recv = "method", in.recv
		}
		b.decl(d)
		return
	}
	if in.kind == "impl" || in.kind == "trait" {
		return // associated consts and types are not indexed
	}
	if r, ok := word(rest, "impl"); ok {
		b.settle(line)
		b.contain("impl", rustSelfType(r))
		return
	}
	if r, ok := word(rest, "macro_rules!"); ok || strings.HasPrefix(rest, "macro_rules!") {
		if !ok {
			r = strings.TrimLeft(rest[len("macro_rules!"):], " \t")
		}
		b.decl(Decl{Name: rustIdent(r), Kind: "macro", Line: line})
		return
	}
	for _, kw := range []string{"struct", "enum", "union", "trait", "type", "const", "static", "mod"} {
		r, ok := word(rest, kw)
		if !ok {
			continue
		}
		if kw == "static" {
			if m, ok := word(r, "mut"); ok {
				r = m
			}
		}
		name := rustIdent(r)
		if kw == "union" && name == "" {
			return // "union" as a name
		}
		b.decl(Decl{Name: name, Kind: kw, Line: line})
		switch kw {
		case "trait":
			b.contain("trait", name)
		case "mod":
			b.contain("mod", "")
		}
		return
	}
}

// rustAttrs cuts the attributes (#[…], #![…]) at the start of rest.
func rustAttrs(rest string) string {
	for strings.HasPrefix(rest, "#[") || strings.HasPrefix(rest, "#![") {
		depth, k := 0, strings.IndexByte(rest, '[')
		for ; k < len(rest); k++ {
			if rest[k] == '[' {
				depth++
			} else if rest[k] == ']' {
				if depth--; depth == 0 {
					break
				}
			}
		}
		if k >= len(rest) {
			return "" // the attribute goes on past the line
		}
		rest = strings.TrimLeft(rest[k+1:], " \t")
	}
	return rest
}

// rustIdent is the identifier at the start of s, a raw one (r#type) by its
// name.
func rustIdent(s string) string {
	return ident(strings.TrimPrefix(s, "r#"))
}

// rustSelfType is the type an impl header (after "impl") is for: the last
// path segment of the type after "for", or of the first type, without
// generics or references.
func rustSelfType(h string) string {
	h = skipAngles(strings.TrimLeft(h, " \t"))
	if k := indexWord(h, "for"); k >= 0 {
		h = h[k+3:]
	}
	h = strings.TrimLeft(h, " \t&!(")
	for {
		if r, ok := word(h, "dyn"); ok {
			h = r
		} else if r, ok := word(h, "mut"); ok {
			h = r
		} else if strings.HasPrefix(h, "'") {
			h = strings.TrimLeft(strings.TrimLeft(h[1:], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"), " \t")
		} else {
			break
		}
	}
	name := ""
	for {
		id := rustIdent(h)
		if id == "" {
			break
		}
		name = id
		h = strings.TrimPrefix(h, "r#")[len(id):]
		if !strings.HasPrefix(h, "::") {
			break
		}
		h = h[2:]
	}
	return name
}

// skipAngles cuts a leading <…> (nested) from s.
func skipAngles(s string) string {
	if !strings.HasPrefix(s, "<") {
		return s
	}
	depth := 0
	for k := 0; k < len(s); k++ {
		switch s[k] {
		case '<':
			depth++
		case '>':
			if k > 0 && s[k-1] == '-' {
				continue // -> in a bound
			}
			if depth--; depth == 0 {
				return strings.TrimLeft(s[k+1:], " \t")
			}
		}
	}
	return ""
}

// indexWord is the index of kw as a whole word in s, -1 if none.
func indexWord(s, kw string) int {
	for from := 0; from < len(s); {
		k := strings.Index(s[from:], kw)
		if k < 0 {
			return -1
		}
		k += from
		if (k == 0 || !identPart(s[k-1])) && (k+len(kw) == len(s) || !identPart(s[k+len(kw)])) {
			return k
		}
		from = k + 1
	}
	return -1
}
