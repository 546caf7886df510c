package realset

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"github.com/roadmap-dev/roadmap/internal/eval/realcase"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

// pycalcBase is a tiny Python package with a bug: absolute returns a
// negative number as is.
var pycalcBase = map[string]string{
	"LICENSE":              "MIT License\n",
	"pycalc/__init__.py":   "def add(a, b):\n    return a + b\n\n\ndef absolute(x):\n    return x\n",
	"tests/test_pycalc.py": "from pycalc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
}

// pycalcFix fixes absolute and adds its test.
var pycalcFix = map[string]string{
	"LICENSE":            pycalcBase["LICENSE"],
	"pycalc/__init__.py": strings.Replace(pycalcBase["pycalc/__init__.py"], "    return x\n", "    return -x if x < 0 else x\n", 1),
	"tests/test_pycalc.py": "import os\n\nfrom pycalc import absolute, add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n" +
		"def test_absolute():\n    assert absolute(-2) == 2\n\n\n" +
		// The package's tests must not see the caller's credentials.
		"def test_no_token():\n    assert not os.environ.get('GITHUB_TOKEN')\n",
}

// origTarGz builds an upstream tarball: files under one top directory,
// plus extra raw entries (a symlink, a path with ..) when given.
func origTarGz(t *testing.T, top string, files map[string]string, extra ...*tar.Header) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	if err := tw.WriteHeader(&tar.Header{Name: top + "/", Typeflag: tar.TypeDir, Mode: 0o755}); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if err := tw.WriteHeader(&tar.Header{Name: top + "/" + n, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(files[n]))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(files[n])); err != nil {
			t.Fatal(err)
		}
	}
	for _, h := range extra {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestRealCaseFromDebianSource materializes and checks a Python case from
// a fake Debian archive on loopback (its URL given as $ROADMAP_DEBIAN_MIRROR):
// the pool path from the source package's name, the sha256 refused when it
// differs, links and paths outside the top directory refused, the apt
// configuration read when the variable is unset, and — when python3 has
// pytest — the hidden tests run the SWE-bench way.
func TestRealCaseFromDebianSource(t *testing.T) {
	base := origTarGz(t, "pycalc-1.0.0", pycalcBase)
	fix := origTarGz(t, "pycalc-1.0.1", pycalcFix)
	pool := map[string][]byte{
		"/pool/main/p/pycalc/pycalc_1.0.0.orig.tar.gz": base,
		"/pool/main/p/pycalc/pycalc_1.0.1.orig.tar.gz": fix,
	}
	var (
		mu        sync.Mutex
		requested []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		requested = append(requested, r.URL.Path)
		b, ok := pool[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	}))
	defer srv.Close()

	src := map[string]any{
		"repository": "example/pycalc", "issue": "https://github.com/example/pycalc/issues/1",
		"fix": "https://github.com/example/pycalc/commit/0123456789abcdef0123456789abcdef01234567", "parent": strings.Repeat("a", 40),
		"licence": "MIT", "licence_file": "LICENSE", "language": "python",
		"debian_source": "pycalc", "base_version": "1.0.0-1", "fix_version": "1.0.1-2",
		"base_orig": "pycalc_1.0.0.orig.tar.gz", "fix_orig": "pycalc_1.0.1.orig.tar.gz",
		"base_sha256": sha256Hex(base), "fix_sha256": sha256Hex(fix),
	}
	hidden := map[string]any{
		"command": "python3 -m pytest -q tests/test_pycalc.py",
		"files":   []string{"tests/test_pycalc.py"},
		"f2p":     []string{"tests/test_pycalc.py::test_absolute"},
		"p2p":     []string{"tests/test_pycalc.py::test_add", "tests/test_pycalc.py::test_no_token"},
	}
	write := func(t *testing.T, src, hidden map[string]any) string {
		t.Helper()
		dir := filepath.Join(t.TempDir(), "pycalc-1-absolute")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, v := range map[string]any{"source.json": src, "hidden.json": hidden} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(mustJSON(t, v)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	with := func(m map[string]any, k string, v any) map[string]any {
		out := map[string]any{}
		for kk, vv := range m {
			out[kk] = vv
		}
		if v == nil {
			delete(out, k)
		} else {
			out[k] = v
		}
		return out
	}
	env := []string{MirrorEnv + "=" + srv.URL, "GITHUB_TOKEN=secret", "PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	if p := os.Getenv(PythonEnv); p != "" {
		env = append(env, PythonEnv+"="+p)
	}
	o := Options{Env: env, TempDir: t.TempDir(), AptDir: t.TempDir(), Isolate: testBoundary(env)}
	ctx := context.Background()

	dir := write(t, src, hidden)
	res, err := Materialize(ctx, dir, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.RepoFiles != 3 || res.HiddenFiles != 1 {
		t.Errorf("materialized %d repo files and %d hidden, want 3 and 1", res.RepoFiles, res.HiddenFiles)
	}
	if got := readFile(t, filepath.Join(dir, "repo", "pycalc", "__init__.py")); got != pycalcBase["pycalc/__init__.py"] {
		t.Errorf("repo/ is not the base release (the top directory stripped): %q", got)
	}
	if got := readFile(t, filepath.Join(dir, "hidden", "tests", "test_pycalc.py")); got != pycalcFix["tests/test_pycalc.py"] {
		t.Errorf("hidden/ is not the fix release's test file: %q", got)
	}
	mu.Lock()
	got := slices.Clone(requested)
	mu.Unlock()
	if len(got) != 2 || got[0] != "/pool/main/p/pycalc/pycalc_1.0.0.orig.tar.gz" {
		t.Errorf("the pool paths requested: %v", got)
	}

	// The archive from apt's configuration when the variable is unset.
	aptDir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(aptDir, "sources.list.d"), 0o755); err != nil {
		t.Fatal(err)
	}
	sources := "Types: deb\nURIs: " + srv.URL + "-security\nSuites: x-security\n\nTypes: deb\nURIs: " + srv.URL + "\nSuites: x\n"
	if err := os.WriteFile(filepath.Join(aptDir, "sources.list.d", "x.sources"), []byte(sources), 0o644); err != nil {
		t.Fatal(err)
	}
	if m, err := (Options{Env: []string{}, AptDir: aptDir}).Mirror(); err != nil || m != srv.URL {
		t.Errorf("the archive from apt's sources: %q, %v; want %q", m, err, srv.URL)
	}
	if err := os.WriteFile(filepath.Join(aptDir, "sources.list.d", "x.sources"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(aptDir, "sources.list"), []byte("# comment\ndeb [arch=amd64] "+srv.URL+" x main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if m, err := (Options{Env: []string{}, AptDir: aptDir}).Mirror(); err != nil || m != srv.URL {
		t.Errorf("the archive from sources.list: %q, %v; want %q", m, err, srv.URL)
	}
	if _, err := (Options{Env: []string{MirrorEnv + "=http://user:pw@example.com"}}).Mirror(); err == nil {
		t.Error("an archive URL with credentials was taken")
	}

	setPool := func(b []byte) {
		mu.Lock()
		pool["/pool/main/p/pycalc/pycalc_1.0.0.orig.tar.gz"] = b
		mu.Unlock()
	}
	// A wrong sum, a link, a path out of the tree, more than one top.
	for name, tc := range map[string]struct {
		src     map[string]any
		tarball []byte
		want    string
	}{
		"wrong sum": {with(src, "base_sha256", strings.Repeat("0", 64)), nil, "refused"},
		"symlink": {nil, origTarGz(t, "pycalc-1.0.0", pycalcBase,
			&tar.Header{Name: "pycalc-1.0.0/evil", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}), "not a regular file"},
		"dotdot": {nil, origTarGz(t, "pycalc-1.0.0", pycalcBase,
			&tar.Header{Name: "pycalc-1.0.0/../evil", Typeflag: tar.TypeReg, Mode: 0o644}), "clean path"},
		"two tops": {nil, origTarGz(t, "pycalc-1.0.0", pycalcBase,
			&tar.Header{Name: "other/evil", Typeflag: tar.TypeReg, Mode: 0o644}), "one top directory"},
	} {
		t.Run(name, func(t *testing.T) {
			s := tc.src
			if tc.tarball != nil {
				setPool(tc.tarball)
				defer setPool(base)
				s = with(src, "base_sha256", sha256Hex(tc.tarball))
			}
			_, err := Materialize(ctx, write(t, s, hidden), o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Materialize: %v, want an error saying %q", err, tc.want)
			}
		})
	}

	// realcase.Load refuses what is not the Debian form.
	for name, s := range map[string]map[string]any{
		"go language":      with(src, "language", "go"),
		"bad source":       with(src, "debian_source", "../x"),
		"bad version":      with(src, "base_version", "1.0.0"),
		"orig not plain":   with(src, "base_orig", "../pycalc_1.0.0.orig.tar.gz"),
		"orig of another":  with(src, "base_orig", "pycalc_1.0.1.orig.tar.gz"),
		"sha not hex":      with(src, "fix_sha256", strings.Repeat("Z", 64)),
		"same upstream":    with(with(src, "fix_version", "1.0.0-2"), "fix_orig", "pycalc_1.0.0.orig.tar.gz"),
		"module with deb":  with(src, "module", "example.com/pycalc"),
		"no base sha":      with(src, "base_sha256", nil),
		"test not node id": nil,
	} {
		h := hidden
		if s == nil {
			s, h = src, with(hidden, "f2p", []string{"test_absolute"})
		}
		if _, err := realcase.Load(write(t, s, h)); err == nil {
			t.Errorf("%s: realcase.Load took it", name)
		}
	}
	for _, cmd := range []string{
		"python3 -m pytest --junitxml=/tmp/x tests",
		"python3 -m pytest -p evil tests",
		"python3 -c 'import os'",
		"python3 -m pytest ../outside",
		"sh -c pytest",
	} {
		if _, err := realcase.Load(write(t, src, with(hidden, "command", cmd))); err == nil {
			t.Errorf("realcase.Load took the command %q", cmd)
		}
	}

	// The check runs pytest, when python3 has it.
	python := "python3"
	if p := os.Getenv(PythonEnv); p != "" {
		python = p
	}
	if err := exec.Command(python, "-m", "pytest", "--version").Run(); err != nil {
		t.Skipf("%s -m pytest is not available (%v): the check's pytest run is not tested (set %s to a Python with pytest)", python, err, PythonEnv)
	}
	chk, err := Check(ctx, dir, o)
	if err != nil {
		t.Fatal(err)
	}
	if !chk.Passed {
		t.Errorf("the check did not pass: %v (base %v, fix %v)", chk.Problems, chk.Base, chk.Fix)
	}
	if b := chk.Base["tests/test_pycalc.py::test_absolute"]; b != "fail" {
		t.Errorf("test_absolute at the base: %q, want fail", b)
	}
	// A case whose f2p test does not show the bug fails its check.
	dir2 := write(t, src, with(with(hidden, "f2p", []string{"tests/test_pycalc.py::test_add"}), "p2p", []string{"tests/test_pycalc.py::test_absolute"}))
	if _, err := Materialize(ctx, dir2, o); err != nil {
		t.Fatal(err)
	}
	chk, err = Check(ctx, dir2, o)
	if err != nil {
		t.Fatal(err)
	}
	if chk.Passed || len(chk.Problems) != 2 {
		t.Errorf("a case whose f2p passes at the base: passed %v, problems %v", chk.Passed, chk.Problems)
	}
}

func TestParsePytestSummary(t *testing.T) {
	out := "..F\n=== short test summary info ===\nPASSED tests/test_a.py::test_one\nFAILED tests/test_a.py::test_two - AssertionError: x\n" +
		"PASSED tests/test_a.py::TestK::test_p[1-2]\nERROR tests/test_b.py - ImportError: no\nXFAIL tests/test_a.py::test_x - reason\n1 failed, 2 passed\n"
	got := parsePytestSummary(out)
	want := map[string]string{
		"tests/test_a.py::test_one": "pass", "tests/test_a.py::test_two": "fail", "tests/test_a.py::TestK::test_p[1-2]": "pass",
		"tests/test_b.py": "build failed", "tests/test_a.py::test_x": "skip",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	if s := pytestStatus(got, "tests/test_b.py::test_y"); s != "build failed" {
		t.Errorf("a test of a file that did not collect: %q", s)
	}
}
