package cli

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// maxRunLines bounds a verb's run functions: a verb reads its flags and
// calls into the package that does the work.
const maxRunLines = 60

// factoryFile is the one file that builds the verbs' parts.
const factoryFile = "factory.go"

// builders are what only the Factory may call or write outside tests: the
// constructors of a GitHub client, a model client, a Job's Kit, an
// isolation boundary, a shell policy and a configuration, keyed by import
// path, and the Env methods that find the token and build the client.
var (
	builderCalls = map[string][]string{
		"github.com/roadmap-dev/roadmap/internal/github": {"New"},
		"github.com/roadmap-dev/roadmap/internal/llm":    {"New"},
		"github.com/roadmap-dev/roadmap/internal/job":    {"Open", "OpenBoundary", "NewTier"},
		"github.com/roadmap-dev/roadmap/internal/policy": {"ParseNode"},
		"github.com/roadmap-dev/roadmap/internal/config": {"Load", "LoadExplicit"},
	}
	builderLiterals = map[string][]string{
		"github.com/roadmap-dev/roadmap/internal/github": {"Options"},
		"github.com/roadmap-dev/roadmap/internal/llm":    {"Config"},
		"github.com/roadmap-dev/roadmap/internal/agent":  {"Tier"},
	}
	builderMethods = []string{"gitHubClient", "token"}
)

// TestVerbsThin: no run function of internal/cli (a name starting with
// run or Run, or ending in Run: the verbs' entries and their bodies) spans
// more than maxRunLines lines; and no file but factory.go builds a GitHub
// client, a model, a Job's Kit, a boundary, a policy or a configuration
// (builderCalls, builderLiterals, builderMethods): every verb that talks to
// GitHub or a model gets it from the one Factory.
func TestVerbsThin(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) < 10 {
		t.Fatalf("glob: %v (%d files)", err, len(files))
	}
	fset := token.NewFileSet()
	var parsed []*ast.File
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, f)
	}
	runs := 0
	for _, f := range parsed {
		runs += len(runFuncs(f))
		for _, p := range thinProblems(fset, f) {
			t.Error(p)
		}
	}
	if runs < 20 {
		t.Fatalf("only %d run functions found: is the rule reading the verbs?", runs)
	}
}

// TestVerbsThinCatches: each rule of TestVerbsThin finds what it names.
func TestVerbsThinCatches(t *testing.T) {
	long := "func runLong() {\n" + strings.Repeat("\tprintln()\n", maxRunLines) + "}\n"
	for _, c := range []struct {
		name, file, src, want string
	}{
		{"long run", "long.go", long, "long.go:3: runLong spans 62 lines"},
		{"long body", "long.go", strings.Replace(long, "runLong", "wakeRun", 1), "wakeRun spans 62 lines"},
		{"short", "short.go", "func runShort() { println() }\n", ""},
		{"github client", "verb.go", `import gh "github.com/roadmap-dev/roadmap/internal/github"
func f() { gh.New(gh.Options{}) }`, "verb.go:4: calls github.New"},
		{"model", "verb.go", `import "github.com/roadmap-dev/roadmap/internal/llm"
func f() { llm.New(llm.Config{}) }`, "calls llm.New"},
		{"tier", "verb.go", `import "github.com/roadmap-dev/roadmap/internal/agent"
var t = agent.Tier{Name: "x"}`, "writes a agent.Tier literal"},
		{"job", "verb.go", `import "github.com/roadmap-dev/roadmap/internal/job"
func f() { job.Open(nil, job.Setup{}) }`, "calls job.Open"},
		{"config", "verb.go", `import "github.com/roadmap-dev/roadmap/internal/config"
func f() { config.Load("x") }`, "calls config.Load"},
		{"client method", "verb.go", `func f(e *Env) { e.gitHubClient(nil, 0) }`, "calls gitHubClient"},
		{"factory", factoryFile, `import "github.com/roadmap-dev/roadmap/internal/llm"
func f() { llm.New(llm.Config{}) }`, ""},
		{"another package's New", "verb.go", `import "github.com/roadmap-dev/roadmap/internal/llm"
func f() { llm.NewReplay(nil) }`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, c.file, "package cli\n\n"+c.src, 0)
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join(thinProblems(fset, f), "\n")
			switch {
			case c.want == "" && got != "":
				t.Errorf("problems %q, want none", got)
			case c.want != "" && !strings.Contains(got, c.want):
				t.Errorf("problems %q, want one saying %q", got, c.want)
			}
		})
	}
}

// runFuncs are f's run functions.
func runFuncs(f *ast.File) []*ast.FuncDecl {
	var out []*ast.FuncDecl
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		n := fd.Name.Name
		if strings.HasPrefix(strings.ToLower(n), "run") || strings.HasSuffix(n, "Run") {
			out = append(out, fd)
		}
	}
	return out
}

// thinProblems are f's breaches of TestVerbsThin's rules.
func thinProblems(fset *token.FileSet, f *ast.File) []string {
	var out []string
	for _, fd := range runFuncs(f) {
		start, end := fset.Position(fd.Pos()), fset.Position(fd.End())
		if n := end.Line - start.Line + 1; n > maxRunLines {
			out = append(out, fmt.Sprintf("%s:%d: %s spans %d lines, more than %d: move its work into the package it calls, or into small named functions",
				start.Filename, start.Line, fd.Name.Name, n, maxRunLines))
		}
	}
	if filepath.Base(fset.Position(f.Pos()).Filename) == factoryFile {
		return out
	}
	imports := map[string]string{} // local name → import path
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		name := filepath.Base(path)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		imports[name] = path
	}
	named := func(e ast.Expr, table map[string][]string) (string, bool) {
		sel, ok := e.(*ast.SelectorExpr)
		if !ok {
			return "", false
		}
		id, ok := sel.X.(*ast.Ident)
		if !ok {
			return "", false
		}
		path := imports[id.Name]
		for _, n := range table[path] {
			if sel.Sel.Name == n {
				return filepath.Base(path) + "." + n, true
			}
		}
		return "", false
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if n == nil {
			return false
		}
		pos := fset.Position(n.Pos())
		switch n := n.(type) {
		case *ast.CallExpr:
			if name, ok := named(n.Fun, builderCalls); ok {
				out = append(out, fmt.Sprintf("%s:%d: calls %s outside %s: take it from the Factory", pos.Filename, pos.Line, name, factoryFile))
			}
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
				for _, m := range builderMethods {
					if sel.Sel.Name == m {
						out = append(out, fmt.Sprintf("%s:%d: calls %s outside %s: take the client from the Factory", pos.Filename, pos.Line, m, factoryFile))
					}
				}
			}
		case *ast.CompositeLit:
			if name, ok := named(n.Type, builderLiterals); ok {
				out = append(out, fmt.Sprintf("%s:%d: writes a %s literal outside %s: take it from the Factory", pos.Filename, pos.Line, name, factoryFile))
			}
		}
		return true
	})
	return out
}
