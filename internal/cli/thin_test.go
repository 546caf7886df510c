package cli

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
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
		// A verb that made its own HTTP requests would reach GitHub or a
		// model past the Factory's token, masker and deadline.
		"net/http": {"Get", "Post", "Head", "PostForm", "NewRequest", "NewRequestWithContext"},
	}
	builderLiterals = map[string][]string{
		"github.com/roadmap-dev/roadmap/internal/github": {"Options"},
		"github.com/roadmap-dev/roadmap/internal/llm":    {"Config"},
		"github.com/roadmap-dev/roadmap/internal/agent":  {"Tier"},
		"net/http": {"Client", "Transport"},
	}
	builderVars    = map[string][]string{"net/http": {"DefaultClient", "DefaultTransport"}}
	builderMethods = []string{"gitHubClient", "token"}
)

// unseamed are the verbs without a runF seam: none of them reaches GitHub,
// a model or the Factory (TestVerbsThin holds them to that). Every other
// verb's run function is one call of its seam, NAMECmd(ctx,
// env.factory(), args, …), directly or through one shared entry (runEval).
var unseamed = map[string]bool{
	"version": true, "mask": true, "record show": true, "faults run": true,
	"dev replay-model": true, "dev fake-github": true,
}

// TestVerbsThin: no run function of internal/cli (a name starting with
// run or Run, or ending in Run: the verbs' entries and their bodies) spans
// more than maxRunLines lines; and no file but factory.go builds a GitHub
// client, a model, a Job's Kit, a boundary, a policy or a configuration
// (builderCalls, builderLiterals, builderVars, builderMethods): every verb
// that talks to GitHub or a model gets it from the one Factory. And every
// verb but the unseamed goes through its runF seam with the Factory
// (seamProblems), so its flag test sees what it would run with.
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
	for _, p := range seamProblems(parsed, 20) {
		t.Error(p)
	}
}

// seamProblems are the verbs of verbs() whose run function does not go
// through a runF seam with the Factory, and the unseamed verbs that reach
// the Factory (a verb that starts talking to GitHub or a model gets a seam).
func seamProblems(files []*ast.File, minVerbs int) []string {
	funcs := map[string]*ast.FuncDecl{}
	for _, f := range files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
				funcs[fd.Name.Name] = fd
			}
		}
	}
	table := verbTable(funcs["verbs"])
	if len(table) < minVerbs {
		return []string{fmt.Sprintf("only %d verbs read from verbs(): is the rule reading the table?", len(table))}
	}
	var out []string
	for name, run := range table {
		fd := funcs[run]
		switch {
		case fd == nil:
			out = append(out, fmt.Sprintf("verb %q: no function %s", name, run))
		case unseamed[name] && callsFactory(fd):
			out = append(out, fmt.Sprintf("verb %q: %s reaches the Factory without a runF seam: give it NAMECmd(ctx, f, args, runF) and a flag test", name, run))
		case !unseamed[name] && !seamed(fd, funcs, 2):
			out = append(out, fmt.Sprintf("verb %q: %s is not one call of its runF seam (NAMECmd(ctx, env.factory(), args, …))", name, run))
		}
	}
	sort.Strings(out)
	return out
}

// verbTable is verb name → run function name, from verbs()'s literal.
func verbTable(fd *ast.FuncDecl) map[string]string {
	out := map[string]string{}
	if fd == nil {
		return out
	}
	ast.Inspect(fd, func(n ast.Node) bool {
		lit, ok := n.(*ast.CompositeLit)
		if !ok || len(lit.Elts) != 3 {
			return true
		}
		name, ok1 := lit.Elts[0].(*ast.BasicLit)
		run, ok2 := lit.Elts[2].(*ast.Ident)
		if !ok1 || !ok2 || name.Kind != token.STRING {
			return true
		}
		v, _ := strconv.Unquote(name.Value)
		out[v] = run.Name
		return false
	})
	return out
}

// seamed reports whether fd's body is one return of a seam's call: a
// function named …Cmd given env.factory(), or (depth allowing) a function
// of the package that is itself seamed.
func seamed(fd *ast.FuncDecl, funcs map[string]*ast.FuncDecl, depth int) bool {
	if fd.Body == nil || len(fd.Body.List) != 1 || depth == 0 {
		return false
	}
	ret, ok := fd.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return false
	}
	call, ok := ret.Results[0].(*ast.CallExpr)
	if !ok {
		return false
	}
	callee, ok := call.Fun.(*ast.Ident)
	if !ok {
		return false
	}
	if strings.HasSuffix(callee.Name, "Cmd") {
		for _, a := range call.Args {
			if isFactoryCall(a) {
				return true
			}
		}
		return false
	}
	next := funcs[callee.Name]
	return next != nil && seamed(next, funcs, depth-1)
}

// isFactoryCall reports whether e is X.factory().
func isFactoryCall(e ast.Expr) bool {
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "factory"
}

// callsFactory reports whether fd calls X.factory() anywhere.
func callsFactory(fd *ast.FuncDecl) bool {
	found := false
	ast.Inspect(fd, func(n ast.Node) bool {
		if e, ok := n.(ast.Expr); ok && isFactoryCall(e) {
			found = true
		}
		return !found
	})
	return found
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
		{"http client", "verb.go", `import "net/http"
var c = &http.Client{}`, "writes a http.Client literal"},
		{"default client", "verb.go", `import "net/http"
func f() { http.DefaultClient.Do(nil) }`, "uses http.DefaultClient"},
		{"http get", "verb.go", `import "net/http"
func f() { http.Get("x") }`, "calls http.Get"},
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

// TestVerbsThinSeamCatches: the seam rule of TestVerbsThin finds a verb
// that skips its seam, and an unseamed verb that reaches the Factory.
func TestVerbsThinSeamCatches(t *testing.T) {
	const table = `func verbs() []verb { return []verb{{"wake", "w", runWake}, {"eval gates", "g", runEvalGates}, {"mask", "m", runMask}} }
func wakeCmd(ctx, f, args, runF any) int { return 0 }
func evalCmd(ctx, f, args, v, runF any) int { return 0 }
func runEval(ctx, env, args, v any) int { return evalCmd(ctx, env.factory(), args, v, nil) }
func runEvalGates(ctx, env, args any) int { return runEval(ctx, env, args, nil) }
`
	for _, c := range []struct{ name, src, want string }{
		{"seamed", table + `func runWake(ctx, env, args any) int { return wakeCmd(ctx, env.factory(), args, nil) }
func runMask(ctx, env, args any) int { return 0 }`, ""},
		{"no seam", table + `func runWake(ctx, env, args any) int { gh := env.factory().GitHub(); return use(gh) }
func runMask(ctx, env, args any) int { return 0 }`, `verb "wake": runWake is not one call of its runF seam`},
		{"seam without the Factory", table + `func runWake(ctx, env, args any) int { return wakeCmd(ctx, newFactory(env), args, nil) }
func runMask(ctx, env, args any) int { return 0 }`, `verb "wake": runWake is not one call`},
		{"unseamed reaches the Factory", table + `func runWake(ctx, env, args any) int { return wakeCmd(ctx, env.factory(), args, nil) }
func runMask(ctx, env, args any) int { env.factory().GitHub(); return 0 }`, `verb "mask": runMask reaches the Factory without a runF seam`},
		{"missing run", table + `func runMask(ctx, env, args any) int { return 0 }`, `verb "wake": no function runWake`},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := parser.ParseFile(token.NewFileSet(), "verbs.go", "package cli\n\n"+c.src, 0)
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join(seamProblems([]*ast.File{f}, 3), "\n")
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
		case *ast.SelectorExpr:
			if name, ok := named(n, builderVars); ok {
				out = append(out, fmt.Sprintf("%s:%d: uses %s outside %s: take the client from the Factory", pos.Filename, pos.Line, name, factoryFile))
			}
		}
		return true
	})
	return out
}
