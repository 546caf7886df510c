package strength

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/roadmap-dev/roadmap/internal/checks"
	"github.com/roadmap-dev/roadmap/internal/policy"
	"github.com/roadmap-dev/roadmap/internal/sandbox/sandboxtest"
)

// The Python sample: a base with add, and a change that adds clamp and
// unused.
const (
	pyBase = "def add(a, b):\n    return a + b\n"
	// The change's lines of code, by what they offer:
	//   def clamp / def unused             nothing to mutate (2 skipped)
	//   if v < lo, if v > hi               negate-condition
	//   return lo, return hi, return v     return-zero
	//   return a - b                       arithmetic (not covered)
	pyHead = pyBase + `

def clamp(v, lo, hi):
    """Limit v to [lo, hi]."""
    if v < lo:
        return lo
    if v > hi:
        return hi
    return v


def unused(a, b):
    return a - b
`
	// pyWeakTest runs clamp and checks nothing but that calc.py's source on
	// disk is the change's: a mutant the tests could read would be killed.
	pyWeakTest = `from calc import clamp


def test_clamp():
    clamp(5, 0, 10)


def test_source_is_the_change():
    with open("calc.py") as f:
        src = f.read()
    assert "not (" not in src and "None" not in src
`
	// pyStrongTest pins every path of clamp. It also fails if it can read a
	// mutant in the source of calc.py: the mutants must stay invisible.
	pyStrongTest = `import inspect

import calc
from calc import clamp


def test_clamp():
    assert clamp(5, 1, 10) == 5
    assert clamp(-1, 1, 10) == 1
    assert clamp(11, 1, 10) == 10


def test_source_is_the_original():
    src = inspect.getsource(calc)
    assert "not (" not in src and "None" not in src
`
)

// pythonPATH is a PATH whose python3 has pytest: the machine's, or with
// Debian's /usr/bin first. The test skips when neither has it.
func pythonPATH(t *testing.T) string {
	t.Helper()
	return sandboxtest.PytestPATH(t, "the Python strength test")
}

// pySample is a Python repository with pyBase committed and files written
// over it, run under a policy that allows `python3 -m pytest` as init's
// Python setup does.
func pySample(t *testing.T, files map[string]string) (*sample, Options) {
	t.Helper()
	path := pythonPATH(t)
	s := &sample{t: t, dir: t.TempDir()}
	s.environ = []string{"PATH=" + path, "HOME=" + os.Getenv("HOME"), "GOCACHE=" + sandboxtest.RunnerGoCache(t)}
	s.git("init", "--quiet", "--initial-branch=main")
	s.write(map[string]string{"calc.py": pyBase, "test_add.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"})
	s.git("add", "--all")
	s.git("commit", "--quiet", "-m", "base")
	s.base = s.git("rev-parse", "HEAD")
	s.write(files)
	p, err := policy.Parse([]byte("programs:\n  python3:\n    allow: true\n    args: [\"-m pytest\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	b := sandboxtest.None(t, s.dir, s.environ)
	o := Options{Dir: s.dir, Base: s.base, Tests: []string{"python3 -m pytest -q -p no:cacheprovider test_clamp.py"},
		Runner: checks.PolicyRunner(p, b), Split: policy.Split, GitEnv: s.environ,
		LookPath: func(name string) (string, error) { return exec.LookPath(name) }}
	return s, o
}

// TestStrengthPython: one Python change, measured with a weak test (it
// runs clamp and checks nothing: below the floor, the survivors go back as
// diffs) and a strong one (every covered mutant killed), by roadmap's ast
// mutator through the import hook; the tree is as it was after each.
func TestStrengthPython(t *testing.T) {
	t.Run("weak", func(t *testing.T) {
		t.Parallel()
		s, o := pySample(t, map[string]string{"calc.py": pyHead, "test_clamp.py": pyWeakTest})
		before := s.snapshot()
		rep, err := Run(context.Background(), o, DefaultFloor)
		if err != nil {
			t.Fatal(err)
		}
		// clamp(5, 0, 10) runs both ifs and `return v`; the early returns
		// and unused do not run.
		want := counts{Generated: 6, Survived: 3, NotCovered: 3, Skipped: 2}
		if diff := cmp.Diff(want, countsOf(rep)); diff != "" {
			t.Errorf("counts (-want +got):\n%s\n%s", diff, rep.Summary())
		}
		if !strings.Contains(rep.Reason, "below the floor") {
			t.Errorf("reason %q does not say the score is below the floor", rep.Reason)
		}
		task := rep.RepairTask(0)
		for _, want := range []string{"add a test that fails on this mutant", "-    if v < lo:\n+    if not (v < lo):\n", "-    return v\n+    return None\n"} {
			if !strings.Contains(task, want) {
				t.Errorf("repair task lacks %q:\n%s", want, task)
			}
		}
		if len(rep.Unsupported) != 0 {
			t.Errorf("Python files said unsupported: %v", rep.Unsupported)
		}
		if diff := cmp.Diff(before, s.snapshot()); diff != "" {
			t.Errorf("the work tree is not as it was (-before +after):\n%s", diff)
		}
	})

	t.Run("strong", func(t *testing.T) {
		t.Parallel()
		s, o := pySample(t, map[string]string{"calc.py": pyHead, "test_clamp.py": pyStrongTest})
		before := s.snapshot()
		rep, err := Run(context.Background(), o, DefaultFloor)
		if err != nil {
			t.Fatal(err)
		}
		want := counts{Generated: 6, Killed: 5, NotCovered: 1, Skipped: 2, Score: 1, Passed: true}
		if diff := cmp.Diff(want, countsOf(rep)); diff != "" {
			t.Errorf("counts (-want +got):\n%s\n%s", diff, rep.Summary())
		}
		for _, m := range rep.Mutants {
			if m.Status == Killed && !strings.Contains(m.Test, "test_clamp.py") {
				t.Errorf("%s:%d killed by %q", m.File, m.Line, m.Test)
			}
		}
		if diff := cmp.Diff(before, s.snapshot()); diff != "" {
			t.Errorf("the work tree is not as it was (-before +after):\n%s", diff)
		}
	})

	t.Run("no python3 on roadmap's PATH", func(t *testing.T) {
		t.Parallel()
		_, o := pySample(t, map[string]string{"calc.py": pyHead, "test_clamp.py": pyStrongTest})
		o.LookPath = func(string) (string, error) { return "", exec.ErrNotFound }
		rep, err := Run(context.Background(), o, DefaultFloor)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Generated != 0 || rep.Passed || !slices.Contains(rep.Unsupported, "calc.py") {
			t.Errorf("without python3: %+v", rep)
		}
	})
}

// TestPythonMutatorSites: the mutator's operator chosen for each line, its
// mutants as diffs, the lines of code it counts, and a file that does not
// parse.
func TestPythonMutatorSites(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	src := `"""Doc."""
import os


def f(a, b, xs):
    if a:
        pass
    c = a == b
    d = a < b
    e = a // b
    g = True
    h = a in xs and b
    return a + b
`
	fs, err := pySitesOf(context.Background(), python, "f.py", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	got := map[int]string{}
	for l, s := range fs.best {
		got[l] = s.op + ": " + strings.TrimSpace(strings.Split(string(s.apply([]byte(src))), "\n")[l-1])
	}
	want := map[int]string{
		6:  "negate-condition: if not (a):",
		8:  "negate-comparison: c = a != b",
		9:  "boundary: d = a <= b",
		10: "arithmetic: e = a * b",
		11: "boolean: g = False",
		12: "negate-comparison: h = a not in xs and b", // the first of two sites of one rank
		13: "arithmetic: return a - b",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sites (-want +got):\n%s", diff)
	}
	// The docstring and the import are not code; def, pass and the rest are.
	var code []int
	for l := range fs.code {
		code = append(code, l)
	}
	slices.Sort(code)
	if diff := cmp.Diff([]int{5, 6, 7, 8, 9, 10, 11, 12, 13}, code); diff != "" {
		t.Errorf("code lines (-want +got):\n%s", diff)
	}
	if _, err := pySitesOf(context.Background(), python, "bad.py", []byte("def (:\n")); err == nil || !strings.Contains(err.Error(), "does not parse") {
		t.Errorf("a file that does not parse: %v", err)
	}
}
