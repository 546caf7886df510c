package cilayout

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"gopkg.in/yaml.v3"
)

var update = flag.Bool("update", false, "rewrite testdata/tests.golden to the tests the code has now")

const golden = "testdata/tests.golden"

// TestNothingDroppedFromCI lists, from the code, every top-level test of
// every package, every fault kind, every mutant and every end-to-end
// scenario, and fails on any that runs only on a schedule without something
// that stands for it on every change (docs/testing.md, "What a change can no
// longer break unseen"). "Per change" is .ci/run: `make test` (every package
// of `go list ./...` through scripts/unit.sh), `make e2e`, `make mutants`,
// the fault suites' covers.
func TestNothingDroppedFromCI(t *testing.T) {
	root := moduleRoot(t)
	l := &layout{root: root, byName: map[string]test{}, scripts: map[string]string{}, workflows: map[string]workflow{}}
	l.loadTests(t)
	if *update {
		writeGolden(t, l.tests)
	}
	l.load(t)
	l.checkGolden(t)
	l.checkPerChangeTests(t)
	l.checkE2E(t)
	l.checkFaults(t)
	l.checkMutants(t)
	l.checkSchedules(t)
	l.checkPackagesRun(t)

	var perChange int
	for _, tc := range l.tests {
		if l.perChange(tc) == "" {
			perChange++
		}
	}
	t.Logf("tests: %d in %d packages, %d of them on every change; e2e scenarios: %d, %d scheduled with stand-ins; fault kinds: %d in process, %d process (%d pending); mutants: %d",
		len(l.tests), len(l.pkgs), perChange, len(l.scenarios), len(l.scheduled), len(l.kinds), len(l.procKinds), len(l.pending), len(l.mutants))
}

// test is one top-level test function.
type test struct {
	Pkg  string // the package's directory, relative to the module root ("." for the root)
	Name string
	// gates are the environment variables whose absence skips the test
	// (an if on os.Getenv/os.LookupEnv whose body skips), its own or a
	// same-package helper's it calls.
	gates []string
	// short: it skips under -short; scenario: it calls requireAct (an e2e
	// scenario); body: its source text, for the kinds it names.
	short, scenario bool
	body            string
}

func (tc test) String() string { return tc.Pkg + "." + tc.Name }

type layout struct {
	root      string
	pkgs      []string
	tests     []test
	byName    map[string]test // "pkg.Test"
	scenarios []string        // e2e scenarios (Test functions that call requireAct)
	scheduled map[string][]string
	// perChangeText is what runs on every change, as text: .ci/run, the
	// Makefile, scripts/*.sh.
	ciRun, makefile string
	scripts         map[string]string
	kinds           []string // in-process fault kinds (kinds, stageKinds)
	procKinds       []string // process fault kinds
	pending         []string // process kinds pending a mend
	mutants         []mutant
	workflows       map[string]workflow
}

type mutant struct{ Name, File, Pkg, Run string }

type workflow struct {
	scheduled bool
	text      string
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root: %v", err)
	}
	return root
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// load reads the rest: what runs per change and on a schedule, the e2e
// schedule table, the fault kinds and the mutants.
func (l *layout) load(t *testing.T) {
	t.Helper()
	root := l.root
	l.ciRun = read(t, filepath.Join(root, ".ci", "run"))
	l.makefile = read(t, filepath.Join(root, "Makefile"))
	shs, _ := filepath.Glob(filepath.Join(root, "scripts", "*.sh"))
	for _, p := range shs {
		l.scripts[filepath.Base(p)] = read(t, p)
	}
	l.scheduled = parseScheduled(t, filepath.Join(root, "e2e", "scheduled_test.go"))
	l.loadFaults(t)
	l.mutants = parseMutants(t, filepath.Join(root, "tools", "mutants", "list.go"))
	wfs, _ := filepath.Glob(filepath.Join(root, ".github", "workflows", "*.yml"))
	for _, p := range wfs {
		text := read(t, p)
		var doc struct {
			On yaml.Node `yaml:"on"`
		}
		if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		l.workflows[filepath.Base(p)] = workflow{scheduled: hasKey(&doc.On, "schedule"), text: text}
	}
}

func hasKey(n *yaml.Node, key string) bool {
	if n.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return true
		}
	}
	return false
}

// loadTests lists the packages `go list ./...` finds (what scripts/unit.sh
// tests) and their top-level tests, from the files go test compiles here.
func (l *layout) loadTests(t *testing.T) {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{.Dir}}|{{join .GoFiles ","}}|{{join .TestGoFiles ","}}|{{join .XTestGoFiles ","}}`, "./...")
	cmd.Dir = l.root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "|")
		dir := f[0]
		rel, err := filepath.Rel(l.root, dir)
		if err != nil {
			t.Fatal(err)
		}
		rel = filepath.ToSlash(rel)
		l.pkgs = append(l.pkgs, rel)
		split := func(s string) []string {
			if s == "" {
				return nil
			}
			return strings.Split(s, ",")
		}
		// Internal and external test packages are compiled apart; each
		// resolves its own helpers.
		for _, files := range [][]string{append(split(f[1]), split(f[2])...), split(f[3])} {
			for _, tc := range testsIn(t, dir, rel, files) {
				l.tests = append(l.tests, tc)
				l.byName[tc.String()] = tc
				if tc.scenario {
					l.scenarios = append(l.scenarios, tc.Name)
				}
			}
		}
	}
	slices.SortFunc(l.tests, func(a, b test) int { return strings.Compare(a.String(), b.String()) })
}

// testsIn parses files of one package and returns its tests, with their
// skip gates.
func testsIn(t *testing.T, dir, rel string, files []string) []test {
	t.Helper()
	fset := token.NewFileSet()
	funcs := map[string]*ast.FuncDecl{}
	src := map[*ast.FuncDecl][]byte{}
	consts := map[string]string{}
	var order []*ast.FuncDecl
	for _, name := range files {
		path := filepath.Join(dir, name)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, path, b, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					funcs[d.Name.Name] = d
					src[d] = b[fset.Position(d.Pos()).Offset:fset.Position(d.End()).Offset]
					order = append(order, d)
				}
			case *ast.GenDecl:
				stringConsts(d, consts)
			}
		}
	}
	var out []test
	for _, fd := range order {
		if !isTest(fd) || !strings.HasSuffix(fset.Position(fd.Pos()).Filename, "_test.go") {
			continue
		}
		tc := test{Pkg: rel, Name: fd.Name.Name, body: string(src[fd])}
		seen := map[string]bool{}
		var walk func(fd *ast.FuncDecl)
		walk = func(fd *ast.FuncDecl) {
			if seen[fd.Name.Name] {
				return
			}
			seen[fd.Name.Name] = true
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.IfStmt:
					if !skips(n.Body) {
						return true
					}
					if mentions(n.Cond, "scheduled") || n.Init != nil && mentions(n.Init, "scheduled") {
						return true // the e2e schedule table, checked by checkE2E
					}
					if isShortCall(n.Cond) {
						tc.short = true
					}
					tc.gates = append(tc.gates, envReads(n.Cond, consts)...)
				case *ast.CallExpr:
					if id, ok := n.Fun.(*ast.Ident); ok {
						if id.Name == "requireAct" {
							tc.scenario = true
						}
						if callee, ok := funcs[id.Name]; ok && callee.Body != nil {
							walk(callee)
						}
					}
				}
				return true
			})
		}
		walk(fd)
		slices.Sort(tc.gates)
		tc.gates = slices.Compact(tc.gates)
		out = append(out, tc)
	}
	return out
}

// isTest: func TestX(t *testing.T), as go test finds it.
func isTest(fd *ast.FuncDecl) bool {
	name := fd.Name.Name
	if fd.Recv != nil || !strings.HasPrefix(name, "Test") || name == "TestMain" {
		return false
	}
	if rest := strings.TrimPrefix(name, "Test"); rest != "" && unicode.IsLower([]rune(rest)[0]) {
		return false
	}
	if fd.Type.Params == nil || len(fd.Type.Params.List) != 1 {
		return false
	}
	star, ok := fd.Type.Params.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "T"
}

func stringConsts(d *ast.GenDecl, into map[string]string) {
	if d.Tok != token.CONST {
		return
	}
	for _, s := range d.Specs {
		vs := s.(*ast.ValueSpec)
		for i, n := range vs.Names {
			if i < len(vs.Values) {
				if v, ok := stringLit(vs.Values[i]); ok {
					into[n.Name] = v
				}
			}
		}
	}
}

func stringLit(e ast.Expr) (string, bool) {
	bl, ok := e.(*ast.BasicLit)
	if !ok || bl.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(bl.Value)
	return s, err == nil
}

// skips: the block calls a Skip method (t.Skip, t.Skipf, t.SkipNow).
func skips(b *ast.BlockStmt) bool {
	found := false
	ast.Inspect(b, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			if sel, ok := c.Fun.(*ast.SelectorExpr); ok && strings.HasPrefix(sel.Sel.Name, "Skip") {
				found = true
			}
		}
		return !found
	})
	return found
}

func mentions(e ast.Node, name string) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && id.Name == name {
			found = true
		}
		return !found
	})
	return found
}

func isShortCall(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			if sel, ok := c.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Short" {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "testing" {
					found = true
				}
			}
		}
		return !found
	})
	return found
}

// envReads are the variables os.Getenv or os.LookupEnv read in e.
func envReads(e ast.Expr, consts map[string]string) []string {
	var out []string
	ast.Inspect(e, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok || len(c.Args) != 1 {
			return true
		}
		sel, ok := c.Fun.(*ast.SelectorExpr)
		if !ok || (sel.Sel.Name != "Getenv" && sel.Sel.Name != "LookupEnv") {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "os" {
			return true
		}
		if v, ok := stringLit(c.Args[0]); ok {
			out = append(out, v)
		} else if id, ok := c.Args[0].(*ast.Ident); ok {
			if v, ok := consts[id.Name]; ok {
				out = append(out, v)
			} else {
				out = append(out, "(the value of "+id.Name+")")
			}
		}
		return true
	})
	return out
}

// perChangeText is every file whose commands run on every change, less
// their comment lines: a command quoted in a comment runs nothing.
func (l *layout) perChangeText() string {
	var b strings.Builder
	for _, text := range append([]string{l.ciRun, l.makefile}, sortedValues(l.scripts)...) {
		for _, line := range strings.SplitAfter(text, "\n") {
			if !strings.HasPrefix(strings.TrimSpace(line), "#") {
				b.WriteString(line)
			}
		}
	}
	return b.String()
}

func sortedValues(m map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[k])
	}
	return out
}

// scheduleSwitches are the environment variables that turn on what runs
// only on a schedule: the Makefile passes them from a make variable that is
// 0 per change and 1 in a scheduled workflow, so their assignment in the
// Makefile proves nothing. A test may be gated on one only through the e2e
// schedule table (checked with its stand-ins).
var scheduleSwitches = []string{"ROADMAP_E2E_ALL"}

// setPerChange: a per-change file gives the variable a value (NAME=…).
func (l *layout) setPerChange(name string) bool {
	if slices.Contains(scheduleSwitches, name) {
		return false
	}
	re := regexp.MustCompile(`(^|[^A-Za-z0-9_])` + regexp.QuoteMeta(name) + `=[^\s;]`)
	return re.MatchString(l.perChangeText())
}

// perChange says why tc does not run on every change, or "" when it does.
func (l *layout) perChange(tc test) string {
	if tc.Pkg == "e2e" && tc.scenario {
		if _, ok := l.scheduled[tc.Name]; ok {
			return "an e2e scenario listed in e2e/scheduled_test.go: it runs nightly"
		}
	}
	for _, g := range tc.gates {
		if slices.Contains(scheduleSwitches, g) {
			return fmt.Sprintf("it skips unless %s, a schedule's switch, is set, and not through e2e/scheduled_test.go", g)
		}
		if !l.setPerChange(g) {
			return fmt.Sprintf("it skips unless %s is set, and nothing .ci/run runs (.ci/run, the Makefile, scripts/*.sh) sets it", g)
		}
	}
	if tc.short && strings.Contains(l.scripts["unit.sh"], "-short") {
		return "it skips under -short, and scripts/unit.sh passes -short"
	}
	for _, p := range l.skipPatterns() {
		if p.MatchString(tc.Name) && !slices.ContainsFunc(l.runPatterns(), func(r *regexp.Regexp) bool { return r.MatchString(tc.Name) }) {
			return fmt.Sprintf("a per-change go test skips it (-skip %q) and none runs it (-run)", p.String())
		}
	}
	return ""
}

var skipRE = regexp.MustCompile(`-skip[ =]'([^']*)'`)
var runRE = regexp.MustCompile(`-run[ =]'([^']*)'`)

func (l *layout) patterns(re *regexp.Regexp) []*regexp.Regexp {
	var out []*regexp.Regexp
	for _, m := range re.FindAllStringSubmatch(l.perChangeText(), -1) {
		p := strings.ReplaceAll(m[1], "$$", "$") // make's escape
		if r, err := regexp.Compile(p); err == nil {
			out = append(out, r)
		}
	}
	return out
}

func (l *layout) skipPatterns() []*regexp.Regexp { return l.patterns(skipRE) }
func (l *layout) runPatterns() []*regexp.Regexp  { return l.patterns(runRE) }

// checkGolden: every test the check started from is still in the code.
func (l *layout) checkGolden(t *testing.T) {
	b, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test ./tools/cilayout -run TestNothingDroppedFromCI -update writes it)", err)
	}
	var gone []string
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		pkg, name, _ := strings.Cut(line, " ")
		if _, ok := l.byName[pkg+"."+name]; !ok {
			gone = append(gone, pkg+"."+name)
		}
	}
	for _, g := range gone {
		t.Errorf("test %s is in %s but no longer in the code: if it was removed or merged on purpose, run -update so the golden file's diff shows it", g, golden)
	}
}

func writeGolden(t *testing.T, tests []test) {
	var b strings.Builder
	b.WriteString("# The top-level tests of every package `make test` runs, as TestNothingDroppedFromCI\n")
	b.WriteString("# last saw them (go test ./tools/cilayout -run TestNothingDroppedFromCI -update).\n")
	b.WriteString("# A line gone from this file in a change is a test the change removed.\n")
	for _, tc := range tests {
		fmt.Fprintf(&b, "%s %s\n", tc.Pkg, tc.Name)
	}
	if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkPerChangeTests: every test runs on every change, but the e2e
// scenarios the schedule table lists (checked with their stand-ins below).
func (l *layout) checkPerChangeTests(t *testing.T) {
	for _, tc := range l.tests {
		if why := l.perChange(tc); why != "" && !(tc.scenario && l.scheduled[tc.Name] != nil) {
			t.Errorf("test %s runs only on a schedule, with nothing standing for it on every change: %s", tc, why)
		}
	}
	if !strings.Contains(l.ciRun, "make test") {
		t.Error(".ci/run no longer runs make test")
	}
}

// checkE2E: every scenario runs on every change, or is listed with stand-ins
// that do.
func (l *layout) checkE2E(t *testing.T) {
	if len(l.scenarios) == 0 {
		t.Error("no e2e scenario found (Test functions of e2e that call requireAct)")
	}
	if !regexp.MustCompile(`(?m)^\s*measure [^\n]*make e2e\b`).MatchString(l.ciRun) {
		t.Error(".ci/run no longer runs make e2e: every scenario would run only on a schedule")
	}
	for _, name := range slices.Sorted(maps.Keys(l.scheduled)) {
		stand := l.scheduled[name]
		tc, ok := l.byName["e2e."+name]
		if !ok || !tc.scenario {
			t.Errorf("e2e/scheduled_test.go lists %s, which is no e2e scenario", name)
			continue
		}
		if len(stand) == 0 {
			t.Errorf("e2e scenario %s runs only nightly and nothing stands for it on every change (e2e/scheduled_test.go)", name)
		}
		for _, s := range stand {
			st, ok := l.byName[s]
			switch {
			case !ok:
				t.Errorf("e2e scenario %s: its stand-in %s is no test (e2e/scheduled_test.go names tests as dir.TestName)", name, s)
			case l.perChange(st) != "":
				t.Errorf("e2e scenario %s: its stand-in %s does not run on every change either: %s", name, s, l.perChange(st))
			}
		}
	}
}

// loadFaults reads the fault kinds from internal/faults' tables and code,
// and the process kinds from tools/faultproc's.
func (l *layout) loadFaults(t *testing.T) {
	fset := token.NewFileSet()
	for _, name := range []string{"internal/faults/scenarios.go", "internal/faults/stage.go", "tools/faultproc/process.go", "tools/faultproc/issues.go"} {
		f, err := parser.ParseFile(fset, filepath.Join(l.root, filepath.FromSlash(name)), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, s := range gd.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if i >= len(vs.Values) {
						continue
					}
					cl, ok := vs.Values[i].(*ast.CompositeLit)
					if !ok {
						continue
					}
					switch n.Name {
					case "kinds", "stageKinds":
						for _, e := range cl.Elts {
							if v, ok := stringLit(e); ok {
								l.kinds = append(l.kinds, v)
							}
						}
					case "pending":
						for _, e := range cl.Elts {
							if v, ok := stringLit(e.(*ast.KeyValueExpr).Key); ok {
								l.pending = append(l.pending, v)
							}
						}
					}
				}
			}
		}
		if !strings.HasPrefix(name, "tools/faultproc/") {
			continue
		}
		// The process kinds: every Kind of a pscenario the sweep builds.
		ast.Inspect(f, func(n ast.Node) bool {
			kv, ok := n.(*ast.KeyValueExpr)
			if !ok {
				return true
			}
			if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Kind" {
				if v, ok := stringLit(kv.Value); ok && strings.HasPrefix(v, "proc_") && !slices.Contains(l.procKinds, v) {
					l.procKinds = append(l.procKinds, v)
				}
			}
			return true
		})
	}
	if len(l.kinds) == 0 || len(l.procKinds) == 0 {
		t.Fatalf("no fault kinds found in internal/faults and tools/faultproc (in process %d, process %d): the tables moved", len(l.kinds), len(l.procKinds))
	}
}

// checkFaults: every in-process kind is played on every change by
// TestFaultsRun's cover, which fails when a kind of the tables is not
// injected; every process kind by .ci/run's cover of the process suite, or,
// pending a mend, by a per-change test of tools/faultproc that plays it.
func (l *layout) checkFaults(t *testing.T) {
	run, ok := l.byName["internal/faults.TestFaultsRun"]
	switch {
	case !ok:
		t.Errorf("internal/faults.TestFaultsRun is gone: the %d in-process fault kinds run only on a schedule", len(l.kinds))
	case l.perChange(run) != "":
		t.Errorf("internal/faults.TestFaultsRun does not run on every change (%s): the %d in-process fault kinds run only on a schedule", l.perChange(run), len(l.kinds))
	case !strings.Contains(run.body, "kinds") || !strings.Contains(run.body, "stageKinds") || !strings.Contains(run.body, "Injected == 0"):
		t.Error("internal/faults.TestFaultsRun no longer fails on a kind of the tables (kinds, stageKinds) that was not injected")
	}
	if !regexp.MustCompile(`make faults-process\b[^\n]*FAULT_COVER=1`).MatchString(l.ciRun) {
		t.Errorf(".ci/run does not play the process suite's cover (make faults-process FAULT_COVER=1): the %d process kinds would run only on a schedule", len(l.procKinds))
	}
	if !regexp.MustCompile(`(?m)^[^#\n]*make faults-test\b`).MatchString(l.ciRun) {
		t.Error(".ci/run does not play seed 1's cover (make faults-test, TestFaultsRun), which scripts/unit.sh leaves to it")
	}
	for _, k := range l.pending {
		found := false
		for _, tc := range l.tests {
			if tc.Pkg == "tools/faultproc" && l.perChange(tc) == "" && strings.Contains(tc.body, strconv.Quote(k)) {
				found = true
			}
		}
		if !found {
			t.Errorf("process fault kind %s is pending a mend, so the per-change cover skips it, and no per-change test of tools/faultproc plays it", k)
		}
	}
}

// parseMutants reads tools/mutants/list.go's mutations.
func parseMutants(t *testing.T, path string) []mutant {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]string{}
	var list *ast.CompositeLit
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok {
			continue
		}
		stringConsts(gd, consts)
		for _, s := range gd.Specs {
			if vs, ok := s.(*ast.ValueSpec); ok && gd.Tok == token.VAR && len(vs.Names) == 1 && vs.Names[0].Name == "mutations" {
				list, _ = vs.Values[0].(*ast.CompositeLit)
			}
		}
	}
	if list == nil {
		t.Fatalf("%s: no var mutations", path)
	}
	var out []mutant
	for _, e := range list.Elts {
		var m mutant
		for _, el := range e.(*ast.CompositeLit).Elts {
			kv := el.(*ast.KeyValueExpr)
			v, ok := stringLit(kv.Value)
			if id, isID := kv.Value.(*ast.Ident); !ok && isID {
				v = consts[id.Name]
			}
			switch kv.Key.(*ast.Ident).Name {
			case "Name":
				m.Name = v
			case "File":
				m.File = v
			case "Pkg":
				m.Pkg = v
			case "Run":
				m.Run = v
			}
		}
		out = append(out, m)
	}
	return out
}

// checkMutants: per change `make mutants` plays the mutants the change
// touched and checks every mutant's text is in place; what stands for each
// mutant on every change besides is its named tests, which must exist and
// run on every change.
func (l *layout) checkMutants(t *testing.T) {
	if len(l.mutants) == 0 {
		t.Fatal("no mutant found in tools/mutants/list.go")
	}
	if !regexp.MustCompile(`(?m)^\s*measure [^\n]*make mutants\b`).MatchString(l.ciRun) {
		t.Error(".ci/run no longer runs make mutants: every mutant would run only on a schedule")
	}
	if !regexp.MustCompile(`(?m)^mutants:\n\t[^\n]*tools/mutants -changed`).MatchString(l.makefile) {
		t.Error("make mutants no longer plays the mutants the change touched (go run ./tools/mutants -changed)")
	}
	for _, m := range l.mutants {
		if _, err := os.Stat(filepath.Join(l.root, m.File)); err != nil {
			t.Errorf("mutant %q: its file: %v", m.Name, err)
		}
		re, err := regexp.Compile(m.Run)
		if err != nil {
			t.Errorf("mutant %q: -run %q: %v", m.Name, m.Run, err)
			continue
		}
		pkg := strings.TrimSuffix(strings.TrimPrefix(m.Pkg, "./"), "/")
		var named []string
		for _, tc := range l.tests {
			if tc.Pkg == pkg && re.MatchString(tc.Name) {
				named = append(named, tc.Name)
				if why := l.perChange(tc); why != "" {
					t.Errorf("mutant %q: its test %s does not run on every change: %s", m.Name, tc, why)
				}
			}
		}
		if len(named) == 0 {
			t.Errorf("mutant %q: -run %q names no test of %s", m.Name, m.Run, pkg)
		}
	}
}

// checkSchedules: the whole of each sampled suite runs on a schedule.
func (l *layout) checkSchedules(t *testing.T) {
	want := map[string]string{
		"every e2e scenario (make e2e E2E_ALL=1)":               `make e2e\b[^\n]*E2E_ALL=1`,
		"every mutant (make mutants-all)":                       `make mutants-all\b`,
		"whole fault seeds (make faults without FAULT_COVER)":   `make faults(\s+FAULT_SEEDS=\d+)?\s*\n`,
		"every process history (make faults-process --pending)": `make faults-process\b[^\n]*--pending`,
		"every package under -race (make unit RACE_ALL=1)":      `make unit\b[^\n]*RACE_ALL=1`,
		"every platform's release snapshot (release-check-all)": `make release-check-all\b`,
	}
	for what, pat := range want {
		re := regexp.MustCompile(pat)
		found := false
		for _, wf := range l.workflows {
			if wf.scheduled && re.MatchString(wf.text) {
				found = true
			}
		}
		if !found {
			t.Errorf("no scheduled workflow runs %s", what)
		}
	}
}

// parseScheduled reads e2e/scheduled_test.go's scheduled table.
func parseScheduled(t *testing.T, path string) map[string][]string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			continue
		}
		for _, s := range gd.Specs {
			vs := s.(*ast.ValueSpec)
			if len(vs.Names) != 1 || vs.Names[0].Name != "scheduled" {
				continue
			}
			for _, e := range vs.Values[0].(*ast.CompositeLit).Elts {
				kv := e.(*ast.KeyValueExpr)
				name, _ := stringLit(kv.Key)
				out[name] = []string{}
				for _, s := range kv.Value.(*ast.CompositeLit).Elts {
					v, _ := stringLit(s)
					out[name] = append(out[name], v)
				}
			}
		}
	}
	return out
}

// checkPackagesRun: every package scripts/unit.sh takes out of its two jobs of
// small packages (ALONE, NORACE, PURE, PROVING) is tested by name somewhere per
// change: a job of unit.sh, or the recipe of a Makefile target .ci/run runs.
// A package left out of both would run on no change at all.
func (l *layout) checkPackagesRun(t *testing.T) {
	t.Helper()
	unit := l.scripts["unit.sh"]
	named := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^(?:ALONE|NORACE|PROVING|PURE)="([^"]*)"`).FindAllStringSubmatch(unit, -1) {
		for _, w := range strings.Fields(m[1]) {
			if !strings.HasPrefix(w, "$") {
				named[w] = true
			}
		}
	}
	if len(named) == 0 {
		t.Fatal("scripts/unit.sh names no package in ALONE, NORACE or PROVING: has the script changed shape?")
	}
	var where strings.Builder
	for _, line := range strings.Split(unit, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "job ") {
			where.WriteString(line + "\n")
		}
	}
	for _, target := range regexp.MustCompile(`(?m)^[^#\n]*\bmake ([a-z][a-z0-9-]*)`).FindAllStringSubmatch(l.ciRun, -1) {
		where.WriteString(makeRecipe(l.makefile, target[1]))
	}
	for _, p := range slices.Sorted(maps.Keys(named)) {
		if !regexp.MustCompile(`\./` + regexp.QuoteMeta(p) + `(\s|$)`).MatchString(where.String()) {
			t.Errorf("%s is taken out of unit.sh's jobs of small packages but no unit.sh job and no Makefile target .ci/run runs tests it", p)
		}
	}
}

// makeRecipe is the recipe of target in the Makefile: its lines after
// "target:" that start with a tab.
func makeRecipe(makefile, target string) string {
	var b strings.Builder
	in := false
	for _, line := range strings.Split(makefile, "\n") {
		switch {
		case strings.HasPrefix(line, target+":"):
			in = true
		case in && strings.HasPrefix(line, "\t"):
			b.WriteString(line + "\n")
		default:
			in = false
		}
	}
	return b.String()
}
