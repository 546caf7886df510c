package stage

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSymbolIndexLanguages: the planner's symbol index finds declarations
// in Go, Python, JavaScript/TypeScript and Rust (issue 28). Each sample
// repository under testdata/symbols declares top-level functions, a
// class, struct or other types, methods and constants, and hides
// declaration-shaped text in comments and strings and nested functions,
// which are not top-level declarations: the index names where each symbol
// is declared, by line, kind and (for a method) its type, and nothing for
// the others.
func TestSymbolIndexLanguages(t *testing.T) {
	for _, tt := range []struct {
		lang, issue string
		want        []string
	}{
		{"go", "`MaxItems`, `Cart`, `NewCart`, `AddItem`, `loadCart`, `helperInner`, `NotAFunction`", []string{
			"MaxItems: shop/cart.go:4 (const)",
			"Cart: shop/cart.go:7 (type)",
			"NewCart: shop/cart.go:10 (func)",
			"AddItem: shop/cart.go:13 (method of Cart)",
			"loadCart: shop/cart.go:15 (func)",
			"helperInner: no declaration found; used in shop/cart.go",
			"NotAFunction: no declaration found; used in shop/cart.go",
		}},
		{"python", "`MAX_ITEMS`, `default_tax`, `Cart`, `add_item()`, `size()`, `checkout_async`, `helper_inner`, `new_cart`, `load_cart`, `NotAFunction`, `NotAClass`, `not_a_method`", []string{
			"MAX_ITEMS: shop/cart.py:7 (const)",
			"default_tax: shop/cart.py:8 (var)",
			"Cart: shop/cart.py:12 (class)",
			"add_item: shop/cart.py:22 (method of Cart)",
			"size: shop/cart.py:19 (method of Cart)",
			"checkout_async: shop/cart.py:26 (method of Cart)",
			"helper_inner: no declaration found; used in shop/cart.py",
			"new_cart: shop/cart.py:32 (func)",
			"load_cart: shop/cart.py:37 (func)",
			"NotAFunction: no declaration found; used in shop/cart.py",
			"NotAClass: no declaration found; used in shop/cart.py",
			"not_a_method: no declaration found; used in shop/cart.py",
		}},
		{"js", "`MAX_ITEMS`, `CartLine`, `CartId`, `Status`, `Cart`, `fromJSON`, `addItem`, `size()`, `totalPrice`, `loadCart`, `helperInner`, `taxRates`, `NotAFunction`, `NotAClass`, `pattern()`", []string{
			"MAX_ITEMS: src/cart.ts:5 (const)",
			"CartLine: src/cart.ts:8 (interface)",
			"CartId: src/cart.ts:13 (type)",
			"Status: src/cart.ts:15 (enum)",
			"Cart: src/cart.ts:17 (class)",
			"fromJSON: src/cart.ts:20 (method of Cart)",
			"addItem: src/cart.ts:24 (method of Cart)",
			"size: src/cart.ts:29 (method of Cart)",
			"totalPrice: src/cart.ts:33 (method of Cart)",
			"loadCart: src/cart.ts:36 (func)",
			"helperInner: no declaration found; used in src/cart.ts",
			"taxRates: src/tax.js:3 (func)",
			"NotAFunction: no declaration found; used in src/cart.ts",
			"NotAClass: no declaration found; used in src/cart.ts",
			"pattern: src/cart.ts:6 (const)",
		}},
		{"rust", "`MAX_ITEMS`, `GREETING`, `Cart`, `Status`, `Priced`, `unit_price`, `new_cart`, `add_item`, `fmt()`, `load_cart`, `helper_inner`, `base_price`, `cart_of`, `NotAFunction`, `NotAStruct`", []string{
			"MAX_ITEMS: src/lib.rs:4 (const)",
			"GREETING: src/lib.rs:5 (static)",
			"Cart: src/lib.rs:9 (struct)",
			"Status: src/lib.rs:13 (enum)",
			"Priced: src/lib.rs:15 (trait)",
			"unit_price: src/lib.rs:16 (method of Priced)",
			"new_cart: src/lib.rs:20 (method of Cart)",
			"add_item: src/lib.rs:24 (method of Cart)",
			"fmt: src/lib.rs:31 (method of Cart)",
			"load_cart: src/lib.rs:36 (func)",
			"helper_inner: no declaration found; used in src/lib.rs",
			"base_price: src/lib.rs:43 (func)",
			"cart_of: src/lib.rs:48 (macro)",
			"NotAFunction: no declaration found; used in src/lib.rs",
			"NotAStruct: no declaration found; used in src/lib.rs",
		}},
	} {
		t.Run(tt.lang, func(t *testing.T) {
			m := newRepoMap(filepath.Join("testdata", "symbols", tt.lang), "Rework the cart\n\n"+tt.issue)
			if m.index == nil {
				t.Fatal("no symbol index in the planner's prompt")
			}
			got := strings.Split(strings.TrimSuffix(m.index.Text, "\n"), "\n")
			for i, l := range got {
				// Where each is declared; its callers and tests are
				// TestPlannerContextHasCallersAndTests'.
				got[i], _, _ = strings.Cut(l, "; called from ")
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("the symbol index (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSymbolIndexSymlinks: a symlink in the work tree, to a file or a
// directory outside it, is not followed: what it leads to is neither
// declared nor used as far as the index says.
func TestSymbolIndexSymlinks(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.py"), []byte("def outside_secret():\n    pass\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "lib.rs"), []byte("pub fn outside_fn() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "cart.py"), []byte("def new_cart():\n    pass\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"evil.py": filepath.Join(outside, "secret.py"), "src": outside} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	m := newRepoMap(root, "`new_cart`, `outside_secret` and `outside_fn`")
	want := "new_cart: cart.py:1 (func); called from no other file; tested in no test file (plan one)\n" +
		"outside_secret: declared nowhere in the repository and used nowhere\n" +
		"outside_fn: declared nowhere in the repository and used nowhere\n"
	if m.index == nil || m.index.Text != want {
		t.Errorf("the symbol index:\n%v\nwant:\n%s", m.index, want)
	}
}
