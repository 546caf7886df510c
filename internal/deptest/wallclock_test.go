package deptest

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoWallClockBounds: no unit test passes or fails on the machine's
// speed. Under load a wall-clock bound breaks ("6.72 s after SIGINT, want at
// most 5 s") though the code kept its promise; a promise about time is
// asserted on an injected clock (the fake clocks of internal/clock's users),
// on counts or order (what the code did, and before what), or measured in a
// benchmark, never on how many of the machine's seconds a run took.
//
// The rule, read from the syntax of every _test.go file of the module (the
// files `go test ./...` builds; build tags are not read, so a file behind a
// tag counts too; testdata, hidden and _ folders are not the module's code):
//
//   - A reading is a value of the machine's clock: time.Now(), and what
//     Round, Truncate, UTC, Local or In make of it. A deadline is a reading
//     moved by a duration (reading.Add(d), reading.AddDate(…)). A measured
//     time is a duration taken off the machine's clock: time.Since(x),
//     time.Until(x), x.Sub(y) with a reading or a deadline on either side,
//     anything named Elapsed (a result's Elapsed, b.Elapsed()), and what
//     arithmetic, conversions and Round, Truncate, Abs, Seconds, Milliseconds…
//     make of one. Local variables carry the kind of what they were set to
//     (`start := time.Now()`, `if took := time.Since(start); …`); a struct
//     field does not.
//   - A bound is a condition of an if (or of a case of a switch with no tag)
//     whose branch fails the test (calls Error, Errorf, Fatal or Fatalf with
//     an argument, or Fail or FailNow) and that holds a measured time in a
//     comparison (<, >, <=, >=), or a deadline in x.After(y) or x.Before(y).
//   - A bound that fails only when an elapsed time is too short
//     (`if took < latency { t.Error(…) }`, `time.Now().Before(deadline)`) is
//     allowed: load only makes a run longer and a timer never fires early,
//     so it cannot fail on a slow machine. Elapsed is time.Since(x),
//     reading.Sub(x), Elapsed, and their sums, multiples and parts. A bound
//     that fails when an elapsed time is too long is an offender, and so is
//     one on a measured time whose direction the rule does not know (what
//     time.Until or deadline.Sub leaves, a time stamp less a reading, a
//     measured time turned round) and one comparing two measured times.
//   - A wait is not a bound on speed: it stops waiting for something that
//     has not happened and fails saying it never did. A select on
//     time.After, a timer or a context compares no time at all; a loop that
//     polls (a for statement, not a range over cases, whose body or post
//     statement sleeps, receives or selects between its tries) may give up
//     on a deadline from inside its body. Its give-up is generous slack,
//     never the promise under test.
//   - Benchmarks (func Benchmark…) measure speed by design and are not read.
//
// The rule cannot see a measurement it cannot follow: one kept in a struct
// field, passed through a function, or made by the code under test (a
// result's Duration). Those are for review, as is a give-up tight enough to
// be the promise itself.
func TestNoWallClockBounds(t *testing.T) {
	t.Run("the rule", testWallClockRule)

	root := moduleRoot(t)
	fset := token.NewFileSet()
	files, readings := 0, 0
	var offenders []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p == root {
				return nil
			}
			if name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, p, src, parser.SkipObjectResolution)
		if err != nil {
			t.Errorf("parse %s: %v", filepath.ToSlash(rel), err)
			return nil
		}
		files++
		c := newClockReader(fset, f, src)
		for _, b := range c.bounds() {
			pos := fset.Position(b.pos)
			offenders = append(offenders, fmt.Sprintf("%s:%d: %s", filepath.ToSlash(rel), pos.Line, b.why))
		}
		readings += c.readings
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", root, err)
	}
	// Not vacuous: the walk read the module's tests, and some of them read
	// the machine's clock (the polling loops' deadlines, at least).
	if files < 100 || readings == 0 {
		t.Fatalf("read %d test files with %d readings of the machine's clock under %s; is the module root right?", files, readings, root)
	}
	for _, o := range offenders {
		t.Errorf("%s", o)
	}
	if len(offenders) > 0 {
		t.Logf("%d wall-clock bound(s): assert the promise on an injected clock, on counts or order, or measure the speed in a Benchmark", len(offenders))
	}
}

// bound is one offender: where, and what it compares.
type bound struct {
	pos token.Pos
	why string
}

// kind is what a value is, as far as the machine's clock goes.
type kind int

const (
	other    kind = iota
	reading       // a value of the machine's clock
	deadline      // a reading moved by a duration
	elapsed       // a measured time that only grows when the machine is slow
	measured      // a measured time whose direction is not known (time.Until)
)

// isMeasured reports whether k is a duration taken off the machine's clock.
func isMeasured(k kind) bool { return k >= elapsed }

// clockReader finds the bounds of one file. Identifiers are resolved by
// type-checking the file alone, its imports faked: enough to tell the time
// package and each local variable apart, whatever their names.
type clockReader struct {
	fset     *token.FileSet
	file     *ast.File
	src      []byte
	info     *types.Info
	vars     map[types.Object]kind
	readings int // time.Now() calls seen (outside benchmarks)
}

// noImports fails every import, so the type checker fakes the package.
type noImports struct{}

func (noImports) Import(string) (*types.Package, error) { return nil, errors.New("not read") }

func newClockReader(fset *token.FileSet, f *ast.File, src []byte) *clockReader {
	info := &types.Info{Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: noImports{}, Error: func(error) {}}
	conf.Check(f.Name.Name, fset, []*ast.File{f}, info) // errors expected: the imports are faked
	c := &clockReader{fset: fset, file: f, src: src, info: info, vars: map[types.Object]kind{}}
	c.learn()
	return c
}

// learn gives each local variable the kind of what it is set to, until
// nothing changes (a variable may be set from one declared above it).
func (c *clockReader) learn() {
	for changed := true; changed; {
		changed = false
		set := func(lhs ast.Expr, rhs ast.Expr) {
			id, ok := lhs.(*ast.Ident)
			if !ok {
				return
			}
			obj := c.info.Defs[id]
			if obj == nil {
				obj = c.info.Uses[id]
			}
			if obj == nil {
				return
			}
			if k := c.kindOf(rhs); k > c.vars[obj] {
				c.vars[obj] = k
				changed = true
			}
		}
		ast.Inspect(c.file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.AssignStmt:
				if len(n.Lhs) == len(n.Rhs) {
					for i := range n.Lhs {
						set(n.Lhs[i], n.Rhs[i])
					}
				}
			case *ast.ValueSpec:
				if len(n.Names) == len(n.Values) {
					for i := range n.Names {
						set(n.Names[i], n.Values[i])
					}
				}
			}
			return true
		})
	}
}

// timeFunc is the name of a function of package time that e calls, or "".
func (c *clockReader) timeFunc(e *ast.CallExpr) string {
	sel, ok := e.Fun.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	x, ok := sel.X.(*ast.Ident)
	if !ok {
		return ""
	}
	if pn, ok := c.info.Uses[x].(*types.PkgName); ok && pn.Imported().Path() == "time" {
		return sel.Sel.Name
	}
	return ""
}

// kindOf is what e is.
func (c *clockReader) kindOf(e ast.Expr) kind {
	switch e := e.(type) {
	case *ast.ParenExpr:
		return c.kindOf(e.X)
	case *ast.Ident:
		if obj := c.info.Uses[e]; obj != nil {
			return c.vars[obj]
		}
	case *ast.UnaryExpr:
		switch k := c.kindOf(e.X); {
		case e.Op == token.ADD:
			return k
		case e.Op == token.SUB && isMeasured(k):
			return measured // turned round
		}
	case *ast.BinaryExpr:
		x, y := c.kindOf(e.X), c.kindOf(e.Y)
		switch {
		case !isMeasured(x) && !isMeasured(y):
		case x == measured || y == measured:
			return measured
		case e.Op == token.ADD || e.Op == token.MUL:
			return elapsed // took + d, 2 * took, took + took
		case (e.Op == token.SUB || e.Op == token.QUO || e.Op == token.REM) && !isMeasured(y):
			return elapsed // took - d, took / n
		default:
			return measured // d - took, a / b
		}
	case *ast.SelectorExpr:
		if e.Sel.Name == "Elapsed" {
			return elapsed
		}
	case *ast.CallExpr:
		switch c.timeFunc(e) {
		case "Now":
			return reading
		case "Since":
			return elapsed
		case "Until":
			return measured // what is left: it shrinks when the machine is slow
		case "Duration":
			if len(e.Args) == 1 {
				if k := c.kindOf(e.Args[0]); isMeasured(k) {
					return k
				}
			}
		}
		// A conversion, float64(took): the kind of what it converts.
		if id, ok := e.Fun.(*ast.Ident); ok && len(e.Args) == 1 {
			if _, ok := c.info.Uses[id].(*types.TypeName); ok {
				return c.kindOf(e.Args[0])
			}
		}
		sel, ok := e.Fun.(*ast.SelectorExpr)
		if !ok {
			return other
		}
		if sel.Sel.Name == "Elapsed" {
			return elapsed
		}
		switch recv := c.kindOf(sel.X); sel.Sel.Name {
		case "Add", "AddDate":
			if recv == reading || recv == deadline {
				return deadline
			}
		case "Round", "Truncate", "UTC", "Local", "In":
			return recv
		case "Abs", "Seconds", "Milliseconds", "Microseconds", "Nanoseconds", "Minutes", "Hours":
			if isMeasured(recv) {
				return recv
			}
		case "Sub":
			// end.Sub(start), time.Now().Sub(start): elapsed. Any other
			// Sub of a reading (deadline.Sub(time.Now()), what is left, or
			// a time stamp less a reading) has no direction the rule knows.
			if recv == reading {
				return elapsed
			}
			if recv == deadline {
				return measured
			}
			if len(e.Args) == 1 {
				if k := c.kindOf(e.Args[0]); k == reading || k == deadline {
					return measured
				}
			}
		}
	}
	return other
}

// bounds are the file's offenders.
func (c *clockReader) bounds() []bound {
	var out []bound
	for _, d := range c.file.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil || strings.HasPrefix(fn.Name.Name, "Benchmark") {
			continue
		}
		var stack []ast.Node
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if n == nil {
				stack = stack[:len(stack)-1]
				return true
			}
			stack = append(stack, n)
			switch n := n.(type) {
			case *ast.CallExpr:
				if c.timeFunc(n) == "Now" {
					c.readings++
				}
			case *ast.IfStmt:
				if polling(stack[:len(stack)-1]) {
					return true
				}
				if fails(n.Body) {
					out = append(out, c.condBounds(n.Cond, true)...)
				}
				if n.Else != nil && fails(n.Else) {
					out = append(out, c.condBounds(n.Cond, false)...)
				}
			case *ast.SwitchStmt:
				if n.Tag != nil || polling(stack[:len(stack)-1]) {
					return true
				}
				for _, s := range n.Body.List {
					cc := s.(*ast.CaseClause)
					if fails(&ast.BlockStmt{List: cc.Body}) {
						for _, e := range cc.List {
							out = append(out, c.condBounds(e, true)...)
						}
					}
				}
			}
			return true
		})
	}
	return out
}

// condBounds are the bounds in cond, which fails the test when it is
// failsIf.
func (c *clockReader) condBounds(cond ast.Expr, failsIf bool) []bound {
	switch e := cond.(type) {
	case *ast.ParenExpr:
		return c.condBounds(e.X, failsIf)
	case *ast.UnaryExpr:
		if e.Op == token.NOT {
			return c.condBounds(e.X, !failsIf)
		}
	case *ast.BinaryExpr:
		switch e.Op {
		case token.LAND, token.LOR:
			return append(c.condBounds(e.X, failsIf), c.condBounds(e.Y, failsIf)...)
		case token.LSS, token.GTR, token.LEQ, token.GEQ:
			kx, ky := c.kindOf(e.X), c.kindOf(e.Y)
			greater := e.Op == token.GTR || e.Op == token.GEQ // X above Y
			switch {
			case isMeasured(kx) && isMeasured(ky):
				return []bound{c.bound(e, "compares two measured times")}
			case kx == measured || ky == measured:
				return []bound{c.bound(e, "compares a measured time to a bound")}
			// An elapsed time too long: X above Y fails with X elapsed, or
			// X above Y passes with Y elapsed.
			case kx == elapsed && greater == failsIf, ky == elapsed && greater != failsIf:
				return []bound{c.bound(e, "fails when a measured time is too long")}
			}
		}
	case *ast.CallExpr:
		sel, ok := e.Fun.(*ast.SelectorExpr)
		if !ok || len(e.Args) != 1 || sel.Sel.Name != "After" && sel.Sel.Name != "Before" {
			return nil
		}
		x, y := c.kindOf(sel.X) == deadline, c.kindOf(e.Args[0]) == deadline
		after := sel.Sel.Name == "After" // X later than Y
		switch {
		case x && y:
			return []bound{c.bound(e, "compares two deadlines")}
		case y && after == failsIf, x && after != failsIf:
			return []bound{c.bound(e, "fails when a time is past a deadline on the machine's clock")}
		}
	}
	return nil
}

func (c *clockReader) bound(e ast.Expr, why string) bound {
	text := types.ExprString(e)
	if start, end := c.fset.Position(e.Pos()).Offset, c.fset.Position(e.End()).Offset; end <= len(c.src) {
		text = string(c.src[start:end])
	}
	return bound{pos: e.Pos(), why: fmt.Sprintf("`%s` %s: a bound on the machine's speed", text, why)}
}

// fails reports whether n fails the test: it calls Error, Errorf, Fatal or
// Fatalf with an argument (err.Error() has none), or Fail or FailNow.
func fails(n ast.Node) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || found {
			return !found
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		switch sel.Sel.Name {
		case "Error", "Errorf", "Fatal", "Fatalf":
			found = len(call.Args) > 0
		case "Fail", "FailNow":
			found = true
		}
		return !found
	})
	return found
}

// polling reports whether the innermost loop around the node whose
// ancestors are stack (within its function) is a for statement that
// sleeps, receives or selects between its tries.
func polling(stack []ast.Node) bool {
	for i := len(stack) - 1; i >= 0; i-- {
		switch n := stack[i].(type) {
		case *ast.FuncLit:
			return false
		case *ast.RangeStmt:
			return false
		case *ast.ForStmt:
			return waits(n.Body) || n.Post != nil && waits(n.Post)
		}
	}
	return false
}

// waits reports whether n, outside the function literals in it, sleeps,
// receives from a channel or selects.
func waits(n ast.Node) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.SelectStmt:
			found = true
		case *ast.UnaryExpr:
			found = found || n.Op == token.ARROW
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Sleep" {
				found = true
			}
		}
		return !found
	})
	return found
}

// testWallClockRule pins the rule on small tests: what is a bound and what
// is a wait, an injected clock, an ordering or a benchmark.
func testWallClockRule(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
		want int // bounds found
	}{
		{"time.Since above a limit", `start := time.Now(); run(); if time.Since(start) > 5*time.Second { t.Errorf("slow") }`, 1},
		{"a measured variable in the if's init", `start := time.Now(); run(); if took := time.Since(start); took > time.Second { t.Fatal(took) }`, 1},
		{"time.Now().Sub, the limit on the left", `s := time.Now(); run(); d := time.Now().Sub(s); if time.Second < d { t.Error("slow") }`, 1},
		{"a reading's Sub, seconds", `s := time.Now(); run(); e := time.Now(); if e.Sub(s).Seconds() >= 1 { t.Error("slow") }`, 1},
		{"the failing branch is the else", `s := time.Now(); run(); if time.Since(s) <= time.Second { ok() } else { t.Error("slow") }`, 1},
		{"negated", `s := time.Now(); run(); if !(time.Since(s) < time.Second) { t.Error("slow") }`, 1},
		{"in an or", `s := time.Now(); err := run(); if err != nil || time.Since(s) > time.Second { t.Fatalf("%v", err) }`, 1},
		{"a result's Elapsed", `res := run(); if res.Elapsed > time.Minute { t.Error("slow") }`, 1},
		{"two measured times", `a := time.Now(); run(); x := time.Since(a); b := time.Now(); run(); if time.Since(b) > x { t.Error("slower") }`, 1},
		{"what time.Until leaves", `dl := time.Now().Add(time.Second); run(); if time.Until(dl) < 0 { t.Error("late") }`, 1},
		{"a deadline less a reading", `dl := time.Now().Add(time.Second); run(); if left := dl.Sub(time.Now()); left <= 0 { t.Error("late") }`, 1},
		{"a time stamp less a reading", `s := time.Now(); at := run(); if at.Sub(s) < 5*time.Second { t.Error("stamped late?") }`, 1},
		{"an elapsed time turned round", `s := time.Now(); run(); if -time.Since(s) < -time.Second { t.Error("slow") }`, 1},
		{"a sum of elapsed times", `s := time.Now(); run(); a := time.Since(s); run(); if a+time.Since(s) > 2*time.Second { t.Error("slow") }`, 1},
		{"a switch case", `s := time.Now(); run(); switch { case time.Since(s) > time.Second: t.Error("slow") }`, 1},
		{"past a deadline after the run", `dl := time.Now().Add(time.Second); run(); if time.Now().After(dl) { t.Error("late") }`, 1},
		{"a range over cases is not a poll", `for _, c := range cases { s := time.Now(); <-c.done; if time.Since(s) > time.Second { t.Error("slow") } }`, 1},
		{"the time package renamed", `s := stdtime.Now(); run(); if stdtime.Since(s) > stdtime.Second { t.Error("slow") }`, 1},

		{"a lower bound on a reading's Sub", `s := time.Now(); run(); if time.Now().Sub(s).Milliseconds() < 50 { t.Error("too fast") }`, 0},
		{"a lower bound", `s := time.Now(); run(); if took := time.Since(s); took < 50*time.Millisecond { t.Errorf("took %v", took) }`, 0},
		{"before a deadline is a lower bound", `dl := time.Now().Add(time.Second); run(); if time.Now().Before(dl) { t.Error("too soon") }`, 0},
		{"an injected clock", `start := clock.Now(); run(); if clock.Now().Sub(start) > time.Minute { t.Error("slow") }`, 0},
		{"a reading only logged", `s := time.Now(); run(); if took := time.Since(s); took > time.Second { t.Logf("slow: %v", took) }`, 0},
		{"err.Error() fails nothing", `s := time.Now(); err := run(); if time.Since(s) > time.Second { log(err.Error()) }`, 0},
		{"a select on time.After", `select { case <-done: case <-time.After(time.Minute): t.Fatal("never ended") }`, 0},
		{"a poll loop's give-up", `dl := time.Now().Add(time.Minute); for !ready() { if time.Now().After(dl) { t.Fatal("never ready") }; time.Sleep(time.Millisecond) }`, 0},
		{"a poll loop's give-up on time.Since", `s := time.Now(); for { if ready() { break }; if time.Since(s) > time.Minute { t.Fatal("never ready") }; <-tick }`, 0},
		{"an ordering of time stamps", `s := time.Now(); at := run(); if at.Before(s) { t.Error("stamped before the run") }`, 0},
		{"a shadowed name", `took := time.Since(time.Now()); _ = took; func() { took := want(); if took > time.Second { t.Error(took) } }()`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "package p\n\nimport (\n\t\"time\"\n\tstdtime \"time\"\n)\n\nfunc TestX(t *testing.T) {\n\t" + tc.body + "\n}\n\nfunc BenchmarkX(b *testing.B) {\n\ts := time.Now()\n\tif time.Since(s) > time.Second {\n\t\tb.Fatal(\"benchmarks are not read\")\n\t}\n}\n"
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "x_test.go", src, parser.SkipObjectResolution)
			if err != nil {
				t.Fatalf("parse: %v\n%s", err, src)
			}
			got := newClockReader(fset, f, []byte(src)).bounds()
			if len(got) != tc.want {
				var why []string
				for _, b := range got {
					why = append(why, b.why)
				}
				t.Errorf("%d bound(s) %q, want %d in:\n%s", len(got), why, tc.want, tc.body)
			}
		})
	}
}
