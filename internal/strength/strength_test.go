package strength

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/roadmap-dev/roadmap/internal/checks"
	"github.com/roadmap-dev/roadmap/internal/policy"
	"github.com/roadmap-dev/roadmap/internal/sandbox/sandboxtest"
)

// The sample module: a base with Add and its test, and a change that adds
// Clamp, Scale and Unused.
const (
	sampleMod  = "module example.com/sample\n\ngo 1.22\n"
	sampleBase = "package calc\n\n// Add adds.\nfunc Add(a, b int) int { return a + b }\n"
	// The change's code. Its changed lines of code, by what they offer:
	//   func Clamp / func Scale / func Unused       nothing to mutate (3 skipped)
	//   if v < lo, if v > hi                         negate-condition
	//   return lo, return hi, return v              return-zero
	//   return v * k, return a - b                   arithmetic
	sampleHead = sampleBase + `
// Clamp limits v to [lo, hi].
func Clamp(v, lo, hi int) int {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}

// Scale multiplies v by k.
func Scale(v, k int) int {
	return v * k
}

// Unused is called by no test.
func Unused(a, b int) int {
	return a - b
}
`
	sampleAddTest = "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"Add\")\n\t}\n}\n"
	// weakTest runs Clamp's middle path and Scale and checks nothing.
	weakTest = "package calc\n\nimport \"testing\"\n\nfunc TestClamp(t *testing.T) {\n\t_ = Clamp(5, 0, 10)\n\t_ = Scale(2, 3)\n}\n"
	// strongTest pins every path of Clamp and Scale.
	strongTest = `package calc

import "testing"

func TestClamp(t *testing.T) {
	for _, c := range []struct{ v, want int }{{5, 5}, {-1, 1}, {11, 10}} {
		if got := Clamp(c.v, 1, 10); got != c.want {
			t.Errorf("Clamp(%d, 1, 10) = %d, want %d", c.v, got, c.want)
		}
	}
	if Scale(2, 3) != 6 {
		t.Error("Scale(2, 3) != 6")
	}
}
`
)

// sample is a real repository with the sample module's base committed and
// the change in its work tree.
type sample struct {
	t       testing.TB
	dir     string
	base    string
	environ []string
}

func newSample(t testing.TB, files map[string]string) *sample {
	t.Helper()
	s := &sample{t: t, dir: t.TempDir()}
	s.environ = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "GOCACHE=" + sandboxtest.RunnerGoCache(t)}
	s.git("init", "--quiet", "--initial-branch=main")
	s.write(map[string]string{"go.mod": sampleMod, "calc/calc.go": sampleBase, "calc/add_test.go": sampleAddTest})
	s.git("add", "--all")
	s.git("commit", "--quiet", "-m", "base")
	s.base = s.git("rev-parse", "HEAD")
	s.write(files)
	return s
}

func (s *sample) git(args ...string) string {
	s.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
	out, err := cmd.CombinedOutput()
	if err != nil {
		s.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func (s *sample) write(files map[string]string) {
	s.t.Helper()
	for name, body := range files {
		p := filepath.Join(s.dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			s.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			s.t.Fatal(err)
		}
	}
}

// snapshot is every file of the work tree (not .git) and its bytes.
func (s *sample) snapshot() map[string]string {
	s.t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(s.dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(s.dir, p)
			out[filepath.ToSlash(rel)] = string(b)
		}
		return nil
	})
	if err != nil {
		s.t.Fatal(err)
	}
	return out
}

// options runs the tests under the default shell policy inside an
// `isolation: none` boundary, as phase tests do.
func (s *sample) options(tests ...string) Options {
	b := sandboxtest.None(s.t, s.dir, s.environ)
	return Options{Dir: s.dir, Base: s.base, Tests: tests, Runner: checks.PolicyRunner(policy.Default(), b),
		Split: policy.Split, GitEnv: s.environ}
}

// counts is the part of a Report TestTestStrengthCounts pins.
type counts struct {
	Generated, Killed, Survived, NotCovered, TimedOut, Errors, Skipped int
	Score                                                              float64
	Passed                                                             bool
}

func countsOf(r Report) counts {
	return counts{r.Generated, r.Killed, r.Survived, r.NotCovered, r.TimedOut, r.Errors, r.Skipped, r.Score, r.Passed}
}

// TestTestStrengthCounts: the sample change with a test that checks nothing
// and with one that pins Clamp and Scale. The numbers follow from the
// sample (see sampleHead): 7 mutable changed lines, 3 skipped.
func TestTestStrengthCounts(t *testing.T) {
	t.Run("a test that checks nothing", func(t *testing.T) {
		s := newSample(t, map[string]string{"calc/calc.go": sampleHead, "calc/clamp_test.go": weakTest})
		before := s.snapshot()
		rep, err := Run(context.Background(), s.options("go test ./calc -run TestClamp"), DefaultFloor)
		if err != nil {
			t.Fatal(err)
		}
		// Clamp(5, 0, 10) runs both ifs and `return v`; Scale runs; the two
		// early returns and Unused do not.
		want := counts{Generated: 7, Survived: 4, NotCovered: 3, Skipped: 3}
		if diff := cmp.Diff(want, countsOf(rep)); diff != "" {
			t.Errorf("counts (-want +got):\n%s\n%s", diff, rep.Summary())
		}
		for i, m := range rep.Mutants[:4] {
			if m.Status != Survived {
				t.Errorf("mutant %d is %s; survivors come first", i, m.Status)
			}
		}
		if !strings.Contains(rep.Reason, "below the floor") {
			t.Errorf("reason %q does not say the score is below the floor", rep.Reason)
		}
		task := rep.RepairTask(0)
		for _, want := range []string{"add a test that fails on this mutant", "-\treturn v * k\n+\treturn v / k\n", "-\tif v < lo {\n+\tif !(v < lo) {\n"} {
			if !strings.Contains(task, want) {
				t.Errorf("repair task lacks %q:\n%s", want, task)
			}
		}
		if diff := cmp.Diff(before, s.snapshot()); diff != "" {
			t.Errorf("the work tree is not as it was (-before +after):\n%s", diff)
		}
	})

	t.Run("a test that pins the behaviour", func(t *testing.T) {
		s := newSample(t, map[string]string{"calc/calc.go": sampleHead, "calc/clamp_test.go": strongTest})
		rep, err := Run(context.Background(), s.options("go test ./calc -run TestClamp"), DefaultFloor)
		if err != nil {
			t.Fatal(err)
		}
		want := counts{Generated: 7, Killed: 6, NotCovered: 1, Skipped: 3, Score: 1, Passed: true}
		if diff := cmp.Diff(want, countsOf(rep)); diff != "" {
			t.Errorf("counts (-want +got):\n%s\n%s", diff, rep.Summary())
		}
		for _, m := range rep.Mutants {
			if m.Status == Killed && m.Test != "go test ./calc -run TestClamp" {
				t.Errorf("%s:%d killed by %q", m.File, m.Line, m.Test)
			}
		}
		if rep.RepairTask(3) != "" {
			t.Errorf("a repair task with no survivor:\n%s", rep.RepairTask(3))
		}
	})

	t.Run("max mutants, masking, the default budget, covering commands only", func(t *testing.T) {
		s := newSample(t, map[string]string{"calc/calc.go": sampleHead, "calc/clamp_test.go": strongTest})
		o := s.options("go test ./calc -run TestAdd", "go test ./calc -run TestClamp")
		o.MaxMutants = 2
		o.Mask = func(s string) string { return strings.ReplaceAll(s, "hi", "[masked]") }
		runs := map[string]int{}
		var unmutated time.Duration
		o.Runner = &hook{Runner: o.Runner, before: func(argv []string, n int) (checks.Result, bool) {
			// The hideout's name is random: counted without it.
			argv = slices.DeleteFunc(slices.Clone(argv), func(a string) bool { return strings.HasPrefix(a, "-overlay=") })
			runs[strings.Join(argv, " ")]++
			return checks.Result{}, false
		}, after: func(argv []string, res checks.Result) {
			if hasArg(argv, "-coverprofile=") {
				unmutated += res.Duration
			}
		}}
		rep, err := Run(context.Background(), o, DefaultFloor)
		if err != nil {
			t.Fatal(err)
		}
		// Two of the six covered mutants run; four more are skipped.
		want := counts{Generated: 3, Killed: 2, NotCovered: 1, Skipped: 3 + 4, Score: 1, Passed: true}
		if diff := cmp.Diff(want, countsOf(rep)); diff != "" {
			t.Errorf("counts (-want +got):\n%s\n%s", diff, rep.Summary())
		}
		if want := min(max(6*unmutated, minTimeout), maxTimeout); rep.Timeout != want {
			t.Errorf("timeout %s; want six times the unmutated run (%s), within 10s and 2m: %s", rep.Timeout, unmutated, want)
		}
		masked := 0
		for _, m := range rep.Mutants {
			if strings.Contains(m.Diff, "hi") {
				t.Errorf("diff not masked:\n%s", m.Diff)
			}
			masked += strings.Count(m.Diff, "[masked]")
		}
		if masked == 0 {
			t.Error("no diff went through the mask")
		}
		// TestAdd covers no changed line: it runs once, unmutated.
		if n := runs["go test -count=1 ./calc -run TestAdd"]; n != 0 {
			t.Errorf("TestAdd ran %d times on mutants; it covers nothing and must run only in the coverage run", n)
		}
		// Each run on a mutant is two go tests (built with the mutant, then
		// run with it gone); after the first kill the control run is two more.
		if n := runs["go test -count=1 ./calc -run TestClamp"]; n != 2*2+2 {
			t.Errorf("TestClamp ran %d times on mutants and the control, want 6 (2 mutants and a control, 2 steps each)", n)
		}
	})

	t.Run("a mutant go vet refuses is an error, not a kill", func(t *testing.T) {
		// x == 1 || x != 2 becomes x != 1 || x != 2, which builds but which
		// the vet checks of go test refuse ("suspect or").
		code := "package calc\n\n// Odd is x == 1 || x != 2.\nfunc Odd(x int) bool {\n\treturn x == 1 || x != 2\n}\n"
		test := "package calc\n\nimport \"testing\"\n\nfunc TestOdd(t *testing.T) {\n\tif !Odd(1) || Odd(2) || !Odd(3) {\n\t\tt.Fatal(\"Odd\")\n\t}\n}\n"
		s := newSample(t, map[string]string{"calc/odd.go": code, "calc/odd_test.go": test})
		rep, err := Run(context.Background(), s.options(), DefaultFloor)
		if err != nil {
			t.Fatal(err)
		}
		want := counts{Generated: 1, Errors: 1, Skipped: 1}
		if diff := cmp.Diff(want, countsOf(rep)); diff != "" {
			t.Errorf("counts (-want +got):\n%s\n%s", diff, rep.Summary())
		}
	})

	t.Run("the default test command and a mutant that does not build", func(t *testing.T) {
		// `t += suffix` on a string: its mutant `-=` does not build, so it
		// is an error, not a kill.
		code := "package calc\n\n// Shout shouts.\nfunc Shout(s string) string {\n\tt := s\n\tt += suffix\n\treturn t\n}\n\nvar suffix = \"!\"\n"
		test := "package calc\n\nimport \"testing\"\n\nfunc TestShout(t *testing.T) {\n\tif Shout(\"a\") != \"a!\" {\n\t\tt.Fatal(Shout(\"a\"))\n\t}\n}\n"
		s := newSample(t, map[string]string{"calc/shout.go": code, "calc/shout_test.go": test})
		rep, err := Run(context.Background(), s.options(), DefaultFloor)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"go test ./calc"}, rep.Tests); diff != "" {
			t.Errorf("default tests (-want +got):\n%s", diff)
		}
		// func Shout, t := s and var suffix have nothing to mutate;
		// t += suffix does not build swapped; return t becomes return "".
		want := counts{Generated: 2, Killed: 1, Errors: 1, Skipped: 3, Score: 1, Passed: true}
		if diff := cmp.Diff(want, countsOf(rep)); diff != "" {
			t.Errorf("counts (-want +got):\n%s\n%s", diff, rep.Summary())
		}
		// A command that is not go test (no coverage, so it runs on every
		// mutant, first here) fails on a mutant that does not build: the
		// build check, not that failure, decides.
		rep, err = Run(context.Background(), s.options("go vet ./calc", "go test ./calc"), DefaultFloor)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, countsOf(rep)); diff != "" {
			t.Errorf("with go vet first: counts (-want +got):\n%s\n%s", diff, rep.Summary())
		}
	})
}

// TestTestStrengthZeroMutantsFails: a run that measured nothing never
// passes, whatever the floor, and says why.
func TestTestStrengthZeroMutantsFails(t *testing.T) {
	t.Run("no Go code changed, only a language with no mutation", func(t *testing.T) {
		s := newSample(t, map[string]string{"app.rb": "def add(a, b)\n  a + b\nend\n", "calc/calc.go": sampleBase + "\n// A comment only.\n"})
		rep, err := Run(context.Background(), s.options(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Passed || rep.Generated != 0 || rep.Score != 0 || !strings.Contains(rep.Reason, "0 mutants ran") {
			t.Errorf("report = %+v, want not passed, 0 mutants, no score", rep)
		}
		if diff := cmp.Diff([]string{"app.rb"}, rep.Unsupported); diff != "" {
			t.Errorf("unsupported (-want +got):\n%s", diff)
		}
		sum := rep.Summary()
		for _, want := range []string{"mutation is not yet available for Ruby (app.rb)", "no score"} {
			if !strings.Contains(sum, want) {
				t.Errorf("summary lacks %q:\n%s", want, sum)
			}
		}
	})

	t.Run("no test covers the change", func(t *testing.T) {
		s := newSample(t, map[string]string{"calc/calc.go": sampleHead})
		rep, err := Run(context.Background(), s.options("go test ./calc"), 0)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Passed || rep.Measured() != 0 || rep.NotCovered != 7 || !strings.Contains(rep.Reason, "no test covers") {
			t.Errorf("report = %+v, want 7 not covered and not passed", countsOf(rep))
		}
	})

	t.Run("every mutant timed out", func(t *testing.T) {
		s := newSample(t, map[string]string{"calc/calc.go": sampleHead, "calc/clamp_test.go": strongTest})
		o := s.options("go test ./calc -run TestClamp")
		o.Runner = &hook{Runner: o.Runner, before: func(argv []string, n int) (checks.Result, bool) {
			if n > 1 && argv[1] == "test" { // the unmutated run is the first
				return checks.Result{ExitCode: -1, TimedOut: true}, true
			}
			return checks.Result{}, false
		}}
		rep, err := Run(context.Background(), o, 0)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Passed || rep.TimedOut != 6 || rep.Score != 0 || !strings.Contains(rep.Reason, "timed out") {
			t.Errorf("report = %+v (%q), want 6 timed out and not passed", countsOf(rep), rep.Reason)
		}
	})

	t.Run("the unmutated tests fail", func(t *testing.T) {
		s := newSample(t, map[string]string{"calc/calc.go": sampleHead,
			"calc/clamp_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestClamp(t *testing.T) { t.Fatal(\"red\") }\n"})
		_, err := Run(context.Background(), s.options("go test ./calc"), 0)
		var red *BaselineError
		if !errors.As(err, &red) || red.Command != "go test ./calc" || !strings.Contains(red.Log, "red") ||
			!strings.Contains(err.Error(), "the tests fail on the unmutated tree") {
			t.Fatalf("err = %v, want the unmutated failure with its log", err)
		}
	})
}

// hook wraps a Runner: before sees each command with its count and may
// answer it instead; after, when set, sees what the runner answered.
type hook struct {
	checks.Runner
	n      int
	before func(argv []string, n int) (checks.Result, bool)
	after  func(argv []string, res checks.Result)
}

func (h *hook) Run(ctx context.Context, dir string, argv []string) (checks.Result, error) {
	h.n++
	if res, ok := h.before(argv, h.n); ok {
		return res, nil
	}
	res, err := h.Runner.Run(ctx, dir, argv)
	if h.after != nil {
		h.after(argv, res)
	}
	return res, err
}

// RunEnv is Run with the environment a go test on a mutant needs.
func (h *hook) RunEnv(ctx context.Context, dir string, argv, extra []string) (checks.Result, error) {
	h.n++
	if res, ok := h.before(argv, h.n); ok {
		return res, nil
	}
	res, err := h.Runner.(envRunner).RunEnv(ctx, dir, argv, extra)
	if h.after != nil {
		h.after(argv, res)
	}
	return res, err
}

// TestRunRestoresTheTree: a panic in the runner or ctx's end leaves the
// tree as it was: a mutant written into it for a command that is not go
// test (`true` here, which has no coverage and so runs on every mutant) is
// in it only while that command runs, and a go test's hideout goes too.
func TestRunRestoresTheTree(t *testing.T) {
	for _, tt := range []struct {
		name   string
		during func(cancel context.CancelFunc)
	}{
		{"panic", func(context.CancelFunc) { panic("runner broke") }},
		{"cancel", func(cancel context.CancelFunc) { cancel() }},
	} {
		for _, where := range []string{"in place", "go test"} {
			t.Run(tt.name+", "+where, func(t *testing.T) {
				s := newSample(t, map[string]string{"calc/calc.go": sampleHead, "calc/clamp_test.go": strongTest})
				before := s.snapshot()
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				o := s.options("true", "go test ./calc -run TestClamp")
				saw := false
				o.Runner = &hook{Runner: o.Runner, before: func(argv []string, n int) (checks.Result, bool) {
					b, _ := os.ReadFile(filepath.Join(s.dir, "calc", "calc.go"))
					mutated := !bytes.Equal(b, []byte(sampleHead))
					switch {
					case where == "in place" && argv[0] == "true" && n > 1:
						saw = mutated
					case where == "go test" && hasArg(argv, "-count=1") && !hasArg(argv, "-overlay="):
						// The run step: the tests run with the tree as it is,
						// beside a hideout.
						hides, _ := filepath.Glob(filepath.Join(s.dir, hideoutPrefix+"*"))
						saw = !mutated && len(hides) == 1
					default:
						return checks.Result{}, false
					}
					tt.during(cancel)
					return checks.Result{}, false
				}}
				var err error
				func() {
					defer func() {
						if p := recover(); p != nil {
							err = errors.New("panicked")
						}
					}()
					_, err = Run(ctx, o, 0)
				}()
				if err == nil {
					t.Fatal("Run returned no error")
				}
				if !saw {
					t.Error("the command never ran on a mutant as it should (in the tree for true; beside a hideout, the tree untouched, for go test)")
				}
				if diff := cmp.Diff(before, s.snapshot()); diff != "" {
					t.Errorf("the work tree is not as it was (-before +after):\n%s", diff)
				}
			})
		}
	}
}

// hasArg reports whether argv has a word starting with prefix.
func hasArg(argv []string, prefix string) bool {
	return slices.ContainsFunc(argv, func(a string) bool { return strings.HasPrefix(a, prefix) })
}

// TestJudge: the verdict's rules on counts alone.
func TestJudge(t *testing.T) {
	for _, tt := range []struct {
		name string
		rep  Report
		pass bool
		why  string
	}{
		{"nothing", Report{}, false, "0 mutants ran"},
		{"only errors", Report{Generated: 2, Errors: 2}, false, "did not build"},
		{"all timed out", Report{Generated: 2, TimedOut: 2}, false, "every mutant"},
		{"below the floor", Report{Generated: 2, Killed: 1, Survived: 1, Score: 0.5, Floor: 0.8}, false, "below the floor"},
		{"at the floor", Report{Generated: 5, Killed: 4, Survived: 1, Score: 0.8, Floor: 0.8}, true, ""},
		{"a timeout among kills", Report{Generated: 2, Killed: 1, TimedOut: 1, Score: 0.5, Floor: 0.5}, true, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pass, why := judge(tt.rep)
			if pass != tt.pass || !strings.Contains(why, tt.why) {
				t.Errorf("judge = %v, %q; want %v and a reason with %q", pass, why, tt.pass, tt.why)
			}
		})
	}
}
