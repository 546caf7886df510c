package strength

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"sort"
	"strings"
)

// Operator names, as Mutant.Operator holds them.
const (
	OpNegateCondition  = "negate-condition"  // if/for condition c becomes !(c)
	OpNegateComparison = "negate-comparison" // == and != swapped, && and || swapped
	OpArithmetic       = "arithmetic"        // + and - swapped, * and / swapped, ++ and -- swapped
	OpBoundary         = "boundary"          // < and <=, > and >= swapped
	OpReturnZero       = "return-zero"       // a return's results become the zero values of its types
	OpRemoveCall       = "remove-call"       // a call statement removed
)

// priority orders the operators when a line has several sites: the first is
// the one least likely to make an equivalent mutant.
var priority = map[string]int{
	OpNegateCondition:  0,
	OpNegateComparison: 1,
	OpArithmetic:       2,
	OpBoundary:         3,
	OpReturnZero:       4,
	OpRemoveCall:       5,
}

// site is one possible mutation: the bytes [start, end) of the file replaced
// by repl. line is the line the mutation is counted on.
type site struct {
	line       int
	op         string
	start, end int
	repl       string
}

// better reports whether s should be chosen over t for their line.
func (s site) better(t site) bool {
	if priority[s.op] != priority[t.op] {
		return priority[s.op] < priority[t.op]
	}
	return s.start < t.start
}

// fileSites is what a Go file offers: the one chosen site per line, and the
// lines that hold code at all (a line with only braces, parentheses or
// comments, the package clause and imports are neither mutable nor
// skipped).
type fileSites struct {
	best map[int]site
	code map[int]bool
}

// maxFileSize bounds the Go files read (the model writes them).
const maxFileSize = 2 << 20

// sitesOf parses src and returns its sites. A file that does not parse is an
// error: the unmutated tests could not have built it.
func sitesOf(name string, src []byte) (fileSites, error) {
	if len(src) > maxFileSize {
		return fileSites{}, fmt.Errorf("%s: %d bytes, more than the %d a mutated file may have", name, len(src), maxFileSize)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return fileSites{}, fmt.Errorf("parse %s: %w", name, err)
	}
	m := &mutator{fset: fset, src: src, best: map[int]site{}}
	m.inspect(f, nil)
	code := codeLines(src)
	// The package clause and the imports are not behaviour.
	delete(code, m.line(f.Package))
	for _, imp := range f.Imports {
		delete(code, m.line(imp.Pos()))
	}
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
			delete(code, m.line(g.Pos()))
		}
	}
	return fileSites{best: m.best, code: code}, nil
}

// codeLines are the lines holding a token other than a comment, a brace, a
// parenthesis or an inserted semicolon.
func codeLines(src []byte) map[int]bool {
	fset := token.NewFileSet()
	file := fset.AddFile("", fset.Base(), len(src))
	var s scanner.Scanner
	s.Init(file, src, nil, 0)
	lines := map[int]bool{}
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			return lines
		}
		switch tok {
		case token.LBRACE, token.RBRACE, token.LPAREN, token.RPAREN:
			continue
		case token.SEMICOLON:
			if lit == "\n" {
				continue
			}
		}
		lines[file.Line(pos)] = true
	}
}

type mutator struct {
	fset *token.FileSet
	src  []byte
	best map[int]site
}

func (m *mutator) off(p token.Pos) int  { return m.fset.Position(p).Offset }
func (m *mutator) line(p token.Pos) int { return m.fset.Position(p).Line }
func (m *mutator) text(n ast.Node) string {
	return string(m.src[m.off(n.Pos()):m.off(n.End())])
}

// add records s if it is the best site of its line so far.
func (m *mutator) add(s site) {
	if cur, ok := m.best[s.line]; !ok || s.better(cur) {
		m.best[s.line] = s
	}
}

// inspect walks n; results are the result types of the function whose body
// n is in (nil outside any function).
func (m *mutator) inspect(n ast.Node, results *ast.FieldList) {
	ast.Inspect(n, func(x ast.Node) bool {
		switch v := x.(type) {
		case *ast.GenDecl:
			// Constants: a swapped operator can overflow or divide by zero
			// at compile time, which is a build error, not a mutant.
			return v.Tok != token.CONST
		case *ast.FuncDecl:
			if v.Body != nil {
				m.inspect(v.Body, v.Type.Results)
			}
			return false
		case *ast.FuncLit:
			m.inspect(v.Body, v.Type.Results)
			return false
		case *ast.IfStmt:
			m.negate(v.Cond)
		case *ast.ForStmt:
			if v.Cond != nil {
				m.negate(v.Cond)
			}
		case *ast.BinaryExpr:
			m.binary(v)
		case *ast.AssignStmt:
			m.assignOp(v)
		case *ast.IncDecStmt:
			m.incDec(v)
		case *ast.ReturnStmt:
			m.returnZero(v, results)
		case *ast.ExprStmt:
			m.removeCall(v)
		case *ast.ArrayType, *ast.MapType, *ast.ChanType, *ast.FuncType:
			// Type expressions ([n+1]int) are not behaviour.
			return false
		}
		return true
	})
}

// negate turns c into !(c), or !c into c.
func (m *mutator) negate(c ast.Expr) {
	s := site{line: m.line(c.Pos()), op: OpNegateCondition, start: m.off(c.Pos()), end: m.off(c.End())}
	if u, ok := c.(*ast.UnaryExpr); ok && u.Op == token.NOT {
		s.repl = m.text(u.X)
	} else {
		s.repl = "!(" + m.text(c) + ")"
	}
	m.add(s)
}

// swaps maps an operator to the one its mutant has, and the operator's name.
var swaps = map[token.Token]struct {
	to token.Token
	op string
}{
	token.EQL:  {token.NEQ, OpNegateComparison},
	token.NEQ:  {token.EQL, OpNegateComparison},
	token.LAND: {token.LOR, OpNegateComparison},
	token.LOR:  {token.LAND, OpNegateComparison},
	token.ADD:  {token.SUB, OpArithmetic},
	token.SUB:  {token.ADD, OpArithmetic},
	token.MUL:  {token.QUO, OpArithmetic},
	token.QUO:  {token.MUL, OpArithmetic},
	token.REM:  {token.MUL, OpArithmetic},
	token.LSS:  {token.LEQ, OpBoundary},
	token.LEQ:  {token.LSS, OpBoundary},
	token.GTR:  {token.GEQ, OpBoundary},
	token.GEQ:  {token.GTR, OpBoundary},
	// Assignment forms.
	token.ADD_ASSIGN: {token.SUB_ASSIGN, OpArithmetic},
	token.SUB_ASSIGN: {token.ADD_ASSIGN, OpArithmetic},
	token.MUL_ASSIGN: {token.QUO_ASSIGN, OpArithmetic},
	token.QUO_ASSIGN: {token.MUL_ASSIGN, OpArithmetic},
	token.INC:        {token.DEC, OpArithmetic},
	token.DEC:        {token.INC, OpArithmetic},
}

// swapAt records the site that replaces the operator tok at pos.
func (m *mutator) swapAt(pos token.Pos, tok token.Token) {
	sw, ok := swaps[tok]
	if !ok {
		return
	}
	start := m.off(pos)
	end := start + len(tok.String())
	if end > len(m.src) || string(m.src[start:end]) != tok.String() {
		return
	}
	repl := sw.to.String()
	// a+-b must not become a--b: a space keeps the tokens apart.
	if start > 0 && strings.ContainsRune(opChars, rune(m.src[start-1])) {
		repl = " " + repl
	}
	if end < len(m.src) && strings.ContainsRune(opChars, rune(m.src[end])) {
		repl += " "
	}
	m.add(site{line: m.line(pos), op: sw.op, start: start, end: end, repl: repl})
}

// opChars are the characters an operator token is made of.
const opChars = "+-*/%&|^<>=!:."

func (m *mutator) binary(b *ast.BinaryExpr) {
	if b.Op == token.ADD && (isString(b.X) || isString(b.Y)) {
		return // string concatenation has no minus
	}
	m.swapAt(b.OpPos, b.Op)
}

func isString(e ast.Expr) bool {
	l, ok := ast.Unparen(e).(*ast.BasicLit)
	return ok && l.Kind == token.STRING
}

func (m *mutator) assignOp(a *ast.AssignStmt) {
	if a.Tok == token.ADD_ASSIGN && len(a.Rhs) == 1 && isString(a.Rhs[0]) {
		return
	}
	m.swapAt(a.TokPos, a.Tok)
}

func (m *mutator) incDec(s *ast.IncDecStmt) { m.swapAt(s.TokPos, s.Tok) }

// returnZero replaces a return's results with the zero values of the
// function's result types. A return already of zero values is left alone
// (its mutant would be the code itself), but a lone false becomes true.
func (m *mutator) returnZero(r *ast.ReturnStmt, results *ast.FieldList) {
	if results == nil || len(r.Results) == 0 {
		return
	}
	var zeros []string
	for _, f := range results.List {
		n := len(f.Names)
		if n == 0 {
			n = 1
		}
		for range n {
			zeros = append(zeros, m.zero(f.Type))
		}
	}
	if len(r.Results) != len(zeros) && len(r.Results) != 1 {
		return
	}
	if len(r.Results) == len(zeros) {
		same := true
		for i, e := range r.Results {
			same = same && strings.TrimSpace(m.text(e)) == zeros[i]
		}
		if same {
			if len(zeros) != 1 || zeros[0] != "false" {
				return
			}
			zeros[0] = "true"
		}
	}
	first, last := r.Results[0], r.Results[len(r.Results)-1]
	m.add(site{line: m.line(r.Pos()), op: OpReturnZero, start: m.off(first.Pos()), end: m.off(last.End()),
		repl: strings.Join(zeros, ", ")})
}

// zero is the source of the zero value of the type t.
func (m *mutator) zero(t ast.Expr) string {
	switch v := ast.Unparen(t).(type) {
	case *ast.Ident:
		switch v.Name {
		case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64",
			"uintptr", "float32", "float64", "complex64", "complex128", "byte", "rune":
			return "0"
		case "string":
			return `""`
		case "bool":
			return "false"
		case "error", "any":
			return "nil"
		}
	case *ast.StarExpr, *ast.MapType, *ast.ChanType, *ast.FuncType, *ast.InterfaceType:
		return "nil"
	case *ast.ArrayType:
		if v.Len == nil {
			return "nil"
		}
	}
	// Any type at all: named, generic, struct or array.
	return "*new(" + m.text(t) + ")"
}

// removeCall drops a call statement, unless it only logs or prints: a
// mutant there says nothing about behaviour (Google's "arid" lines).
func (m *mutator) removeCall(s *ast.ExprStmt) {
	call, ok := ast.Unparen(s.X).(*ast.CallExpr)
	if !ok || arid(call) {
		return
	}
	m.add(site{line: m.line(s.Pos()), op: OpRemoveCall, start: m.off(s.Pos()), end: m.off(s.End()), repl: ""})
}

// arid reports whether call is logging or printing.
func arid(call *ast.CallExpr) bool {
	switch f := ast.Unparen(call.Fun).(type) {
	case *ast.Ident:
		return f.Name == "print" || f.Name == "println"
	case *ast.SelectorExpr:
		if pkg, ok := f.X.(*ast.Ident); ok {
			switch pkg.Name {
			case "log", "slog":
				return true
			case "fmt":
				return strings.HasPrefix(f.Sel.Name, "Print") || strings.HasPrefix(f.Sel.Name, "Fprint")
			}
		}
		for _, p := range []string{"Debug", "Info", "Warn", "Trace", "Log", "Print"} {
			if strings.HasPrefix(f.Sel.Name, p) {
				return true
			}
		}
	}
	return false
}

// apply returns src with s applied.
func (s site) apply(src []byte) []byte {
	out := make([]byte, 0, len(src)-(s.end-s.start)+len(s.repl))
	out = append(out, src[:s.start]...)
	out = append(out, s.repl...)
	return append(out, src[s.end:]...)
}

// diffContext is how many unchanged lines a mutant's diff shows either side.
const diffContext = 2

// unifiedDiff is the mutant s of src (the file path) as a unified diff.
func (s site) unifiedDiff(path string, src []byte) string {
	old := splitLines(string(src))
	startLine := strings.Count(string(src[:s.start]), "\n") // 0-based
	endLine := strings.Count(string(src[:s.end]), "\n")
	mutated := splitLines(string(s.apply(src)))
	newEnd := endLine + strings.Count(s.repl, "\n") - strings.Count(string(src[s.start:s.end]), "\n")
	from := max(0, startLine-diffContext)
	toOld := min(len(old)-1, endLine+diffContext)
	toNew := min(len(mutated)-1, newEnd+diffContext)
	var b strings.Builder
	fmt.Fprintf(&b, "--- a/%s\n+++ b/%s\n", path, path)
	fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@\n", from+1, toOld-from+1, from+1, toNew-from+1)
	for i := from; i < startLine; i++ {
		b.WriteString(" " + old[i] + "\n")
	}
	for i := startLine; i <= endLine; i++ {
		b.WriteString("-" + old[i] + "\n")
	}
	for i := startLine; i <= newEnd && i < len(mutated); i++ {
		b.WriteString("+" + mutated[i] + "\n")
	}
	for i := endLine + 1; i <= toOld; i++ {
		b.WriteString(" " + old[i] + "\n")
	}
	return b.String()
}

// splitLines splits s into lines without their newlines.
func splitLines(s string) []string {
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// sortedLines returns the keys of m in order.
func sortedLines[V any](m map[int]V) []int {
	out := make([]int, 0, len(m))
	for l := range m {
		out = append(out, l)
	}
	sort.Ints(out)
	return out
}
