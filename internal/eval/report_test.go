package eval

import (
	"context"
	"encoding/json"
	"github.com/roadmap-dev/roadmap/internal/sandbox/sandboxtest"
	"os"
	"slices"
	"testing"
)

// reportEnv names the JSON of the implement golden set's report that
// `make eval` wrote (`roadmap eval implement --json`): make test runs
// TestEvalImplementReport right after make eval with it set, so each golden
// case is played once per run and what checks its report reads it.
const reportEnv = "ROADMAP_EVAL_IMPLEMENT_REPORT"

// goldenReport is the implement golden set's report: make eval's when
// ROADMAP_EVAL_IMPLEMENT_REPORT names it, else the set played here (a
// developer's go test).
func goldenReport(t *testing.T) ImplementReport {
	t.Helper()
	entries, err := os.ReadDir(implementGolden)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	var rep ImplementReport
	if path := os.Getenv(reportEnv); path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v", reportEnv, err)
		}
		if err := json.Unmarshal(data, &rep); err != nil {
			t.Fatalf("%s (%s) is not an implement report: %v", reportEnv, path, err)
		}
		// A report of another suite, a model's or a set of other cases is
		// not the golden set's on the replay: never judged as though it were.
		if rep.Suite != "implement" || rep.Provider != "replay" {
			t.Fatalf("%s is the %q suite's report on %q, want the implement suite's on the replay", path, rep.Suite, rep.Provider)
		}
		t.Logf("make eval's report, %s (started %s)", path, rep.Started)
	} else {
		// weak-test-python runs python3 -m pytest.
		t.Setenv("PATH", sandboxtest.PytestPATH(t, "the Python case"))
		played, err := Implement(context.Background(), Options{Dir: implementGolden, TempDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		rep = *played
	}
	var got []string
	for _, c := range rep.Cases {
		got = append(got, c.Name)
	}
	if !slices.Equal(got, names) {
		t.Fatalf("the report's cases %v, want the golden set's %v", got, names)
	}
	return rep
}

// caseOf is the report's case name.
func caseOf(t *testing.T, rep ImplementReport, name string) ImplementCaseResult {
	t.Helper()
	for _, c := range rep.Cases {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no case %s in the report", name)
	return ImplementCaseResult{}
}

// TestEvalImplementReport checks what the golden set's own cases show, on
// the one play of each per run (make eval's, see reportEnv):
//
//   - weak-test with test strength on (its case.json): the survivors of the
//     agent's first test go back as a repair round, the agent pins the
//     behaviour and the case is FULL; the report shows the review's cost
//     (its two conversations' recorded usage, no GitHub request of its
//     own) and the group's strength (TestEvalImplementWeakTest plays it
//     with strength off);
//   - weak-test-python, its Python twin, the same way with the Python
//     mutator (TestEvalImplementWeakTestPython plays it with strength off);
//   - fix-discount, judged by its hidden test, which the fix meets: FULL,
//     with the hidden test and the agent's own among the fail-to-pass
//     (TestEvalImplementHiddenTests plays it with a hidden test it does not
//     meet);
//   - killed-mid-group: the first Job killed at its recorded turn, a second
//     one ends the item.
func TestEvalImplementReport(t *testing.T) {
	if testing.Short() {
		t.Skip("reads make eval's report, or plays the implement golden set (make test runs it after make eval)")
	}
	rep := goldenReport(t)

	t.Run("weak-test, test strength on", func(t *testing.T) {
		reviewCalls, reviewIn, reviewOut := fixtureUsage(t, weakGolden, reviewOpenings...)
		if reviewCalls != 2 {
			t.Fatalf("the case's fixtures hold %d review calls, want 2 (reviewer and refuter)", reviewCalls)
		}
		res := caseOf(t, rep, "weak-test")
		if res.Verdict != Full || res.Result != "ready" {
			t.Fatalf("verdict %s, result %s (%s: %s); want FULL and ready", res.Verdict, res.Result, res.Failure, res.Reason)
		}
		want := ReviewCost{Reviews: 1, ModelCalls: reviewCalls, TokensIn: reviewIn, TokensOut: reviewOut, Requests: 0}
		got := res.Review
		got.USD = 0
		if got != want {
			t.Errorf("review cost %+v, want %+v", got, want)
		}
		if res.Review.USD <= 0 || res.Review.USD >= res.Spend.USD {
			t.Errorf("review USD %v, want a part of the item's %v", res.Review.USD, res.Spend.USD)
		}
		if len(res.Strength) != 1 || res.Strength[0].Group != 1 || res.Strength[0].Killed == 0 || res.Strength[0].Survived != 0 {
			t.Errorf("strength %+v, want group 1 with mutants killed and none surviving", res.Strength)
		}
		if j := res.Judged; j == nil || !j.Passed || j.Score < 0.8 {
			t.Errorf("judged strength %+v, want passed at the floor 0.8", j)
		}
	})

	t.Run("weak-test-python, test strength on", func(t *testing.T) {
		reviewCalls, reviewIn, reviewOut := fixtureUsage(t, weakPythonGolden, reviewOpenings...)
		res := caseOf(t, rep, "weak-test-python")
		if res.Verdict != Full || res.Score != 1 || res.Result != "ready" {
			t.Fatalf("verdict %s (%v), result %s (%s: %s); want FULL and ready", res.Verdict, res.Score, res.Result, res.Failure, res.Reason)
		}
		want := ReviewCost{Reviews: 1, ModelCalls: reviewCalls, TokensIn: reviewIn, TokensOut: reviewOut, Requests: 0}
		if got := res.Review; got.Reviews != want.Reviews || got.ModelCalls != want.ModelCalls || got.TokensIn != want.TokensIn || got.TokensOut != want.TokensOut {
			t.Errorf("review cost %+v, want %+v", got, want)
		}
		if len(res.Strength) != 1 || res.Strength[0].Group != 1 || res.Strength[0].Killed == 0 || res.Strength[0].Survived != 0 {
			t.Errorf("strength %+v, want group 1 with mutants killed and none surviving", res.Strength)
		}
		if j := res.Judged; j == nil || !j.Passed || j.Score < 0.8 || j.Killed == 0 {
			t.Errorf("judged strength %+v, want passed at the floor 0.8", j)
		}
		if !slices.Equal(res.Hidden, []string{"tests/test_hidden_grade.py"}) || !slices.Contains(res.F2P, "tests.test_hidden_grade.test_hidden_grade_bands") {
			t.Errorf("hidden %v, f2p %v; want the hidden pytest file, its test fail-to-pass", res.Hidden, res.F2P)
		}
	})

	t.Run("fix-discount, its hidden test met", func(t *testing.T) {
		met := caseOf(t, rep, "fix-discount")
		if met.Verdict != Full || met.Result != "ready" {
			t.Fatalf("verdict %s, result %s (%s); want FULL and ready", met.Verdict, met.Result, met.Reason)
		}
		if !slices.Equal(met.Hidden, []string{"internal/price/discount_hidden_test.go"}) {
			t.Errorf("hidden %v, want the case's hidden test file", met.Hidden)
		}
		if !slices.Contains(met.F2P, hiddenHalfUp) || !slices.Contains(met.F2P, ownHalfUp) {
			t.Errorf("f2p %v, want the hidden test and the agent's own", met.F2P)
		}
	})

	t.Run("killed-mid-group", func(t *testing.T) {
		c := caseOf(t, rep, "killed-mid-group")
		if c.Verdict != Full || c.Jobs != 2 || c.Killed != 1 {
			t.Errorf("killed-mid-group: %s after %d Jobs, %d killed; want FULL after 2, 1 killed", c.Verdict, c.Jobs, c.Killed)
		}
		if c.Requests < 1 {
			t.Errorf("killed-mid-group: %d GitHub requests counted", c.Requests)
		}
	})
}
