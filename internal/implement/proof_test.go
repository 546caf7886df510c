package implement_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/trace"
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

// Gap 1: the runner's repair rounds are retry events of the Job's trace,
// and so of the record's copy a person reads with `roadmap explain --trace`.
func TestRepairRoundIsARetryInTheRecordTrace(t *testing.T) {
	w := newWorld(t, 1, "")
	// Round 1 finishes without writing the file; round 2 writes it.
	c := conv(t, "group-1", 1, finish, write(1), finish)
	j := w.newJob([]*llm.Conversation{c})
	j.opts.WatchTimeout = time.Minute
	res := j.run()
	if res.Result == record.ResultStopped {
		t.Fatalf("stopped: %s %s\n%s", res.Failure, res.Reason, j.log.String())
	}
	rc := recordTrace(t, w.record())
	var retries []trace.Event
	for _, e := range rc.Events {
		if e.Type == trace.TypeRetry {
			retries = append(retries, e)
		}
	}
	if len(retries) != 1 || !strings.Contains(retries[0].Reason, "checks_failed: repair round") || retries[0].Attempt != 2 {
		t.Errorf("retry events in the record's trace = %+v, want one repair round, attempt 2", retries)
	}
}

// Gap 2: a checked_sha at another head does not skip the scoped checks: the
// Job runs them at its head and the record says where they passed.
func TestScopedChecksRunWhenCheckedSHAIsAnotherHead(t *testing.T) {
	stale := strings.Repeat("ab", 20)
	body := "Add greetings.\n\n<!-- roadmap:record v1\nimplement.checked_sha: " + stale + "\nstage.plan: " + planDir + "\n-->\n"
	w := newWorld(t, 1, body)
	j := w.newJob(w.conversations())
	j.opts.WatchTimeout = time.Minute
	res := j.runWithCIRunning()
	if res.Result == record.ResultStopped {
		t.Fatalf("stopped: %s %s\n%s", res.Failure, res.Reason, j.log.String())
	}
	if got, _ := w.record().CheckedSHA(); string(got) != res.HeadSHA {
		t.Errorf("implement.checked_sha = %s, want the head %s: the scoped checks did not run at the new head", got, res.HeadSHA)
	}
	// The group's verify command ran in its round and again at the head.
	if n := len(j.checks.cmds); n != 2 {
		t.Errorf("%d check commands ran (%v), want 2: the group's and the scoped checks at the head", n, j.checks.cmds)
	}
}

// Gap 3: the group mark carries the published head, in the same write.
func TestGroupMarkCarriesPublishedSHA(t *testing.T) {
	// Two groups: group 1's mark is a write of its own (the last group's
	// rides with the checked mark, where the archive sets published_sha too).
	w := newWorld(t, 2, "")
	j := w.newJob(w.conversations())
	j.opts.WatchTimeout = time.Minute
	j.runWithCIRunning()
	var mark string
	for _, p := range w.patches() {
		var req struct {
			Body string `json:"body"`
		}
		if json.Unmarshal([]byte(p), &req) == nil && strings.Contains(req.Body, "implement.group: 1\n") {
			mark = req.Body
			break
		}
	}
	if mark == "" {
		t.Fatalf("no record write holds group 1's mark:\n%v", w.patches())
	}
	sha := ""
	for _, line := range strings.Split(mark, "\n") {
		if v, ok := strings.CutPrefix(line, "implement.sha: "); ok {
			sha = strings.TrimSpace(v)
		}
	}
	if sha == "" || !strings.Contains(mark, "implement.published_sha: "+sha) {
		t.Errorf("group 1's mark lacks implement.published_sha equal to its implement.sha %q:\n%s", sha, mark)
	}
}

// Gap 4 and the runner's links: plan_wrong returns the item with the agent's
// reason, in the result, the record and its comment.
func TestPlanWrongReturnsWithTheAgentsReason(t *testing.T) {
	w := newWorld(t, 1, "")
	const reason = "greeting-1.txt is a directory in this repository: the plan cannot write it"
	c := conv(t, "group-1", 1, `{"name":"plan_wrong","arguments":{"reason":"`+reason+`"}}`)
	j := w.newJob([]*llm.Conversation{c})
	res := j.run()
	if res.Result != record.ResultReturned || res.Failure != "plan_wrong" {
		t.Fatalf("result = %s/%s, want returned/plan_wrong\n%s", res.Result, res.Failure, j.log.String())
	}
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
}

// Gap 4 and the runner's links: ask returns the item with the question in
// the record, where report posts it for a person.
func TestNeedsInputReturnsWithTheQuestion(t *testing.T) {
	w := newWorld(t, 1, "")
	const question = "Should greeting-1.txt say hello 1 or Hello, 1?"
	c := conv(t, "group-1", 1, `{"name":"ask","arguments":{"question":"`+question+`"}}`)
	j := w.newJob([]*llm.Conversation{c})
	res := j.run()
	if res.Result != record.ResultReturned || res.Failure != "needs_input" {
		t.Fatalf("result = %s/%s, want returned/needs_input\n%s", res.Result, res.Failure, j.log.String())
	}
	if got, _ := w.record().Question(); got != question {
		t.Errorf("record implement.question = %q, want %q", got, question)
	}
	if res.Question != question {
		t.Errorf("result question = %q, want %q", res.Question, question)
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
	second := w.newJob(w.conversations())
	second.opts.WatchTimeout = time.Minute
	second.run()
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

// Gap 9: spend lines number the calls of their Job from 1, as report reads
// them against the Job's line in implement.jobs to find a killed Job's
// unmarked spend.
func TestSpendLinesNumberCallsPerJob(t *testing.T) {
	w := newWorld(t, 2, "")
	// Job 1 passes group 1 and stops in group 2 (its step never writes the file).
	convs := w.conversations()
	first := w.newJob([]*llm.Conversation{convs[0], conv(t, "group-2", 2, finish)})
	first.opts.RepairRounds = 1
	if res := first.run(); res.Result != record.ResultStopped {
		t.Fatalf("first Job: %s/%s, want stopped in group 2\n%s", res.Result, res.Failure, first.log.String())
	}
	// Job 2 does group 2.
	second := w.newJob(convs)
	second.opts.WatchTimeout = time.Minute
	second.runWithCIRunning()

	log, err := trace.ParseSpendLines(strings.NewReader(second.log.String()))
	if err != nil {
		t.Fatal(err)
	}
	var calls []int
	for _, e := range log.Entries {
		if e.Job != 2 {
			t.Errorf("Job 2's log has a spend line of Job %d", e.Job)
		}
		calls = append(calls, e.Call)
	}
	jobs, _ := w.record().Jobs()
	var marked int
	for _, jo := range jobs {
		if jo.Job == 2 {
			marked = jo.Spend.ModelCalls
		}
	}
	if len(calls) == 0 || marked != len(calls) {
		t.Fatalf("Job 2: %d spend lines, %d calls in its implement.jobs line; want equal and not 0", len(calls), marked)
	}
	for i, c := range calls {
		if c != i+1 {
			t.Errorf("Job 2's spend line %d numbers call %d, want %d: report would count marked calls again", i+1, c, i+1)
		}
	}
}

// The runner's ladder link and the fix of item 2: a step that climbed to
// tier 1 and still failed leaves implement.tier: 1, and the next Job's first
// step starts there instead of on tier 0 again.
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
