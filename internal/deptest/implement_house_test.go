package deptest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// concerns are implement's concerns in rooms of their own (issue 45): the
// CI watch and triage, the checks before ready, the plan of the waves, and
// the verdict they give the loop, and the progress the PR comment shows.
var concerns = []string{"internal/citriage", "internal/ready", "internal/waves", "internal/verdict", "internal/progress"}

// maxRunnerFields bounds implement.runner: the loop's own state and one
// field per concern, not each concern's private state.
const maxRunnerFields = 21

// TestImplementConcernsApart: each concern's package exists and reaches
// internal/implement through no import, direct or through another of the
// module's packages, so it is tested with a small input, never a whole Job.
func TestImplementConcernsApart(t *testing.T) {
	roomsApart(t, concerns, "internal/implement")
}

// roomsApart: each room exists in the module and reaches none of far
// through an import, direct or through another of the module's packages.
func roomsApart(t *testing.T, rooms []string, far ...string) {
	t.Helper()
	imports := map[string][]string{}
	for _, p := range modulePackages(t) {
		for _, imp := range p.Imports {
			if rel, ok := strings.CutPrefix(imp, module+"/"); ok {
				imports[p.ImportPath] = append(imports[p.ImportPath], rel)
			}
		}
		if _, ok := imports[p.ImportPath]; !ok {
			imports[p.ImportPath] = nil
		}
	}
	for _, c := range rooms {
		if _, ok := imports[c]; !ok {
			t.Errorf("%s: no such package in the module", c)
			continue
		}
		for _, f := range far {
			if path := pathTo(imports, c, f); path != nil {
				t.Errorf("%s imports %s: %s", c, f, strings.Join(path, " → "))
			}
		}
	}
}

// pathTo is an import path from one package to another, nil when there is
// none.
func pathTo(imports map[string][]string, from, to string) []string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p == to {
			var path []string
			for ; p != ""; p = prev[p] {
				path = append(path, p)
			}
			slices.Reverse(path)
			return path
		}
		for _, next := range imports[p] {
			if _, seen := prev[next]; !seen {
				prev[next] = p
				queue = append(queue, next)
			}
		}
	}
	return nil
}

// TestRunnerFields: implement.runner holds at most maxRunnerFields fields
// (each name counts; an embedded field counts one).
func TestRunnerFields(t *testing.T) {
	n, ok := structFields(t, filepath.Join("..", "implement"), "runner")
	if !ok {
		t.Fatal("no type runner struct in internal/implement")
	}
	t.Logf("implement.runner has %d fields (at most %d)", n, maxRunnerFields)
	if n > maxRunnerFields {
		t.Errorf("implement.runner has %d fields, want at most %d: give a concern's state a room of its own", n, maxRunnerFields)
	}
}

// structFields counts the fields of the struct type name declared in the
// non-test Go files of dir.
func structFields(t *testing.T, dir, name string) (int, bool) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, spec := range g.Specs {
				ts := spec.(*ast.TypeSpec)
				st, ok := ts.Type.(*ast.StructType)
				if !ok || ts.Name.Name != name {
					continue
				}
				n := 0
				for _, field := range st.Fields.List {
					n += max(len(field.Names), 1)
				}
				return n, true
			}
		}
	}
	return 0, false
}
