package cli

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/tools/realset"
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

// fetchCase gives the case in dir its code from the proxy environ names,
// as `roadmap-dev eval fetch` does (tools/realset).
func fetchCase(t *testing.T, environ []string, dir string) {
	t.Helper()
	if _, err := realset.Materialize(context.Background(), dir, realset.Options{Env: environ, TempDir: t.TempDir()}); err != nil {
		t.Fatalf("eval fetch: %v", err)
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
	if code != ExitUsage || !strings.Contains(stderr, "shop-1-round-half-up") || !strings.Contains(stderr, "roadmap-dev eval fetch") {
		t.Fatalf("before eval fetch: exit %d, want 2 naming the case and eval fetch\n%s", code, stderr)
	}
	fetchCase(t, environ, filepath.Join(set, "shop-1-round-half-up"))
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
	// Fetched, not checked: the check is tools/devcli's TestEvalFetchCheck's, and each of
	// its sides is a go test behind the boundary.
	fetchCase(t, environ, dir)
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
