package implement_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/roadmap-dev/roadmap/internal/actionsio"
	"github.com/roadmap-dev/roadmap/internal/checks"
	"github.com/roadmap-dev/roadmap/internal/prcheck"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/policy"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/sandbox"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

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
