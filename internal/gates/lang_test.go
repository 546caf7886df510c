package gates

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// langRepo is a repository of Python, TypeScript and Rust code at the
// staging commit: a function and a method, a caller of each, a test of
// each, the names written where code does not use them (a comment, a
// string), and a function that shares a method's name.
var langRepo = map[string]string{
	"shop/cart.py":       "def new_cart():\n    return Cart()\n\n\nclass Cart:\n    def add_item(self, n):\n        pass\n",
	"shop/checkout.py":   "from shop.cart import new_cart\n\n\ndef checkout():\n    cart = new_cart()\n    cart.add_item(1)\n    # new_cart in a comment\n",
	"shop/report.py":     "TITLE = \"new_cart\"  # new_cart only as text\n",
	"shop/inventory.py":  "def add_item(stock, n):\n    return stock + n\n\n\ndef restock(stock):\n    return add_item(stock, 1)\n",
	"tests/test_cart.py": "from shop.cart import new_cart\n\n\ndef test_new_cart():\n    assert new_cart()\n",
	"web/cart.ts":        "export function newCart() {\n  return new Cart();\n}\n\nexport class Cart {\n  addItem(n: number) {}\n}\n",
	"web/app.tsx":        "import { newCart } from \"./cart\";\n\nexport function App() {\n  const c = newCart();\n  c.addItem(1);\n  return <p>it's newCart</p>;\n}\n",
	"web/cart.test.ts":   "import { newCart } from \"./cart\";\n\ntest(\"new\", () => {\n  newCart();\n});\n",
	"src/cart.rs":        "pub struct Cart;\n\nimpl Cart {\n    pub fn new_cart() -> Cart {\n        Cart\n    }\n\n    pub fn add_item(&mut self) {}\n}\n",
	"src/main.rs":        "mod cart;\n\nfn main() {\n    let mut c = cart::Cart::new_cart();\n    c.add_item();\n}\n",
	"tests/cart.rs":      "#[test]\nfn builds() {\n    shop::cart::Cart::new_cart();\n}\n",
}

func setupLang(t *testing.T, planFiles map[string]string) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{}
	for k, v := range langRepo {
		files[k] = v
	}
	for k, v := range planFiles {
		files["openspec/changes/"+change+"/"+k] = v
	}
	for rel, body := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestGateCallersAndTestsLanguages: a plan that changes a Python,
// TypeScript or Rust function or method must name its callers and tests,
// found in the code of files of its language (not in comments or strings).
func TestGateCallersAndTestsLanguages(t *testing.T) {
	tasks := func(t11 string) map[string]string {
		return map[string]string{"proposal.md": "# Carts\n", "tasks.md": "## 1. Carts\n\n- [ ] 1.1 " + t11 + "; verify: `make test`\n"}
	}
	for _, tt := range []struct {
		name, task string
		says       []string // the messages, in order; none when the plan is sound
	}{
		{"a Python function", "Change `new_cart` in shop/cart.py",
			[]string{"the plan changes `new_cart` (shop/cart.py:1), which has callers the plan does not name: shop/checkout.py (checkout); and tests the plan does not name: tests/test_cart.py (test_new_cart); name each in the task that updates it"}},
		{"a Python method", "Change `Cart.add_item` in shop/cart.py",
			[]string{"the plan changes `Cart.add_item` (shop/cart.py:6), which has callers the plan does not name: shop/checkout.py (checkout); name each in the task that updates it"}},
		{"a Python function, callers and tests named", "Change `new_cart()`, its caller checkout and test_cart.py", nil},
		{"a TypeScript function", "Change `newCart` in web/cart.ts",
			[]string{"the plan changes `newCart` (web/cart.ts:1), which has callers the plan does not name: web/app.tsx (App); and tests the plan does not name: web/cart.test.ts; name each in the task that updates it"}},
		{"a TypeScript function by its module", "Change `cart.newCart` and its test cart.test.ts",
			[]string{"the plan changes `newCart` (web/cart.ts:1), which has callers the plan does not name: web/app.tsx (App); name each in the task that updates it"}},
		{"a TypeScript method", "Change `Cart.addItem`",
			[]string{"the plan changes `Cart.addItem` (web/cart.ts:6), which has callers the plan does not name: web/app.tsx (App); name each in the task that updates it"}},
		{"a Rust associated function", "Change `Cart::new_cart`",
			[]string{"the plan changes `Cart.new_cart` (src/cart.rs:4), which has callers the plan does not name: src/main.rs (main); and tests the plan does not name: tests/cart.rs (builds); name each in the task that updates it"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fs := run(t, CallersAndTests, Input{Root: setupLang(t, tasks(tt.task))})
			var got []string
			for _, f := range fs {
				got = append(got, f.Message)
			}
			if diff := cmp.Diff(tt.says, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGatePremiseLanguages: "is defined in" and "is not defined in" are
// probed in Python, TypeScript and Rust files too, and never through a
// symlink out of the work tree.
func TestGatePremiseLanguages(t *testing.T) {
	premises := []string{
		"`Cart.add_item` is defined in `shop/cart.py`",
		"`remove_item` is defined in `shop/cart.py`",
		"`newCart` is not defined in `web/cart.ts`",
		"`Cart.add_item` is defined in `src/cart.rs`",
		"`Cart` is defined in `shop/cart.rb`",
		"`outside_secret` is defined in `shop/evil.py`",
	}
	proposal := "# Carts\n\n## Premises\n\n- " + strings.Join(premises, "\n- ") + "\n"
	root := setupLang(t, map[string]string{"proposal.md": proposal, "tasks.md": "## 1. Carts\n\n- [ ] 1.1 Carts; verify: `make test`\n"})
	secret := filepath.Join(t.TempDir(), "secret.py")
	if err := os.WriteFile(secret, []byte("def outside_secret():\n    pass\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(root, "shop", "evil.py")); err != nil {
		t.Fatal(err)
	}
	fs := run(t, PremiseProbe, Input{Root: root})
	var got []string
	for _, f := range fs {
		got = append(got, f.Message)
	}
	want := []string{
		"premise \"`remove_item` is defined in `shop/cart.py`\" is false at the staging commit: shop/cart.py does not declare remove_item; it declares new_cart, Cart, Cart.add_item",
		"premise \"`newCart` is not defined in `web/cart.ts`\" is false at the staging commit: web/cart.ts declares newCart at line 1",
		"premise \"`Cart` is defined in `shop/cart.rb`\" is false at the staging commit: shop/cart.rb is not a Go, Python, JavaScript/TypeScript or Rust file",
		"premise \"`outside_secret` is defined in `shop/evil.py`\" is false at the staging commit: shop/evil.py cannot be read",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}
