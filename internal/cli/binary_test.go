package cli

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// buildRoadmap returns the roadmap binary for the tests that run it as a
// process. It links nothing: it is this test binary under the name roadmap
// (TestMain then runs cmd/roadmap's main), made once per test process in a
// shared folder. Linking cmd/roadmap cost about 10 CPU-seconds and a
// gigabyte of memory per test process.
//
// It is a hard link (a copy across file systems), not a symlink: the kernel
// resolves a symlink to the test binary's own name in /proc/PID/exe, which
// os.Executable reads, so the demo, which starts its Jobs from
// os.Executable, would start them as cli.test, and TestSignalForwarding,
// which checks the step's entry process is roadmap, would see cli.test.
func buildRoadmap(t *testing.T) string {
	t.Helper()
	bin, err := roadmapBinary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func roadmapBinary() (string, error) {
	built.once.Do(func() {
		built.bin, built.err = linkSelfAsRoadmap()
		if built.err == nil {
			built.links.Add(1)
		}
	})
	return built.bin, built.err
}

// built is the roadmap binary the package's tests run. links counts the
// roadmap binaries made in this test process, by any path: TestMain and
// TestBinaryBuiltOnce fail when it passes 1.
var built struct {
	once  sync.Once
	bin   string
	err   error
	links atomic.Int32
}

// linkSelfAsRoadmap makes dir/roadmap this test binary, in a new shared
// folder.
func linkSelfAsRoadmap() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "roadmap-cli-test-bin-")
	if err != nil {
		return "", err
	}
	sharedDirs = append(sharedDirs, dir)
	bin := filepath.Join(dir, roadmapName)
	if os.Link(self, bin) == nil {
		return bin, nil
	}
	return bin, copyExecutable(self, bin)
}

func copyExecutable(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// TestBinaryBuiltOnce: the roadmap binary the package's tests run as a
// process is made at most once per test process, however many tests ask
// for it and at once (TestMain checks the count again after every test);
// it is roadmap (it answers as the in-process CLI does, and its main is
// cmd/roadmap's); and no code of the package builds roadmap another way.
func TestBinaryBuiltOnce(t *testing.T) {
	var wg sync.WaitGroup
	bins := make([]string, 4)
	errs := make([]error, len(bins))
	for i := range bins {
		wg.Go(func() { bins[i], errs[i] = roadmapBinary() })
	}
	wg.Wait()
	for i := range bins {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if bins[i] != bins[0] {
			t.Errorf("buildRoadmap gave %s, then %s", bins[0], bins[i])
		}
	}
	if n := built.links.Load(); n != 1 {
		t.Errorf("the roadmap binary was made %d times in this test process, want once", n)
	}

	// The binary is roadmap: it answers as Main does in process.
	out, err := exec.Command(bins[0], "version", "--json").Output()
	if err != nil {
		t.Fatalf("%s version: %v", bins[0], err)
	}
	var want bytes.Buffer
	if code := Main(t.Context(), []string{"version", "--json"}, nil, strings.NewReader(""), &want, io.Discard); code != ExitOK || string(out) != want.String() {
		t.Errorf("the binary printed %q, Main %q (exit %d)", out, want.String(), code)
	}

	// Its main is cmd/roadmap's, statement for statement.
	cmdMain := funcStatements(t, filepath.Join("..", "..", "cmd", "roadmap", "main.go"), "main")
	testMain := funcStatements(t, "main_test.go", "roadmapMain")
	for i := range cmdMain {
		cmdMain[i] = strings.ReplaceAll(cmdMain[i], "cli.", "")
	}
	if n := len(cmdMain); n > 0 && cmdMain[n-1] == "os.Exit(code)" {
		cmdMain[n-1] = "return code"
	}
	if strings.Join(cmdMain, "\n") != strings.Join(testMain, "\n") {
		t.Errorf("roadmapMain is not cmd/roadmap's main:\ncmd/roadmap:\n%s\nroadmapMain:\n%s", strings.Join(cmdMain, "\n"), strings.Join(testMain, "\n"))
	}

	// Nothing in the package builds roadmap (or any of this module's code)
	// with the go command.
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		for _, call := range goBuilds(t, f) {
			t.Errorf("%s builds with the go command: %s", f, call)
		}
	}
}

// funcStatements are the statements of the function name in file, each
// printed on one line.
func funcStatements(t *testing.T, file, name string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Name.Name != name || fn.Recv != nil {
			continue
		}
		var out []string
		for _, s := range fn.Body.List {
			var b bytes.Buffer
			if err := format.Node(&b, fset, s); err != nil {
				t.Fatal(err)
			}
			out = append(out, b.String())
		}
		return out
	}
	t.Fatalf("%s has no func %s", file, name)
	return nil
}

// goBuilds lists the calls of exec.Command or exec.CommandContext in file
// that run the go command to build this module's code: go build, go install,
// go test -c, or go run of a package that is not a pinned tool (name@version).
func goBuilds(t *testing.T, file string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || fmt.Sprint(sel.X) != "exec" || (sel.Sel.Name != "Command" && sel.Sel.Name != "CommandContext") {
			return true
		}
		var lits []string
		for _, a := range call.Args {
			if bl, ok := a.(*ast.BasicLit); ok && bl.Kind == token.STRING {
				if s, err := strconv.Unquote(bl.Value); err == nil {
					lits = append(lits, s)
				}
			}
		}
		if len(lits) < 2 || lits[0] != "go" {
			return true
		}
		builds := false
		switch lits[1] {
		case "build", "install":
			builds = true
		case "test":
			for _, l := range lits[2:] {
				builds = builds || l == "-c" || l == "-o"
			}
		case "run":
			pinned := false
			for _, l := range lits[2:] {
				pinned = pinned || (!strings.HasPrefix(l, "-") && strings.Contains(l, "@"))
			}
			builds = !pinned
		}
		if builds {
			found = append(found, fset.Position(call.Pos()).String()+": go "+strings.Join(lits[1:], " "))
		}
		return true
	})
	return found
}
