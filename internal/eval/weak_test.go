package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/sandbox/sandboxtest"
)

// weakGolden is the golden case whose first test checks nothing;
// weakPythonGolden is its Python twin.
var (
	weakGolden       = filepath.Join("..", "..", "testdata", "golden", "implement", "weak-test")
	weakPythonGolden = filepath.Join("..", "..", "testdata", "golden", "implement", "weak-test-python")
)

// weakCase copies the golden weak-test case into a set of its own, with
// case.json's test_strength set to on.
func weakCase(t *testing.T, on bool) string { return weakCaseOf(t, weakGolden, on) }

// weakCaseOf copies the golden case in dir into a set of its own, with
// case.json's test_strength set to on.
func weakCaseOf(t *testing.T, dir string, on bool) string {
	t.Helper()
	set := filepath.Join(t.TempDir(), "set")
	dst := filepath.Join(set, filepath.Base(dir))
	if err := os.CopyFS(dst, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dst, "case.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if m["test_strength"] != true || m["review"] != true {
		t.Fatalf("the golden case.json does not turn test strength and the review on: %s", data)
	}
	m["test_strength"] = on
	if data, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return set
}

// runSet runs an implement set of one case and returns its result and
// its progress line.
func runSet(t *testing.T, set string) (ImplementCaseResult, string) {
	t.Helper()
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
	return rep.Cases[0], lines[0]
}

// fixtureUsage sums the recorded usage of the case's conversations whose
// match holds one of the words: what the replay serves them at most.
func fixtureUsage(t *testing.T, dir string, words ...string) (calls int, in, out int64) {
	t.Helper()
	convs, err := llm.LoadFixtures(filepath.Join(dir, "fixtures"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range convs {
		for _, w := range words {
			if strings.Contains(c.Match, w) {
				for _, turn := range c.Turns {
					calls++
					in += turn.Response.Usage.TokensIn
					out += turn.Response.Usage.TokensOut
				}
			}
		}
	}
	return calls, in, out
}

// TestEvalImplementWeakTest: the golden case's agent first writes a test that runs
// Grade and checks nothing. With test strength on (the case as the golden set
// has it, judged in TestEvalImplementReport on make eval's play) its survivors
// go back as a repair round and the case is FULL. With test strength off,
// played here, the item ends ready with the weak test: fail-to-pass alone
// would call it FULL (the case's hidden test passes, for Grade is right), and
// the eval's own mutation judge, on the tests the item wrote, scores it NO,
// so the case is not kind to an implement stage that accepts a weak test.
func TestEvalImplementWeakTest(t *testing.T) {
	if testing.Short() {
		t.Skip("plays the weak-test case through implement (make test runs it)")
	}
	reviewCalls, _, _ := fixtureUsage(t, weakGolden, reviewOpenings...)
	if reviewCalls != 2 {
		t.Fatalf("the case's fixtures hold %d review calls, want 2 (reviewer and refuter)", reviewCalls)
	}

	t.Run("test strength off", func(t *testing.T) {
		res, line := runSet(t, weakCase(t, false))
		t.Log(line)
		if res.Result != "ready" {
			t.Fatalf("result %s (%s: %s); want ready: the weak test accepted", res.Result, res.Failure, res.Reason)
		}
		if v := Judge(res.WantF2P, res.WantP2P, res.F2P, res.P2P); v != Full {
			t.Fatalf("fail-to-pass alone says %s (f2p %v, p2p %v); the hidden test should pass a right Grade beside the weak test", v, res.F2P, res.P2P)
		}
		if res.Verdict != No || res.Score != 0 {
			t.Errorf("verdict %s (%v), want NO: the head's test checks nothing", res.Verdict, res.Score)
		}
		if j := res.Judged; j == nil || j.Passed || j.Survived == 0 {
			t.Errorf("judged strength %+v, want failed with survivors", j)
		}
		if len(res.Strength) != 0 {
			t.Errorf("strength %+v recorded with test strength off", res.Strength)
		}
		if res.Review.ModelCalls != reviewCalls {
			t.Errorf("review calls %d, want %d: the review ran and did not catch the weak test", res.Review.ModelCalls, reviewCalls)
		}
	})
}

// TestEvalImplementWeakTestPython: weak-test's Python twin
// (weak-test-python). The agent first writes letter and a test_letter that
// calls it and checks nothing; pytest passes. With test strength on (the
// case as the golden set has it, judged FULL in TestEvalImplementReport on
// make eval's play) the Python mutator's survivors go back as a repair
// round and the agent pins every boundary. With test strength off, played
// here, the item ends ready with the weak test: fail-to-pass alone would
// call it FULL (the hidden test passes, for letter is right), and the
// eval's own mutation judge, on the tests the item wrote, scores it NO.
func TestEvalImplementWeakTestPython(t *testing.T) {
	if testing.Short() {
		t.Skip("plays the Python weak-test case through implement (make test runs it)")
	}
	t.Setenv("PATH", sandboxtest.PytestPATH(t, "the Python case"))
	reviewCalls, _, _ := fixtureUsage(t, weakPythonGolden, reviewOpenings...)
	if reviewCalls != 2 {
		t.Fatalf("the case's fixtures hold %d review calls, want 2 (reviewer and refuter)", reviewCalls)
	}

	t.Run("test strength off", func(t *testing.T) {
		res, line := runSet(t, weakCaseOf(t, weakPythonGolden, false))
		t.Log(line)
		if res.Result != "ready" {
			t.Fatalf("result %s (%s: %s); want ready: the weak test accepted", res.Result, res.Failure, res.Reason)
		}
		if v := Judge(res.WantF2P, res.WantP2P, res.F2P, res.P2P); v != Full {
			t.Fatalf("fail-to-pass alone says %s (f2p %v, p2p %v); the hidden test should pass a right letter beside the weak test", v, res.F2P, res.P2P)
		}
		if res.Verdict != No || res.Score != 0 {
			t.Errorf("verdict %s (%v), want NO: the head's test checks nothing", res.Verdict, res.Score)
		}
		if j := res.Judged; j == nil || j.Passed || j.Survived == 0 {
			t.Errorf("judged strength %+v, want failed with survivors", j)
		}
		if len(res.Strength) != 0 {
			t.Errorf("strength %+v recorded with test strength off", res.Strength)
		}
		if res.Review.ModelCalls != reviewCalls {
			t.Errorf("review calls %d, want %d: the review ran and did not catch the weak test", res.Review.ModelCalls, reviewCalls)
		}
	})
}
