package strength

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/roadmap-dev/roadmap/internal/checks"
	"github.com/roadmap-dev/roadmap/internal/policy"
	"github.com/roadmap-dev/roadmap/internal/sandbox"
)

// sourceHashTest asserts nothing about what Clamp and Scale do: it runs
// every path of them, then hashes its package's source files (the .go files
// of its folder that are not tests) and fails when they are not the source
// it was written for (sampleHead's hash). With mutants written into the
// tree it kills every one. It also goes looking for an overlay: a mutant
// or an overlay file in a hideout at the module's top, or -overlay on the
// command line of a process above it (the namespace's /proc), and for the
// hideout's name in its own path or GOFLAGS.
const sourceHashTest = `package calc

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestClamp(t *testing.T) {
	_, _, _ = Clamp(5, 1, 10), Clamp(-1, 1, 10), Clamp(11, 1, 10)
	_ = Scale(2, 3)
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		b, err := os.ReadFile(e.Name())
		if err != nil {
			t.Fatal(err)
		}
		h.Write(b)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != %q {
		t.Fatalf("the package's source is not the one this test was written for: %%s", got)
	}
	for _, pattern := range []string{"../.roadmap-strength-*/*.go", "../.roadmap-strength-*/*.json"} {
		if found, _ := filepath.Glob(pattern); len(found) > 0 {
			t.Fatalf("found the overlay: %%v", found)
		}
	}
	if exe, _ := os.Executable(); strings.Contains(exe+os.Args[0]+os.Getenv("GOFLAGS"), "roadmap-strength") {
		t.Fatalf("a mutant's run: %%s, %%s, GOFLAGS %%q", exe, os.Args[0], os.Getenv("GOFLAGS"))
	}
	for pid := os.Getppid(); pid > 1; {
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%%d/cmdline", pid))
		if err != nil {
			break
		}
		if bytes.Contains(cmdline, []byte("-overlay")) {
			t.Fatalf("found -overlay on the command line of process %%d: %%q", pid, cmdline)
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%%d/stat", pid))
		if err != nil {
			break
		}
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) < 2 {
			break
		}
		if pid, err = strconv.Atoi(fields[1]); err != nil {
			break
		}
	}
}
`

// TestMutantInvisibleToTests: a test that checks no behaviour but fails
// whenever its package's source differs from what it was written for
// cannot tell a mutant: go test builds each mutant through an overlay and
// runs the test binary once the overlay is gone, so the source on disk is
// always the original. Every mutant survives, the score is 0 and the run
// fails. (With each mutant written into the tree, as before, it scored 1.00,
// 6 of 6 killed, and passed.) The tree is as it was after.
func TestMutantInvisibleToTests(t *testing.T) {
	sum := sha256.Sum256([]byte(sampleHead))
	test := fmt.Sprintf(sourceHashTest, hex.EncodeToString(sum[:]))
	s := newSample(t, map[string]string{"calc/calc.go": sampleHead, "calc/clamp_test.go": test})
	before := s.snapshot()
	rep, err := Run(context.Background(), s.options("go test ./calc -run TestClamp"), DefaultFloor)
	if err != nil {
		t.Fatal(err)
	}
	// Six covered lines (Clamp's ifs and returns, Scale), Unused not
	// covered, three with nothing to mutate.
	want := counts{Generated: 7, Survived: 6, NotCovered: 1, Skipped: 3}
	if diff := cmp.Diff(want, countsOf(rep)); diff != "" {
		t.Errorf("counts (-want +got):\n%s\n%s", diff, rep.Summary())
	}
	if rep.Passed || !strings.Contains(rep.Reason, "below the floor") {
		t.Errorf("passed %v, reason %q; want the score 0 below the floor", rep.Passed, rep.Reason)
	}
	if diff := cmp.Diff(before, s.snapshot()); diff != "" {
		t.Errorf("the work tree is not as it was (-before +after):\n%s", diff)
	}
}

// TestControlRun: a test that fails whenever it is not the coverage run
// (the unmutated run is the only one with a cover profile) kills every
// mutant without looking at the code. After the first kill the command runs
// once more on the unmutated code the way it ran on the mutant; it fails
// there too, so the run is a BaselineError, never a score.
func TestControlRun(t *testing.T) {
	const test = `package calc

import "testing"

func TestClamp(t *testing.T) {
	_, _, _ = Clamp(5, 1, 10), Clamp(-1, 1, 10), Clamp(11, 1, 10)
	_ = Scale(2, 3)
	if testing.CoverMode() == "" {
		t.Fatal("not the coverage run: a mutant")
	}
}
`
	s := newSample(t, map[string]string{"calc/calc.go": sampleHead, "calc/clamp_test.go": test})
	before := s.snapshot()
	rep, err := Run(context.Background(), s.options("go test ./calc -run TestClamp"), DefaultFloor)
	var red *BaselineError
	if !errors.As(err, &red) || red.Command != "go test ./calc -run TestClamp" || !strings.Contains(red.How, "run as the mutants are") ||
		!strings.Contains(red.Log, "not the coverage run") {
		t.Fatalf("err = %v (report %+v), want the control run's failure", err, countsOf(rep))
	}
	if diff := cmp.Diff(before, s.snapshot()); diff != "" {
		t.Errorf("the work tree is not as it was (-before +after):\n%s", diff)
	}
}

func TestReachOf(t *testing.T) {
	for _, tt := range []struct {
		argv string
		want reach
	}{
		{"go test ./calc -run TestAdd", hidden},
		{"go test -json ./... -args -overlay=x", hidden},
		{"go vet ./calc", overlaid},
		{"go build ./...", overlaid},
		{"go test -c ./calc", inPlace},
		{"go test --overlay=o.json ./calc", inPlace},
		{"go build -toolexec=x ./calc", inPlace},
		{"go run ./cmd/check", inPlace},
		{"make test", inPlace},
		{"go", inPlace},
	} {
		if got := reachOf(strings.Fields(tt.argv)); got != tt.want {
			t.Errorf("reachOf(%q) = %d, want %d", tt.argv, got, tt.want)
		}
	}
}

// TestMutantInvisibleBehindTheBoundary: the same, behind the user boundary
// the Jobs use (its own uid, namespaces, Landlock) with the production
// runner: the boundary's uid reads the hideout while go builds, keeps the
// binaries in it and runs them, a test that hashes its source lets every
// mutant survive, and one that pins the behaviour kills them all. Two
// mutants of the six covered run (MaxMutants; each is two go tests behind
// the boundary): what the boundary does to a mutant it does to each, and
// TestMutantInvisibleToTests and TestTestStrengthCounts run all six.
func TestMutantInvisibleBehindTheBoundary(t *testing.T) {
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skip("the user boundary needs root on Linux; the test machines and CI run as root")
	}
	if testing.Short() {
		t.Skip("runs go test behind the boundary")
	}
	sum := sha256.Sum256([]byte(sampleHead))
	for _, tt := range []struct {
		name string
		test string
		want counts
	}{
		{"a test that hashes its source", fmt.Sprintf(sourceHashTest, hex.EncodeToString(sum[:])),
			counts{Generated: 3, Survived: 2, NotCovered: 1, Skipped: 3 + 4}},
		{"a test that pins the behaviour", strongTest,
			counts{Generated: 3, Killed: 2, NotCovered: 1, Skipped: 3 + 4, Score: 1, Passed: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newSample(t, map[string]string{"calc/calc.go": sampleHead, "calc/clamp_test.go": tt.test})
			before := s.snapshot()
			b, err := sandbox.Open(context.Background(), sandbox.Options{Mode: sandbox.ModeUser, Workspace: s.dir,
				Environ: s.environ, GoCache: sandbox.GoDirs(s.environ)["GOCACHE"]})
			if err != nil {
				t.Fatal(err)
			}
			o := s.options("go test ./calc -run TestClamp")
			o.MaxMutants = 2
			o.Runner = checks.SandboxRunner(policy.NewSandbox(b, policy.Default(), s.environ))
			// The subject is what the tests see, not the budget: the first
			// mutant fills the boundary's own build cache.
			o.Timeout = time.Minute
			rep, err := Run(context.Background(), o, DefaultFloor)
			if cerr := b.Close(); cerr != nil {
				t.Error(cerr)
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, countsOf(rep)); diff != "" {
				t.Errorf("counts (-want +got):\n%s\n%s", diff, rep.Summary())
			}
			if diff := cmp.Diff(before, s.snapshot()); diff != "" {
				t.Errorf("the work tree is not as it was (-before +after):\n%s", diff)
			}
		})
	}
}
