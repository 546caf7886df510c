package deptest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// goFile is one non-test Go file of the module, parsed.
type goFile struct {
	rel  string // slash path from the module root
	file *ast.File
	// names maps each import's local name to its path.
	names map[string]string
}

// moduleFiles parses every non-test Go file of the module (the module root
// is two levels up from this package).
func moduleFiles(t *testing.T) []goFile {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the module root %s has no go.mod: %v", root, err)
	}
	var out []goFile
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if p != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		g := goFile{rel: filepath.ToSlash(rel), file: f, names: map[string]string{}}
		for _, im := range f.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			name := path[strings.LastIndex(path, "/")+1:]
			if im.Name != nil {
				name = im.Name.Name
			}
			g.names[name] = path
		}
		out = append(out, g)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// uses lists, in f, the references pkg.Name to the package at path whose
// Name is in names, as "file:line pkg.Name".
func (f goFile) uses(fset *token.FileSet, path string, names ...string) []string {
	var found []string
	ast.Inspect(f.file, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		x, ok := sel.X.(*ast.Ident)
		if !ok || f.names[x.Name] != path {
			return true
		}
		for _, name := range names {
			if sel.Sel.Name == name {
				found = append(found, x.Name+"."+name)
			}
		}
		return true
	})
	return found
}

// TestOneWiring: a Job is built one way. Outside internal/job (and tests), no
// code calls the stage or implement runner, nor builds their Options by
// hand; the CLI, the fault suite and the evals build their Jobs with
// job.Open, so each exercises the wiring the binary ships (the demo runs
// the binary itself).
func TestOneWiring(t *testing.T) {
	files := moduleFiles(t)
	fset := token.NewFileSet()
	opens := map[string]bool{}
	runners := 0
	for _, f := range files {
		if strings.HasPrefix(f.rel, "internal/job/") {
			runners += len(f.uses(fset, module+"/internal/implement", "Run")) + len(f.uses(fset, module+"/internal/stage", "Run"))
			continue
		}
		for _, p := range []string{"implement", "stage"} {
			for _, u := range f.uses(fset, module+"/internal/"+p, "Run", "Options") {
				t.Errorf("%s uses %s: only internal/job runs a Job (build it with job.Open)", f.rel, u)
			}
		}
		if len(f.uses(fset, module+"/internal/job", "Open")) > 0 {
			opens[filepath.ToSlash(filepath.Dir(f.rel))] = true
		}
	}
	if runners < 2 {
		t.Errorf("internal/job calls the runners %d times; want both stage.Run and implement.Run there", runners)
	}
	for _, pkg := range []string{"internal/cli", "internal/faults", "internal/eval"} {
		if !opens[pkg] {
			t.Errorf("%s does not build its Jobs with job.Open", pkg)
		}
	}
}
