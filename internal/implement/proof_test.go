package implement_test

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/implement"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/redact"
	"github.com/roadmap-dev/roadmap/internal/trace"
	theworld "github.com/roadmap-dev/roadmap/internal/world"
)

// The tests of this file close the gaps issue 17 found by breaking the
// runner on purpose: each asserts what a person or the next Job sees (the
// record, its comment, the prompt, the log) and fails on the break it names.

// conv builds a recorded conversation for the task group n from the tool
// calls of its turns, each costing 1,000 tokens in and 100 out.
func conv(t *testing.T, name string, n int, calls ...string) *llm.Conversation {
	t.Helper()
	var turns []string
	for _, c := range calls {
		turns = append(turns, fmt.Sprintf(`{"response":{"tool_calls":[%s],"usage":{"tokens_in":1000,"tokens_out":100}}}`, c))
	}
	data := fmt.Sprintf(`{"comment":"written by hand for issue 17's proof tests","source":"hand","match":"task group %d of","turns":[%s]}`,
		n, strings.Join(turns, ","))
	c, err := llm.ParseConversation(name, []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func write(n int) string {
	return fmt.Sprintf(`{"name":"write_file","arguments":{"path":"greeting-%[1]d.txt","content":"hello %[1]d\n"}}`, n)
}

const finish = `{"name":"finish","arguments":{"summary":"done"}}`

// prompt is every message of a request, joined.
func prompt(req agent.ModelRequest) string {
	var b strings.Builder
	for _, m := range req.Messages {
		b.WriteString(m.Content + "\n")
	}
	return b.String()
}

// Gap 4 and the runner's links: the agent's plan_wrong and ask return the
// item, plan_wrong with the agent's reason in the result, the record and its
// comment, ask with the question in the record, where report posts it for a
// person. (They were TestPlanWrongReturnsWithTheAgentsReason and
// TestNeedsInputReturnsWithTheQuestion, the same world but for the call.)
func TestAgentReturnsTheItem(t *testing.T) {
	const (
		reason   = "greeting-1.txt is a directory in this repository: the plan cannot write it"
		question = "Should greeting-1.txt say hello 1 or Hello, 1?"
	)
	for _, tc := range []struct {
		failure string
		call    string
		check   func(t *testing.T, w *world, j *job, res implement.Result)
	}{
		{"plan_wrong", `{"name":"plan_wrong","arguments":{"reason":"` + reason + `"}}`, func(t *testing.T, w *world, j *job, res implement.Result) {
			r := w.record()
			if got, _ := r.Result(); got != record.ResultReturned {
				t.Errorf("record implement.result = %s, want returned", got)
			}
			if got, _ := r.Failure(); got != "plan_wrong" {
				t.Errorf("record implement.failure = %s, want plan_wrong", got)
			}
			if j.outputs["reason"] != reason {
				t.Errorf("output reason = %q, want the agent's %q", j.outputs["reason"], reason)
			}
			if c, _ := w.recordComment(); !strings.Contains(c.Body, reason) {
				t.Errorf("the record comment does not say the agent's reason:\n%s", c.Body)
			}
		}},
		{"needs_input", `{"name":"ask","arguments":{"question":"` + question + `"}}`, func(t *testing.T, w *world, j *job, res implement.Result) {
			if got, _ := w.record().Question(); got != question {
				t.Errorf("record implement.question = %q, want %q", got, question)
			}
			if res.Question != question {
				t.Errorf("result question = %q, want %q", res.Question, question)
			}
		}},
	} {
		t.Run(tc.failure, func(t *testing.T) {
			w := newWorld(t, 1, "")
			j := w.newJob([]*llm.Conversation{conv(t, "group-1", 1, tc.call)})
			res := j.run()
			if res.Result != record.ResultReturned || res.Failure != tc.failure {
				t.Fatalf("result = %s/%s, want returned/%s\n%s", res.Result, res.Failure, tc.failure, j.log.String())
			}
			tc.check(t, w, j, res)
		})
	}
}

// The runner's links and the fix of item 2: a person's answer reaches the
// next Job's first step, and only that step: the Job clears it.
func TestAnswerReachesTheFirstStepOnce(t *testing.T) {
	const question, answer = "Lowercase or capitalised?", "Lowercase, exactly hello 1."
	body := "Add greetings.\n\n<!-- roadmap:record v1\nimplement.answer: " + answer + "\nimplement.question: " + question +
		"\nimplement.result: returned\nimplement.failure: needs_input\nstage.plan: " + planDir + "\n-->\n"
	w := newWorld(t, 1, body)
	// Job 1's step uses the answer and still fails its checks.
	first := w.newJob([]*llm.Conversation{conv(t, "group-1", 1, finish)})
	first.opts.RepairRounds = 1
	res := first.run()
	if res.Result != record.ResultStopped {
		t.Fatalf("first Job: %s/%s, want stopped\n%s", res.Result, res.Failure, first.log.String())
	}
	if len(first.model.Requests()) == 0 || !strings.Contains(prompt(first.model.Requests()[0]), answer) || !strings.Contains(prompt(first.model.Requests()[0]), question) {
		t.Fatalf("the first step's prompt lacks the question and the answer")
	}
	r := w.record()
	if a, ok := r.Answer(); ok {
		t.Errorf("implement.answer = %q after the step that used it, want it cleared", a)
	}
	// Job 2's step (it fails its checks too: the test is about its
	// requests, not about what follows them).
	second := w.newJob([]*llm.Conversation{conv(t, "group-1", 1, finish)})
	second.opts.RepairRounds = 1
	second.run()
	if len(second.model.Requests()) == 0 {
		t.Fatalf("the next Job made no model call: nothing was tested\n%s", second.log.String())
	}
	for i, req := range second.model.Requests() {
		if strings.Contains(prompt(req), answer) {
			t.Errorf("request %d of the next Job holds the old answer again", i+1)
		}
	}
}

// Gap 6: a rebase that conflicts stops the item with the files in conflict,
// handed to the next Job through the record.
func TestRebaseConflictWritesConflictFiles(t *testing.T) {
	w := newWorld(t, 1, "")
	j := w.newJob(w.conversations())
	branch := fmt.Sprintf("roadmap/%d-add-greetings", w.issue)
	other := filepath.Join(w.dir, "other")
	run(t, w.dir, "git", "clone", "-q", w.remote, other)
	pushed := false
	j.model.Before = func(n int, req agent.ModelRequest) {
		if pushed {
			return
		}
		pushed = true
		// While the step works, someone else pushes the branch with the
		// same file written otherwise.
		run(t, other, "git", "checkout", "-q", "-b", branch)
		os.WriteFile(filepath.Join(other, "greeting-1.txt"), []byte("good morning\n"), 0o644)
		run(t, other, "git", "add", "-A")
		run(t, other, "git", "commit", "-q", "-m", "a person's greeting")
		run(t, other, "git", "push", "-q", "origin", branch)
	}
	res := j.run()
	if res.Result != record.ResultStopped || res.Failure != "conflict" {
		t.Fatalf("result = %s/%s (%s), want stopped/conflict\n%s", res.Result, res.Failure, res.Reason, j.log.String())
	}
	files, _ := w.record().Conflict()
	if len(files) != 1 || files[0] != "greeting-1.txt" {
		t.Errorf("implement.conflict = %v, want [greeting-1.txt]", files)
	}
}

// TestConflictStopKeepsWork: a conflict stop at push keeps the group's
// commit (issue 49, item 6). Job 1's push of group 1 meets a person's
// commit on the branch that writes the same file: the rebase conflicts, and
// the group's commit goes to refs/roadmap/wip/<issue>, named by
// implement.kept. The next Job lays it over the branch as it is then:
//
//   - once the person moved their file away, the kept change applies and
//     its checks pass: no model call, the branch's head holds the kept
//     change, and the ref and the key are gone once the group landed;
//   - while the conflict still holds, the agent gets the files, starting
//     from the kept work (the markers and the kept lines are in the tree
//     at its first call);
//   - a ref that is gone does not wedge the item: the group runs again as
//     before, with a log line that says why.
func TestConflictStopKeepsWork(t *testing.T) {
	t.Run("the kept change applies: no model call", func(t *testing.T) {
		w, first, other, branch := keptStop(t)
		ref := fmt.Sprintf("refs/roadmap/wip/%d", w.issue)
		kept := strings.TrimSpace(run(t, w.dir, "git", "--git-dir", w.remote, "rev-parse", ref))
		if want := strings.TrimSpace(run(t, first.ws, "git", "rev-parse", "HEAD^{tree}")); run(t, w.dir, "git", "--git-dir", w.remote, "rev-parse", ref+"^{tree}") != want {
			t.Errorf("%s holds another tree than the group's commit %s", ref, want)
		}
		if got := run(t, w.dir, "git", "--git-dir", w.remote, "show", ref+":greeting-1.txt"); got != "hello 1" {
			t.Errorf("greeting-1.txt in %s = %q, want the group's", ref, got)
		}
		if sha, _ := w.record().Kept(); string(sha) != kept {
			t.Errorf("implement.kept = %q, want %s (the ref)", sha, kept)
		}
		// The person resolves their side: their greeting moves away.
		run(t, other, "git", "mv", "greeting-1.txt", "morning.txt")
		run(t, other, "git", "commit", "-q", "-m", "a person's greeting, renamed")
		run(t, other, "git", "push", "-q", "origin", branch)

		second := w.newJob(w.conversations())
		res := second.runWithGreenCI()
		if res.Result != record.ResultReady {
			t.Fatalf("Job 2: %s/%s (%s), want ready\n%s", res.Result, res.Failure, res.Reason, second.log.String())
		}
		if n := len(second.model.Requests()); n != 0 {
			t.Errorf("Job 2 made %d model calls, want none: the kept commit is the group's work\n%s", n, second.log.String())
		}
		if got := run(t, w.dir, "git", "--git-dir", w.remote, "show", branch+":greeting-1.txt"); got != "hello 1" {
			t.Errorf("greeting-1.txt on the branch = %q, want the kept change", got)
		}
		if got := run(t, w.dir, "git", "--git-dir", w.remote, "log", "--format=%(trailers:key=Roadmap-Group,valueonly)", "-1", branch+"~1"); strings.TrimSpace(got) != "1" {
			t.Errorf("the commit under the archive names group %q, want group 1", got)
		}
		if out, err := theworld.Git(gitEnv(), w.dir, "--git-dir", w.remote, "rev-parse", "--verify", "-q", ref); err == nil {
			t.Errorf("%s is still on the remote (%s) after the group landed", ref, out)
		}
		if sha, ok := w.record().Kept(); ok {
			t.Errorf("implement.kept = %s after the group landed, want it deleted", sha)
		}
	})

	t.Run("a conflict that still holds goes to the agent with the kept work", func(t *testing.T) {
		w, _, _, _ := keptStop(t)
		second := w.newJob([]*llm.Conversation{conv(t, "group-1", 1, write(1), finish)})
		var tree string
		second.model.Before = func(n int, req agent.ModelRequest) {
			if n == 1 {
				data, _ := os.ReadFile(filepath.Join(second.ws, "greeting-1.txt"))
				tree = string(data)
			}
		}
		res := second.runWithGreenCI()
		if res.Result != record.ResultReady {
			t.Fatalf("Job 2: %s/%s (%s), want ready\n%s", res.Result, res.Failure, res.Reason, second.log.String())
		}
		if !containsAll(tree, "<<<<<<<", "good morning", "hello 1") {
			t.Errorf("greeting-1.txt at the first model call = %q, want the kept change in conflict with the person's", tree)
		}
		reqs := second.model.Requests()
		if len(reqs) == 0 || !containsAll(prompt(reqs[0]), "already holds this group's work", "- greeting-1.txt") {
			t.Errorf("the first step's prompt lacks the kept work and the files in conflict")
		}
		if _, ok := w.record().Kept(); ok {
			t.Error("implement.kept survives the group's landing")
		}
	})

	t.Run("a kept ref that is gone does not wedge the item", func(t *testing.T) {
		w, _, _, _ := keptStop(t)
		run(t, w.dir, "git", "--git-dir", w.remote, "update-ref", "-d", fmt.Sprintf("refs/roadmap/wip/%d", w.issue))
		second := w.newJob([]*llm.Conversation{conv(t, "group-1", 1, write(1), finish)})
		res := second.runWithGreenCI()
		if res.Result != record.ResultReady {
			t.Fatalf("Job 2: %s/%s (%s), want ready\n%s", res.Result, res.Failure, res.Reason, second.log.String())
		}
		if !strings.Contains(second.log.String(), "is gone from refs/roadmap/wip/") || len(second.model.Requests()) == 0 {
			t.Errorf("Job 2 did not say the kept commit is gone and run the group again\n%s", second.log.String())
		}
		if _, ok := w.record().Kept(); ok {
			t.Error("implement.kept survives a ref that is gone")
		}
	})
}

// keptStop is Job 1 of TestConflictStopKeepsWork: while its group 1 works,
// a person pushes the branch with greeting-1.txt written otherwise, so the
// push's rebase conflicts and the Job stops conflict. It returns the world,
// the Job, the person's clone and the branch.
func keptStop(t *testing.T) (*world, *job, string, string) {
	t.Helper()
	w := newWorld(t, 1, "")
	first := w.newJob(w.conversations())
	branch := fmt.Sprintf("roadmap/%d-add-greetings", w.issue)
	other := filepath.Join(w.dir, "other")
	run(t, w.dir, "git", "clone", "-q", w.remote, other)
	first.model.Before = func(n int, req agent.ModelRequest) {
		if n != 1 {
			return
		}
		run(t, other, "git", "checkout", "-q", "-b", branch)
		os.WriteFile(filepath.Join(other, "greeting-1.txt"), []byte("good morning\n"), 0o644)
		run(t, other, "git", "add", "-A")
		run(t, other, "git", "commit", "-q", "-m", "a person's greeting")
		run(t, other, "git", "push", "-q", "origin", branch)
	}
	res := first.run()
	if res.Result != record.ResultStopped || res.Failure != "conflict" {
		t.Fatalf("Job 1: %s/%s (%s), want stopped/conflict\n%s", res.Result, res.Failure, res.Reason, first.log.String())
	}
	return w, first, other, branch
}

// Gap 7: the record's copy of the trace stays within its bound however long
// the Job's trace is. The trace is made long in one group, by a step of many
// tool calls (each an event, as a group's phases are): it was twelve groups,
// a commit and a push each, which the bound does not tell apart from events
// of any other kind.
func TestRecordTraceCopyWithinBound(t *testing.T) {
	w := newWorld(t, 1, "")
	look := `{"name":"list_dir","arguments":{}}`
	var calls []string
	for i := 0; i < 8; i++ {
		calls = append(calls, strings.TrimSuffix(strings.Repeat(look+",", 12), ","))
	}
	c := conv(t, "group-1", 1, append(calls, write(1), finish)...)
	j := w.newJob([]*llm.Conversation{c})
	j.opts.WatchTimeout = time.Minute
	res := j.run()
	if res.Result == record.ResultStopped {
		t.Fatalf("stopped: %s %s\n%s", res.Failure, res.Reason, j.log.String())
	}
	raw, ok := w.record().Raw(record.KeyImplementTrace)
	if !ok {
		t.Fatal("no implement.trace")
	}
	if len(raw) > trace.RecordLimit {
		t.Errorf("implement.trace is %d characters, want at most %d", len(raw), trace.RecordLimit)
	}
	if rc := recordTrace(t, w.record()); rc.Dropped == 0 {
		t.Errorf("no event was dropped from a trace of %d events: the test no longer exercises the bound", len(j.opts.Trace.Events()))
	}
}

// The runner's ladder link and the fix of item 2: a step that climbed to
// tier 1 and still failed leaves implement.tier: 1, and the next Job's first
// step starts there instead of on tier 0 again. The first Job's stop shows
// a stop's typed result too, in its result, its outputs, its record's last
// write and the check log naming the failing command (it was
// TestTypedResult's stopped case, a Job of its own).
func TestLadderResumesAtTheTierReached(t *testing.T) {
	w := newWorld(t, 1, "")
	tiers := func(j *job, tier0, tier1 []*llm.Conversation) (*spyModel, *spyModel) {
		mk := func(name string, convs []*llm.Conversation) *spyModel {
			m, err := llm.New(llm.Config{Provider: llm.ProviderReplay, Model: name, Fixtures: writeFixtures(t, convs)})
			if err != nil {
				t.Fatal(err)
			}
			return &spyModel{Model: m}
		}
		a, b := mk("small", tier0), mk("large", tier1)
		j.opts.Models = []agent.Tier{{Name: "small", Model: a}, {Name: "large", Model: b}}
		return a, b
	}
	// Job 1: tier 0 finishes twice without the file (the same failure twice:
	// a fresh context on tier 1), tier 1 fails too; three rounds are used.
	first := w.newJob(w.conversations()) // its own model is replaced by the ladder
	first.opts.RepairRounds = 3
	small1, large1 := tiers(first, []*llm.Conversation{conv(t, "g1", 1, finish, finish)}, []*llm.Conversation{conv(t, "g1", 1, finish)})
	res := first.run()
	if res.Result != record.ResultStopped || res.Failure != "checks_failed" {
		t.Fatalf("first Job: %s/%s, want stopped/checks_failed\n%s", res.Result, res.Failure, first.log.String())
	}
	if got := first.outputs["result"]; got != "stopped" {
		t.Errorf("output result = %q, want stopped", got)
	}
	if got := first.outputs["failure"]; got != "checks_failed" {
		t.Errorf("output failure = %q, want checks_failed", got)
	}
	if log, _ := w.record().CheckLog(); !strings.Contains(log, "grep") {
		t.Errorf("check log %q does not name the failing command", log)
	}
	lastPatchHasResult(t, w, record.ResultStopped)
	if len(small1.Requests()) != 2 || len(large1.Requests()) != 1 {
		t.Fatalf("first Job: %d calls on tier 0 and %d on tier 1, want 2 and 1: the runner did not pass the ladder", len(small1.Requests()), len(large1.Requests()))
	}
	if got := w.record().Tier(); got != 1 {
		t.Errorf("implement.tier = %d after a last failing round on tier 1, want 1", got)
	}
	// Job 2 starts on tier 1 and passes there.
	second := w.newJob(w.conversations())
	second.opts.WatchTimeout = time.Minute
	small2, large2 := tiers(second, []*llm.Conversation{conv(t, "g1", 1, finish)}, w.conversations())
	res = second.run()
	if len(small2.Requests()) != 0 || len(large2.Requests()) == 0 {
		t.Errorf("second Job: %d calls on tier 0 and %d on tier 1, want its first step on tier 1", len(small2.Requests()), len(large2.Requests()))
	}
	if res.Result == record.ResultStopped {
		t.Fatalf("second Job: %s/%s (%s)\n%s", res.Result, res.Failure, res.Reason, second.log.String())
	}
	if got := w.record().Tier(); got != 0 {
		t.Errorf("implement.tier = %d after the step passed, want it cleared", got)
	}
}

func writeFixtures(t *testing.T, convs []*llm.Conversation) string {
	t.Helper()
	dir := t.TempDir()
	for _, c := range convs {
		data, err := llm.MarshalConversation(c)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, c.Name+".json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestDeadlineYield: a Job yields before a group the deadline leaves no
// room for (the longest recorded group plus the reserve), with its typed
// result in its result, its outputs and its record's last write (it was
// TestTypedResult's yielded case, a Job of its own); with time enough the
// same item runs: its group starts.
func TestDeadlineYield(t *testing.T) {
	body := "Add greetings.\n\n<!-- roadmap:record v1\nimplement.group_seconds: [900]\nstage.plan: " + planDir + "\n-->\n"
	w := newWorld(t, 1, body)
	j := w.newJob(w.conversations())
	j.opts.Reserve = time.Minute
	j.opts.Deadline = t0.Add(10 * time.Minute) // 10 minutes left; a group took 15
	res := j.run()
	if res.Result != record.ResultYielded {
		t.Fatalf("result = %s (%s), want yielded", res.Result, res.Reason)
	}
	if n := len(j.model.Requests()); n != 0 {
		t.Errorf("%d model calls, want 0: the Job must yield before starting the group", n)
	}
	if !strings.Contains(res.Reason, "deadline") {
		t.Errorf("reason %q does not say deadline", res.Reason)
	}
	if got := j.outputs["result"]; got != "yielded" {
		t.Errorf("output result = %q, want yielded", got)
	}
	lastPatchHasResult(t, w, record.ResultYielded)
	// With time enough the same item runs: its group starts. (The step
	// finishes without writing its file, so the Job stops in the group, no
	// push and no watch after it: the test is about the start.)
	j2 := w.newJob([]*llm.Conversation{conv(t, "group-1", 1, finish)})
	j2.opts.Reserve = time.Minute
	j2.opts.Deadline = w.clock.Now().Add(20 * time.Minute)
	j2.opts.RepairRounds = 1
	if res := j2.run(); len(j2.model.Requests()) == 0 {
		t.Errorf("with 20 minutes left the group did not start: %s %s", res.Result, res.Reason)
	}
}

// TestNestedRepositoryStopsTheJob: while group 1 works, the model makes
// sub/.git with a clean filter in that repository's own config and commits
// through it. The group's commit is refused and the Job stops as unknown
// (all state kept, a person looks), naming sub/.git; nothing is pushed and
// the filter never runs as roadmap.
func TestNestedRepositoryStopsTheJob(t *testing.T) {
	w := newWorld(t, 2, "")
	j := w.newJob(w.conversations())
	mark := filepath.Join(t.TempDir(), "clean.ran")
	filter := filepath.Join(t.TempDir(), "clean")
	if err := os.WriteFile(filter, []byte("#!/bin/sh\ntouch '"+mark+"'\ncat\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	planted := false
	j.model.Before = func(n int, req agent.ModelRequest) {
		if planted || !strings.Contains(req.Messages[1].Content, "task group 1 of") || n < 2 {
			return
		}
		planted = true
		sub := filepath.Join(j.ws, "sub")
		run(t, j.ws, "git", "init", "-q", "sub")
		run(t, sub, "git", "config", "filter.x.clean", filter)
		os.WriteFile(filepath.Join(sub, ".gitattributes"), []byte("* filter=x\n"), 0o644)
		os.WriteFile(filepath.Join(sub, "f.txt"), []byte("nested\n"), 0o644)
		run(t, sub, "git", "add", ".")
		run(t, sub, "git", "commit", "-q", "-m", "nested")
		os.Remove(mark)
	}
	res := j.run()
	if !planted {
		t.Fatal("group 1's second model call never came")
	}
	if res.Result != record.ResultStopped || res.Failure != "unknown" || !strings.Contains(res.Reason, `"sub/.git"`) {
		t.Fatalf("result = %s/%s (%s), want stopped/unknown naming \"sub/.git\"\n%s", res.Result, res.Failure, res.Reason, j.log.String())
	}
	if got, _ := w.record().Failure(); got != "unknown" {
		t.Errorf("record failure = %q, want unknown", got)
	}
	if refs := run(t, w.dir, "git", "--git-dir", w.remote, "for-each-ref", "--format=%(refname)", "refs/heads/roadmap"); refs != "" {
		t.Errorf("the remote got %s: a refused group pushes nothing", refs)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Error("the nested repository's clean filter ran as roadmap")
	}
}

// tableRows returns the rows of the Markdown table whose header starts with
// "| Step |", each split into its trimmed cells.
func tableRows(body string) (header []string, rows [][]string) {
	cells := func(line string) []string {
		line = strings.TrimSpace(line)
		line = strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|")
		var out []string
		for _, c := range strings.Split(line, " | ") {
			out = append(out, strings.TrimSpace(c))
		}
		return out
	}
	in := false
	for _, l := range strings.Split(body, "\n") {
		switch {
		case strings.HasPrefix(l, "| Step |"):
			in, header = true, cells(l)
		case in && strings.HasPrefix(l, "|---"):
		case in && strings.HasPrefix(l, "|"):
			rows = append(rows, cells(l))
		case in:
			return header, rows
		}
	}
	return header, rows
}

// TestStoppedJob: a Job stops when group 2's checks fail every repair
// round, after group 1 passed, so the PR exists, and what only that whole
// Job shows:
//
//   - the PR's marker comment holds the stop's summary table, a row a step
//     and the total (a Job that stops before its first push has no PR; the
//     stop comment on the issue is report's);
//   - no secret reaches a store. One canary of each kind is planted where a
//     Job meets untrusted text: the model's output (the model name it
//     answers with, a tool it names, the arguments of a write), a check
//     command and that command's output (a token in a file of the
//     repository, the file the model wrote). None reaches the JSONL
//     artifact, the issue record (implement.trace and the whole body), the
//     PR, its comments, the model's prompts or the Job's log, and each did
//     reach the stores, masked.
//
// (These were two Jobs, TestStopCommentSummary's and TestTraceMaskingJob's,
// of the same stop.)
func TestStoppedJob(t *testing.T) {
	c := newCanaries()
	canary := "ghp_" + strings.Repeat("T0k", 12)
	// Group 2's check prints a file holding a token and the file the model
	// wrote, names canaries, and fails: cat has no such files.
	check := fmt.Sprintf("cat token.txt secret-out.txt %s %s %s %s", c.github, c.aws, c.host, c.ip)
	w := newWorldFiles(t, 2, "", map[string]string{
		planDir + "/tasks.md": "## 1. Greeting 1\n\n" +
			"- [ ] 1.1 Write greeting-1.txt saying hello 1; verify: `grep -q \"hello 1\" greeting-1.txt`\n\n" +
			"## 2. Greeting 2\n\n" +
			"- [ ] 2.1 Write greeting-2.txt saying hello 2; verify: `" + check + "`\n",
		"token.txt": "deploy token " + canary + "\n",
	})

	content := strings.Join([]string{"token " + c.github, "aws " + c.aws, "host " + c.host + " at " + c.ip,
		"configured " + c.secret, "base64 " + base64.StdEncoding.EncodeToString([]byte(c.secret)),
		"json " + strings.Trim(jsonText(t, c.secret), `"`)}, "\n") + "\n"
	usage := `"usage":{"tokens_in":1000,"tokens_out":100}`
	// Round 1: a tool named by a canary, the write, a finish; round 2: a
	// finish. The check fails after both.
	group2 := `{"comment":"written by hand: group 2 meets secrets in the model's output, its tool calls and its check","source":"hand",
"match":"task group 2 of","turns":[
 {"response":{"content":` + jsonText(t, "calling "+c.github) + `,"tool_calls":[{"name":` + jsonText(t, c.github) + `,"arguments":{}}],` + usage + `}},
 {"response":{"model":` + jsonText(t, "replay-model "+c.host) + `,"content":` + jsonText(t, "writing "+c.aws) + `,
   "tool_calls":[{"name":"write_file","arguments":{"path":"secret-out.txt","content":` + jsonText(t, content) + `}}],` + usage + `}},
 {"response":{"tool_calls":[{"name":"finish","arguments":{"summary":` + jsonText(t, "done with "+c.secret) + `}}],` + usage + `}},
 {"response":{"tool_calls":[{"name":"finish","arguments":{"summary":"still done"}}],` + usage + `}}]}`
	conv2, err := llm.ParseConversation("group-2", []byte(group2))
	if err != nil {
		t.Fatal(err)
	}
	convs := w.conversations()
	convs[1] = conv2

	masker := redact.New(redact.Config{Secrets: []string{token, c.secret}})
	tj := traceJob(t, w.newJob(convs), convs, masker)
	tj.opts.RepairRounds = 2
	res := tj.run()
	if res.Result != record.ResultStopped || res.Failure != "checks_failed" || res.PR == 0 {
		t.Fatalf("result = %s/%s, PR %d; want stopped/checks_failed with a PR\n%s", res.Result, res.Failure, res.PR, tj.log.String())
	}
	const failing = "`cat token.txt secret-out.txt [masked] [masked] [masked] [masked]` (exit 1)"

	var body string
	marked := 0
	for _, c := range w.fake.Comments(res.PR) {
		if strings.Contains(c.Body, "<!-- roadmap:implement -->") {
			body = c.Body
			marked++
		}
	}
	if marked != 1 {
		t.Fatalf("%d marker comments on PR #%d, want 1", marked, res.PR)
	}

	t.Run("the PR comment's summary table", func(t *testing.T) {
		header, rows := tableRows(body)
		wantHeader := []string{"Step", "Result", "Attempts", "Tokens in", "Tokens out", "Cost", "Last failing command"}
		if diff := cmp.Diff(wantHeader, header); diff != "" {
			t.Fatalf("the summary table's header (-want +got):\n%s\n%s", diff, body)
		}
		if len(rows) != 3 {
			t.Fatalf("%d rows, want group 1, group 2 and the total:\n%s", len(rows), body)
		}
		// Each model call of the fixtures is 1,000 tokens in and 100 out at $1
		// and $10 per million: $0.002. Group 1 took one round of two calls;
		// group 2 two rounds, of three calls and of one, its check failing
		// both times.
		for i, want := range []struct {
			step                                string
			result, attempts, in, out, cost, fc string
		}{
			{"1. ", "passed", "1", "2,000", "200", "$0.0040", "-"},
			{"2. ", "failed", "2", "4,000", "400", "$0.0080", failing},
			{"**Total**", `stopped (checks\_failed)`, "3", "6,000", "600", "$0.01", failing}, // $0.012: two decimals from a cent up
		} {
			row := rows[i]
			if !strings.HasPrefix(row[0], want.step) {
				t.Errorf("row %d names step %q, want one starting %q", i+1, row[0], want.step)
			}
			got := fmt.Sprint(row[1:])
			if w := fmt.Sprint([]string{want.result, want.attempts, want.in, want.out, want.cost, want.fc}); got != w {
				t.Errorf("row %d (%s) = %s, want %s", i+1, row[0], got, w)
			}
		}
		if !strings.Contains(body, "**Stopped** at group 2: `checks_failed`") {
			t.Errorf("the comment does not say where the Job stopped:\n%s", body)
		}
	})

	t.Run("no secret reaches a store", func(t *testing.T) {
		artifact, err := os.ReadFile(tj.path)
		if err != nil {
			t.Fatal(err)
		}
		is, _ := w.fake.Issue(w.issue)
		r := w.record()
		rawTrace, _ := r.Trace()
		var comments []string
		for _, n := range []int{w.issue, res.PR} {
			for _, cm := range w.fake.Comments(n) {
				comments = append(comments, cm.Body)
			}
		}
		pr, _ := w.fake.Issue(res.PR)
		var prompts []string
		for _, req := range tj.model.Requests() {
			prompts = append(prompts, prompt(req))
		}

		noCanary(t, "the JSONL artifact", string(artifact), c)
		noCanary(t, "implement.trace", string(rawTrace), c)
		noCanary(t, "the issue body", is.Body, c)
		noCanary(t, "the PR comments", strings.Join(comments, "\n"), c)
		noCanary(t, "the PR", pr.Title+"\n"+pr.Body, c)
		noCanary(t, "the Job's log", tj.log.String(), c)
		// The token the check printed.
		for where, text := range map[string]string{"the PR comment": body, "the issue body": is.Body, "the Job's log": tj.log.String(),
			"the JSONL artifact": string(artifact), "implement.trace": string(rawTrace)} {
			if strings.Contains(text, canary) {
				t.Errorf("%s holds the token", where)
			}
		}
		for i, p := range prompts {
			if strings.Contains(p, canary) {
				t.Errorf("model request %d holds the token", i+1)
			}
		}

		// And the canaries did reach each store, masked: a test whose
		// secrets never got there would pass on a masker that does nothing.
		var maskedModel, maskedTool, maskedCommand bool
		for _, e := range tj.artifact(t) {
			maskedModel = maskedModel || e.Type == trace.TypeModelCall && e.Model == "replay-model "+redact.DefaultPlaceholder
			maskedTool = maskedTool || e.Type == trace.TypeToolCall && e.Tool == redact.DefaultPlaceholder
			maskedCommand = maskedCommand || e.Type == trace.TypeCheckRun && e.ExitCode != 0 &&
				e.Command == "cat token.txt secret-out.txt [masked] [masked] [masked] [masked]"
		}
		if !maskedModel || !maskedTool || !maskedCommand {
			t.Errorf("the artifact lacks a masked model name (%v), tool name (%v) or check command (%v):\n%s", maskedModel, maskedTool, maskedCommand, artifact)
		}
		if !strings.Contains(string(rawTrace), `"cmd":"cat token.txt secret-out.txt [masked] [masked] [masked] [masked]"`) {
			t.Errorf("implement.trace lacks the masked check command:\n%s", rawTrace)
		}
		log, _ := r.CheckLog()
		if !strings.Contains(log, "deploy token "+redact.DefaultPlaceholder) || strings.Count(log, redact.DefaultPlaceholder) < 8 {
			t.Errorf("implement.check_log should hold the check's output with the token and each canary masked:\n%s", log)
		}
		if !strings.Contains(body, failing) {
			t.Errorf("the PR comment's table lacks the masked failing command:\n%s", body)
		}
	})
}
