package implement_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/roadmap-dev/roadmap/internal/actionsio"
	"github.com/roadmap-dev/roadmap/internal/checks"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/implement"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/policy"
	"github.com/roadmap-dev/roadmap/internal/prcheck"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/review"
	"github.com/roadmap-dev/roadmap/internal/sandbox"
	"github.com/roadmap-dev/roadmap/internal/trace"
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
// findings handed on; once a person dismisses it, the next review does not
// raise it again.
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

		// A person dismisses the finding (the record's ledger holds its id
		// closed, and the stop's hand-off, the findings, is gone, as
		// report's dismissal leaves it): the next Job's review does not
		// raise it, though the reviewer reports it again word for word: no
		// refutation call, no repair, and the PR is ready. (This was
		// TestReviewDismissedNotRaisedAgain, a fresh item whose record held
		// the dismissal; the ledger names no reviewed head, so the head is
		// reviewed again, as there.)
		dismissed := fmt.Sprintf(`implement.review: {"closed":[{"id":%q,"why":"dismissed by alice"}]}`, id)
		c, _ := w.recordComment()
		if err := w.fake.EditComment(c.ID, func(cur string) string {
			cur = regexp.MustCompile(`(?m)^implement\.check_log: .*\n`).ReplaceAllLiteralString(cur, "")
			return regexp.MustCompile(`(?m)^implement\.review: .*$`).ReplaceAllLiteralString(cur, dismissed)
		}); err != nil {
			t.Fatal(err)
		}
		if l, _ := w.record().Review(); len(l.Open) != 0 {
			t.Fatalf("the test's dismissal did not land: ledger %+v", l)
		}
		if log, ok := w.record().CheckLog(); ok && log != "" {
			t.Fatalf("the test's dismissal left the hand-off: %q", log)
		}
		next := w.newJob([]*llm.Conversation{reviewConv(t, "review-2", findings)})
		next.withReview(1)
		res = next.runWithGreenCI()
		if res.Result != record.ResultReady {
			t.Fatalf("the Job after the dismissal: %s (%s: %s), want ready\n%s", res.Result, res.Failure, res.Reason, next.log.String())
		}
		if calls := len(next.model.Requests()); calls != 1 {
			t.Errorf("%d model calls after the dismissal, want 1 (the review's: no refutation, no repair)", calls)
		}
		l, _ = w.record().Review()
		if why, ok := l.IsClosed(id); !ok || why != "dismissed by alice" || len(l.Open) != 0 {
			t.Errorf("ledger = %+v, want %s still dismissed by alice and nothing open", l, id)
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

// farewellTasks is a behaviour group: its test (tests/expect.txt, a test
// file by the rule) must fail on main, where greeting.txt says only hello.
const farewellTasks = "## 1. Farewell\n\n" +
	"- [ ] 1.1 Write the expectation in tests/expect.txt; verify: `grep -q -f tests/expect.txt greeting.txt` fails\n" +
	"- [ ] 1.2 Say it in greeting.txt; verify: `grep -q -f tests/expect.txt greeting.txt`\n"

// newFarewellWorld is a world whose main holds greeting.txt and the
// farewell plan.
func newFarewellWorld(t *testing.T) *world {
	t.Helper()
	return newWorldFiles(t, 1, "", map[string]string{"greeting.txt": "hello\n", planDir + "/tasks.md": farewellTasks})
}

func writeFile(path, content string) string {
	return fmt.Sprintf(`{"name":"write_file","arguments":{"path":%q,"content":%q}}`, path, content)
}

// farewellConv is group 1's model: each round is a list of tool calls
// ending in finish; a round after the first expects its prompt to carry
// expect (the failed check's log).
func farewellConv(t *testing.T, expect string, rounds ...[]string) *llm.Conversation {
	t.Helper()
	var turns []string
	for i, calls := range rounds {
		for k, c := range append(calls, finish) {
			e := ""
			if i > 0 && k == 0 {
				e = fmt.Sprintf(`"expect":%q,`, expect)
			}
			turns = append(turns, fmt.Sprintf(`{%s"response":{"tool_calls":[%s],"usage":{"tokens_in":1000,"tokens_out":100}}}`, e, c))
		}
	}
	data := fmt.Sprintf(`{"comment":"written by hand for TestImplementFailToPass","source":"hand","match":"task group 1 of","turns":[%s]}`,
		strings.Join(turns, ","))
	c, err := llm.ParseConversation("group-1", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// withBeforeTree wires the before tree as the CLI does, with the
// `isolation: none` boundary phase tests use; dirs gets each tree opened.
func withBeforeTree(j *job, dirs *[]string) {
	j.opts.BeforeTree = func(ctx context.Context, dir string) (checks.Runner, string, func() error, error) {
		*dirs = append(*dirs, dir)
		b, err := sandbox.Open(ctx, sandbox.Options{Mode: sandbox.ModeNone, Workspace: dir, Environ: gitEnv()})
		if err != nil {
			return nil, "", nil, err
		}
		sb := policy.NewSandbox(b, policy.Default(), gitEnv())
		ws, err := sb.Workspace()
		if err != nil {
			b.Close()
			return nil, "", nil, err
		}
		return checks.SandboxRunner(sb), ws, b.Close, nil
	}
	j.opts.TempDir = j.w.t.TempDir()
}

func f2pEvents(t *testing.T, w *world) []trace.Event {
	t.Helper()
	var out []trace.Event
	for _, e := range recordTrace(t, w.record()).Events {
		if e.Type == trace.TypePhase && e.Phase == trace.PhaseFailToPass {
			out = append(out, e)
		}
	}
	return out
}

func prComment(w *world, pr int) string {
	for _, c := range w.fake.Comments(pr) {
		if strings.Contains(c.Body, "<!-- roadmap:implement -->") {
			return c.Body
		}
	}
	return ""
}

const evidence = "grep -q -f tests/expect.txt greeting.txt passed before the group's change"

func TestImplementFailToPass(t *testing.T) {
	// The model's test expects "hello", which main already says: it passes
	// before the group's change and tests nothing.
	hollow := []string{writeFile("tests/expect.txt", "hello\n")}
	sound := []string{writeFile("tests/expect.txt", "goodbye\n"), writeFile("greeting.txt", "hello\ngoodbye\n")}

	t.Run("a test that already passes before the change is refused", func(t *testing.T) {
		w := newFarewellWorld(t)
		j := w.newJob([]*llm.Conversation{farewellConv(t, "", hollow)})
		var dirs []string
		withBeforeTree(j, &dirs)
		j.opts.RepairRounds = 1
		res := j.run()
		if res.Result != record.ResultStopped || res.Failure != "checks_failed" || res.Group != 0 {
			t.Fatalf("result = %s/%s group %d, want stopped/checks_failed in group 1\n%s", res.Result, res.Failure, res.Group, j.log.String())
		}
		if log, _ := w.record().CheckLog(); !strings.Contains(log, evidence) || !strings.Contains(log, "the test does not test it") {
			t.Errorf("check log %q does not carry the evidence", log)
		}
		ev := f2pEvents(t, w)
		if len(ev) != 1 || ev[0].Outcome != "failed" || ev[0].Group != 1 ||
			!strings.Contains(ev[0].Reason, "`grep -q -f tests/expect.txt greeting.txt` passed before the group's change") {
			t.Errorf("fail-to-pass events = %+v, want one failed for group 1", ev)
		}
		if heads := run(t, w.dir, "git", "--git-dir", w.remote, "log", "--all", "--format=%s"); strings.Contains(heads, "roadmap: 1.") {
			t.Errorf("the refused group was committed and pushed:\n%s", heads)
		}
		for _, d := range dirs {
			if _, err := os.Stat(d); !os.IsNotExist(err) {
				t.Errorf("the before tree %s is left behind (%v)", d, err)
			}
		}
	})

	// The repair round's group is the sound group: its round is the one
	// the sound group's Job ran (a Job of its own before), after a refused
	// one.
	t.Run("the repair round gets the evidence, and a sound group passes with its fail-to-pass recorded", func(t *testing.T) {
		w := newFarewellWorld(t)
		j := w.newJob([]*llm.Conversation{farewellConv(t, "the test does not test it", hollow, sound)})
		var dirs []string
		withBeforeTree(j, &dirs)
		res := j.runWithGreenCI()
		if res.Result != record.ResultReady || res.Group != 1 {
			t.Fatalf("result = %s group %d (%s: %s), want ready\n%s", res.Result, res.Group, res.Failure, res.Reason, j.log.String())
		}
		ev := f2pEvents(t, w)
		var outcomes []string
		for _, e := range ev {
			outcomes = append(outcomes, e.Outcome)
		}
		if got, want := strings.Join(outcomes, " "), "failed held"; got != want {
			t.Fatalf("fail-to-pass outcomes = %q, want %q", got, want)
		}
		// grep exits 1 (no match), not 2 (no such file): the group's test
		// file was laid over main.
		want := "`grep -q -f tests/expect.txt greeting.txt` failed before the group's change (exit 1)"
		if held := ev[1]; !strings.Contains(held.Reason, want) || !strings.Contains(held.Reason, "tests/expect.txt") {
			t.Errorf("the sound round's fail-to-pass = %+v, want held with %q", held, want)
		}
		if c := prComment(w, res.PR); !strings.Contains(c, "- group 1: **held**: "+want) {
			t.Errorf("PR comment does not record the fail-to-pass:\n%s", c)
		}
		if len(dirs) != 2 {
			t.Errorf("before trees opened: %v, want one a round", dirs)
		}
	})

	t.Run("a WIP commit of an earlier Job is the group's own work", func(t *testing.T) {
		w := newFarewellWorld(t)
		// Job 1 writes the sound group but a configured check fails: it
		// stops and leaves the work in a WIP commit on the branch.
		j1 := w.newJob([]*llm.Conversation{farewellConv(t, "", sound)})
		var dirs []string
		withBeforeTree(j1, &dirs)
		j1.opts.RepairRounds = 1
		j1.opts.CheckCommands = []string{"false"}
		if res := j1.run(); res.Result != record.ResultStopped {
			t.Fatalf("Job 1 = %s, want stopped", res.Result)
		}
		if wip, ok := w.record().WIP(); !ok || wip == "" {
			t.Fatal("Job 1 left no WIP commit")
		}
		// Job 2 finds the work done and finishes: the before tree is main,
		// not the WIP commit, where the test would pass.
		j2 := w.newJob([]*llm.Conversation{farewellConv(t, "", nil)})
		withBeforeTree(j2, &dirs)
		res := j2.runWithGreenCI()
		if res.Result != record.ResultReady {
			t.Fatalf("Job 2 = %s (%s: %s), want ready\n%s", res.Result, res.Failure, res.Reason, j2.log.String())
		}
		if ev := f2pEvents(t, w); len(ev) != 1 || ev[0].Outcome != "held" {
			t.Errorf("Job 2's fail-to-pass events = %+v, want one held", ev)
		}
	})

	t.Run("no before tree: not checked, and said", func(t *testing.T) {
		w := newFarewellWorld(t)
		j := w.newJob([]*llm.Conversation{farewellConv(t, "", sound)})
		res := j.runWithGreenCI()
		if res.Result != record.ResultReady {
			t.Fatalf("result = %s (%s: %s), want ready", res.Result, res.Failure, res.Reason)
		}
		if ev := f2pEvents(t, w); len(ev) != 1 || ev[0].Outcome != "not checked" {
			t.Errorf("fail-to-pass events = %+v, want one not checked", ev)
		}
		if c := prComment(w, res.PR); !strings.Contains(c, "- group 1: **not checked**") {
			t.Errorf("PR comment does not say fail-to-pass was not checked:\n%s", c)
		}
	})
}

// groupConv is group n's model: one round of tool calls ending in finish.
func groupConv(t *testing.T, n int, calls ...string) *llm.Conversation {
	t.Helper()
	var turns []string
	for _, c := range append(calls, finish) {
		turns = append(turns, fmt.Sprintf(`{"response":{"tool_calls":[%s],"usage":{"tokens_in":1000,"tokens_out":100}}}`, c))
	}
	data := fmt.Sprintf(`{"comment":"written by hand for TestFailToPassOneAnswer","source":"hand","match":"task group %d of","turns":[%s]}`,
		n, strings.Join(turns, ","))
	c, err := llm.ParseConversation(fmt.Sprintf("group-%d", n), []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestFailToPassOneAnswer runs implement and then the PR check on the
// history implement pushed, and wants the same before tree and the same
// verdict for each group from both. Group 2's test expects what group 1
// already wrote: implement refuses it and leaves the work in a WIP commit,
// and the PR check on that commit must refuse it too, on group 1's commit,
// not on main, where group 1's code is missing and the test would fail.
func TestFailToPassOneAnswer(t *testing.T) {
	const tasks = "## 1. Hi\n\n" +
		"- [ ] 1.1 Expect hi in tests/hi.txt; verify: `grep -q -f tests/hi.txt greeting.txt` fails\n\n" +
		"## 2. Farewell\n\n" +
		"- [ ] 2.1 Expect the farewell in tests/bye.txt; verify: `grep -q -f tests/bye.txt greeting.txt` fails\n"
	w := newWorldFiles(t, 2, "", map[string]string{"greeting.txt": "hello\n", planDir + "/tasks.md": tasks})
	main := w.base.RemoteHead("main")

	j := w.newJob([]*llm.Conversation{
		groupConv(t, 1, writeFile("tests/hi.txt", "hi\n"), writeFile("greeting.txt", "hello\nhi\n")),
		groupConv(t, 2, writeFile("tests/bye.txt", "hi\n")), // hollow: group 1 says hi already
	})
	var dirs []string
	withBeforeTree(j, &dirs)
	j.opts.RepairRounds = 1
	if res := j.run(); res.Result != record.ResultStopped || res.Failure != "checks_failed" {
		t.Fatalf("result = %s/%s, want stopped/checks_failed in group 2\n%s", res.Result, res.Failure, j.log.String())
	}
	if wip, ok := w.record().WIP(); !ok || wip == "" {
		t.Fatal("the Job left no WIP commit")
	}
	laidOver := regexp.MustCompile(`lay over ([0-9a-f]{7})|laid over ([0-9a-f]{7})`)
	implement := map[int][2]string{} // group: status, before
	for _, e := range f2pEvents(t, w) {
		m := laidOver.FindStringSubmatch(e.Reason)
		if m == nil {
			t.Fatalf("group %d's fail-to-pass names no before tree: %q", e.Group, e.Reason)
		}
		implement[e.Group] = [2]string{e.Outcome, m[1] + m[2]}
	}

	// The PR check, on a checkout of the pushed branch.
	pr := filepath.Join(w.dir, "pr")
	run(t, w.dir, "git", "clone", "-q", w.remote, pr)
	branch := run(t, pr, "git", "for-each-ref", "--format=%(refname:lstrip=3)", "refs/remotes/origin/roadmap/")
	run(t, pr, "git", "checkout", "-q", branch)
	g1 := run(t, pr, "git", "log", "--format=%H", "--grep=^Roadmap-Group: 1$")
	tmp := t.TempDir()
	getenv := func(k string) string {
		if k == "RUNNER_TEMP" {
			return tmp
		}
		return ""
	}
	got, err := prcheck.Run(context.Background(), prcheck.Options{
		Dir: pr, Base: "main", NoStatus: true, Getenv: getenv, Environ: gitEnv(), IO: actionsio.New(getenv, io.Discard),
		Boundary: func(ctx context.Context, _ *config.Config, dir string) (*sandbox.Boundary, error) {
			return sandbox.Open(ctx, sandbox.Options{Mode: sandbox.ModeNone, Workspace: dir, Environ: gitEnv()})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	prc := map[int][2]string{}
	for _, g := range got.Groups {
		prc[g.Number] = [2]string{g.FailToPass.Status, short(g.FailToPass.Before)}
	}
	want := map[int][2]string{1: {"held", short(main)}, 2: {"failed", short(g1)}}
	if diff := cmp.Diff(want, implement); diff != "" {
		t.Errorf("implement's fail-to-pass (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, prc); diff != "" {
		t.Errorf("the PR check's fail-to-pass (-want +got):\n%s", diff)
	}
}

// TestReviewRepairTestStrength: the test strength runs again on a repair
// Job. The item is ready; a person's review asks for calc.Min. The agent adds Min with a test that checks nothing: the
// scoped check passes, but Min's mutants survive, so the survivors go back
// to the agent ("add a test that fails on this mutant") before anything is
// committed; the agent pins Min, and the PR is ready again at the new head.
func TestReviewRepairTestStrength(t *testing.T) {
	write := func(path, content string) []llm.FixtureToolCall {
		return call(t, "write_file", map[string]string{"path": path, "content": content})
	}
	const (
		minGo      = "package calc\n\n// Min is the smaller of a and b.\nfunc Min(a, b int) int {\n\tif a < b {\n\t\treturn a\n\t}\n\treturn b\n}\n"
		weakMin    = "package calc\n\nimport \"testing\"\n\nfunc TestMin(t *testing.T) { _ = Min(2, 1) }\n"
		strongMin  = "package calc\n\nimport \"testing\"\n\nfunc TestMin(t *testing.T) {\n\tif Min(2, 1) != 1 || Min(1, 2) != 1 || Min(-3, -5) != -5 {\n\t\tt.Fatal(\"Min is not the smaller\")\n\t}\n}\n"
		reviewBody = "Add calc.Min as well, with its test."
	)
	w := newWorldWith(t, 0, "", func(o *theworld.Options) { o.Files = calcRepo() })
	first := w.newJob([]*llm.Conversation{
		// Group 1 leaves no mutation site (a package comment): the repair's
		// measure is Min's alone, the fewest mutants that show it.
		toolConv(t, "group-1", "task group 1 of", write("calc/doc.go", "// Package calc does arithmetic.\npackage calc\n"),
			call(t, "finish", map[string]string{"summary": "documented calc"})),
		reviewConv(t, "review-1", "[]")})
	first.withReview(1)
	ready := first.runWithGreenCI()
	if ready.Result != record.ResultReady {
		t.Fatalf("Job 1: %s/%s (%s), want ready\n%s", ready.Result, ready.Failure, ready.Reason, first.log.String())
	}
	in, _ := json.Marshal(map[string]any{"event": "REQUEST_CHANGES", "body": reviewBody})
	person(t, w, "POST", fmt.Sprintf("/pulls/%d/reviews", ready.PR), string(in))

	fix := toolConv(t, "min", reviewBody, write("calc/min.go", minGo), write("calc/min_test.go", weakMin),
		call(t, "finish", map[string]string{"summary": "added Min"}),
		write("calc/min_test.go", strongMin), call(t, "finish", map[string]string{"summary": "pinned Min"}))
	fix.Turns[3].Expect = "add a test that fails on this mutant"
	j := repairJob(w, 1, fix, reviewConv(t, "review-2", "[]"))
	j.opts.Strength = implement.StrengthOptions{On: true, Floor: 0.6, MaxMutants: 2}
	res := j.runWithGreenCI()
	if res.Result != record.ResultReady || res.HeadSHA == ready.HeadSHA {
		t.Fatalf("the repair Job: %s/%s (%s), want ready at a new head\n%s", res.Result, res.Failure, res.Reason, j.log.String())
	}
	if got := run(t, w.remote, "git", "show", res.HeadSHA+":calc/min_test.go"); !strings.Contains(got, "Min is not the smaller") {
		t.Errorf("the head's Min test is not the one the survivors asked for:\n%s\n%s", got, j.log.String())
	}
	if served := j.model.Requests(); len(served) < 4 {
		t.Errorf("%d model requests, want the survivors' round (4 or more)", len(served))
	}
}
