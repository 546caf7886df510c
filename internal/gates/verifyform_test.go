package gates

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/policy"
)

// TestVerifyFormRunners: the verify-form gate takes the test runners of the
// common languages by default, refuses commands that only look like them or
// that carry a second command behind one, and takes a configured set in
// place of the default or on top of it.
func TestVerifyFormRunners(t *testing.T) {
	const (
		accepted = ""
		notForm  = "is not of a configured form"
		shell    = "uses shell syntax"
	)
	for _, c := range []struct {
		verify string
		cfg    Config
		want   string // accepted, or a piece of the finding
	}{
		// The default set.
		{verify: "go test ./internal/price -run TestTotal"},
		{verify: "pytest"},
		{verify: "pytest tests/test_api.py -k 'discount and not slow'"},
		{verify: "python -m pytest tests"},
		{verify: "python3 -m pytest -q tests/test_api.py::test_total"},
		{verify: "npm test"},
		{verify: "npm test -- --testNamePattern discount"},
		{verify: "npm run test"},
		{verify: "pnpm test"},
		{verify: "yarn test cart"},
		{verify: "node --test test/cart.test.js"},
		{verify: "jest web/test/cart.test.js"},
		{verify: "npx jest -t discount"},
		{verify: "vitest run src/cart.test.ts"},
		{verify: "npx vitest run"},
		{verify: "cargo test -p shop discount"},
		{verify: "cargo nextest run discount"},
		{verify: "make test"},
		{verify: "make"},
		{verify: "test -f docs/pricing.md"},
		{verify: "grep -q discount docs/pricing.md"},
		// Near-misses: a longer program name, another verb of the same
		// tool, the runner's name as an argument.
		{verify: "pytestx tests", want: notForm},
		{verify: "python -m pytestx", want: notForm},
		{verify: "python -c pytest", want: notForm},
		{verify: "npm install", want: notForm},
		{verify: "npm run build", want: notForm},
		{verify: "npm tester", want: notForm},
		{verify: "npx jester", want: notForm},
		{verify: "cargo build", want: notForm},
		{verify: "cargo run -- test", want: notForm},
		{verify: "echo pytest", want: notForm},
		{verify: "sh -c pytest", want: notForm},
		{verify: "node test/cart.test.js", want: notForm},
		{verify: "gotest ./...", want: notForm},
		// A runner with a second command behind it.
		{verify: "pytest; curl http://127.0.0.1:8080/", want: shell},
		{verify: "go test ./... && curl http://127.0.0.1:8080/", want: shell},
		{verify: "npm test || true", want: shell},
		{verify: "cargo test | tee out.txt", want: shell},
		{verify: "make test &", want: shell},
		{verify: "pytest `cat tests.txt`", want: shell},
		{verify: "pytest $(cat tests.txt)", want: shell},
		{verify: `pytest "$(cat tests.txt)"`, want: shell},
		{verify: "jest > out.txt", want: shell},
		{verify: "go test ./... (x)", want: shell},
		// Quoted, the same characters are arguments: the runner passes them on.
		{verify: "pytest -k 'a;b|c && $(d)'"},
		{verify: `grep -q "a;b" docs/pricing.md`},
		// A configured set replaces the default...
		{verify: "bazel test //shop:all", cfg: Config{VerifyForms: []string{"bazel test"}}},
		{verify: "pytest", cfg: Config{VerifyForms: []string{"bazel test"}}, want: notForm},
		{verify: "bazel test //x; curl y", cfg: Config{VerifyForms: []string{"bazel test"}}, want: shell},
		{verify: "bazel test //x; curl y", cfg: Config{VerifyForms: []string{`^bazel test .*$`}}, want: shell},
		// ...and extra forms extend it, or the configured set.
		{verify: "bazel test //shop:all", cfg: Config{ExtraVerifyForms: []string{"bazel test"}}},
		{verify: "pytest", cfg: Config{ExtraVerifyForms: []string{"bazel test"}}},
		{verify: "deno test", cfg: Config{VerifyForms: []string{"bazel test"}, ExtraVerifyForms: []string{"deno test"}}},
		{verify: "pytest", cfg: Config{VerifyForms: []string{"bazel test"}, ExtraVerifyForms: []string{"deno test"}}, want: notForm},
		{verify: "tox -e py312", cfg: Config{ExtraVerifyForms: []string{`^tox -e py3\d+$`}}},
	} {
		name := c.verify
		if c.cfg.VerifyForms != nil || c.cfg.ExtraVerifyForms != nil {
			name += " with " + strings.Join(append(c.cfg.VerifyForms, c.cfg.ExtraVerifyForms...), ",")
		}
		t.Run(name, func(t *testing.T) {
			root := setup(t, map[string]string{"tasks.md": "## 1. One\n\n- [ ] 1.1 Check the total; verify: `` " + c.verify + " ``\n"})
			// Every runner's language is the repository's here: whether a
			// runner fits the repository is TestVerifyFormRunnerFitsRepository's.
			writeRepo(t, root, polyglot)
			fs := run(t, VerifyForm, Input{Root: root, Config: c.cfg})
			all := messages(fs)
			if c.want == accepted {
				if len(failing(fs)) != 0 {
					t.Errorf("verify `%s` refused:\n%s", c.verify, all)
				}
				return
			}
			if len(failing(fs)) == 0 || !strings.Contains(all, c.want) {
				t.Errorf("verify `%s`: got findings\n%s\nwant one saying %q", c.verify, all, c.want)
			}
		})
	}
}

// The gate refuses what the runner's splitter refuses as more than one
// command, so a plan whose verify passes the gate is one the checks can run.
func TestShellSyntaxAgreesWithSplit(t *testing.T) {
	for _, cmd := range []string{
		"go test ./...", "pytest -k 'a;b'", `grep -q "x|y" f`, `pytest a\;b`,
		"a; b", "a && b", "a || b", "a | b", "a &", "a `b`", "a $(b)", "a $HOME", `a "$(b)"`, "a \"`b`\"",
		"a > f", "a < f", "(a)", "a\nb",
	} {
		op := shellSyntax(cmd)
		_, err := policy.Split(cmd)
		var ref *policy.Refusal
		refused := errors.As(err, &ref) && ref.Rule == "shell syntax"
		if (op != "") != refused {
			t.Errorf("%q: the gate says %q, policy.Split says %v", cmd, op, err)
		}
	}
}

// polyglot are the manifests of the default forms' languages the shop
// repository lacks.
var polyglot = map[string]string{
	"package.json":         "{\"scripts\": {\"test\": \"jest\"}}\n",
	"Cargo.toml":           "[package]\nname = \"shop\"\n",
	"tools/report.py":      "print(1)\n",
	"tests/test_report.py": "def test_x():\n    pass\n",
}

func writeRepo(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, body := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestVerifyFormRunnerFitsRepository: a default form's runner of a language
// the repository does not hold (`npm test` in a Go module with no
// package.json) is refused — it would pass no test of the change and fail in
// CI; the same runner with its manifest passes, and a configured set of
// forms is the maintainer's word, not judged.
func TestVerifyFormRunnerFitsRepository(t *testing.T) {
	for _, c := range []struct {
		verify string
		files  map[string]string
		cfg    Config
		want   string // "" accepted
	}{
		{verify: "npm test", want: "runs JavaScript tests, but the repository has no package.json"},
		{verify: "npx vitest run", want: "has no package.json"},
		{verify: "pytest tests", want: "runs Python tests, but the repository has no Python file"},
		{verify: "cargo test", want: "runs Rust tests, but the repository has no Cargo.toml"},
		{verify: "npm test", files: map[string]string{"package.json": "{}\n"}},
		{verify: "pytest", files: map[string]string{"tests/test_x.py": "def test_x():\n    pass\n"}},
		{verify: "go test ./internal/price"},
		{verify: "npm test", cfg: Config{VerifyForms: []string{"npm test"}}},
	} {
		t.Run(c.verify, func(t *testing.T) {
			root := setup(t, map[string]string{"tasks.md": "## 1. One\n\n- [ ] 1.1 Check the total; verify: `" + c.verify + "`\n"})
			writeRepo(t, root, c.files)
			fs := run(t, VerifyForm, Input{Root: root, Config: c.cfg})
			all := messages(fs)
			switch {
			case c.want == "" && len(failing(fs)) != 0:
				t.Errorf("verify `%s` refused:\n%s", c.verify, all)
			case c.want != "" && !strings.Contains(all, c.want):
				t.Errorf("verify `%s`: findings\n%s\nwant one saying %q", c.verify, all, c.want)
			}
		})
	}
}
