package f2p

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// side is what a fake runner does in one tree: the JUnit sample it writes
// (testdata/junit/NAME, "" for none) and how it exits.
type side struct {
	report string
	exit   int
}

// runnerTree is a test runner in a worktree: it writes its side's report
// where the command writes it, as the real runner would, and exits.
type runnerTree struct {
	t    *testing.T
	dir  string
	at   string // where the report goes, relative to the tree's top
	side side
}

func (r runnerTree) Run(_ context.Context, argv []string, _ io.Writer) (Exit, error) {
	if r.side.report != "" {
		body, err := os.ReadFile(filepath.Join("testdata", "junit", r.side.report))
		if err != nil {
			r.t.Fatal(err)
		}
		p := filepath.Join(r.dir, filepath.FromSlash(r.at))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(p, body, 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	return Exit{Code: r.side.exit, Stderr: fmt.Sprintf("%s exited %d", argv[0], r.side.exit)}, nil
}

func (runnerTree) Close() error { return nil }

// TestFailToPassJUnit runs `roadmap ci fail-to-pass`'s comparison over a
// real base and head whose runners write JUnit XML in the shapes of pytest,
// jest-junit and cargo-nextest (testdata/junit/README.md), and over one
// that writes nothing to read, which the run says plainly.
func TestFailToPassJUnit(t *testing.T) {
	for _, c := range []struct {
		name       string
		command    string
		junit      string // --junit; "" detects it from the command
		at         string // where the runner writes its report
		base, head side
		want       Report // commits, exit codes and stderr left out
		logs       []string
	}{
		{
			name:    "pytest --junitxml, detected",
			command: "python -m pytest --junitxml=reports/pytest.xml tests",
			at:      "reports/pytest.xml",
			base:    side{"pytest-base.xml", 1}, head: side{"pytest-head.xml", 1},
			want: Report{
				F2P:     []string{"tests.test_cart.test_discount", "tests.test_cart.test_refund[0-0]", "tests.test_cart.test_refund[2-3]"},
				P2P:     []string{"tests.test_cart.test_total"},
				Broken:  []string{"tests.test_cart.test_rounding"},
				Failing: []string{},
				Base:    Run{Tests: 4, Results: KindJUnit}, Head: Run{Tests: 6, Results: KindJUnit},
			},
			logs: []string{"reading the JUnit XML python writes at reports/pytest.xml"},
		},
		{
			name:    "jest with jest-junit, detected",
			command: "npx jest --ci --reporters=default --reporters=jest-junit",
			at:      "junit.xml",
			base:    side{"jest-junit-base.xml", 1}, head: side{"jest-junit-head.xml", 0},
			want: Report{
				F2P:     []string{"cart applies a discount", "refund returns the discount too"},
				P2P:     []string{"cart adds items"},
				Broken:  []string{},
				Failing: []string{},
				Passed:  true,
				Base:    Run{Tests: 3, Results: KindJUnit}, Head: Run{Tests: 4, Results: KindJUnit},
			},
		},
		{
			name:    "cargo-nextest, the base does not build",
			command: "cargo nextest run --profile ci",
			junit:   "target/nextest/ci/junit.xml",
			at:      "target/nextest/ci/junit.xml",
			base:    side{"", 101}, head: side{"nextest-head.xml", 100},
			want: Report{
				// A test that failed and then passed on a retry passed.
				F2P:     []string{"shop.cart::tests::adds_items", "shop.cart::tests::applies_discount", "shop::refund.refund_returns_discount"},
				P2P:     []string{},
				Broken:  []string{},
				Failing: []string{"shop.cart::tests::rounds_to_cents"},
				Passed:  true,
				Base: Run{Results: KindJUnit,
					Note: "the base run exited 101 and wrote no JUnit file at target/nextest/ci/junit.xml: none of its tests passed"},
				Head: Run{Tests: 4, Results: KindJUnit},
			},
			logs: []string{"the base run exited 101 and wrote no JUnit file"},
		},
		{
			name:    "cargo-nextest, the head does not build",
			command: "cargo nextest run --profile ci",
			junit:   "target/nextest/ci/*.xml",
			at:      "target/nextest/ci/junit.xml",
			base:    side{"nextest-head.xml", 100}, head: side{"", 101},
			want: Report{
				F2P:     []string{},
				P2P:     []string{},
				Broken:  []string{"shop.cart::tests::adds_items", "shop.cart::tests::applies_discount", "shop::refund.refund_returns_discount"},
				Failing: []string{},
				Base:    Run{Tests: 4, Results: KindJUnit},
				Head: Run{Results: KindJUnit,
					Note: "the head run exited 101 and wrote no JUnit file at target/nextest/ci/*.xml: none of its tests passed"},
			},
		},
		{
			name:    "a report with no test case",
			command: "npx jest --reporters jest-junit",
			at:      "junit.xml",
			base:    side{"jest-junit-empty.xml", 0}, head: side{"jest-junit-empty.xml", 0},
			want: Report{
				F2P: []string{}, P2P: []string{}, Broken: []string{}, Failing: []string{},
				Base: Run{Results: KindJUnit, Note: "the base run's JUnit files at junit.xml hold no test case"},
				Head: Run{Results: KindJUnit, Note: "the head run's JUnit files at junit.xml hold no test case"},
			},
			logs: []string{"the head run's JUnit files at junit.xml hold no test case"},
		},
		{
			name:    "a runner that writes nothing to read",
			command: "npm test",
			base:    side{"", 1}, head: side{"", 0},
			want: Report{
				F2P: []string{"npm test"}, P2P: []string{}, Broken: []string{}, Failing: []string{},
				Passed: true,
				Base:   Run{Tests: 1, Results: KindExit, Note: exitNote([]string{"npm", "test"})},
				Head:   Run{Tests: 1, Results: KindExit, Note: exitNote([]string{"npm", "test"})},
			},
			logs: []string{"npm test gives no test results to read (no go test -json, no JUnit XML): each run is judged by its exit code alone"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep, logs, err := compareWith(t, c.command, c.junit, c.at, c.base, c.head)
			if err != nil {
				t.Fatal(err)
			}
			ignore := cmpopts.IgnoreFields(Run{}, "Commit", "ExitCode", "Stderr")
			if diff := cmp.Diff(c.want, rep, ignore); diff != "" {
				t.Errorf("report (-want +got):\n%s", diff)
			}
			for _, l := range c.logs {
				if !strings.Contains(logs, l) {
					t.Errorf("no log line says %q:\n%s", l, logs)
				}
			}
		})
	}

	t.Run("a glob that names no file, and the command passed", func(t *testing.T) {
		_, _, err := compareWith(t, "make junit", "out/*.xml", "elsewhere/report.xml", side{"pytest-base.xml", 0}, side{"pytest-head.xml", 0})
		var bad *InputError
		if !errors.As(err, &bad) || !strings.Contains(err.Error(), "exited 0 and wrote no JUnit file") {
			t.Errorf("err = %v, want an InputError saying no JUnit file was written", err)
		}
	})
}

// compareWith compares a base and a head commit of a real repository, the
// runner in each tree doing what its side says.
func compareWith(t *testing.T, command, junit, at string, base, head side) (Report, string, error) {
	t.Helper()
	h := newHistory(t)
	h.write("", "side.txt", "base\n")
	baseSHA := h.person("the base")
	h.write("", "side.txt", "head\n")
	headSHA := h.person("the change")
	open := func(_ context.Context, dir string) (Tree, error) {
		b, err := os.ReadFile(filepath.Join(dir, "side.txt"))
		if err != nil {
			return nil, err
		}
		s := base
		if strings.TrimSpace(string(b)) == "head" {
			s = head
		}
		return runnerTree{t: t, dir: dir, at: at, side: s}, nil
	}
	var logs strings.Builder
	rep, err := Options{
		Repo: h.repo, Base: baseSHA, Head: headSHA, Command: strings.Fields(command), JUnit: junit,
		Open: open, TempDir: t.TempDir(),
		Log: func(format string, a ...any) { fmt.Fprintf(&logs, format+"\n", a...) },
	}.Compare(context.Background())
	return rep, logs.String(), err
}
