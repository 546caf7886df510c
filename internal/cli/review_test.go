package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/review"
)

const reviewToken = "ghs_reviewtesttoken0000000000000000000"

const reviewBaseGo = "package calc\n\n// Div divides a by b.\nfunc Div(a, b int) int {\n\tif b == 0 {\n\t\treturn 0\n\t}\n\treturn a / b\n}\n"

const reviewHeadGo = "package calc\n\n// Div divides a by b.\nfunc Div(a, b int) int {\n\treturn a / b\n}\n\n// Avg is the mean of xs.\nfunc Avg(xs []int) int {\n\tsum := 0\n\tfor _, x := range xs {\n\t\tsum += x\n\t}\n\treturn sum / len(xs)\n}\n\n// deploy key: " + reviewToken + "\n"

const reviewTasks = "## 1. Add Avg\n\n- [x] 1.1 Add `Avg` to calc.go, verify: `go test ./...`\n"

// reviewWorld is a PR on the fake GitHub (over HTTP, a real go-github
// client) whose branch is in a real remote, a checkout at its head, and a
// configuration whose model is the replay model over fixtures.
type reviewWorld struct {
	t                       *testing.T
	fake                    *githubfake.Fake
	remote, ws, cfg, fixdir string
	pr                      int
	environ                 []string
}

func reviewGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null", "GIT_AUTHOR_NAME=t",
		"GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func newReviewWorld(t *testing.T) *reviewWorld {
	t.Helper()
	dir := t.TempDir()
	w := &reviewWorld{t: t, remote: filepath.Join(dir, "remote.git"), ws: filepath.Join(dir, "ws"), fixdir: filepath.Join(dir, "fixtures")}
	reviewGit(t, dir, "init", "-q", "--bare", "-b", "main", w.remote)
	reviewGit(t, dir, "clone", "-q", w.remote, w.ws)
	writeReviewFile(t, w.ws, "calc.go", reviewBaseGo)
	reviewGit(t, w.ws, "add", ".")
	reviewGit(t, w.ws, "commit", "-q", "-m", "base")
	reviewGit(t, w.ws, "push", "-q", "origin", "HEAD:main")
	reviewGit(t, w.ws, "checkout", "-q", "-b", "roadmap/1-avg")
	writeReviewFile(t, w.ws, "calc.go", reviewHeadGo)
	writeReviewFile(t, w.ws, "openspec/changes/add-avg/tasks.md", reviewTasks)
	writeReviewFile(t, w.ws, "openspec/changes/add-avg/proposal.md", "# Add Avg\n\nThe mean of a list of ints.\n")
	reviewGit(t, w.ws, "add", ".")
	reviewGit(t, w.ws, "commit", "-q", "-m", "Add Avg")
	reviewGit(t, w.ws, "push", "-q", "origin", "HEAD:roadmap/1-avg")
	reviewGit(t, w.ws, "fetch", "-q", "origin")

	w.fake = githubfake.New(githubfake.Options{Token: reviewToken, Owner: "acme", Repo: "widgets", GitRemote: w.remote})
	srv := httptest.NewServer(w.fake)
	t.Cleanup(srv.Close)
	issue := w.fake.CreateIssue(githubfake.Issue{Title: "Add Avg", Author: "alice",
		Body: "Add an Avg function.\n\n## Acceptance criteria\n\n- [ ] Avg of an empty list is 0\n- Div keeps its zero guard\n\n## Notes\n\n- not a criterion\n"})
	w.pr = w.fake.CreatePullRequest("roadmap/1-avg", "main", "Add Avg", fmt.Sprintf("Closes #%d.\n\n**Plan:** `openspec/changes/add-avg`\n", issue), true)
	w.cfg = filepath.Join(dir, "roadmap.yml")
	cfg := "isolation: none\nmodels:\n  - provider: replay\n    name: implementer-model\n    fixtures: " + w.fixdir +
		"\n  - provider: replay\n    name: review-model\n    fixtures: " + w.fixdir + "\n"
	if err := os.WriteFile(w.cfg, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	w.environ = []string{"PATH=" + os.Getenv("PATH"), "GITHUB_TOKEN=" + reviewToken, "GITHUB_API_URL=" + srv.URL,
		"GITHUB_REPOSITORY=acme/widgets", "HOME=" + dir, "RUNNER_TEMP=" + t.TempDir()}
	return w
}

func writeReviewFile(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fixture writes a hand-written conversation: the first message holding
// match is answered by tool with {arg: answer}; expect must be in it.
func (w *reviewWorld) fixture(name, match, expect, tool, arg, answer string) {
	w.t.Helper()
	args, _ := json.Marshal(map[string]string{arg: answer})
	c := &llm.Conversation{Comment: "hand-written for TestReviewVerb: " + name, Source: llm.SourceHand, Match: match, Model: "review-model",
		Turns: []llm.Turn{{Expect: expect, Response: llm.Response{
			ToolCalls: []llm.FixtureToolCall{{Name: tool, Arguments: llm.Arguments(args)}},
			Usage:     llm.FixtureUsage{TokensIn: 1200, TokensOut: 80}}}}}
	data, err := llm.MarshalConversation(c)
	if err != nil {
		w.t.Fatal(err)
	}
	writeReviewFile(w.t, w.fixdir, name+".json", string(data))
}

func (w *reviewWorld) review(args ...string) (int, string, string) {
	w.t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), append([]string{"review"}, args...), w.environ, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// TestReviewVerb: `roadmap review --pr N --json` reviews the PR's change
// from a checkout at its head, against its issue's acceptance criteria and
// its plan, on the configuration's last tier, and prints the Result.
func TestReviewVerb(t *testing.T) {
	t.Run("a blocking finding stands", func(t *testing.T) {
		w := newReviewWorld(t)
		findings := `[
 {"file": "calc.go", "start": 5, "end": 5, "severity": "blocking", "kind": "bug", "title": "Div panics when b is 0", "trigger": "Div(1, 0)", "quote": "return a / b"},
 {"file": "calc.go", "start": 14, "end": 14, "severity": "blocking", "kind": "bug", "title": "Avg panics on an empty list", "trigger": "Avg(nil), against the criterion", "quote": "return sum / len(xs)"},
 {"file": "calc.go", "start": 3, "end": 3, "severity": "blocking", "kind": "bug", "title": "invented", "trigger": "x", "quote": "if b == 0 {"},
 {"file": "calc.go", "start": 17, "end": 17, "severity": "advisory", "kind": "security", "title": "a key in the code: ` + reviewToken + `", "trigger": "anyone reads it", "quote": "// deploy key: ` + reviewToken + `"}]`
		div := review.FindingID("calc.go", "return a / b", "bug")
		avg := review.FindingID("calc.go", "return sum / len(xs)", "bug")
		// The reviewer's prompt must hold the acceptance criteria, the plan's
		// verify command and the diff's new lines; the refuter's the id.
		w.fixture("reviewer", "Review this change", "Avg of an empty list is 0", "review_findings", "findings", findings)
		w.fixture("refuter", "Refute these findings", avg, "refute", "verdicts",
			fmt.Sprintf(`[{"id": %q, "verdict": "refuted", "reason": "the plan's callers never pass 0"}, {"id": %q, "verdict": "upheld", "reason": "Avg(nil) panics"}]`, div, avg))
		code, stdout, stderr := w.review("--pr", fmt.Sprint(w.pr), "--json", "--workdir", w.ws, "--config", w.cfg)
		if code != ExitFindings {
			t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, ExitFindings, stdout, stderr)
		}
		var res review.Result
		if err := json.Unmarshal([]byte(stdout), &res); err != nil {
			t.Fatalf("stdout is not the Result: %v\n%s", err, stdout)
		}
		got := map[string]review.Finding{}
		for _, f := range res.Findings {
			got[f.ID] = f
		}
		if f := got[avg]; f.Severity != review.SeverityBlocking || f.File != "calc.go" || f.Start != 14 || f.End != 14 || f.Kind != "bug" {
			t.Errorf("the upheld finding: %+v", f)
		}
		if f := got[div]; f.Severity != review.SeverityAdvisory || f.Refuted != "the plan's callers never pass 0" {
			t.Errorf("the refuted finding: %+v", f)
		}
		if len(res.Findings) != 3 || len(res.Dropped) != 1 || !strings.Contains(res.Dropped[0].Reason, "not in the head") {
			t.Errorf("findings %+v dropped %+v", res.Findings, res.Dropped)
		}
		if res.Usage.ModelCalls != 2 || res.Usage.TokensIn != 2400 || res.Status != "finished" {
			t.Errorf("usage %+v status %s", res.Usage, res.Status)
		}
		// The finding that quotes a secret of the work tree is kept (the
		// quote is in the head) and printed masked.
		if !strings.Contains(stdout, "deploy key: [masked]") {
			t.Errorf("the security finding is not shown masked:\n%s", stdout)
		}
		for _, s := range []string{stdout, stderr} {
			if strings.Contains(s, reviewToken) {
				t.Error("the token reached the output")
			}
		}
		if code, stdout, _ := w.review("--pr", fmt.Sprint(w.pr), "-C", w.ws, "--config", w.cfg); code != ExitFindings || strings.Contains(stdout, reviewToken) || !strings.Contains(stdout, "| blocking |") {
			t.Errorf("the table: exit %d\n%s", code, stdout)
		}
	})
	t.Run("the prompt holds the plan and the diff", func(t *testing.T) {
		w := newReviewWorld(t)
		w.fixture("reviewer", "Review this change", "## The groups' tests\n\n- go test ./...", "review_findings", "findings", "[]")
		code, stdout, stderr := w.review("--pr", fmt.Sprint(w.pr), "--json", "-C", w.ws, "--config", w.cfg)
		if code != ExitOK {
			t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
		}
		var res review.Result
		if err := json.Unmarshal([]byte(stdout), &res); err != nil || len(res.Findings) != 0 || res.Usage.ModelCalls != 1 {
			t.Errorf("result %+v (%v)", res, err)
		}
		w.fixture("reviewer", "Review this change", "14 +\treturn sum / len(xs)", "review_findings", "findings", "[]")
		if code, stdout, stderr := w.review("--pr", fmt.Sprint(w.pr), "-C", w.ws, "--config", w.cfg); code != ExitOK || !strings.Contains(stdout, "found nothing") {
			t.Errorf("exit %d\n%s\n%s", code, stdout, stderr)
		}
	})
	t.Run("bad input", func(t *testing.T) {
		w := newReviewWorld(t)
		w.fixture("reviewer", "Review this change", "", "review_findings", "findings", "[]")
		pr := fmt.Sprint(w.pr)
		for _, tc := range []struct {
			name string
			args []string
			want string // in stderr
		}{
			{"no --pr", []string{"--json", "-C", w.ws, "--config", w.cfg}, "--pr N"},
			{"an argument", []string{"--pr", pr, "extra", "-C", w.ws, "--config", w.cfg}, "unexpected argument"},
			{"no such PR", []string{"--pr", "999", "-C", w.ws, "--config", w.cfg}, "999"},
			{"max-findings 0", []string{"--pr", pr, "--max-findings", "0", "-C", w.ws, "--config", w.cfg}, "--max-findings"},
			{"not a checkout", []string{"--pr", pr, "-C", t.TempDir(), "--config", w.cfg}, "repository"},
			{"no such base", []string{"--pr", pr, "--base", "nosuch", "-C", w.ws, "--config", w.cfg}, "the base"},
			{"no such config", []string{"--pr", pr, "-C", w.ws, "--config", filepath.Join(t.TempDir(), "x.yml")}, "x.yml"},
			{"not at the PR head", nil, "the PR's head is"},
		} {
			args := tc.args
			if args == nil {
				reviewGit(t, w.ws, "checkout", "-q", "main")
				args = []string{"--pr", pr, "-C", w.ws, "--config", w.cfg}
			}
			code, stdout, stderr := w.review(args...)
			if code != ExitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("%s: exit %d, want %d and %q on stderr\n%s\n%s", tc.name, code, ExitUsage, tc.want, stdout, stderr)
			}
		}
	})
}

// TestReviewIssueText: the acceptance criteria are the list items under an
// Acceptance heading only, and the PR body's issue and plan are read from
// roadmap's own lines.
func TestReviewIssueText(t *testing.T) {
	body := "Intro\n- not this\n\n### Acceptance criteria\n- [ ] first\n* [x] second\n+ third\nplain text\n\n## Out of scope\n- not this either\n"
	if got, want := acceptanceCriteria(body), []string{"first", "second", "third"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("acceptanceCriteria = %q, want %q", got, want)
	}
	many := "## Acceptance\n" + strings.Repeat("- "+strings.Repeat("x", 2*maxCriterionSize)+"\n", 2*maxCriteria)
	if got := acceptanceCriteria(many); len(got) != maxCriteria || len(got[0]) != maxCriterionSize {
		t.Errorf("unbounded: %d criteria, the first %d bytes", len(got), len(got[0]))
	}
	pr := "Closes #42.\n\n**State:** implementing\n\n**Plan:** `openspec/changes/add-avg` (OpenSpec change)\n"
	if closesIssue(pr) != 42 || prPlan(pr) != "openspec/changes/add-avg" {
		t.Errorf("closesIssue %d prPlan %q", closesIssue(pr), prPlan(pr))
	}
	if closesIssue("Mentions closes #7 inline") != 0 || prPlan("**Plan:** none") != "" {
		t.Error("a body without roadmap's lines named an issue or a plan")
	}
}

// FuzzReviewIssueText: the issue and PR bodies are anyone's text; reading
// them never panics and stays bounded.
func FuzzReviewIssueText(f *testing.F) {
	for _, s := range []string{"## Acceptance\n- a\n", "Closes #1.\n**Plan:** `x`", "#\n-\n", "## acceptance\n- [ ]\n- \xff\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cs := acceptanceCriteria(s)
		if len(cs) > maxCriteria {
			t.Fatalf("%d criteria", len(cs))
		}
		for _, c := range cs {
			if len(c) > maxCriterionSize || c == "" {
				t.Fatalf("criterion %q", c)
			}
		}
		if n := closesIssue(s); n < 0 || len(prPlan(s)) > 200 {
			t.Fatalf("closesIssue %d prPlan %q", n, prPlan(s))
		}
	})
}
