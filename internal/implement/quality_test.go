package implement_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/implement"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/review"
	theworld "github.com/roadmap-dev/roadmap/internal/world"
)

// toolConv is a hand-written conversation: the first user message holding
// match gets each turn's tool calls in order, 1,000 tokens in and 100 out
// a call.
func toolConv(t *testing.T, name, match string, turns ...[]llm.FixtureToolCall) *llm.Conversation {
	t.Helper()
	c := llm.Conversation{Comment: "written by hand for internal/implement's quality tests: " + name, Source: llm.SourceHand, Match: match}
	for _, calls := range turns {
		c.Turns = append(c.Turns, llm.Turn{Response: llm.Response{ToolCalls: calls, Usage: llm.FixtureUsage{TokensIn: 1000, TokensOut: 100}}})
	}
	data, err := llm.MarshalConversation(&c)
	if err != nil {
		t.Fatal(err)
	}
	out, err := llm.ParseConversation(name, data)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func call(t *testing.T, tool string, args map[string]string) []llm.FixtureToolCall {
	t.Helper()
	data, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return []llm.FixtureToolCall{{Name: tool, Arguments: llm.Arguments(data)}}
}

// reviewConv answers the reviewer with findings (JSON text); refuteConv the
// refuter with verdicts.
func reviewConv(t *testing.T, name, findings string) *llm.Conversation {
	return toolConv(t, name, "Review this change", call(t, "review_findings", map[string]string{"findings": findings}))
}

func refuteConv(t *testing.T, name, verdicts string) *llm.Conversation {
	return toolConv(t, name, "Refute these findings", call(t, "refute", map[string]string{"verdicts": verdicts}))
}

// greetingFinding is a blocking finding on group 1's greeting, quoting the
// head, and its ledger id.
func greetingFinding(t *testing.T) (string, string) {
	t.Helper()
	f := []map[string]any{{"file": "greeting-1.txt", "start": 1, "end": 1, "severity": "blocking", "kind": "bug",
		"title": "the greeting has no name", "trigger": "a reader greeted by this file does not know who says hello", "quote": "hello 1"}}
	data, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(data), review.FindingID("greeting-1.txt", "hello 1", "bug")
}

// withReview turns the review on, on the Job's own ladder.
func (j *job) withReview(rounds int) {
	j.opts.Review = implement.ReviewOptions{Models: j.opts.Models, MaxFindings: 3, Rounds: rounds}
}

// TestReviewRepairRound: a blocking finding the refuter upholds goes back to
// the agent as a repair at the head; the repaired head is checked and
// reviewed again, the finding is closed as repaired in the ledger, and the
// PR is marked ready at the head the review passed at. With no round left,
// the item stops review_blocked with the finding open in the record and the
// findings handed on.
func TestReviewRepairRound(t *testing.T) {
	findings, id := greetingFinding(t)
	upheld := fmt.Sprintf(`[{"id":%q,"verdict":"upheld","reason":"the file says only hello 1"}]`, id)
	repair := toolConv(t, "repair", "the independent review",
		call(t, "write_file", map[string]string{"path": "greeting-1.txt", "content": "hello 1, from the widgets team\n"}),
		call(t, "finish", map[string]string{"summary": "the greeting names its sender"}))

	t.Run("repaired in one round", func(t *testing.T) {
		w := newWorld(t, 1, "")
		convs := append(w.conversations(), reviewConv(t, "review-1", findings), refuteConv(t, "refute-1", upheld), repair,
			reviewConv(t, "review-2", "[]"))
		j := w.newJob(convs)
		j.withReview(1)
		res := j.runWithGreenCI()
		if res.Result != record.ResultReady {
			t.Fatalf("result = %s (%s: %s), want ready\n%s", res.Result, res.Failure, res.Reason, j.log.String())
		}
		l, ok := w.record().Review()
		if !ok {
			t.Fatal("no implement.review in the record")
		}
		if why, closed := l.IsClosed(id); !closed || why != review.Repaired {
			t.Errorf("ledger %+v: want %s closed as repaired", l, id)
		}
		if string(l.SHA) != res.HeadSHA || len(l.Open) != 0 {
			t.Errorf("ledger passed at %s with %d open; want the ready head %s and none open", l.SHA, len(l.Open), res.HeadSHA)
		}
		if got := run(t, w.remote, "git", "log", "--format=%s", res.HeadSHA); !strings.Contains(got, "repair at the head") {
			t.Errorf("the head is not the repair commit:\n%s", got)
		}
		if c := onlyPRComment(t, w); !strings.Contains(c, "Review at") {
			t.Errorf("the PR comment does not show the review:\n%s", c)
		}
	})

	t.Run("no round left", func(t *testing.T) {
		w := newWorld(t, 1, "")
		convs := append(w.conversations(), reviewConv(t, "review-1", findings), refuteConv(t, "refute-1", upheld))
		j := w.newJob(convs)
		j.withReview(0)
		res := j.runWithGreenCI()
		if res.Result != record.ResultStopped || res.Failure != "review_blocked" {
			t.Fatalf("result = %s (%s: %s), want stopped review_blocked\n%s", res.Result, res.Failure, res.Reason, j.log.String())
		}
		rec := w.record()
		l, _ := rec.Review()
		if len(l.Open) != 1 || l.Open[0].ID != id {
			t.Errorf("ledger open = %+v, want %s", l.Open, id)
		}
		if log, _ := rec.CheckLog(); !strings.Contains(log, "hello 1") {
			t.Errorf("the hand-off does not hold the finding: %q", log)
		}
		if pr := onlyPR(t, w); !pr.Pull.Draft {
			t.Error("a PR with a blocking finding standing was marked ready")
		}
		if c := onlyPRComment(t, w); !strings.Contains(c, id) || !strings.Contains(c, "/roadmap dismiss") {
			t.Errorf("the PR comment does not list the finding and how to dismiss it:\n%s", c)
		}
	})
}

// TestReadyOnlyForReviewedHead: a push to the branch after the review (a
// person's) keeps the PR a draft: GitHub reports the new head in the
// mark-ready mutation, the PR is put back to a draft, and the Job yields.
// The next Job checks and reviews the new head, and only then is it ready.
func TestReadyOnlyForReviewedHead(t *testing.T) {
	w := newWorld(t, 1, "")
	j := w.newJob(append(w.conversations(), reviewConv(t, "review-1", "[]")))
	j.withReview(1)
	branch := fmt.Sprintf("roadmap/%d-add-greetings", w.issue)
	j.opts.Clock = &pushAfterReview{ManualClock: w.clock, w: w, branch: branch}
	res := j.run()
	if res.Result != record.ResultYielded || !strings.Contains(res.Reason, "moved") {
		t.Fatalf("result = %s (%s), want yielded because the head moved\n%s", res.Result, res.Reason, j.log.String())
	}
	reviewed := res.HeadSHA
	if pr := onlyPR(t, w); !pr.Pull.Draft {
		t.Fatal("the PR was left ready at a head nobody reviewed")
	}
	pushed := strings.TrimSpace(run(t, w.remote, "git", "rev-parse", "refs/heads/"+branch))
	if pushed == reviewed {
		t.Fatal("the test's push did not land")
	}

	j2 := w.newJob([]*llm.Conversation{reviewConv(t, "review-2", "[]")})
	j2.withReview(1)
	res = j2.runWithGreenCI()
	if res.Result != record.ResultReady || res.HeadSHA != pushed {
		t.Fatalf("second Job: %s at %s (%s), want ready at the pushed head %s\n%s", res.Result, res.HeadSHA, res.Reason, pushed, j2.log.String())
	}
	if l, _ := w.record().Review(); string(l.SHA) != pushed {
		t.Errorf("the review passed at %s, want the pushed head %s", l.SHA, pushed)
	}
	if calls := len(j2.model.Requests()); calls != 1 {
		t.Errorf("the second Job made %d model calls, want 1 (the review of the new head)", calls)
	}
}

// pushAfterReview plays CI and a person: at the watch's first wait the head
// roadmap pushed gets a green status, then a person pushes a commit of
// their own onto the branch.
type pushAfterReview struct {
	*githubfake.ManualClock
	w      *world
	branch string
	done   bool
}

func (c *pushAfterReview) Sleep(ctx context.Context, d time.Duration) error {
	if !c.done {
		c.done = true
		t := c.w.t
		sha := strings.TrimSpace(run(t, c.w.remote, "git", "rev-parse", "refs/heads/"+c.branch))
		c.w.fake.AddStatus(sha, "ci/test", "success", "CI")
		dir := filepath.Join(t.TempDir(), "person")
		run(t, c.w.dir, "git", "clone", "--quiet", "--branch", c.branch, c.w.remote, dir)
		if err := os.WriteFile(filepath.Join(dir, "NOTES.md"), []byte("a person's note\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		run(t, dir, "git", "add", "NOTES.md")
		run(t, dir, "git", "-c", "user.name=Alice", "-c", "user.email=alice@example.com", "commit", "--quiet", "-m", "a person's note")
		run(t, dir, "git", "push", "--quiet", "origin", c.branch)
	}
	return c.ManualClock.Sleep(ctx, d)
}

// onlyPR is the world's one pull request.
func onlyPR(t *testing.T, w *world) githubfake.Issue {
	t.Helper()
	for n := 1; ; n++ {
		is, ok := w.fake.Issue(n)
		if !ok {
			t.Fatal("the world has no pull request")
		}
		if is.Pull != nil {
			return is
		}
	}
}

// onlyPRComment is the body of roadmap's PR comment on the world's one PR.
func onlyPRComment(t *testing.T, w *world) string {
	t.Helper()
	c := prComment(w, onlyPR(t, w).Number)
	if c == "" {
		t.Fatal("the PR has no roadmap comment")
	}
	return c
}

// calcRepo is a Go module whose plan's one group adds calc.Max, verified by
// go test: the changed lines test strength measures.
func calcRepo() map[string]string {
	return map[string]string{
		"go.mod":                 "module example.com/widgets\n\ngo 1.22\n",
		"calc/calc.go":           "package calc\n\n// Add is a + b.\nfunc Add(a, b int) int { return a + b }\n",
		planDir + "/proposal.md": "# Add Max\n\nAdd calc.Max.\n",
		planDir + "/tasks.md":    "## 1. Max\n\n- [ ] 1.1 Add calc.Max(a, b) returning the larger; verify: `go test ./calc`\n",
	}
}

const (
	maxGo = "package calc\n\n// Max is the larger of a and b.\nfunc Max(a, b int) int {\n\tif a > b {\n\t\treturn a\n\t}\n\treturn b\n}\n"
	// weakTest runs Max and checks nothing: every mutant survives.
	weakTest = "package calc\n\nimport \"testing\"\n\nfunc TestMax(t *testing.T) { _ = Max(2, 1) }\n"
	// strongTest pins the behaviour.
	strongTest = "package calc\n\nimport \"testing\"\n\nfunc TestMax(t *testing.T) {\n\tif Max(2, 1) != 2 || Max(1, 2) != 2 || Max(-3, -5) != -3 {\n\t\tt.Fatal(\"Max is not the larger\")\n\t}\n}\n"
)

// TestTestStrengthRepairRound: a group whose test checks nothing passes its
// verify command, but its mutants survive: the survivors go back to the
// agent ("add a test that fails on this mutant", each as a diff), the agent
// pins the behaviour, and the group passes with its score in the record and
// the PR comment. Still weak with no round left, the item stops tests_weak.
func TestTestStrengthRepairRound(t *testing.T) {
	write := func(path, content string) []llm.FixtureToolCall {
		return call(t, "write_file", map[string]string{"path": path, "content": content})
	}
	finish := call(t, "finish", map[string]string{"summary": "added Max"})
	newCalc := func(t *testing.T) *world {
		return newWorldWith(t, 0, "", func(o *theworld.Options) { o.Files = calcRepo() })
	}

	t.Run("the agent adds the test the survivors ask for", func(t *testing.T) {
		w := newCalc(t)
		conv := toolConv(t, "group-1", "task group 1 of", write("calc/max.go", maxGo), write("calc/max_test.go", weakTest), finish,
			write("calc/max_test.go", strongTest), finish)
		conv.Turns[3].Expect = "add a test that fails on this mutant"
		j := w.newJob([]*llm.Conversation{conv})
		j.opts.Strength = implement.StrengthOptions{On: true, Floor: 0.6, MaxMutants: 1}
		res := j.runWithGreenCI()
		if res.Result != record.ResultReady {
			t.Fatalf("result = %s (%s: %s), want ready\n%s", res.Result, res.Failure, res.Reason, j.log.String())
		}
		gs, ok := w.record().Strength()
		if !ok || len(gs) != 1 || gs[0].Group != 1 || gs[0].Killed == 0 || gs[0].Score < 0.6 || gs[0].Generated == 0 {
			t.Fatalf("implement.strength = %+v, want group 1 measured at 0.6 or more", gs)
		}
		if c := onlyPRComment(t, w); !strings.Contains(c, "Test strength") {
			t.Errorf("the PR comment does not show the test strength:\n%s", c)
		}
	})

	t.Run("still weak with no round left", func(t *testing.T) {
		w := newCalc(t)
		conv := toolConv(t, "group-1", "task group 1 of", write("calc/max.go", maxGo), write("calc/max_test.go", weakTest), finish)
		j := w.newJob([]*llm.Conversation{conv})
		j.opts.Strength = implement.StrengthOptions{On: true, Floor: 0.6, MaxMutants: 1}
		j.opts.RepairRounds = 1
		res := j.runWithGreenCI()
		if res.Result != record.ResultStopped || res.Failure != "tests_weak" {
			t.Fatalf("result = %s (%s: %s), want stopped tests_weak\n%s", res.Result, res.Failure, res.Reason, j.log.String())
		}
		if log, _ := w.record().CheckLog(); !strings.Contains(log, "add a test that fails on this mutant") {
			t.Errorf("the hand-off does not hold the survivors: %q", log)
		}
		// Group 1 stopped before any push: no PR yet, and the report's stop
		// comment shows the record's check log.
		if !strings.Contains(j.log.String(), "class=tests_weak") {
			t.Errorf("the log has no typed tests_weak line:\n%s", j.log.String())
		}
	})
}

// TestReviewDismissedNotRaisedAgain: a finding a person dismissed (the
// record's ledger holds its id closed) is not raised by the next Job's
// review, though the reviewer reports it again word for word: no refutation
// call, no repair, and the PR is ready.
func TestReviewDismissedNotRaisedAgain(t *testing.T) {
	findings, id := greetingFinding(t)
	body := "Add greetings.\n\n<!-- roadmap:record v1\nstage.plan: " + planDir + "\nimplement.review: {\"closed\":[{\"id\":\"" + id + "\",\"why\":\"dismissed by alice\"}]}\n-->\n"
	w := newWorld(t, 1, body)
	j := w.newJob(append(w.conversations(), reviewConv(t, "review-1", findings)))
	j.withReview(1)
	res := j.runWithGreenCI()
	if res.Result != record.ResultReady {
		t.Fatalf("result = %s (%s: %s), want ready\n%s", res.Result, res.Failure, res.Reason, j.log.String())
	}
	if calls := len(j.model.Requests()); calls != 3 {
		t.Errorf("%d model calls, want 3 (the group's two and the review's one: no refutation, no repair)", calls)
	}
	l, _ := w.record().Review()
	if why, ok := l.IsClosed(id); !ok || why != "dismissed by alice" || len(l.Open) != 0 {
		t.Errorf("ledger = %+v, want %s still dismissed by alice and nothing open", l, id)
	}
}
