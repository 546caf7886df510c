package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// ciRepo is a repository built with real git for `roadmap ci fail-to-pass`,
// and a configuration outside it (isolation: none, as phase tests run).
type ciRepo struct {
	t       *testing.T
	dir     string
	cfg     string
	environ []string
}

func newCIRepo(t *testing.T) *ciRepo {
	t.Helper()
	r := &ciRepo{t: t, dir: t.TempDir(), cfg: filepath.Join(t.TempDir(), "roadmap.yml")}
	if err := os.WriteFile(r.cfg, []byte("isolation: none\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.environ = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "RUNNER_TEMP=" + t.TempDir()}
	if c := os.Getenv("GOCACHE"); c != "" {
		r.environ = append(r.environ, "GOCACHE="+c)
	}
	r.git("init", "--quiet", "--initial-branch=main")
	return r
}

func (r *ciRepo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=CI Test", "GIT_AUTHOR_EMAIL=ci@example.com",
		"GIT_COMMITTER_NAME=CI Test", "GIT_COMMITTER_EMAIL=ci@example.com",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func (r *ciRepo) commit(msg string, files map[string]string) {
	r.t.Helper()
	for name, body := range files {
		p := filepath.Join(r.dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	r.git("add", "--all")
	r.git("commit", "--quiet", "-m", msg)
}

func (r *ciRepo) run(args ...string) (int, string, string) {
	r.t.Helper()
	var out, errb bytes.Buffer
	args = append([]string{"ci", "fail-to-pass", "-C", r.dir, "--config", r.cfg}, args...)
	code := Main(context.Background(), args, r.environ, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

type ciJSON struct {
	F2P     []string `json:"f2p"`
	P2P     []string `json:"p2p"`
	Broken  []string `json:"broken"`
	Failing []string `json:"failing"`
	Passed  bool     `json:"passed"`
}

func (r *ciRepo) runJSON(wantCode int, args ...string) ciJSON {
	r.t.Helper()
	code, out, errs := r.run(append(args, "--json")...)
	if code != wantCode {
		r.t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, wantCode, out, errs)
	}
	var got ciJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		r.t.Fatalf("stdout is not the JSON document: %v\n%s", err, out)
	}
	return got
}

const (
	calcMod      = "module example.com/calc\n\ngo 1.22\n"
	calcGo       = "package calc\n\nfunc Add(a, b int) int { return a + b }\n"
	calcTest     = "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"Add(2, 3) != 5\")\n\t}\n}\n"
	calcSubGo    = "package calc\n\nfunc Sub(a, b int) int { return a - b }\n"
	calcSubTest  = "package calc\n\nimport \"testing\"\n\nfunc TestSub(t *testing.T) {\n\tif Sub(5, 3) != 2 {\n\t\tt.Fatal(\"Sub(5, 3) != 2\")\n\t}\n}\n"
	calcMulGo    = "package calc\n\nfunc Mul(a, b int) int { return a * b }\n"
	calcMulTest  = "package calc\n\nimport \"testing\"\n\nfunc TestMul(t *testing.T) {\n\tif Mul(2, 3) != 6 {\n\t\tt.Fatal(\"Mul(2, 3) != 6\")\n\t}\n}\n"
	calcBadAddGo = "package calc\n\nfunc Add(a, b int) int { return a - b }\n"
)

func TestCIFailToPass(t *testing.T) {
	r := newCIRepo(t)
	r.commit("calc: Add", map[string]string{"go.mod": calcMod, "calc.go": calcGo, "calc_test.go": calcTest})
	r.commit("calc: Sub, with its test", map[string]string{"sub.go": calcSubGo, "sub_test.go": calcSubTest})

	t.Run("a fix commit that adds its test", func(t *testing.T) {
		got := r.runJSON(ExitOK, "--base", "HEAD~1")
		want := ciJSON{F2P: []string{"example.com/calc.TestSub"}, P2P: []string{"example.com/calc.TestAdd"},
			Broken: []string{}, Failing: []string{}, Passed: true}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("result (-want +got):\n%s", diff)
		}
		if out := r.git("worktree", "list"); strings.Count(out, "\n") != 0 {
			t.Errorf("worktrees left behind:\n%s", out)
		}
		// The human output of a result is the JUnit subtest's: it is the
		// same whatever ran the tests, and each run here is two go tests.
	})

	t.Run("no change to the tests", func(t *testing.T) {
		got := r.runJSON(ExitFindings, "--base", "HEAD")
		if got.Passed || len(got.F2P) != 0 || len(got.P2P) != 2 {
			t.Errorf("result = %+v, want no F2P and not passed", got)
		}
	})

	t.Run("a change that breaks another test", func(t *testing.T) {
		r.commit("calc: Mul, and Add subtracts", map[string]string{"calc.go": calcBadAddGo, "mul.go": calcMulGo, "mul_test.go": calcMulTest})
		got := r.runJSON(ExitFindings, "--base", "HEAD~1")
		want := ciJSON{F2P: []string{"example.com/calc.TestMul"}, P2P: []string{"example.com/calc.TestSub"},
			Broken: []string{"example.com/calc.TestAdd"}, Failing: []string{}, Passed: false}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("result (-want +got):\n%s", diff)
		}
	})

	t.Run("a change that stops a package from building", func(t *testing.T) {
		r.commit("calc: Add fixed; util: does not build", map[string]string{"calc.go": calcGo,
			"util/util.go":      "package util\n\nfunc Twice(n int) int { return 2 * n }\n",
			"util/util_test.go": "package util\n\nimport \"testing\"\n\nfunc TestTwice(t *testing.T) {\n\tif Twice(2) != 4 {\n\t\tt.Fatal(\"Twice\")\n\t}\n}\n"})
		r.commit("util: broken", map[string]string{"util/util.go": "package util\n\nfunc Twice(n int) int { return nope }\n"})
		got := r.runJSON(ExitFindings, "--base", "HEAD~1")
		if diff := cmp.Diff([]string{"example.com/calc/util.TestTwice"}, got.Broken); diff != "" {
			t.Errorf("broken (-want +got):\n%s", diff)
		}
	})

	t.Run("JUnit files and exit codes from another runner", func(t *testing.T) {
		j := newCIRepo(t)
		junit := func(cases string) string {
			return "junit:\n\tmkdir -p out\n\tprintf '%s' '<testsuite>" + cases + "</testsuite>' > out/report.xml\n"
		}
		j.commit("base", map[string]string{"Makefile": junit(`<testcase classname="api" name="old"/><testcase classname="api" name="new"><failure/></testcase>`) +
			"check:\n\tfalse\n"})
		j.commit("fix", map[string]string{"Makefile": junit(`<testcase classname="api" name="old"/><testcase classname="api" name="new"/>`) +
			"check:\n\ttrue\n"})
		got := j.runJSON(ExitOK, "--base", "HEAD~1", "--test", "make junit", "--junit", "out/*.xml")
		if diff := cmp.Diff(ciJSON{F2P: []string{"api.new"}, P2P: []string{"api.old"}, Broken: []string{}, Failing: []string{}, Passed: true}, got); diff != "" {
			t.Errorf("junit (-want +got):\n%s", diff)
		}
		got = j.runJSON(ExitOK, "--base", "HEAD~1", "--test", "make check")
		if diff := cmp.Diff([]string{"make check"}, got.F2P); diff != "" {
			t.Errorf("exit code F2P (-want +got):\n%s", diff)
		}
		got = j.runJSON(ExitFindings, "--base", "HEAD", "--test", "make check")
		if diff := cmp.Diff([]string{"make check"}, got.P2P); diff != "" || got.Passed {
			t.Errorf("exit code with no change: %+v", got)
		}
		if code, _, errs := j.run("--base", "HEAD~1", "--test", "make junit", "--junit", "none/*.xml"); code != ExitUsage ||
			!strings.Contains(errs, "wrote no JUnit file") {
			t.Errorf("a glob that names nothing: exit %d, stderr %s", code, errs)
		}

		// The human output, without --json: the F2P named, the counts.
		code, out, _ := j.run("--base", "HEAD~1", "--test", "make junit", "--junit", "out/*.xml")
		if code != ExitOK || !strings.Contains(out, "F2P         api.new\n") || !strings.Contains(out, "1 F2P, 1 P2P, 0 broken P2P") {
			t.Errorf("human output (exit %d):\n%s", code, out)
		}
		// A change that breaks a test that passed: exit 1, the test named.
		j.commit("break old", map[string]string{"Makefile": junit(`<testcase classname="api" name="old"><failure/></testcase><testcase classname="api" name="new"/>`) +
			"check:\n\ttrue\n"})
		code, out, _ = j.run("--base", "HEAD~1", "--test", "make junit", "--junit", "out/*.xml")
		if code != ExitFindings || !strings.Contains(out, "BROKEN      api.old\n") {
			t.Errorf("human output (exit %d) does not name the broken test:\n%s", code, out)
		}
	})

	t.Run("bad input", func(t *testing.T) {
		for _, c := range []struct {
			name string
			args []string
			want string
		}{
			{"no base", nil, "--base is required"},
			{"unknown base", []string{"--base", "nosuchref"}, "is not a commit"},
			{"refused command", []string{"--base", "HEAD~1", "--test", "curl http://127.0.0.1"}, "network access is refused"},
			{"glob out of the tree", []string{"--base", "HEAD~1", "--test", "true", "--junit", "../*.xml"}, "leaves the repository"},
		} {
			code, _, errs := r.run(c.args...)
			if code != ExitUsage || !strings.Contains(errs, c.want) {
				t.Errorf("%s: exit %d, stderr %q; want 2 and %q", c.name, code, errs, c.want)
			}
		}
		nogo := newCIRepo(t)
		nogo.commit("one", map[string]string{"a.txt": "a\n"})
		nogo.commit("two", map[string]string{"a.txt": "b\n"})
		if code, _, errs := nogo.run("--base", "HEAD~1"); code != ExitUsage || !strings.Contains(errs, "pass --test") {
			t.Errorf("no go.mod and no --test: exit %d, stderr %q", code, errs)
		}
	})
}
