package deptest

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestNoPhaseSwitchInKernel: the kernel holds no branch on which phase it
// runs (issue 45, item 3). What tells stage's Jobs from implement's (the
// jobs key, the number, what a mark carries, the marker, the trace's name)
// comes in the phase descriptor, kernel.Phase, that each phase supplies
// through the kernel's Options; a comparison or a switch on the phase would
// take the difference back into the kernel, and a third phase would need a
// branch in each place.
//
// The rule, read with go/types from every non-test Go file of
// internal/kernel: an offender is an operand of == or !=, a switch's tag or
// a case's expression (of a type switch too) that holds anywhere in it a
// value or a type of the phase type (kernel.Phase, or a pointer to it), an
// identifier or field named Phase, or an identifier named Stage or
// Implement (the constants the phase once was). Each is named by file and
// line.
func TestNoPhaseSwitchInKernel(t *testing.T) {
	t.Run("the rule", testPhaseSwitchRule)

	root := moduleRoot(t)
	dir := filepath.Join(root, "internal", "kernel")
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("parse %s: %v", name, err)
		}
		files = append(files, f)
	}
	if len(files) < 3 {
		t.Fatalf("read %d files of %s; is the module root right?", len(files), dir)
	}
	offenders, err := phaseSwitches(fset, files, func(pos token.Position) string {
		rel, _ := filepath.Rel(root, pos.Filename)
		return fmt.Sprintf("%s:%d", filepath.ToSlash(rel), pos.Line)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range offenders {
		t.Errorf("%s", o)
	}
	if len(offenders) > 0 {
		t.Logf("%d branch(es) on the phase in the kernel: give the difference to kernel.Phase, which stage and implement supply", len(offenders))
	}
}

// testPhaseSwitchRule runs the rule on a planted kernel: each line marked
// "offends" must be named, and no other.
func testPhaseSwitchRule(t *testing.T) {
	const planted = `package kernel

type Phase struct {
	Name string
	Last func() int
}

type Options struct{ Phase Phase }

type Holder struct{ Phase string }

const (
	Stage     = "stage"
	Implement = "implement"
)

func f(o Options, h Holder, p Phase, q *Phase, v any) int {
	if o.Phase.Name == "implement" { // offends: a field named Phase
		return 1
	}
	if p.Name != "stage" { // offends: a value of the phase type
		return 2
	}
	if h.Phase == Stage { // offends: the holder's phase, a constant
		return 3
	}
	if "x" == Implement { // offends: a constant the phase was
		return 4
	}
	switch q.Name { // offends: a pointer to the phase
	case "stage":
		return 5
	}
	switch {
	case o.Phase.Last() > 0: // offends: a case on the phase's field
		return 6
	}
	switch v.(type) {
	case Phase: // offends: a type switch on the phase type
		return 7
	}
	n := o.Phase.Last() + len(h.Phase)
	if n == 8 || len(p.Name) > 0 {
		return 8
	}
	switch n {
	case 9:
		return 9
	}
	return 0
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "planted.go", planted, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	got, err := phaseSwitches(fset, []*ast.File{f}, func(pos token.Position) string { return fmt.Sprint(pos.Line) })
	if err != nil {
		t.Fatal(err)
	}
	var gotLines, want []string
	for _, o := range got {
		line, _, _ := strings.Cut(o, ":")
		if !slices.Contains(gotLines, line) {
			gotLines = append(gotLines, line)
		}
	}
	for i, l := range strings.Split(planted, "\n") {
		if strings.Contains(l, "// offends") {
			want = append(want, fmt.Sprint(i+1))
		}
	}
	if diff := cmp.Diff(want, gotLines); diff != "" {
		t.Errorf("lines the rule names in the planted kernel (-want +got):\n%s\nnamed: %q", diff, got)
	}
	if len(want) != 7 {
		t.Fatalf("the planted kernel has %d offending lines, want 7", len(want))
	}
}

// phaseSwitches type-checks the kernel's files on their own (an import is
// left unresolved: the phase type and the Options that carry it are the
// kernel's own) and returns one line per offender, "where: what".
func phaseSwitches(fset *token.FileSet, files []*ast.File, where func(token.Position) string) ([]string, error) {
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}}
	conf := types.Config{
		Importer: noImports{},    // wallclock_test.go's
		Error:    func(error) {}, // the unresolved imports' errors
	}
	pkg, _ := conf.Check("kernel", fset, files, info)
	phase, ok := pkg.Scope().Lookup("Phase").(*types.TypeName)
	if !ok {
		return nil, errors.New("the kernel declares no type Phase: the rule names the phase by its type; follow it where it went")
	}
	isPhase := func(ty types.Type) bool {
		if p, ok := ty.(*types.Pointer); ok {
			ty = p.Elem()
		}
		return ty != nil && types.Identical(ty, phase.Type())
	}
	// refers says why e refers to the phase ("" when it does not).
	refers := func(e ast.Expr) string {
		why := ""
		ast.Inspect(e, func(n ast.Node) bool {
			if why != "" {
				return false
			}
			if id, ok := n.(*ast.Ident); ok {
				switch id.Name {
				case "Phase":
					why = "names Phase"
					return false
				case "Stage", "Implement":
					why = "names the constant " + id.Name
					return false
				}
			}
			if x, ok := n.(ast.Expr); ok && isPhase(info.TypeOf(x)) {
				why = fmt.Sprintf("%s is of the phase type", types.ExprString(x))
				return false
			}
			return true
		})
		return why
	}
	var out []string
	offend := func(at ast.Node, what string, e ast.Expr) {
		if why := refers(e); why != "" {
			out = append(out, fmt.Sprintf("%s: %s %s: %s", where(fset.Position(at.Pos())), what, types.ExprString(e), why))
		}
	}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				if n.Op == token.EQL || n.Op == token.NEQ {
					offend(n, "the comparison", n)
				}
			case *ast.SwitchStmt:
				if n.Tag != nil {
					offend(n, "the switch on", n.Tag)
				}
				for _, c := range n.Body.List {
					for _, e := range c.(*ast.CaseClause).List {
						offend(e, "the case", e)
					}
				}
			case *ast.TypeSwitchStmt:
				for _, c := range n.Body.List {
					for _, e := range c.(*ast.CaseClause).List {
						offend(e, "the type case", e)
					}
				}
			}
			return true
		})
	}
	return out, nil
}
