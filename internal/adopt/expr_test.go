package adopt

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
)

// A small evaluator of GitHub Actions expressions, for the tests that check
// what the workflows' expressions give in each case (a killed Job, a skipped
// one). It knows the part of the language the workflows use here: literals,
// context properties, object filters (x.*.y), contains(), startsWith(), ! == != && || and
// parentheses, with GitHub's rules
// (docs: "Evaluate expressions in workflows and actions"): && and || return
// an operand, not a boolean; falsy is false, 0, "", null and NaN; strings
// compare case-insensitively, other mixed types as numbers; a missing
// property is null. Anything else (a function call, an index) fails the
// test rather than guessing.

// exprCtx is the contexts an expression reads: inputs, needs, jobs, github…
// Nested maps; a missing key is null.
type exprCtx map[string]any

type exprParser struct {
	src string
	pos int
	ctx exprCtx
	err error
}

// evalExpr evaluates one expression (the text inside ${{ }}).
func evalExpr(src string, ctx exprCtx) (any, error) {
	p := &exprParser{src: src, ctx: ctx}
	v := p.or()
	p.space()
	if p.err == nil && p.pos < len(p.src) {
		p.fail("unexpected %q", p.src[p.pos:])
	}
	return v, p.err
}

// interpolate renders a workflow value: each ${{ }} replaced by its value as
// GitHub renders it into a string (null as "").
func interpolate(s string, ctx exprCtx) (string, error) {
	var b strings.Builder
	for {
		i := strings.Index(s, "${{")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		j := strings.Index(s[i:], "}}")
		if j < 0 {
			return "", fmt.Errorf("unclosed ${{ in %q", s)
		}
		v, err := evalExpr(s[i+3:i+j], ctx)
		if err != nil {
			return "", err
		}
		b.WriteString(s[:i])
		b.WriteString(exprString(v))
		s = s[i+j+2:]
	}
}

func exprString(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

func truthy(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case string:
		return v != ""
	case float64:
		return v != 0 && !math.IsNaN(v)
	}
	return true // objects and arrays
}

func exprNumber(v any) float64 {
	switch v := v.(type) {
	case nil:
		return 0
	case bool:
		if v {
			return 1
		}
		return 0
	case float64:
		return v
	case string:
		s := strings.TrimSpace(v)
		if s == "" {
			return 0
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return math.NaN()
		}
		return f
	}
	return math.NaN()
}

func exprEqual(a, b any) bool {
	as, aok := a.(string)
	bs, bok := b.(string)
	if aok && bok {
		return strings.EqualFold(as, bs)
	}
	if a == nil && b == nil {
		return true
	}
	return exprNumber(a) == exprNumber(b)
}

func (p *exprParser) fail(format string, args ...any) {
	if p.err == nil {
		p.err = fmt.Errorf("expression %q at %d: %s", p.src, p.pos, fmt.Sprintf(format, args...))
	}
}

func (p *exprParser) space() {
	for p.pos < len(p.src) && strings.ContainsRune(" \t\r\n", rune(p.src[p.pos])) {
		p.pos++
	}
}

func (p *exprParser) eat(tok string) bool {
	p.space()
	if strings.HasPrefix(p.src[p.pos:], tok) {
		p.pos += len(tok)
		return true
	}
	return false
}

// Both operands are evaluated: the expressions here have no side effects.
func (p *exprParser) or() any {
	v := p.and()
	for p.err == nil && p.eat("||") {
		r := p.and()
		if !truthy(v) {
			v = r
		}
	}
	return v
}

func (p *exprParser) and() any {
	v := p.cmp()
	for p.err == nil && p.eat("&&") {
		r := p.cmp()
		if truthy(v) {
			v = r
		}
	}
	return v
}

func (p *exprParser) cmp() any {
	v := p.unary()
	for p.err == nil {
		switch {
		case p.eat("=="):
			v = exprEqual(v, p.unary())
		case p.eat("!="):
			v = !exprEqual(v, p.unary())
		default:
			return v
		}
	}
	return v
}

func (p *exprParser) unary() any {
	if p.eat("!") {
		return !truthy(p.unary())
	}
	return p.primary()
}

func (p *exprParser) primary() any {
	p.space()
	if p.pos >= len(p.src) {
		p.fail("unexpected end")
		return nil
	}
	c := p.src[p.pos]
	switch {
	case c == '(':
		p.pos++
		v := p.or()
		if !p.eat(")") {
			p.fail("want )")
		}
		return v
	case c == '\'':
		var b strings.Builder
		for p.pos++; ; p.pos++ {
			if p.pos >= len(p.src) {
				p.fail("unclosed string")
				return nil
			}
			if p.src[p.pos] == '\'' {
				if p.pos+1 < len(p.src) && p.src[p.pos+1] == '\'' {
					b.WriteByte('\'')
					p.pos++
					continue
				}
				p.pos++
				return b.String()
			}
			b.WriteByte(p.src[p.pos])
		}
	case c == '-' || c >= '0' && c <= '9':
		start := p.pos
		for p.pos++; p.pos < len(p.src) && strings.ContainsRune("0123456789.", rune(p.src[p.pos])); p.pos++ {
		}
		f, err := strconv.ParseFloat(p.src[start:p.pos], 64)
		if err != nil {
			p.fail("bad number")
		}
		return f
	case isIdent(c):
		name := p.ident()
		switch name {
		case "true":
			return true
		case "false":
			return false
		case "null":
			return nil
		}
		if (name == "contains" || name == "startsWith") && p.pos < len(p.src) && p.src[p.pos] == '(' {
			p.pos++
			a := p.or()
			if !p.eat(",") {
				p.fail("want , in %s", name)
			}
			b := p.or()
			if !p.eat(")") {
				p.fail("want ) after %s", name)
			}
			if name == "startsWith" {
				return strings.HasPrefix(strings.ToLower(exprString(a)), strings.ToLower(exprString(b)))
			}
			return contains(a, b)
		}
		var v any = map[string]any(p.ctx)
		v = prop(v, name)
		for p.pos < len(p.src) && p.src[p.pos] == '.' {
			p.pos++
			if p.pos < len(p.src) && p.src[p.pos] == '*' {
				// An object filter: the property that follows is read of
				// each element.
				p.pos++
				list, _ := v.([]any)
				v = filtered(list)
				continue
			}
			v = prop(v, p.ident())
		}
		if p.pos < len(p.src) && strings.ContainsRune("([*", rune(p.src[p.pos])) {
			p.fail("calls, indexes and filters are not known to this evaluator")
		}
		return v
	}
	p.fail("unexpected %q", c)
	return nil
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func (p *exprParser) ident() string {
	start := p.pos
	for p.pos < len(p.src) && (isIdent(p.src[p.pos]) || p.src[p.pos] == '-' || p.src[p.pos] >= '0' && p.src[p.pos] <= '9') {
		p.pos++
	}
	if p.pos == start {
		p.fail("want a name")
	}
	return p.src[start:p.pos]
}

// filtered is the array an object filter (x.*) gives: a property read of
// it is read of each element.
type filtered []any

// contains is GitHub's contains(search, item): an element of an array equal
// to item, or a substring of a string, case-insensitive.
func contains(hay, needle any) bool {
	var list []any
	switch h := hay.(type) {
	case filtered:
		list = h
	case []any:
		list = h
	default:
		return strings.Contains(strings.ToLower(exprString(hay)), strings.ToLower(exprString(needle)))
	}
	for _, x := range list {
		if exprEqual(x, needle) {
			return true
		}
	}
	return false
}

// prop is v.name, case-insensitive as GitHub's contexts are; null when absent.
func prop(v any, name string) any {
	if f, ok := v.(filtered); ok {
		out := filtered{}
		for _, x := range f {
			out = append(out, prop(x, name))
		}
		return out
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	if x, ok := m[name]; ok {
		return x
	}
	for k, x := range m {
		if strings.EqualFold(k, name) {
			return x
		}
	}
	return nil
}

// TestExprEvaluator: the evaluator gives GitHub's documented answers, so the
// workflow tests built on it mean what they say.
func TestExprEvaluator(t *testing.T) {
	ctx := exprCtx{
		"inputs": map[string]any{"phase": "stage", "n": 0.0, "record-comment": 7.0},
		"needs":  map[string]any{"stage": map[string]any{"result": "success", "outputs": map[string]any{"result": "", "pr": "12"}}},
	}
	for _, tt := range []struct{ expr, want string }{
		{"inputs.phase == 'stage'", "true"},
		{"inputs.phase == 'STAGE'", "true"}, // strings compare case-insensitively
		{"inputs.phase != 'stage'", "false"},
		{"inputs.phase == 'stage' && 'a' || 'b'", "a"},
		{"inputs.phase == 'implement' && 'a' || 'b'", "b"},
		// The trap: an empty middle operand falls through to the last.
		{"inputs.phase == 'stage' && needs.stage.outputs.result || 'fallback'", "fallback"},
		{"inputs.phase == 'stage' && needs.stage.outputs.pr || 'x'", "12"},
		{"needs.implement.outputs.result", ""}, // missing: null, rendered ""
		{"needs.implement.outputs.result || inputs.record-comment", "7"},
		{"inputs.n || 'zero is falsy'", "zero is falsy"},
		{"!inputs.missing", "true"},
		{"(inputs.phase == 'stage' || false) && 'it''s'", "it's"},
		{"inputs.n == ''", "true"}, // mixed types compare as numbers
		{"null", ""},
	} {
		got, err := evalExpr(tt.expr, ctx)
		if err != nil {
			t.Errorf("%s: %v", tt.expr, err)
			continue
		}
		if s := exprString(got); s != tt.want {
			t.Errorf("%s = %q, want %q", tt.expr, s, tt.want)
		}
	}
	for _, bad := range []string{"fromJSON(inputs.x)", "inputs.a[0]", "'open", "inputs.phase ==", "a b"} {
		if _, err := evalExpr(bad, ctx); err == nil {
			t.Errorf("%s: no error, want one (not known to the evaluator)", bad)
		}
	}
}
