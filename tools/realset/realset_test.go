package realset

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/roadmap-dev/roadmap/internal/eval/realcase"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/sandbox"
	"github.com/roadmap-dev/roadmap/internal/sandbox/sandboxtest"
	"github.com/roadmap-dev/roadmap/tools/realset/proxytest"
)

const calcModule = "example.com/calc"

// calcBase is the module with the bug: Abs returns a negative number as is.
var calcBase = map[string]string{
	"go.mod":       "module example.com/calc\n\ngo 1.21\n",
	"LICENSE":      "MIT License\n",
	"calc.go":      "// Package calc does sums.\npackage calc\n\n// Add adds.\nfunc Add(a, b int) int { return a + b }\n\n// Abs is |x|.\nfunc Abs(x int) int { return x }\n",
	"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"Add(2, 3) != 5\")\n\t}\n}\n",
	"sub/sub.go":   "package sub\n\n// Two is two.\nconst Two = 2\n",
}

// calcFix fixes Abs and adds its test.
var calcFix = map[string]string{
	"go.mod":  calcBase["go.mod"],
	"LICENSE": calcBase["LICENSE"],
	"calc.go": strings.Replace(calcBase["calc.go"], "{ return x }", "{\n\tif x < 0 {\n\t\treturn -x\n\t}\n\treturn x\n}", 1),
	"calc_test.go": strings.Replace(calcBase["calc_test.go"], `import "testing"`, "import (\n\t\"os\"\n\t\"testing\"\n)", 1) +
		"\nfunc TestAbs(t *testing.T) {\n\tif Abs(-2) != 2 {\n\t\tt.Fatal(\"Abs(-2) != 2\")\n\t}\n}\n" +
		// The module's tests must not see the caller's credentials.
		"\nfunc TestNoToken(t *testing.T) {\n\tif os.Getenv(\"GITHUB_TOKEN\") != \"\" {\n\t\tt.Fatal(\"the tests see GITHUB_TOKEN\")\n\t}\n}\n",
	"sub/sub.go": calcBase["sub/sub.go"],
}

// calcProxy is a module proxy on disk holding example.com/calc at v1.0.0
// (the bug) and v1.0.1 (the fix), and an environment for the go command
// that reads only it.
func calcProxy(t *testing.T) (*proxytest.Proxy, Options) {
	t.Helper()
	p := proxytest.New(filepath.Join(t.TempDir(), "proxy"))
	for v, files := range map[string]map[string]string{"v1.0.0": calcBase, "v1.0.1": calcFix} {
		if err := p.Add(calcModule, v, files); err != nil {
			t.Fatal(err)
		}
	}
	env := append(p.Env(filepath.Join(t.TempDir(), "modcache")), "GOCACHE="+sandboxtest.RunnerGoCache(t))
	return p, Options{Env: env, TempDir: t.TempDir(), Isolate: testBoundary(env)}
}

// testBoundary opens the user boundary where this process can (root on
// Linux, as the test machines and CI run), else the one `isolation: none`
// opens: the tests run as this process's user, with the boundary's
// allow-listed environment built from environ and a HOME of their own.
// TestEvalRealCheckIsolated (internal/cli) shows what the user boundary
// keeps from them.
func testBoundary(environ []string) func(context.Context, string) (Boundary, error) {
	mode := sandbox.ModeNone
	if runtime.GOOS == "linux" && os.Geteuid() == 0 {
		mode = sandbox.ModeUser
	}
	return func(ctx context.Context, dir string) (Boundary, error) {
		return sandbox.Open(ctx, sandbox.Options{Mode: mode, Workspace: dir, Environ: environ, GoCache: sandbox.GoDirs(environ)["GOCACHE"]})
	}
}

// writeCase writes a case directory: source.json from the proxy's sums
// (changed by edit), hidden.json, and a plan.
func writeCase(t *testing.T, p *proxytest.Proxy, edit func(src map[string]any, hidden map[string]any)) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "calc-1-abs")
	src := map[string]any{
		"repository": "example/calc", "issue": "https://github.com/example/calc/issues/1",
		"fix": "https://github.com/example/calc/commit/0123456789abcdef0123456789abcdef01234567", "parent": strings.Repeat("a", 40),
		"licence": "MIT", "licence_file": "LICENSE", "language": "go",
		"module": calcModule, "base_version": "v1.0.0", "fix_version": "v1.0.1",
		"base_sum": p.Sums[calcModule+"@v1.0.0"], "fix_sum": p.Sums[calcModule+"@v1.0.1"],
	}
	hidden := map[string]any{
		"command": "go test -json . -run '^(TestAbs|TestAdd|TestNoToken)$'", "files": []string{"calc_test.go"},
		"f2p": []string{calcModule + ".TestAbs"}, "p2p": []string{calcModule + ".TestAdd", calcModule + ".TestNoToken"},
	}
	if edit != nil {
		edit(src, hidden)
	}
	files := map[string]string{
		"LICENSE":                           "MIT License\n",
		"issue.md":                          "# Abs of a negative number is negative\n\nAbs(-2) is -2.\n\n## Acceptance\n\n- Abs(-2) is 2.\n",
		"plan/fix-abs/proposal.md":          "# Abs returns the magnitude\n",
		"plan/fix-abs/tasks.md":             "## 1. Fix Abs\n\n- [ ] 1.1 Add `TestAbs`; verify: `go test .`\n",
		"plan/fix-abs/specs/calc/spec.md":   "## ADDED Requirements\n",
		"expected.json":                     `{"f2p": ["example.com/calc.TestAbs"], "p2p": ["example.com/calc.TestAdd", "example.com/calc.TestNoToken"]}`,
		"source.json":                       mustJSON(t, src),
		"hidden.json":                       mustJSON(t, hidden),
		"plan/fix-abs/specs/calc/.keep.txt": "",
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRealCaseFromModuleProxy materializes a case from a module proxy on
// disk through the real go command: repo/ is the module at base_version
// (writable, the plan under openspec/changes), hidden/ the hidden files at
// fix_version, a second run replaces both, and Check holds the case to
// fail-at-base, pass-at-fix. A wrong sum, a hidden path out of the module
// and an F2P test that already passes at base are each refused or failed.
func TestRealCaseFromModuleProxy(t *testing.T) {
	ctx := context.Background()
	p, o := calcProxy(t)

	t.Run("materialize and check", func(t *testing.T) {
		dir := writeCase(t, p, nil)
		res, err := Materialize(ctx, dir, o)
		if err != nil {
			t.Fatal(err)
		}
		if res.HiddenFiles != 1 || res.RepoFiles != len(calcBase)+4 {
			t.Errorf("wrote %d repo files and %d hidden, want %d and 1", res.RepoFiles, res.HiddenFiles, len(calcBase)+4)
		}
		for name, want := range calcBase {
			if got := readFile(t, filepath.Join(dir, "repo", filepath.FromSlash(name))); got != want {
				t.Errorf("repo/%s is not the module's at v1.0.0:\n%s", name, got)
			}
		}
		if got := readFile(t, filepath.Join(dir, "repo", "openspec", "changes", "fix-abs", "tasks.md")); !strings.Contains(got, "TestAbs") {
			t.Errorf("the plan is not under repo/openspec/changes/fix-abs: %q", got)
		}
		if got := readFile(t, filepath.Join(dir, "hidden", "calc_test.go")); got != calcFix["calc_test.go"] {
			t.Errorf("hidden/calc_test.go is not the fix's:\n%s", got)
		}
		if entries, _ := os.ReadDir(filepath.Join(dir, "hidden")); len(entries) != 1 {
			t.Errorf("hidden/ holds %d entries, want calc_test.go alone", len(entries))
		}
		st, err := os.Stat(filepath.Join(dir, "repo", "calc.go"))
		if err != nil || st.Mode().Perm()&0o200 == 0 {
			t.Errorf("repo/calc.go is not writable: %v %v", st.Mode(), err)
		}
		if matches, _ := filepath.Glob(filepath.Join(dir, ".materialize-*")); len(matches) != 0 {
			t.Errorf("the work directory is left behind: %v", matches)
		}

		// A second run replaces what is there.
		stray := filepath.Join(dir, "repo", "stray.go")
		if err := os.WriteFile(stray, []byte("package calc\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "repo", "calc.go"), []byte("edited"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Materialize(ctx, dir, o); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(stray); !os.IsNotExist(err) {
			t.Errorf("a second run left repo/stray.go (%v)", err)
		}
		if got := readFile(t, filepath.Join(dir, "repo", "calc.go")); got != calcBase["calc.go"] {
			t.Errorf("a second run left repo/calc.go edited: %q", got)
		}

		// The module's tests run without the caller's credentials
		// (TestNoToken fails if it sees one).
		withToken := o
		withToken.Env = append(append([]string{}, o.Env...), "GITHUB_TOKEN=ghp_notarealtoken0000000000000000000000")
		chk, err := Check(ctx, dir, withToken)
		if err != nil {
			t.Fatal(err)
		}
		if !chk.Passed || chk.Base[calcModule+".TestAbs"] != "fail" || chk.Fix[calcModule+".TestAbs"] != "pass" || chk.Base[calcModule+".TestAdd"] != "pass" || chk.Fix[calcModule+".TestNoToken"] != "pass" {
			t.Errorf("the good case's check: %+v", chk)
		}
	})

	t.Run("no boundary, no test run", func(t *testing.T) {
		dir := writeCase(t, p, nil)
		if _, err := Materialize(ctx, dir, o); err != nil {
			t.Fatal(err)
		}
		none := o
		none.Isolate = nil
		if chk, err := Check(ctx, dir, none); err == nil || !strings.Contains(err.Error(), "isolation boundary") {
			t.Errorf("Check with no Isolate: %+v, %v; want it refused", chk, err)
		}
		opened := 0
		none.Isolate = func(context.Context, string) (Boundary, error) {
			opened++
			return nil, errors.New("no isolation boundary for model-written commands: not root")
		}
		if chk, err := Check(ctx, dir, none); err == nil || !strings.Contains(err.Error(), "isolation: no isolation boundary") || opened != 1 {
			t.Errorf("Check with a boundary that cannot be opened: %+v, %v (opened %d); want its error, once", chk, err, opened)
		}
	})

	t.Run("a wrong sum is refused", func(t *testing.T) {
		dir := writeCase(t, p, func(src, _ map[string]any) { src["base_sum"] = p.Sums[calcModule+"@v1.0.1"] })
		_, err := Materialize(ctx, dir, o)
		if err == nil || !strings.Contains(err.Error(), "refused") || !strings.Contains(err.Error(), "v1.0.0") {
			t.Fatalf("Materialize with the fix's sum as base_sum: %v, want a refusal naming v1.0.0", err)
		}
		if realcase.Materialized(dir) {
			t.Error("a refused case has a repo/")
		}
	})

	t.Run("a zip changed in the module cache is refused", func(t *testing.T) {
		_, o := calcProxy(t)
		dir := writeCase(t, p, nil)
		if _, err := Materialize(ctx, dir, o); err != nil {
			t.Fatal(err)
		}
		var cache string
		for _, kv := range o.Env {
			if v, ok := strings.CutPrefix(kv, "GOMODCACHE="); ok {
				cache = v
			}
		}
		zipPath := filepath.Join(cache, "cache", "download", "example.com", "calc", "@v", "v1.0.0.zip")
		tampered := maps.Clone(calcBase)
		tampered["calc.go"] += "\n// changed\n"
		q := proxytest.New(t.TempDir())
		if err := q.Add(calcModule, "v1.0.0", tampered); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(q.Dir, "example.com", "calc", "@v", "v1.0.0.zip"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(zipPath, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err = Materialize(ctx, dir, o)
		if err == nil || !strings.Contains(err.Error(), "refused") {
			t.Fatalf("Materialize over a changed zip in the cache: %v, want a refusal", err)
		}
		if got := readFile(t, filepath.Join(dir, "repo", "calc.go")); got != calcBase["calc.go"] {
			t.Errorf("a refused run changed repo/: %q", got)
		}
	})

	t.Run("a hidden path out of the module is refused", func(t *testing.T) {
		for _, bad := range []string{"../calc_test.go", "/etc/passwd", "a/../calc_test.go", `a\b.go`} {
			dir := writeCase(t, p, func(_, h map[string]any) { h["files"] = []string{bad} })
			if _, err := Materialize(ctx, dir, o); err == nil || !strings.Contains(err.Error(), "hidden.json: files: ") || !strings.Contains(err.Error(), "not a clean slash path") {
				t.Errorf("hidden file %q: %v, want hidden.json refused for its path", bad, err)
			}
			if realcase.Materialized(dir) {
				t.Errorf("hidden file %q: repo/ was laid out", bad)
			}
		}
	})

	t.Run("an f2p test that passes at base fails the check", func(t *testing.T) {
		dir := writeCase(t, p, func(_, h map[string]any) {
			h["f2p"] = []string{calcModule + ".TestAdd", calcModule + ".TestAbs"}
			h["p2p"] = []string{}
		})
		if _, err := Materialize(ctx, dir, o); err != nil {
			t.Fatal(err)
		}
		chk, err := Check(ctx, dir, o)
		if err != nil {
			t.Fatal(err)
		}
		if chk.Passed || len(chk.Problems) != 1 || !strings.Contains(chk.Problems[0], "TestAdd does not fail at v1.0.0") {
			t.Errorf("check: %+v, want one problem: TestAdd does not fail at base", chk)
		}
	})

	t.Run("a hidden file the fix lacks is refused", func(t *testing.T) {
		dir := writeCase(t, p, func(_, h map[string]any) { h["files"] = []string{"nosuch_test.go"} })
		if _, err := Materialize(ctx, dir, o); err == nil || !strings.Contains(err.Error(), "nosuch_test.go is not a file of example.com/calc@v1.0.1") {
			t.Errorf("Materialize: %v", err)
		}
	})
}

// TestLoadRefusesBadCases: each malformed field is an error naming it.
func TestLoadRefusesBadCases(t *testing.T) {
	p := proxytest.New(t.TempDir())
	p.Sums[calcModule+"@v1.0.0"] = "h1:" + strings.Repeat("A", 43) + "="
	p.Sums[calcModule+"@v1.0.1"] = "h1:" + strings.Repeat("B", 43) + "="
	for _, tc := range []struct {
		name string
		edit func(src, hidden map[string]any)
		want string
	}{
		{"module path without a domain", func(s, _ map[string]any) { s["module"] = "calc" }, "not a module path"},
		{"module path with ..", func(s, _ map[string]any) { s["module"] = "example.com/../calc" }, "not a module path"},
		{"module path starting with a dash", func(s, _ map[string]any) { s["module"] = "-x.com/calc" }, "not a module path"},
		{"a version that is not semver", func(s, _ map[string]any) { s["base_version"] = "1.0.0" }, "base_version"},
		{"a v2 version on a v1 path", func(s, _ map[string]any) { s["fix_version"] = "v2.0.0" }, "needs a /vN path"},
		{"base after fix", func(s, _ map[string]any) { s["base_version"] = "v1.0.2" }, "is not before"},
		{"a sum that is not h1", func(s, _ map[string]any) { s["fix_sum"] = "sha256:abc" }, "fix_sum"},
		{"module fields without module", func(s, _ map[string]any) { delete(s, "module") }, "need module"},
		{"a module on a python case", func(s, _ map[string]any) { s["language"] = "python" }, "only Go cases"},
		{"an unknown field", func(s, _ map[string]any) { s["tag"] = "v1" }, "unknown field"},
		{"no f2p", func(_, h map[string]any) { h["f2p"] = []string{} }, "f2p names no test"},
		{"a test of another module", func(_, h map[string]any) { h["f2p"] = []string{"example.org/x.TestA"} }, "not a test of a package"},
		{"a command that is not go test -json", func(_, h map[string]any) { h["command"] = "go test ." }, "not `go test -json"},
		{"a command with a pipe", func(_, h map[string]any) { h["command"] = "go test -json . | tee x" }, "command"},
		{"a command that runs tests under a program", func(_, h map[string]any) { h["command"] = "go test -json -exec /bin/sh ." }, "the flag -exec"},
		{"a command that writes a file", func(_, h map[string]any) { h["command"] = "go test -json -coverprofile=/tmp/x ." }, "the flag -coverprofile"},
		{"a package outside the module", func(_, h map[string]any) { h["command"] = "go test -json ../other" }, "not a package of the module"},
		{"an absolute package", func(_, h map[string]any) { h["command"] = "go test -json /usr/lib/go" }, "not a package of the module"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeCase(t, p, tc.edit)
			if _, err := realcase.Load(dir); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Load: %v, want an error with %q", err, tc.want)
			}
		})
	}
	for _, cmd := range []string{"go test -json ./...", "go test -v -json -count=1 ./sub/... -run '^TestA$'", "go test --json -run=TestA -timeout 5m ./sub"} {
		dir := writeCase(t, p, func(_, h map[string]any) { h["command"] = cmd })
		if _, err := realcase.Load(dir); err != nil {
			t.Errorf("command %q: %v", cmd, err)
		}
	}
	// The module's own /vN versions are fine; a metadata-only case too.
	dir := writeCase(t, p, func(s, h map[string]any) {
		s["module"], s["base_version"], s["fix_version"] = "github.com/Some/lib/v4", "v4.0.1-rc.1", "v4.0.1"
		h["f2p"], h["p2p"] = []string{"github.com/Some/lib/v4.TestA"}, []string{"github.com/Some/lib/v4/sub.TestB"}
	})
	if _, err := realcase.Load(dir); err != nil {
		t.Errorf("a /v4 module: %v", err)
	}
	dir = writeCase(t, p, func(s, h map[string]any) {
		for _, k := range []string{"module", "base_version", "fix_version", "base_sum", "fix_sum"} {
			delete(s, k)
		}
		s["language"] = "python"
		h["command"] = "pytest tests/test_x.py"
		delete(h, "f2p")
		delete(h, "p2p")
	})
	if c, err := realcase.Load(dir); err != nil || c.HasModule() {
		t.Errorf("a metadata-only python case: %v", err)
	}
	if _, err := Materialize(context.Background(), dir, Options{}); err == nil || !strings.Contains(err.Error(), "metadata only") {
		t.Errorf("Materialize of a metadata-only case: %v", err)
	}
}
