package deptest

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// fake is the import path of the fake GitHub.
const fake = module + "/internal/githubfake"

// fakeAllowed are the places a non-test file may import the fake GitHub
// from (slash paths from the module root; a pattern ending in "/" is a
// folder and everything under it): the fake itself, the one shared test
// world, the `roadmap dev` verbs, and the demo, eval, fault and end-to-end
// harnesses. Production code reads GitHub, never the fake; a _test.go file
// may import it anywhere.
var fakeAllowed = []string{
	"internal/githubfake/",
	"internal/world/",
	"internal/cli/dev_*.go",
	"internal/demo/",
	"internal/eval/",
	"internal/faults/",
	"e2e/",
	"tools/",
}

func fakeMayBeImportedBy(rel string) bool {
	for _, p := range fakeAllowed {
		if strings.HasSuffix(p, "/") {
			if strings.HasPrefix(rel, p) {
				return true
			}
		} else if ok, _ := path.Match(p, rel); ok {
			return true
		}
	}
	return false
}

// TestFakeStaysOut: no production file imports internal/githubfake.
// Every non-test .go file of the module is parsed (imports only; build
// tags are not read, so a file behind a tag counts too).
func TestFakeStaysOut(t *testing.T) {
	root := moduleRoot(t)
	var fakeFiles, importers int
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p == root {
				return nil
			}
			// Not the module's code: testdata, hidden and _ folders
			// (the go tool ignores them too), and nested modules.
			if name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			t.Errorf("parse %s: %v", rel, err)
			return nil
		}
		if strings.HasPrefix(rel, "internal/githubfake/") && f.Name.Name == "githubfake" {
			fakeFiles++
		}
		for _, imp := range f.Imports {
			ip, err := strconv.Unquote(imp.Path.Value)
			if err != nil || ip != fake {
				continue
			}
			importers++
			if !fakeMayBeImportedBy(rel) {
				t.Errorf("%s imports %s: production code never imports the fake GitHub; only %s may (and any _test.go file)",
					rel, fake, strings.Join(fakeAllowed, ", "))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", root, err)
	}
	// Not vacuous: the walk saw the fake's own files, and the import path
	// above is the one its users write.
	if fakeFiles == 0 {
		t.Fatalf("no file of package githubfake under %s/internal/githubfake: is the module root or path right?", root)
	}
	if importers == 0 {
		t.Fatalf("no file imports %s, not even the roadmap dev verbs: is the module path %q right?", fake, module)
	}
}

// moduleRoot is the folder of the module's go.mod, which must name module.
func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		t.Fatal("go env GOMOD: not in a module")
	}
	data, err := os.ReadFile(gomod)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			if name = strings.Trim(strings.TrimSpace(name), `"`); name != module {
				t.Fatalf("%s declares module %s, want %s", gomod, name, module)
			}
			return filepath.Dir(gomod)
		}
	}
	t.Fatalf("%s declares no module", gomod)
	return ""
}
