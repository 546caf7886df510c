package devcli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/sandbox"
	"github.com/roadmap-dev/roadmap/tools/realset/proxytest"
)

// shopProxy is proxytest's shop proxy, built from stage-clean.
func shopProxy(t *testing.T) *proxytest.Proxy {
	return proxytest.ShopT(t, filepath.Join(golden("stage"), "stage-clean"))
}

// shopCase writes proxytest's shop case set/name with the F2P test f2p.
func shopCase(t *testing.T, p *proxytest.Proxy, set, name, f2p string) string {
	return proxytest.ShopCaseT(t, p, filepath.Join(golden("stage"), "stage-clean"), set, name, f2p)
}

// golden is the module's golden set of kind.
func golden(kind string) string { return filepath.Join("..", "..", "testdata", "golden", kind) }

// runWithEnv runs roadmap-dev with environ (the proxy's, for the go command).
func runWithEnv(t *testing.T, environ []string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, append(environ, "RUNNER_TEMP="+t.TempDir()), &out, &errb)
	return code, out.String(), errb.String()
}

// TestEvalFetchCheck: `eval fetch --check` over two --golden sets
// materializes each case from a module proxy on disk and passes one whose
// F2P test fails at the base release and passes at the fix; a case whose F2P
// test already passes at the base fails the check, named, and the verb exits
// 1 though the other case passed. (A run whose cases all pass exits 0 with
// passed true: TestEvalRealCheckIsolated.)
func TestEvalFetchCheck(t *testing.T) {
	p := shopProxy(t)
	environ := p.Env(filepath.Join(t.TempDir(), "modcache"))

	good := filepath.Join(t.TempDir(), "good")
	shopCase(t, p, good, "shop-1-round-half-up", "TestDiscountRoundsHalfUp")
	bad := filepath.Join(t.TempDir(), "bad")
	shopCase(t, p, bad, "shop-2-already-passes", "TestDiscount")
	code, out, stderr := runWithEnv(t, environ, "eval", "fetch", "--golden", good, "--golden", bad, "--check", "--json")
	if code != ExitFindings {
		t.Fatalf("exit %d, want 1 for a case whose F2P test passes at base\n%s", code, stderr)
	}
	var rep fetchReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if len(rep.Cases) != 2 || rep.Passed {
		t.Fatalf("report %+v, want both cases and not passed", rep)
	}
	c := rep.Cases[0]
	f2p := proxytest.ShopModule + "/internal/price.TestDiscountRoundsHalfUp"
	if c.Name != "shop-1-round-half-up" || c.Status != "materialized" || c.Check == nil || !c.Check.Passed || c.Check.Base[f2p] != "fail" || c.Check.Fix[f2p] != "pass" {
		t.Errorf("case %+v check %+v", c, c.Check)
	}
	if c := rep.Cases[1]; c.Name != "shop-2-already-passes" || c.Check == nil || c.Check.Passed {
		t.Errorf("case %+v check %+v, want its check failed", c, c.Check)
	}
	if !strings.Contains(stderr, "good/shop-1-round-half-up") || !strings.Contains(stderr, "check passed") {
		t.Errorf("stderr names no progress for the first --golden set's case:\n%s", stderr)
	}
	if _, err := os.Stat(filepath.Join(good, "shop-1-round-half-up", "repo", "internal", "order", "order.go")); err != nil {
		t.Errorf("repo/ lacks the module's files: %v", err)
	}
	if !strings.Contains(stderr, "bad/shop-2-already-passes") || !strings.Contains(stderr, "TestDiscount does not fail at v1.0.0") {
		t.Errorf("stderr does not name the case and why:\n%s", stderr)
	}
}

// probeCase writes a real-world case whose hidden test reports where it
// runs: example.com/probe (v1.0.0 the bug, v1.0.1 the fix) needs
// example.com/dep from the same proxy, with no go.sum in its zip, so the
// check resolves its dependencies before the tests run. TestConfined, the
// case's P2P test, passes only as a uid of the boundary's range (80000 to
// 80999) with no value holding canary in its environment, and when it can
// neither write marker nor read secret, both outside its work tree.
func probeCase(t *testing.T, set, canary, marker, secret string) (*proxytest.Proxy, string) {
	t.Helper()
	const probe, dep = "example.com/probe", "example.com/dep"
	gomod := "module " + probe + "\n\ngo 1.21\n\nrequire " + dep + " v1.0.0\n"
	code := func(fixed bool) string {
		return fmt.Sprintf("// Package probe is fixed or not.\npackage probe\n\nimport %q\n\n// Fixed says whether the fix is in.\nfunc Fixed() bool { return dep.Yes() == %t }\n", dep, fixed)
	}
	hidden := fmt.Sprintf(`package probe

import (
	"os"
	"strings"
	"testing"
)

func TestFixed(t *testing.T) {
	if !Fixed() {
		t.Fatal("not fixed")
	}
}

func TestConfined(t *testing.T) {
	uid := os.Getuid()
	t.Logf("uid %%d", uid)
	if uid < 80000 || uid > 80999 {
		t.Errorf("runs as uid %%d, not as a uid of the boundary's", uid)
	}
	for _, kv := range os.Environ() {
		if strings.Contains(kv, %q) {
			t.Errorf("sees a credential of the caller's: %%s", kv)
		}
	}
	if err := os.WriteFile(%q, []byte("written from the case's tests"), 0o644); err == nil {
		t.Error("wrote a file outside its work tree")
	}
	if _, err := os.ReadFile(%q); err == nil {
		t.Error("read a file of the runner's outside its work tree")
	}
}
`, canary, marker, secret)
	p := proxytest.New(filepath.Join(t.TempDir(), "proxy"))
	for _, m := range []struct {
		module, version string
		files           map[string]string
	}{
		{dep, "v1.0.0", map[string]string{"go.mod": "module " + dep + "\n\ngo 1.21\n", "dep.go": "// Package dep says yes.\npackage dep\n\n// Yes is true.\nfunc Yes() bool { return true }\n"}},
		{probe, "v1.0.0", map[string]string{"go.mod": gomod, "LICENSE": "MIT License\n", "probe.go": code(false)}},
		{probe, "v1.0.1", map[string]string{"go.mod": gomod, "LICENSE": "MIT License\n", "probe.go": code(true), "probe_test.go": hidden}},
	} {
		if err := p.Add(m.module, m.version, m.files); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(set, "probe-1-confined")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src, _ := json.Marshal(map[string]string{
		"repository": "example/probe", "issue": "https://github.com/example/probe/issues/1",
		"fix": "https://github.com/example/probe/commit/0123456789abcdef0123456789abcdef01234567", "parent": strings.Repeat("a", 40),
		"licence": "MIT", "licence_file": "LICENSE", "language": "go",
		"module": probe, "base_version": "v1.0.0", "fix_version": "v1.0.1",
		"base_sum": p.Sums[probe+"@v1.0.0"], "fix_sum": p.Sums[probe+"@v1.0.1"],
	})
	hj, _ := json.Marshal(map[string]any{
		"command": "go test -json -count=1 -v .", "files": []string{"probe_test.go"},
		"f2p": []string{probe + ".TestFixed"}, "p2p": []string{probe + ".TestConfined"},
	})
	for f, b := range map[string][]byte{"source.json": src, "hidden.json": hj, "LICENSE": []byte("MIT License\n")} {
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return p, dir
}

// TestEvalRealCheckIsolated: `eval fetch --check` runs a case's tests, a
// third party's code, behind the isolation boundary a Job's model-written
// commands run behind: as a uid of the boundary's own, with none of the
// caller's credentials (GITHUB_TOKEN, nor a key under a neutral name, which
// a scrub by name would let through), unable to write or read the runner's
// files outside the work tree, at the base release with the hidden test laid
// over and at the fix alike. Its dependency came from the proxy before the
// run, since nothing downloads inside.
func TestEvalRealCheckIsolated(t *testing.T) {
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skip("the user boundary needs root on Linux; the test machines and CI run as root")
	}
	const canary = "rm-canary-3b7e0c1d"
	outside := t.TempDir()
	marker, secret := filepath.Join(outside, "marker"), filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("the runner's own"), 0o644); err != nil {
		t.Fatal(err)
	}
	set := filepath.Join(t.TempDir(), "real")
	p, _ := probeCase(t, set, canary, marker, secret)
	environ := append(p.Env(filepath.Join(t.TempDir(), "modcache")),
		"GITHUB_TOKEN=ghp_"+canary, "GH_TOKEN="+canary, "OPENAI_API_KEY=sk-"+canary, "LLM="+canary)

	code, out, stderr := runWithEnv(t, environ, "eval", "fetch", "--golden", set, "--check", "--json")
	var rep fetchReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Cases) != 1 {
		t.Fatalf("exit %d, --json %v:\n%s\n%s", code, err, out, stderr)
	}
	c := rep.Cases[0]
	if code != ExitOK || !rep.Passed || c.Check == nil || !c.Check.Passed {
		t.Fatalf("exit %d, case %+v, check %+v; want it passed, TestConfined passing at both releases\n%s", code, c, c.Check, stderr)
	}
	const confined, fixed = "example.com/probe.TestConfined", "example.com/probe.TestFixed"
	if c.Check.Base[confined] != "pass" || c.Check.Fix[confined] != "pass" || c.Check.Base[fixed] != "fail" || c.Check.Fix[fixed] != "pass" {
		t.Errorf("check %+v", c.Check)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Errorf("the case's tests wrote %s outside their work tree (%v)", marker, err)
	}
	if !strings.Contains(stderr, "isolated: model-written commands run as uid") {
		t.Errorf("stderr does not say which boundary the tests run behind:\n%s", stderr)
	}
	if strings.Contains(out+stderr, canary) {
		t.Errorf("the output holds the canary:\n%s\n%s", out, stderr)
	}
}

// TestEvalRealCheckFailsClosed: where no isolation boundary can be set up
// (not root), `eval fetch --check` fetches nothing and runs no test, saying
// why; `isolation: none` in the configuration runs them as this user.
func TestEvalRealCheckFailsClosed(t *testing.T) {
	p := shopProxy(t)
	environ := append(p.Env(filepath.Join(t.TempDir(), "modcache")), "RUNNER_TEMP="+t.TempDir())
	set := filepath.Join(t.TempDir(), "real")
	dir := shopCase(t, p, set, "shop-1-round-half-up", "TestDiscountRoundsHalfUp")
	fetch := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		e := &Env{Vars: map[string]string{}, Stdout: &out, Stderr: &errb, probe: &sandbox.Probe{OS: "linux", Euid: 1000}}
		for _, kv := range environ {
			k, v, _ := strings.Cut(kv, "=")
			e.Vars[k] = v
		}
		return run(context.Background(), e, args), errb.String()
	}
	code, stderr := fetch("eval", "fetch", "--golden", set, "--check")
	if code != ExitFindings || !strings.Contains(stderr, "no isolation boundary") || !strings.Contains(stderr, "third party's code") {
		t.Fatalf("exit %d, want 1 naming the missing boundary\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "repo")); !os.IsNotExist(err) {
		t.Errorf("the case was fetched with no boundary to check it behind (%v)", err)
	}
	cfg := filepath.Join(t.TempDir(), "roadmap.yml")
	if err := os.WriteFile(cfg, []byte("isolation: none\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stderr = fetch("eval", "fetch", "--golden", set, "--check", "--config", cfg)
	if code != ExitOK || !strings.Contains(stderr, "not isolated") || !strings.Contains(stderr, "check passed") {
		t.Fatalf("with isolation: none: exit %d, want 0\n%s", code, stderr)
	}
}
