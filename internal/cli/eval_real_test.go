package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/eval/realset/proxytest"
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

// TestEvalFetchCheck: `eval fetch --check` materializes a case from a
// module proxy on disk and passes it when its F2P test fails at the base
// release and passes at the fix; a case whose F2P test already passes at
// the base fails the check, named, and the verb exits 1.
func TestEvalFetchCheck(t *testing.T) {
	p := shopProxy(t)
	environ := p.Env(filepath.Join(t.TempDir(), "modcache"))

	good := filepath.Join(t.TempDir(), "good")
	shopCase(t, p, good, "shop-1-round-half-up", "TestDiscountRoundsHalfUp")
	code, out, stderr := runWithEnv(t, environ, "eval", "fetch", "--golden", good, "--check", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d, want 0\n%s", code, stderr)
	}
	var rep fetchReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if len(rep.Cases) != 1 || !rep.Passed {
		t.Fatalf("report %+v", rep)
	}
	c := rep.Cases[0]
	f2p := shopModule + "/internal/price.TestDiscountRoundsHalfUp"
	if c.Status != "materialized" || c.Check == nil || !c.Check.Passed || c.Check.Base[f2p] != "fail" || c.Check.Fix[f2p] != "pass" {
		t.Errorf("case %+v check %+v", c, c.Check)
	}
	if !strings.Contains(stderr, "shop-1-round-half-up") || !strings.Contains(stderr, "check passed") {
		t.Errorf("stderr names no progress for the case:\n%s", stderr)
	}
	if _, err := os.Stat(filepath.Join(good, "shop-1-round-half-up", "repo", "internal", "order", "order.go")); err != nil {
		t.Errorf("repo/ lacks the module's files: %v", err)
	}

	bad := filepath.Join(t.TempDir(), "bad")
	shopCase(t, p, bad, "shop-2-already-passes", "TestDiscount")
	code, _, stderr = runWithEnv(t, environ, "eval", "fetch", "--golden", good, "--golden", bad, "--check")
	if code != ExitFindings {
		t.Fatalf("exit %d, want 1 for a case whose F2P test passes at base\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "bad/shop-2-already-passes") || !strings.Contains(stderr, "TestDiscount does not fail at v1.0.0") {
		t.Errorf("stderr does not name the case and why:\n%s", stderr)
	}
	if !strings.Contains(stderr, "good/shop-1-round-half-up") {
		t.Errorf("the first --golden set was not fetched too:\n%s", stderr)
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
	if code, _, stderr := runWithEnv(t, environ, "eval", "fetch", "--golden", set, "--check"); code != ExitOK {
		t.Fatalf("eval fetch --check: exit %d\n%s", code, stderr)
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
