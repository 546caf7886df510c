package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/f2p"
)

// implementGolden is the hand-written implement set.
var implementGolden = filepath.Join("..", "..", "testdata", "golden", "implement")

const (
	hiddenHalfUp  = "example.com/shop/internal/price.TestHiddenDiscountRoundsHalfUp"
	ownHalfUp     = "example.com/shop/internal/price.TestDiscountRoundsHalfUp"
	hiddenClamped = "example.com/shop/internal/price.TestHiddenDiscountNeverBelowZero"
)

// clampedTest is a hidden test the recorded fix-discount agent does not
// meet: a discount of more than 100% must cost nothing, not a negative
// price. Its code takes 150% of 500 off and returns -250, at main and at
// the head alike.
const clampedTest = `package price

import "testing"

func TestHiddenDiscountNeverBelowZero(t *testing.T) {
	if got := Discount(500, 150); got != 0 {
		t.Errorf("Discount(500, 150) = %d, want 0", got)
	}
}
`

// copyCase copies the golden case name into set under as, with
// expected.json's f2p set to f2p (nil keeps it) and the files in add
// written into the case (slash paths relative to it).
func copyCase(t *testing.T, set, name, as string, f2p []string, add map[string]string) string {
	t.Helper()
	dst := filepath.Join(set, as)
	if err := os.CopyFS(dst, os.DirFS(filepath.Join(implementGolden, name))); err != nil {
		t.Fatal(err)
	}
	if f2p != nil {
		p := filepath.Join(dst, "expected.json")
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		m["f2p"] = f2p
		if data, err = json.Marshal(m); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for rel, body := range add {
		p := filepath.Join(dst, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// TestEvalImplementHiddenTests: the verdict comes from the case's hidden
// tests, laid over main and the head only by the judge. fix-discount's
// recorded agent writes the fix and its own passing test; judged by a hidden
// test its fix meets, the case is FULL (TestEvalImplementReport, on make
// eval's play of the case); judged also by one it does not meet (a discount
// over 100% costing nothing), it is PARTIAL, though its own test passes. A hidden/ that is a symlink, holds one, names a path in .git or
// one that climbs out is refused before any Job runs (f2p's
// TestCompareLaysOverlay refuses "../" paths laid over a tree, which a
// directory cannot name).
func TestEvalImplementHiddenTests(t *testing.T) {
	if testing.Short() {
		t.Skip("plays the hidden-tests case through implement (make test runs it)")
	}
	t.Run("refused", func(t *testing.T) {
		outside := t.TempDir()
		if err := os.WriteFile(filepath.Join(outside, "x_test.go"), []byte(clampedTest), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name string
			make func(dir string) error
			want string
		}{
			{"hidden/ a symlink", func(dir string) error {
				if err := os.RemoveAll(filepath.Join(dir, "hidden")); err != nil {
					return err
				}
				return os.Symlink(outside, filepath.Join(dir, "hidden"))
			}, "hidden/ is a symlink"},
			{"a file in hidden/ a symlink", func(dir string) error {
				return os.Symlink(filepath.Join(outside, "x_test.go"), filepath.Join(dir, "hidden", "internal", "price", "x_test.go"))
			}, "hidden/internal/price/x_test.go is a symlink"},
			{"a directory in hidden/ a symlink", func(dir string) error {
				return os.Symlink(outside, filepath.Join(dir, "hidden", "internal", "more"))
			}, "hidden/internal/more is a symlink"},
			{"a path in .git", func(dir string) error {
				p := filepath.Join(dir, "hidden", ".git", "hooks", "pre-commit")
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					return err
				}
				return os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755)
			}, `".git/hooks/pre-commit" names a path in .git`},
			{`a name that climbs out (..\\)`, func(dir string) error {
				return os.WriteFile(filepath.Join(dir, "hidden", `..\escape_test.go`), []byte(clampedTest), 0o644)
			}, `"..\\escape_test.go" is not a clean slash path inside the repository`},
			{"hidden a file", func(dir string) error {
				if err := os.RemoveAll(filepath.Join(dir, "hidden")); err != nil {
					return err
				}
				return os.WriteFile(filepath.Join(dir, "hidden"), []byte(clampedTest), 0o644)
			}, "hidden is not a directory"},
			{"hidden/ empty", func(dir string) error {
				if err := os.RemoveAll(filepath.Join(dir, "hidden")); err != nil {
					return err
				}
				return os.Mkdir(filepath.Join(dir, "hidden"), 0o755)
			}, "hidden/ holds no file"},
		} {
			t.Run(c.name, func(t *testing.T) {
				set := filepath.Join(t.TempDir(), "set")
				dir := copyCase(t, set, "fix-discount", "fix-discount", nil, nil)
				if err := c.make(dir); err != nil {
					t.Fatal(err)
				}
				_, err := Implement(context.Background(), Options{Dir: set, TempDir: t.TempDir()})
				if err == nil || !strings.Contains(err.Error(), "case fix-discount: ") || !strings.Contains(err.Error(), c.want) {
					t.Errorf("err = %v, want the case refused saying %q", err, c.want)
				}
			})
		}
	})

	t.Run("judged", func(t *testing.T) {
		// The case as the golden set has it, its hidden test met, is judged in
		// TestEvalImplementReport on make eval's play.
		set := filepath.Join(t.TempDir(), "set")
		copyCase(t, set, "fix-discount", "hidden-unmet", []string{hiddenHalfUp, hiddenClamped},
			map[string]string{"hidden/internal/price/clamp_hidden_test.go": clampedTest})
		var lines []string
		rep, err := Implement(context.Background(), Options{Dir: set, TempDir: t.TempDir(), Progress: func(f string, a ...any) {
			lines = append(lines, fmt.Sprintf(f, a...))
		}})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Cases) != 1 || len(lines) != 1 {
			t.Fatalf("%d cases, %d progress lines; want 1 each", len(rep.Cases), len(lines))
		}
		unmet := rep.Cases[0]
		t.Log(lines)
		if unmet.Verdict != Partial || unmet.Score != 0.5 {
			t.Fatalf("verdict %s (%v), want PARTIAL: the agent's fix meets one hidden test of two", unmet.Verdict, unmet.Score)
		}
		if !slices.Contains(unmet.F2P, ownHalfUp) || !slices.Contains(unmet.F2P, hiddenHalfUp) {
			t.Errorf("f2p %v, want the agent's own test and the hidden half-up test", unmet.F2P)
		}
		if slices.Contains(unmet.F2P, hiddenClamped) || slices.Contains(unmet.P2P, hiddenClamped) {
			t.Errorf("the unmet hidden test passed at the head: f2p %v, p2p %v", unmet.F2P, unmet.P2P)
		}
		if v := Judge([]string{ownHalfUp}, unmet.WantP2P, unmet.F2P, unmet.P2P); v != Full {
			t.Errorf("judged by its own test the item is %s; the point is that it would be FULL", v)
		}
		if !slices.Equal(unmet.Hidden, []string{"internal/price/clamp_hidden_test.go", "internal/price/discount_hidden_test.go"}) {
			t.Errorf("hidden %v, want both hidden files", unmet.Hidden)
		}
		if !strings.Contains(lines[0], "judged by 2 hidden test file(s)") {
			t.Errorf("the progress line does not say the case was judged by hidden tests:\n%s", lines[0])
		}
	})
}

var (
	goTestFunc = regexp.MustCompile(`(?m)^func (Test\w+)\(`)
	goModule   = regexp.MustCompile(`(?m)^module\s+(\S+)`)
	pyTestFunc = regexp.MustCompile(`(?m)^def (test_\w+)\(`)
)

// hiddenTests are the tests a case's hidden files declare, as `roadmap ci
// fail-to-pass` names them: for a Go case (repo/go.mod) the import path of
// the file's directory, a dot, the test; for a Python case (no go.mod,
// hidden *.py files) the file's path without .py, dotted, a dot, the test,
// as pytest's JUnit XML names it. It fails the test for a case that is
// neither.
func hiddenTests(t *testing.T, name, dir string, hidden []f2p.File) map[string]bool {
	t.Helper()
	declared := map[string]bool{}
	mod, err := os.ReadFile(filepath.Join(dir, "repo", "go.mod"))
	if errors.Is(err, os.ErrNotExist) {
		for _, f := range hidden {
			if path.Ext(f.Path) != ".py" {
				t.Errorf("%s: no repo/go.mod, and the hidden %s is not a Python file", name, f.Path)
				continue
			}
			module := strings.ReplaceAll(strings.TrimSuffix(f.Path, ".py"), "/", ".")
			for _, fn := range pyTestFunc.FindAllSubmatch(f.Data, -1) {
				declared[module+"."+string(fn[1])] = true
			}
		}
		return declared
	}
	m := goModule.FindSubmatch(mod)
	if err != nil || m == nil {
		t.Errorf("%s: no module in repo/go.mod: %v", name, err)
		return declared
	}
	for _, f := range hidden {
		for _, fn := range goTestFunc.FindAllSubmatch(f.Data, -1) {
			declared[string(m[1])+"/"+path.Dir(f.Path)+"."+string(fn[1])] = true
		}
	}
	return declared
}

// TestEvalImplementCasesHideTheirTests holds every hand-written implement
// case to hidden tests: it has a hidden/ of Go or Python test files, every
// test its expected.json's f2p names is one of them (hiddenTests), and
// neither the hidden files' paths nor their
// tests' names appear in what the agent is given or replays (issue.md,
// repo/, fixtures/).
func TestEvalImplementCasesHideTheirTests(t *testing.T) {
	names, err := caseDirs(implementGolden)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		dir := filepath.Join(implementGolden, name)
		hidden, err := readHidden(dir)
		if err != nil || len(hidden) == 0 {
			t.Errorf("%s: hidden tests %d, %v; want a hidden/ with test files", name, len(hidden), err)
			continue
		}
		declared := hiddenTests(t, name, dir, hidden)
		var secrets []string
		for _, f := range hidden {
			secrets = append(secrets, f.Path)
		}
		for test := range declared {
			secrets = append(secrets, test[strings.LastIndex(test, ".")+1:])
		}
		src, err := os.ReadFile(filepath.Join(dir, "expected.json"))
		if err != nil {
			t.Fatal(err)
		}
		want, err := ParseImplementExpected(src)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, test := range want.F2P {
			if !declared[test] {
				t.Errorf("%s: expected.json's f2p %s is not a hidden test (hidden: %v)", name, test, declared)
			}
		}
		seen := os.DirFS(dir)
		err = fs.WalkDir(seen, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !(p == "issue.md" || strings.HasPrefix(p, "repo/") || strings.HasPrefix(p, "fixtures/")) {
				return err
			}
			data, err := fs.ReadFile(seen, p)
			if err != nil {
				return err
			}
			for _, s := range secrets {
				if strings.Contains(string(data), s) {
					t.Errorf("%s: %s names the hidden %s: the agent would see it", name, p, s)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
