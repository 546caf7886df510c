package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// strengthJSON is the part of `roadmap ci test-strength --json` the test
// reads; the names are the documented ones.
type strengthJSON struct {
	Generated  int     `json:"generated"`
	Killed     int     `json:"killed"`
	Survived   int     `json:"survived"`
	NotCovered int     `json:"not_covered"`
	TimedOut   int     `json:"timed_out"`
	Score      float64 `json:"score"`
	Passed     bool    `json:"passed"`
	Mutants    []struct {
		File   string `json:"file"`
		Status string `json:"status"`
		Diff   string `json:"diff"`
	} `json:"mutants"`
}

const (
	// maxGo adds Max: two changed lines of behaviour (the condition and
	// each return), all run by TestMax with any arguments.
	maxGo = calcGo + "\n// Max is the larger of a and b.\nfunc Max(a, b int) int {\n\tif a > b {\n\t\treturn a\n\t}\n\treturn b\n}\n"
	// maxTestNothing runs Max and checks nothing.
	maxTestNothing = "package calc\n\nimport \"testing\"\n\nfunc TestMax(t *testing.T) {\n\tMax(1, 2)\n\tMax(2, 1)\n}\n"
	// maxTestPins checks both branches with non-zero answers.
	maxTestPins = "package calc\n\nimport \"testing\"\n\nfunc TestMax(t *testing.T) {\n\tif Max(1, 2) != 2 || Max(3, 1) != 3 {\n\t\tt.Fatal(\"Max\")\n\t}\n}\n"
)

func (r *ciRepo) runStrength(args ...string) (int, string, string) {
	r.t.Helper()
	var out, errb bytes.Buffer
	args = append([]string{"ci", "test-strength", "-C", r.dir, "--config", r.cfg}, args...)
	code := Main(context.Background(), args, r.environ, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func (r *ciRepo) strengthJSON(wantCode int, args ...string) strengthJSON {
	r.t.Helper()
	code, out, errs := r.runStrength(append(args, "--json")...)
	if code != wantCode {
		r.t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, wantCode, out, errs)
	}
	var got strengthJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		r.t.Fatalf("stdout is not the JSON document: %v\n%s", err, out)
	}
	return got
}

// counts is the JSON's counts alone, for cmp.
func (s strengthJSON) counts() [5]int {
	return [5]int{s.Generated, s.Killed, s.Survived, s.NotCovered, s.TimedOut}
}

// TestCITestStrength: the verb on a change whose test checks nothing
// (survivors, exit 1) and on the same change with a test that pins the
// behaviour (killed, exit 0), in repositories built with real git.
func TestCITestStrength(t *testing.T) {
	build := func(t *testing.T, test string) *ciRepo {
		r := newCIRepo(t)
		r.commit("calc: Add", map[string]string{"go.mod": calcMod, "calc.go": calcGo, "calc_test.go": calcTest})
		r.commit("calc: Max", map[string]string{"calc.go": maxGo, "max_test.go": test})
		return r
	}
	// The change's lines of Max: `func Max` (nothing to mutate), `if a > b`
	// (negated), `return a` and `return b` (zero values): three mutants.
	t.Run("a test that checks nothing", func(t *testing.T) {
		r := build(t, maxTestNothing)
		got := r.strengthJSON(ExitFindings, "--base", "HEAD~1")
		if diff := cmp.Diff([5]int{3, 0, 3, 0, 0}, got.counts()); diff != "" {
			t.Errorf("generated, killed, survived, not covered, timed out (-want +got):\n%s", diff)
		}
		if got.Score != 0 || got.Passed {
			t.Errorf("score %v, passed %v; want 0 and false", got.Score, got.Passed)
		}
		// The human output of the same mutants, their tests a command that
		// passes whatever the code (each mutant survives, as above) rather
		// than go test again for each.
		code, out, _ := r.runStrength("--base", "HEAD~1", "--test", "true")
		for _, want := range []string{"test strength failed", "3 mutants generated: 0 killed, 3 survived", "SURVIVED  calc.go:",
			"-\tif a > b {", "+\tif !(a > b) {"} {
			if !strings.Contains(out, want) {
				t.Errorf("human output (exit %d) lacks %q:\n%s", code, want, out)
			}
		}
		if st := r.git("status", "--porcelain"); st != "" {
			t.Errorf("the work tree is not clean after the run:\n%s", st)
		}
	})

	t.Run("a test that pins the behaviour", func(t *testing.T) {
		r := build(t, maxTestPins)
		got := r.strengthJSON(ExitOK, "--base", "HEAD~1", "--test", "go test . -run TestMax")
		if diff := cmp.Diff([5]int{3, 3, 0, 0, 0}, got.counts()); diff != "" {
			t.Errorf("generated, killed, survived, not covered, timed out (-want +got):\n%s", diff)
		}
		if got.Score != 1 || !got.Passed {
			t.Errorf("score %v, passed %v; want 1 and true", got.Score, got.Passed)
		}
		for _, m := range got.Mutants {
			if m.File != "calc.go" || m.Status != "killed" || !strings.HasPrefix(m.Diff, "--- a/calc.go\n+++ b/calc.go\n@@ ") {
				t.Errorf("mutant %+v", m)
			}
		}
	})

	t.Run("nothing to measure", func(t *testing.T) {
		r := build(t, maxTestPins)
		r.commit("docs only", map[string]string{"tool.rb": "puts \"hi\"\n"})
		code, out, _ := r.runStrength("--base", "HEAD~1")
		if code != ExitFindings || !strings.Contains(out, "0 mutants ran") || !strings.Contains(out, "not yet available for Ruby (tool.rb)") {
			t.Errorf("exit %d, output:\n%s", code, out)
		}
	})

	t.Run("the tests fail before any mutant", func(t *testing.T) {
		r := build(t, "package calc\n\nimport \"testing\"\n\nfunc TestMax(t *testing.T) { t.Fatal(\"red already\") }\n")
		code, out, errs := r.runStrength("--base", "HEAD~1")
		if code != ExitFindings || out != "" || !strings.Contains(errs, "the tests fail on the unmutated tree") || !strings.Contains(errs, "red already") {
			t.Errorf("exit %d, stdout %q, stderr:\n%s", code, out, errs)
		}
	})

	t.Run("bad input", func(t *testing.T) {
		r := build(t, maxTestPins)
		for _, c := range []struct {
			name string
			args []string
			want string
		}{
			{"no base", nil, "--base is required"},
			{"unknown base", []string{"--base", "nosuchref"}, "is not a commit"},
			{"floor out of range", []string{"--base", "HEAD~1", "--floor", "2"}, "from 0 to 1"},
			{"refused command", []string{"--base", "HEAD~1", "--test", "curl http://127.0.0.1"}, "network access is refused"},
		} {
			code, _, errs := r.runStrength(c.args...)
			if code != ExitUsage || !strings.Contains(errs, c.want) {
				t.Errorf("%s: exit %d, stderr %q; want 2 and %q", c.name, code, errs, c.want)
			}
		}
	})
}
