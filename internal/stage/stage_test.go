package stage_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/stage"
)

// pulls returns the pull requests the fake holds.
func (w *world) pulls() []githubfake.Issue {
	var out []githubfake.Issue
	for n := 1; n < 50; n++ {
		is, ok := w.fake.Issue(n)
		if ok && is.Pull != nil {
			out = append(out, is)
		}
	}
	return out
}

// branchFile reads a file of the work branch on the remote.
func (w *world) branchFile(branch, path string) (string, bool) {
	cmd := exec.Command("git", "--git-dir", w.remote, "show", branch+":"+path)
	cmd.Env = gitEnv()
	out, err := cmd.Output()
	return string(out), err == nil
}

func TestStageDraftPR(t *testing.T) {
	t.Run("clean", func(t *testing.T) {
		w := newWorld(t)
		j := w.newJob(soundPlanner("Write the plan for issue"), cleanVerifier("Review the plan for issue"))
		res := j.run(context.Background())
		if res.Result != stage.ResultStaged {
			t.Fatalf("result %s (%s: %s), want staged\n%s", res.Result, res.Failure, res.Reason, j.log.String())
		}
		if res.Plan != changeDir || res.Rounds != 1 {
			t.Errorf("plan %q after %d rounds; want %q after 1", res.Plan, res.Rounds, changeDir)
		}
		prs := w.pulls()
		if len(prs) != 1 || !prs[0].Pull.Draft || prs[0].Number != res.PR {
			t.Fatalf("pull requests %+v; want one draft, #%d", prs, res.PR)
		}
		branch := prs[0].Pull.Head
		// The draft PR holds only the plan.
		cmd := exec.Command("git", "--git-dir", w.remote, "diff", "--name-only", "main", branch)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range strings.Fields(string(out)) {
			if !strings.HasPrefix(f, changeDir+"/") {
				t.Errorf("the draft PR changes %s, outside the plan", f)
			}
		}
		if got, _ := w.branchFile(branch, changeDir+"/tasks.md"); got != tasks {
			t.Errorf("tasks.md on %s:\n%s\nwant\n%s", branch, got, tasks)
		}
		rec := w.record()
		if st, _ := rec.StageState(); st != stage.StateStaged {
			t.Errorf("stage.state %q, want staged", st)
		}
		if p, _ := rec.StagePlan(); p != changeDir {
			t.Errorf("stage.plan %q, want %q", p, changeDir)
		}
		if n, _ := rec.StagePR(); n != res.PR {
			t.Errorf("stage.pr %d, want %d", n, res.PR)
		}
		if sp, _ := rec.Spend(); sp.ModelCalls != 7 || sp != res.Spend {
			t.Errorf("recorded spend %+v, result %+v; want 7 model calls in both", sp, res.Spend)
		}
		// No findings: the PR's body says so and no comment is spent on it.
		if len(w.fake.Comments(res.PR)) != 0 || !strings.Contains(prs[0].Body, "with no findings") {
			t.Errorf("a clean plan's PR: %d comments, body %q; want none and the verdict in the body", len(w.fake.Comments(res.PR)), prs[0].Body)
		}
		// The real OpenSpec CLI accepts the plan stage wrote.
		bin := openspecCLI(t)
		clone := filepath.Join(w.dir, "check")
		run(t, w.dir, "git", "clone", "-q", "-b", branch, w.remote, clone)
		cmd = exec.Command(bin, "validate", "add-greetings", "--strict", "--no-interactive")
		cmd.Dir = clone
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("openspec validate --strict refuses the staged plan: %v\n%s", err, out)
		}
		// A second Job finds the item staged and does nothing.
		again := w.newJob(soundPlanner("Write the plan for issue"))
		res2 := again.run(context.Background())
		if res2.Result != stage.ResultStaged || len(again.model.Requests()) != 0 || len(w.pulls()) != 1 {
			t.Errorf("second Job: %s with %d model calls and %d PRs; want staged, none, one", res2.Result, len(again.model.Requests()), len(w.pulls()))
		}
	})
	t.Run("findings comment", func(t *testing.T) {
		w := newWorld(t)
		// No acceptance criteria: the acceptance-map gate says so (INFO),
		// which does not fail the plan but is a finding of the last round.
		if err := w.fake.SetIssueBody(w.issue, "alice", "The greet package is empty: callers need a greeting."); err != nil {
			t.Fatal(err)
		}
		j := w.newJob(soundPlanner("Write the plan for issue"), cleanVerifier("Review the plan for issue"))
		res := j.run(context.Background())
		if res.Result != stage.ResultStaged || len(res.Findings) == 0 {
			t.Fatalf("result %s with findings %+v; want staged with an INFO finding", res.Result, res.Findings)
		}
		var comment string
		for _, c := range w.fake.Comments(res.PR) {
			if strings.Contains(c.Body, "<!-- roadmap:stage -->") {
				comment = c.Body
			}
		}
		if !strings.Contains(comment, "roadmap/gate/acceptance-map") || !strings.Contains(comment, "after 1 round") {
			t.Errorf("the PR's stage comment does not hold the last round's findings:\n%s", comment)
		}
	})
	t.Run("returned", func(t *testing.T) {
		w := newWorld(t)
		// Every round writes a plan with no delta spec and a group with no
		// verify command: the gates refuse it each time.
		bad := "## 1. Hello\n\n- [ ] 1.1 Implement Hello\n"
		j := w.newJob(
			conv("planner: a plan the gates refuse", "Write the plan for issue",
				planFile("proposal.md", proposal), planFile("tasks.md", bad), finish("wrote the plan")),
			conv("planner: revises and still fails", "Revise the plan for issue",
				planFile("tasks.md", bad), finish("revised")))
		j.opts.Rounds = 2
		res := j.run(context.Background())
		if res.Result != stage.ResultReturned || res.Failure != "plan_wrong" {
			t.Fatalf("result %s (%s), want returned (plan_wrong)\n%s", res.Result, res.Failure, j.log.String())
		}
		if len(w.pulls()) != 0 {
			t.Errorf("a PR opened for a plan with findings")
		}
		if res.Rounds != 2 {
			t.Errorf("rounds %d, want 2", res.Rounds)
		}
		rec := w.record()
		if st, _ := rec.StageState(); st != stage.StateReturned {
			t.Errorf("stage.state %q, want returned", st)
		}
		text, _ := rec.StageFindings()
		if !strings.Contains(text, changeDir+"/tasks.md:1: roadmap/verify-command") {
			t.Errorf("stage.findings does not name tasks.md line 1:\n%s", text)
		}
		if body := w.recordText(); !strings.Contains(body, "plan finding: "+changeDir) {
			t.Errorf("the record comment does not show the findings to a person:\n%s", body)
		}
		for _, f := range res.Findings {
			if f.Fails() && (f.File == "" || f.Line < 1) {
				t.Errorf("finding without a place: %+v", f)
			}
		}
		// A person reads the findings and asks again: new rounds, from
		// the plan as it stands, revised against its findings.
		again := w.newJob(conv("planner: revises with the person's request", "Revise the plan for issue",
			planFile("tasks.md", tasks), planFile("specs/greetings/spec.md", spec), finish("fixed")),
			cleanVerifier("Review the plan for issue"))
		res2 := again.run(context.Background())
		if res2.Result != stage.ResultStaged || res2.Rounds != 3 || len(w.pulls()) != 1 {
			t.Errorf("asked again: %s after %d rounds with %d PRs (%s); want staged after round 3, one PR", res2.Result, res2.Rounds, len(w.pulls()), res2.Reason)
		}
	})
}

func TestVerifierRound(t *testing.T) {
	w := newWorld(t)
	// Round 1's verifier objects; the planner revises; round 2 is clean.
	fixed := strings.Replace(tasks, "in `greet.go`", "in `greet.go`, returning \"Hello, \" + name + \"!\"", 1)
	j := w.newJob(
		soundPlanner("Write the plan for issue"),
		conv("verifier round 1: objects to the vague task 1.2", "re:(?s)Review the plan.*Implement `Hello` in `greet.go`; verify",
			verdict(changeDir+"/tasks.md:4: task 1.2 does not say what Hello returns; the issue asks for \"Hello, Ada!\"")),
		conv("planner round 2: says what Hello returns", "Revise the plan for issue",
			read(changeDir+"/tasks.md"), planFile("tasks.md", fixed), finish("said what Hello returns")),
		conv("verifier round 2: no objection", "re:(?s)Review the plan.*returning", judged("none", helloMet)))
	res := j.run(context.Background())
	if res.Result != stage.ResultStaged || res.Rounds != 2 {
		t.Fatalf("result %s after %d rounds; want staged after 2\n%s", res.Result, res.Rounds, j.log.String())
	}
	// The objection reached the planner of round 2 as a finding.
	var revise string
	for _, req := range j.model.Requests() {
		for _, m := range req.Messages {
			if strings.Contains(m.Content, "Revise the plan") {
				revise = m.Content
			}
		}
	}
	if !strings.Contains(revise, changeDir+"/tasks.md:4: "+stage.RuleVerifier+": task 1.2 does not say") {
		t.Errorf("round 2's planner did not get the objection as a finding:\n%s", revise)
	}
	if got, _ := w.branchFile(w.pulls()[0].Pull.Head, changeDir+"/tasks.md"); got != fixed {
		t.Errorf("the PR's tasks.md is not the revised one:\n%s", got)
	}
	if len(res.Findings) != 0 {
		t.Errorf("the last round's findings: %+v; want none", res.Findings)
	}
}

// TestVerifierSeesGateNotes: the verifier reads what the gates noted
// without failing the plan (here: an issue with no acceptance criteria) and
// where the symbols the issue names are declared, so its refutation starts
// from the same facts; the planner's prompt has the symbol index too.
func TestVerifierSeesGateNotes(t *testing.T) {
	w := newWorld(t)
	if err := w.fake.SetIssueBody(w.issue, "alice", "The greet package is empty: callers need `Hello` to greet them."); err != nil {
		t.Fatal(err)
	}
	j := w.newJob(soundPlanner("Write the plan for issue"), cleanVerifier("Review the plan for issue"))
	if res := j.run(context.Background()); res.Result != stage.ResultStaged {
		t.Fatalf("result %s (%s), want staged\n%s", res.Result, res.Reason, j.log.String())
	}
	var planner, verifier string
	for _, req := range j.model.Requests() {
		switch c := req.Messages[1].Content; {
		case strings.Contains(c, "Review the plan for issue"):
			verifier = c
		case strings.Contains(c, "Write the plan for issue"):
			planner = c
		}
	}
	for _, want := range []string{"What the plan gates noted (not failures)", "roadmap/gate/acceptance-map",
		"Where the symbols the issue names are declared", "Hello: declared nowhere"} {
		if !strings.Contains(verifier, want) {
			t.Errorf("the verifier's prompt lacks %q:\n%s", want, verifier)
		}
	}
	if !strings.Contains(planner, "Hello: declared nowhere") {
		t.Errorf("the planner's prompt lacks the symbol index:\n%s", planner)
	}
}

func TestParseObjections(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []plan.Finding
	}{
		{"none", nil},
		{"None.", nil},
		{"a.go:12: Foo does not exist", []plan.Finding{{Level: plan.LevelError, Rule: stage.RuleVerifier, File: "a.go", Line: 12, Message: "Foo does not exist", Ours: true}}},
		{"- the plan misses the README", []plan.Finding{{Level: plan.LevelError, Rule: stage.RuleVerifier, File: "t.md", Line: 1, Message: "the plan misses the README", Ours: true}}},
		{"/etc/passwd:1: absolute", []plan.Finding{{Level: plan.LevelError, Rule: stage.RuleVerifier, File: "t.md", Line: 1, Message: "/etc/passwd:1: absolute", Ours: true}}},
	} {
		got := stage.ParseObjections(tt.in, "t.md")
		if len(got) != len(tt.want) {
			t.Errorf("%q: %d findings, want %d: %+v", tt.in, len(got), len(tt.want), got)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("%q: %+v, want %+v", tt.in, got[i], tt.want[i])
			}
		}
	}
}

func FuzzParseObjections(f *testing.F) {
	f.Add("a.go:1: x\nnone\n- b.go:x: y")
	f.Add(strings.Repeat("x:1: y\n", 100))
	f.Fuzz(func(t *testing.T, s string) {
		got := stage.ParseObjections(s, "t.md")
		if len(got) > 20 {
			t.Fatalf("%d objections; at most 20", len(got))
		}
		for _, f := range got {
			if f.Line < 1 || f.File == "" || len(f.Message) > 510 || strings.ContainsAny(f.Message, "\n\r") {
				t.Fatalf("bad finding %+v", f)
			}
		}
	})
}

func TestChangeID(t *testing.T) {
	for in, want := range map[string]string{
		"Add greetings":                  "add-greetings",
		"Fix: the API's 500 on /v1/pets": "fix-the-api-s-500-on-v1-pets",
		"42 things":                      "issue-7",
		"   ":                            "issue-7",
		"Ünïcode only":                   "n-code-only",
	} {
		if got := stage.ChangeID(7, in); got != want {
			t.Errorf("ChangeID(%q) = %q, want %q", in, got, want)
		}
		if err := record.CheckPlanPath(plan.ChangeDir("", stage.ChangeID(7, in))); err != nil {
			t.Errorf("ChangeID(%q) is not a plan path: %v", in, err)
		}
	}
}

// TestStageKeepsOnlyThePlan: a test the planner runs to see it fail writes
// into the work tree; only the plan's files reach the branch.
func TestStageKeepsOnlyThePlan(t *testing.T) {
	w := newWorld(t)
	seed := filepath.Join(w.dir, "seed")
	write(t, seed, "greet_test.go", "package greet\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestLeak(t *testing.T) {\n\tif err := os.WriteFile(\"leak.txt\", []byte(\"x\"), 0o644); err != nil {\n\t\tt.Fatal(err)\n\t}\n}\n")
	run(t, seed, "git", "add", "-A")
	run(t, seed, "git", "commit", "-q", "-m", "a test that writes a file")
	run(t, seed, "git", "push", "-q", "origin", "main")
	j := w.newJob(conv("planner: runs the tests, then writes the plan", "Write the plan for issue",
		call{"run_test", map[string]any{"command": "go test ./..."}},
		planFile("proposal.md", proposal), planFile("tasks.md", tasks), planFile("specs/greetings/spec.md", spec),
		finish("wrote the plan")),
		cleanVerifier("Review the plan for issue"))
	res := j.run(context.Background())
	if res.Result != stage.ResultStaged {
		t.Fatalf("result %s (%s)\n%s", res.Result, res.Reason, j.log.String())
	}
	if _, err := os.Stat(filepath.Join(j.ws, "leak.txt")); err == nil {
		t.Error("leak.txt is still in the work tree")
	}
	if _, ok := w.branchFile(w.pulls()[0].Pull.Head, "leak.txt"); ok {
		t.Error("leak.txt reached the plan's branch")
	}
	if !strings.Contains(j.log.String(), "discarded: leak.txt") {
		t.Errorf("the log does not say what was discarded:\n%s", j.log.String())
	}
}

// TestStageChangeIDTaken: a change of the same name already in the
// repository is not overwritten; the plan's id carries the issue's number.
func TestStageChangeIDTaken(t *testing.T) {
	w := newWorld(t)
	seed := filepath.Join(w.dir, "seed")
	write(t, seed, changeDir+"/proposal.md", "# Someone else's change\n")
	run(t, seed, "git", "add", "-A")
	run(t, seed, "git", "commit", "-q", "-m", "another change named add-greetings")
	run(t, seed, "git", "push", "-q", "origin", "main")
	j := w.newJob(soundPlanner("Write the plan for issue"), cleanVerifier("Review the plan for issue"))
	res := j.run(context.Background())
	if want := changeDir + "-1"; res.Plan != want {
		t.Fatalf("plan %q, want %q (%s: %s)", res.Plan, want, res.Result, res.Reason)
	}
	if got, _ := w.branchFile(w.pulls()[0].Pull.Head, changeDir+"/proposal.md"); got != "# Someone else's change\n" {
		t.Errorf("the other change was changed:\n%s", got)
	}
}

// TestStageLogSections: each round is a section of the job log, closed
// before the next opens; the model's text cannot open one.
func TestStageLogSections(t *testing.T) {
	w := newWorld(t)
	fixed := strings.Replace(tasks, "in `greet.go`", "in `greet.go`, returning \"Hello, \" + name + \"!\"", 1)
	j := w.newJob(
		soundPlanner("Write the plan for issue"),
		conv("verifier round 1: objects, with a workflow command in its text", "re:(?s)Review the plan.*Implement `Hello` in `greet.go`; verify",
			verdict(changeDir+"/tasks.md:4: ::group::evil\n::endgroup::")),
		conv("planner round 2", "Revise the plan for issue", planFile("tasks.md", fixed), finish("fixed")),
		conv("verifier round 2", "re:(?s)Review the plan.*returning", verdict("none")))
	if res := j.run(context.Background()); res.Result != stage.ResultStaged {
		t.Fatalf("result %s (%s)", res.Result, res.Reason)
	}
	var opened []string
	depth := 0
	for _, line := range strings.Split(j.log.String(), "\n") {
		switch {
		case strings.HasPrefix(line, "::group::"):
			depth++
			opened = append(opened, strings.TrimPrefix(line, "::group::"))
			if depth > 1 {
				t.Errorf("a section opened inside another: %q", line)
			}
		case line == "::endgroup::":
			depth--
		}
	}
	if depth != 0 || strings.Join(opened, "|") != "roadmap: plan round 1|roadmap: plan round 2" {
		t.Errorf("sections %q, open at the end %d; want the two rounds, closed", opened, depth)
	}
}

// TestPlannerContextHasCallersAndTests: the planner's first context names,
// for each symbol the issue cites, where it is declared, the files that call
// it and the tests that exercise it (#3012) — not only the declaration, so
// the first plan already covers the callers a change breaks and the tests
// that must keep passing; a symbol with no test says so.
func TestPlannerContextHasCallersAndTests(t *testing.T) {
	w := newWorld(t)
	seed := filepath.Join(w.dir, "seed")
	write(t, seed, "greet.go", "// Package greet says hello.\npackage greet\n\n// Hello greets name.\nfunc Hello(name string) string { return \"Hello, \" + name }\n\n// Wave waves.\nfunc Wave() string { return \"o/\" }\n")
	write(t, seed, "cmd/hi/main.go", "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/greet\"\n)\n\nfunc main() { fmt.Println(greet.Hello(\"Ada\"), greet.Wave()) }\n")
	write(t, seed, "greet_test.go", "package greet\n\nimport \"testing\"\n\nfunc TestHello(t *testing.T) {\n\tif Hello(\"Ada\") != \"Hello, Ada\" {\n\t\tt.Fail()\n\t}\n}\n")
	run(t, seed, "git", "add", "-A")
	run(t, seed, "git", "commit", "-q", "-m", "Hello, its caller and its test")
	run(t, seed, "git", "push", "-q", "origin", "main")
	if err := w.fake.SetIssueBody(w.issue, "alice", "`Hello` should end with an exclamation mark, and `Wave()` too."); err != nil {
		t.Fatal(err)
	}
	j := w.newJob(soundPlanner("Write the plan for issue"), cleanVerifier("Review the plan for issue"))
	j.run(context.Background())
	var first string
	for _, req := range j.model.Requests() {
		if c := req.Messages[1].Content; strings.Contains(c, "Write the plan for issue") {
			first = c
			break
		}
	}
	if first == "" {
		t.Fatal("the planner was never asked")
	}
	for _, want := range []string{
		"Hello: greet.go:5 (func); called from cmd/hi/main.go; tested in greet_test.go",
		"Wave: greet.go:8 (func); called from cmd/hi/main.go; tested in no test file (plan one)",
		"the callers and tests the index lists must keep working",
		"## Premises",
	} {
		if !strings.Contains(first, want) {
			t.Errorf("the planner's first context lacks %q:\n%s", want, first)
		}
	}
}
