package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/eval/realset/proxytest"
	"github.com/roadmap-dev/roadmap/internal/sandbox"
)

const shopModule = "example.com/shop"

// shopProxy is a module proxy on disk holding example.com/shop: v1.0.0 is
// the stage-clean case's repository (Discount truncates the amount off),
// v1.0.1 rounds it half up and adds TestDiscountRoundsHalfUp.
func shopProxy(t *testing.T) *proxytest.Proxy {
	t.Helper()
	base := map[string]string{}
	src := filepath.Join(golden("stage"), "stage-clean", "repo")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(src, p)
		base[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	fix := map[string]string{}
	for k, v := range base {
		fix[k] = v
	}
	const bug = "return total - total*pct/100"
	if !strings.Contains(base["internal/price/price.go"], bug) {
		t.Fatalf("stage-clean's Discount changed; this test builds its fix on %q", bug)
	}
	fix["internal/price/price.go"] = strings.Replace(base["internal/price/price.go"], bug, "return total - (total*pct+50)/100", 1)
	fix["internal/price/price_test.go"] = base["internal/price/price_test.go"] +
		"\nfunc TestDiscountRoundsHalfUp(t *testing.T) {\n\tif got := Discount(995, 10); got != 895 {\n\t\tt.Errorf(\"Discount(995, 10) = %d, want 895\", got)\n\t}\n}\n"
	p := proxytest.New(filepath.Join(t.TempDir(), "proxy"))
	if err := p.Add(shopModule, "v1.0.0", base); err != nil {
		t.Fatal(err)
	}
	if err := p.Add(shopModule, "v1.0.1", fix); err != nil {
		t.Fatal(err)
	}
	return p
}

// shopCase writes a real-world stage case of the shop module into set:
// stage-clean's issue and facts, source.json naming the module and its
// sums, and hidden.json with the F2P test f2p.
func shopCase(t *testing.T, p *proxytest.Proxy, set, name, f2p string) string {
	t.Helper()
	dir := filepath.Join(set, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	clean := filepath.Join(golden("stage"), "stage-clean")
	src, _ := json.Marshal(map[string]string{
		"repository": "example/shop", "issue": "https://github.com/example/shop/issues/1",
		"fix": "https://github.com/example/shop/commit/0123456789abcdef0123456789abcdef01234567", "parent": strings.Repeat("a", 40),
		"licence": "MIT", "licence_file": "LICENSE", "language": "go",
		"module": shopModule, "base_version": "v1.0.0", "fix_version": "v1.0.1",
		"base_sum": p.Sums[shopModule+"@v1.0.0"], "fix_sum": p.Sums[shopModule+"@v1.0.1"],
	})
	hidden, _ := json.Marshal(map[string]any{
		"command": "go test -json ./internal/price", "files": []string{"internal/price/price_test.go"},
		"f2p": []string{shopModule + "/internal/price." + f2p}, "p2p": []string{shopModule + "/internal/price.TestTotal"},
	})
	files := map[string][]byte{"source.json": src, "hidden.json": hidden, "LICENSE": []byte("MIT License\n")}
	for _, f := range []string{"issue.md", "facts.json"} {
		b, err := os.ReadFile(filepath.Join(clean, f))
		if err != nil {
			t.Fatal(err)
		}
		files[f] = b
	}
	for f, b := range files {
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runWithEnv runs roadmap with environ (the proxy's, for the go command).
func runWithEnv(t *testing.T, environ []string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, append(environ, "RUNNER_TEMP="+t.TempDir()), strings.NewReader(""), &out, &errb)
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
	f2p := shopModule + "/internal/price.TestDiscountRoundsHalfUp"
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

// TestEvalStageRealCase runs `eval stage` on a real-world case whose code
// came from a module proxy on disk: before `eval fetch` the case is refused
// naming the fetch; after it, the replay skips it (no recorded exchanges,
// saying so) and a model of its own on loopback writes its plan, scored as
// TestEvalProvider scores stage-clean's.
func TestEvalStageRealCase(t *testing.T) {
	p := shopProxy(t)
	environ := p.Env(filepath.Join(t.TempDir(), "modcache"))
	set := filepath.Join(t.TempDir(), "real-stage")
	shopCase(t, p, set, "shop-1-round-half-up", "TestDiscountRoundsHalfUp")
	srv := &planServer{tasks: "## 1. Round the amount off half up (AC1)\n\n- [ ] 1.1 Add a failing test `TestDiscountRoundsHalfUp` to `internal/price/price_test.go`, beside `TestDiscount`; verify: `go test ./internal/price -run TestDiscountRoundsHalfUp` fails\n- [ ] 1.2 Round half up in `Discount` in `internal/price/price.go`; its caller in `internal/order/order.go` keeps working; verify: `go test ./internal/price ./internal/order`\n"}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	model := []string{"--provider", "openai-compatible", "--base-url", ts.URL + "/v1", "--model", "test-model"}

	code, _, stderr := runEvalCLI(t, append([]string{"eval", "stage", "--golden", set}, model...)...)
	if code != ExitUsage || !strings.Contains(stderr, "shop-1-round-half-up") || !strings.Contains(stderr, "roadmap eval fetch") {
		t.Fatalf("before eval fetch: exit %d, want 2 naming the case and eval fetch\n%s", code, stderr)
	}
	if code, _, stderr := runWithEnv(t, environ, "eval", "fetch", "--golden", set); code != ExitOK {
		t.Fatalf("eval fetch: exit %d\n%s", code, stderr)
	}
	code, _, stderr = runEvalCLI(t, "eval", "stage", "--golden", set)
	if code != ExitUsage || !strings.Contains(stderr, "shop-1-round-half-up") || !strings.Contains(stderr, "skipped: a real-world case with no recorded exchanges") {
		t.Fatalf("on the replay: exit %d, want 2 with the case skipped, saying why\n%s", code, stderr)
	}

	code, out, stderr := runEvalCLI(t, append([]string{"eval", "stage", "--golden", set, "--json"}, model...)...)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	doc := checkEvalJSON(t, out, 1, "failing", "openspec_valid", "facts")
	c := doc.Cases[0]
	if c["name"] != "shop-1-round-half-up" || c["mode"] != "stage" || c["plan"] != "discounts-round-half-up" || c["clean"] != true || c["score"] != 1.0 {
		t.Errorf("the case: %v", c)
	}
	srv.mu.Lock()
	n := srv.requests
	srv.mu.Unlock()
	if n < 4 {
		t.Errorf("the model answered %d requests; want the planner's four and the verifier's", n)
	}
}

// TestEvalImplementRealCase: a fetched real-world implement case (its plan
// copied to repo/openspec/changes/) is skipped on the replay, saying why,
// and run on a model of its own: the implement Job starts on repo/ with the
// staged plan (this model answers the agent nothing, so the verdict is NO;
// the wiring is what is shown).
func TestEvalImplementRealCase(t *testing.T) {
	p := shopProxy(t)
	environ := p.Env(filepath.Join(t.TempDir(), "modcache"))
	set := filepath.Join(t.TempDir(), "real-implement")
	dir := shopCase(t, p, set, "shop-1-round-half-up", "TestDiscountRoundsHalfUp")
	change := filepath.Join(golden("implement"), "fix-discount", "repo", "openspec", "changes", "round-discounts")
	if err := os.CopyFS(filepath.Join(dir, "plan", "round-discounts"), os.DirFS(change)); err != nil {
		t.Fatal(err)
	}
	expected := `{"f2p": ["example.com/shop/internal/price.TestDiscountRoundsHalfUp"], "p2p": ["example.com/shop/internal/price.TestTotal"]}`
	if err := os.WriteFile(filepath.Join(dir, "expected.json"), []byte(expected), 0o644); err != nil {
		t.Fatal(err)
	}
	// Fetched, not checked: the check is TestEvalFetchCheck's, and each of
	// its sides is a go test behind the boundary.
	if code, _, stderr := runWithEnv(t, environ, "eval", "fetch", "--golden", set); code != ExitOK {
		t.Fatalf("eval fetch: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "repo", "openspec", "changes", "round-discounts", "tasks.md")); err != nil {
		t.Fatalf("the plan is not staged in repo/: %v", err)
	}
	code, _, stderr := runEvalCLI(t, "eval", "implement", "--golden", set)
	if code != ExitUsage || !strings.Contains(stderr, "shop-1-round-half-up") || !strings.Contains(stderr, "skipped: a real-world case with no recorded exchanges") {
		t.Fatalf("on the replay: exit %d, want 2 with the case skipped, saying why\n%s", code, stderr)
	}
	srv := &planServer{}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	code, out, stderr := runEvalCLI(t, "eval", "implement", "--golden", set, "--provider", "openai-compatible", "--base-url", ts.URL+"/v1", "--model", "test-model", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	doc := checkEvalJSON(t, out, 1, "verdict", "jobs")
	c := doc.Cases[0]
	srv.mu.Lock()
	n := srv.requests
	srv.mu.Unlock()
	if c["name"] != "shop-1-round-half-up" || c["jobs"].(float64) < 1 || n == 0 {
		t.Errorf("the case: %v after %d model requests; want a Job that asked the model", c, n)
	}

	// With the hand-written case's recorded exchanges (its repository is
	// this module's base), the replay runs the real case through the Job
	// to FULL: the agent's test fails at the base and passes at the head.
	if err := os.CopyFS(filepath.Join(dir, "fixtures"), os.DirFS(filepath.Join(golden("implement"), "fix-discount", "fixtures"))); err != nil {
		t.Fatal(err)
	}
	code, out, stderr = runEvalCLI(t, "eval", "implement", "--golden", set, "--json")
	if code != ExitOK {
		t.Fatalf("on the replay with fixtures/: exit %d\n%s", code, stderr)
	}
	if c := checkEvalJSON(t, out, 1, "verdict").Cases[0]; c["verdict"] != "FULL" {
		t.Errorf("on the replay with fixtures/: %v, want FULL", c)
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
		e := newEnv(args, environ, strings.NewReader(""), &out, &errb)
		e.probe = &sandbox.Probe{OS: "linux", Euid: 1000}
		return run(context.Background(), e), errb.String()
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
