package proxytest

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ShopModule is the module of the shop proxy.
const ShopModule = "example.com/shop"

// Shop is a module proxy under dir holding example.com/shop, built from the
// stage golden set's stage-clean case (its directory stageClean): v1.0.0 is
// the case's repository (Discount truncates the amount off), v1.0.1 rounds
// it half up and adds TestDiscountRoundsHalfUp.
func Shop(dir, stageClean string) (*Proxy, error) {
	base := map[string]string{}
	src := filepath.Join(stageClean, "repo")
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
		return nil, err
	}
	fix := map[string]string{}
	for k, v := range base {
		fix[k] = v
	}
	const bug = "return total - total*pct/100"
	if !strings.Contains(base["internal/price/price.go"], bug) {
		return nil, fmt.Errorf("stage-clean's Discount changed; the shop's fix is built on %q", bug)
	}
	fix["internal/price/price.go"] = strings.Replace(base["internal/price/price.go"], bug, "return total - (total*pct+50)/100", 1)
	fix["internal/price/price_test.go"] = base["internal/price/price_test.go"] +
		"\nfunc TestDiscountRoundsHalfUp(t *testing.T) {\n\tif got := Discount(995, 10); got != 895 {\n\t\tt.Errorf(\"Discount(995, 10) = %d, want 895\", got)\n\t}\n}\n"
	p := New(dir)
	if err := p.Add(ShopModule, "v1.0.0", base); err != nil {
		return nil, err
	}
	if err := p.Add(ShopModule, "v1.0.1", fix); err != nil {
		return nil, err
	}
	return p, nil
}

// ShopCase writes a real-world stage case of the shop module (p, from Shop)
// into set/name: stage-clean's issue and facts, source.json naming the
// module and its sums, and hidden.json with the F2P test f2p. It returns
// the case's directory.
func ShopCase(p *Proxy, stageClean, set, name, f2p string) (string, error) {
	dir := filepath.Join(set, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	src, _ := json.Marshal(map[string]string{
		"repository": "example/shop", "issue": "https://github.com/example/shop/issues/1",
		"fix": "https://github.com/example/shop/commit/0123456789abcdef0123456789abcdef01234567", "parent": strings.Repeat("a", 40),
		"licence": "MIT", "licence_file": "LICENSE", "language": "go",
		"module": ShopModule, "base_version": "v1.0.0", "fix_version": "v1.0.1",
		"base_sum": p.Sums[ShopModule+"@v1.0.0"], "fix_sum": p.Sums[ShopModule+"@v1.0.1"],
	})
	hidden, _ := json.Marshal(map[string]any{
		"command": "go test -json ./internal/price", "files": []string{"internal/price/price_test.go"},
		"f2p": []string{ShopModule + "/internal/price." + f2p}, "p2p": []string{ShopModule + "/internal/price.TestTotal"},
	})
	files := map[string][]byte{"source.json": src, "hidden.json": hidden, "LICENSE": []byte("MIT License\n")}
	for _, f := range []string{"issue.md", "facts.json"} {
		b, err := os.ReadFile(filepath.Join(stageClean, f))
		if err != nil {
			return "", err
		}
		files[f] = b
	}
	for f, b := range files {
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// ShopT is Shop in a test's temporary directory, failing t on an error.
func ShopT(t testing.TB, stageClean string) *Proxy {
	t.Helper()
	p, err := Shop(filepath.Join(t.TempDir(), "proxy"), stageClean)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// ShopCaseT is ShopCase, failing t on an error.
func ShopCaseT(t testing.TB, p *Proxy, stageClean, set, name, f2p string) string {
	t.Helper()
	dir, err := ShopCase(p, stageClean, set, name, f2p)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}
