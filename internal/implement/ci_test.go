package implement_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/trace"
	theworld "github.com/roadmap-dev/roadmap/internal/world"
)

// What these tests share: the repository's CI is the fake GitHub's scripted
// CI, a workflow roadmap dispatches on the work branch (a GITHUB_TOKEN-only
// repository, where roadmap's pushes start no workflow run).

const ciWorkflow = "ci.yml"

// goTestFailure is a job log as GitHub serves it for a failing `go test`
// step: the runner's timestamps, go test's output, the runner's exit line.
const goTestFailure = `2026-11-29T09:01:00.1000000Z ##[group]Run go test ./...
2026-11-29T09:01:00.1000000Z go test ./...
2026-11-29T09:01:00.1000000Z shell: /usr/bin/bash -e {0}
2026-11-29T09:01:00.1000000Z ##[endgroup]
2026-11-29T09:01:02.3000000Z --- FAIL: TestGreetingPunctuation (0.00s)
2026-11-29T09:01:02.3000000Z     greeting_test.go:21: greeting-1.txt = "hello 1", want "hello 1!"
2026-11-29T09:01:02.3000000Z FAIL
2026-11-29T09:01:02.3000000Z FAIL	example.com/widgets	0.004s
2026-11-29T09:01:02.3000000Z ok  	example.com/widgets/internal/config	0.002s
2026-11-29T09:01:02.3000000Z FAIL
2026-11-29T09:01:02.3100000Z ##[error]Process completed with exit code 1.
`

// realLog reads a job log of the real-log corpus.
func realLog(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "logs", "real", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// prComment is roadmap's marker comment on the item's PR.
func (w *world) prComment(pr int) string {
	for _, c := range w.fake.Comments(pr) {
		if strings.Contains(c.Body, "<!-- roadmap:implement -->") {
			return c.Body
		}
	}
	return ""
}

// draft reports whether the item's PR is still a draft.
func (w *world) draft(t *testing.T, j *job, pr int) bool {
	t.Helper()
	p, err := j.gh.PR(t.Context(), pr)
	if err != nil {
		t.Fatal(err)
	}
	return p.Draft
}

// conversation is a hand-written model exchange: on a first user message
// holding match, write path with content, then finish.
func conversation(t *testing.T, name, match, path, content string) *llm.Conversation {
	t.Helper()
	data := fmt.Sprintf(`{"comment":"written by hand: %[1]s","source":"hand","match":%[2]q,"turns":[
 {"response":{"tool_calls":[{"name":"write_file","arguments":{"path":%[3]q,"content":%[4]q}}],"usage":{"tokens_in":1000,"tokens_out":100}}},
 {"expect":"","response":{"tool_calls":[{"name":"finish","arguments":{"summary":%[1]q}}],"usage":{"tokens_in":1000,"tokens_out":100}}}]}`,
		name, match, path, content)
	c, err := llm.ParseConversation(name, []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// firstUsers are the first user messages of every model request.
func (j *job) firstUsers() []string {
	var out []string
	for _, r := range j.model.Requests() {
		out = append(out, firstUser(r))
	}
	return out
}

// TestNoCIRun: a GITHUB_TOKEN-only item whose CI never starts is not called
// green: the PR stays a draft and a person is asked; ready without CI only
// when implement.ready_without_ci says so, and then the comment says no CI
// ran; with a dispatchable CI configured, roadmap dispatches it on the work
// branch and watches its checks on the head to green.
//
// The first three are one item's life (they were a fresh item each): Job 1
// does the group and finds no CI; Jobs 2 and 3, at the same head, decide
// again with another configuration. The watch decides each at the head,
// whatever Job got there.
func TestNoCIRun(t *testing.T) {
	w := newWorld(t, 1, "")
	t.Run("no CI", func(t *testing.T) {
		j := w.newJob(w.conversations())
		res := j.run()
		if res.Result != record.ResultReturned || res.Failure != "needs_input" {
			t.Fatalf("Job ended %s (%s: %s), want returned needs_input: no CI ran\n%s", res.Result, res.Failure, res.Reason, j.log.String())
		}
		if res.CI != "" {
			t.Errorf("Result.CI = %q, want none said", res.CI)
		}
		if !w.draft(t, j, res.PR) {
			t.Error("the PR was marked ready although no CI ran")
		}
		comment := w.prComment(res.PR)
		if strings.Contains(comment, "green") || !strings.Contains(comment, "no check reported") {
			t.Errorf("PR comment calls the checks green or does not say none reported:\n%s", comment)
		}
		if q, _ := w.record().Question(); !strings.Contains(q, "implement.ready_without_ci") || !strings.Contains(q, "implement.ci_workflows") {
			t.Errorf("implement.question = %q, want it to name the ways out", q)
		}
	})
	t.Run("no push token and no CI workflow: said at once, what a person must do", func(t *testing.T) {
		j := w.newJob(w.conversations())
		j.opts.NoCIPath = true
		start := w.clock.Now()
		res := j.run()
		if res.Result != record.ResultReturned || res.Failure != "needs_input" {
			t.Fatalf("Job ended %s (%s: %s), want returned needs_input\n%s", res.Result, res.Failure, res.Reason, j.log.String())
		}
		if waited := w.clock.Now().Sub(start); waited >= time.Minute {
			t.Errorf("the watch waited %s for a CI that cannot run, want no wait", waited)
		}
		q, _ := w.record().Question()
		for _, want := range []string{"No CI can run", "GITHUB_TOKEN", "ROADMAP_PUSH_TOKEN", "implement.ci_workflows", "implement.ready_without_ci"} {
			if !strings.Contains(q, want) {
				t.Errorf("implement.question lacks %q: %s", want, q)
			}
		}
		if !w.draft(t, j, res.PR) {
			t.Error("the PR was marked ready although no CI can run")
		}
	})
	t.Run("ready without CI", func(t *testing.T) {
		j := w.newJob(w.conversations())
		j.opts.ReadyWithoutCI = true
		res := j.run()
		if res.Result != record.ResultReady || res.CI != "none" {
			t.Fatalf("Job ended %s (CI %q), want ready with CI none\n%s", res.Result, res.CI, j.log.String())
		}
		comment := w.prComment(res.PR)
		if strings.Contains(comment, "are green") || !strings.Contains(comment, "No CI reported a check") {
			t.Errorf("PR comment, want it to say no CI ran and never green:\n%s", comment)
		}
	})
	t.Run("dispatched CI", func(t *testing.T) {
		w := newWorld(t, 1, "")
		w.fake.ScriptCI(ciWorkflow, githubfake.CIJob{Name: "test", Outcomes: []githubfake.CIOutcome{{Conclusion: "success", Duration: time.Minute}}})
		j := w.newJob(w.conversations())
		j.opts.CIWorkflows = []string{ciWorkflow}
		res := j.run()
		if res.Result != record.ResultReady || res.CI != "passed" {
			t.Fatalf("Job ended %s (%s: %s, CI %q), want ready with CI passed\n%s", res.Result, res.Failure, res.Reason, res.CI, j.log.String())
		}
		d := w.fake.Dispatches()
		if len(d) != 1 || d[0].Workflow != ciWorkflow || d[0].Ref != "roadmap/"+fmt.Sprint(w.issue)+"-add-greetings" {
			t.Errorf("dispatches = %+v, want %s once on the work branch", d, ciWorkflow)
		}
		sum, err := j.gh.Checks(t.Context(), res.HeadSHA)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Total != 1 || sum.State != "success" {
			t.Errorf("checks at the head = %+v, want the dispatched CI's one passing check", sum)
		}
		if comment := w.prComment(res.PR); !strings.Contains(comment, "are green") || !strings.Contains(comment, "dispatched ci.yml") {
			t.Errorf("PR comment:\n%s", comment)
		}
	})
}

// TestFlakyCheckRerun: CI fails once with a network error (an npm
// ECONNRESET log from the real corpus). With no re-runs allowed, the item
// is not called green and the class is the log's: transient. With re-runs
// allowed, roadmap reads the log, re-runs the failed jobs, watches the
// re-run pass and marks the PR ready, with no model call after the push.
// One item's life (they were a fresh item each): Job 2 meets the failed
// check at the head Job 1 left.
func TestFlakyCheckRerun(t *testing.T) {
	flaky := realLog(t, "transient-npm-econnreset-runner-images.log")
	w := newWorld(t, 1, "")
	w.fake.ScriptCI(ciWorkflow, githubfake.CIJob{Name: "test", Outcomes: []githubfake.CIOutcome{
		{Conclusion: "failure", Log: flaky, Duration: time.Minute},
		{Conclusion: "success", Duration: time.Minute},
	}})
	t.Run("no reruns left", func(t *testing.T) {
		j := w.newJob(w.conversations())
		j.opts.CIWorkflows, j.opts.CheckReruns = []string{ciWorkflow}, 0
		res := j.run()
		if res.Result == record.ResultReady || res.Failure != "transient" {
			t.Fatalf("Job ended %s (%s: %s), want not ready, class transient", res.Result, res.Failure, res.Reason)
		}
		if n := len(w.fake.Reruns()); n != 0 {
			t.Errorf("rerun-failed-jobs sent %d times, want none (implement.check_reruns: 0)", n)
		}
	})
	t.Run("rerun", func(t *testing.T) {
		j := w.newJob(w.conversations())
		j.opts.CIWorkflows, j.opts.CheckReruns = []string{ciWorkflow}, 2
		res := j.run()
		if res.Result != record.ResultReady || res.CI != "passed" {
			t.Fatalf("Job ended %s (%s: %s), want ready\n%s", res.Result, res.Failure, res.Reason, j.log.String())
		}
		if n := len(w.fake.Reruns()); n != 1 {
			t.Errorf("rerun-failed-jobs sent %d times, want 1", n)
		}
		// The group was pushed by Job 1: no model call after the push.
		if n := len(j.model.Requests()); n != 0 {
			t.Errorf("%d model calls, want none: the flaky check cost agent spend", n)
		}
		if comment := w.prComment(res.PR); !strings.Contains(comment, "re-ran the failed jobs") || !strings.Contains(comment, "transient") {
			t.Errorf("PR comment lacks the re-run decision:\n%s", comment)
		}
	})
}

// TestFailedCheckHandoff: CI fails on the change with go test's output. The
// Job has no time left to repair it, so the failing part of the log is
// handed on (implement.check_log); the next Job's first prompt holds the
// failing test's output, the agent repairs, CI passes, ready.
func TestFailedCheckHandoff(t *testing.T) {
	w := newWorld(t, 1, "")
	w.fake.ScriptCI(ciWorkflow, githubfake.CIJob{Name: "test", Outcomes: []githubfake.CIOutcome{
		{Conclusion: "failure", Log: goTestFailure},
		{Conclusion: "success"},
	}})
	j1 := w.newJob(w.conversations())
	j1.opts.CIWorkflows, j1.opts.CheckReruns = []string{ciWorkflow}, 2
	// Each model call takes five minutes, so the group takes ten; the
	// deadline leaves time for the scoped checks and a poll of the watch,
	// not for another step of that length.
	j1.model.Before = func(int, agent.ModelRequest) { w.clock.Advance(5 * time.Minute) }
	j1.opts.PollInterval = 2 * time.Minute
	j1.opts.Deadline = w.clock.Now().Add(10*time.Minute + 12*time.Minute + 30*time.Second)
	res := j1.run()
	if res.Result == record.ResultReady || res.Failure != "checks_failed" {
		t.Fatalf("Job 1 ended %s (%s: %s), want checks_failed\n%s", res.Result, res.Failure, res.Reason, j1.log.String())
	}
	if len(w.fake.Reruns()) != 0 {
		t.Error("a go test failure was re-run: it is the change's, not the infrastructure's")
	}
	handed, _ := w.record().CheckLog()
	for _, want := range []string{"--- FAIL: TestGreetingPunctuation", `greeting_test.go:21: greeting-1.txt = "hello 1", want "hello 1!"`} {
		if !strings.Contains(handed, want) {
			t.Errorf("implement.check_log lacks %q:\n%s", want, handed)
		}
	}

	repair := conversation(t, "repair", "a check fails at the head", "greeting-1.txt", "hello 1!\n")
	j2 := w.newJob([]*llm.Conversation{repair})
	j2.opts.CIWorkflows = []string{ciWorkflow}
	res = j2.run()
	if res.Result != record.ResultReady {
		t.Fatalf("Job 2 ended %s (%s: %s), want ready\n%s", res.Result, res.Failure, res.Reason, j2.log.String())
	}
	if len(j2.model.Requests()) == 0 {
		t.Fatal("Job 2 made no model call: the failure was not repaired")
	}
	// The repair is Job 2's first step, from the hand-off, before it
	// reads the PR checks again.
	log := j2.log.String()
	if r, wch := strings.Index(log, "roadmap: repair at the head"), strings.Index(log, "roadmap: watch PR"); r < 0 || wch < 0 || r > wch {
		t.Errorf("Job 2 did not start with the repair (repair at %d, first watch at %d):\n%s", r, wch, log)
	}
	prompt := ""
	for _, m := range j2.model.Requests()[0].Messages {
		prompt += m.Content + "\n"
	}
	for _, want := range []string{"--- FAIL: TestGreetingPunctuation", `want "hello 1!"`} {
		if !strings.Contains(prompt, want) {
			t.Errorf("Job 2's first prompt lacks the failing test's output %q", want)
		}
	}
	if got := run(t, w.dir, "git", "--git-dir", w.remote, "show", "roadmap/"+fmt.Sprint(w.issue)+"-add-greetings:greeting-1.txt"); got != "hello 1!" {
		t.Errorf("greeting-1.txt on the branch = %q, want the repair", got)
	}
	if log, ok := w.record().CheckLog(); ok && log != "" {
		t.Errorf("implement.check_log still set after the repair: %q", log)
	}
}

// TestHeadRepair: group 2 breaks group 1's verify command. The scoped
// checks at the head fail; an agent repair step gets the failing log (at
// least one model call), the head is committed and pushed, the checks pass.
// Then, every group passed, the change archived and pushed, a PR check fails
// on the change (go test's output): with time left, the same Job repairs the
// head again with the check's log, pushes, and CI passes at the repaired
// head. The item goes ready in the one Job, without a stop or a hand-off.
// (The repair after the archive was TestHeadRepairAfterArchive, a fresh
// item's Job of its own.)
func TestHeadRepair(t *testing.T) {
	w := newWorld(t, 2, "")
	w.fake.ScriptCI(ciWorkflow, githubfake.CIJob{Name: "test", Outcomes: []githubfake.CIOutcome{
		{Conclusion: "failure", Log: goTestFailure},
		{Conclusion: "success"},
	}})
	convs := w.conversations()
	// Group 2 also rewrites group 1's file: its own verify passes, group
	// 1's does not any more.
	g2 := `{"comment":"written by hand: group 2 writes its greeting and breaks group 1's","source":"hand",
"match":"task group 2 of","turns":[
 {"response":{"tool_calls":[{"name":"write_file","arguments":{"path":"greeting-2.txt","content":"hello 2\n"}}],"usage":{"tokens_in":1000,"tokens_out":100}}},
 {"expect":"","response":{"tool_calls":[{"name":"write_file","arguments":{"path":"greeting-1.txt","content":"bye 1\n"}}],"usage":{"tokens_in":1000,"tokens_out":100}}},
 {"expect":"","response":{"tool_calls":[{"name":"finish","arguments":{"summary":"wrote greeting 2"}}],"usage":{"tokens_in":1000,"tokens_out":100}}}]}`
	c, err := llm.ParseConversation("group-2", []byte(g2))
	if err != nil {
		t.Fatal(err)
	}
	convs[1] = c
	// The repair of the scoped checks' failure (their reason: the command
	// exited 1 at the head), and the repair of the PR check's.
	convs = append(convs, conversation(t, "repair-checks", "exited 1 at the head", "greeting-1.txt", "hello 1\n"),
		conversation(t, "repair-pr-check", "PR check test failed", "greeting-1.txt", "hello 1!\n"))
	j := w.newJob(convs)
	j.opts.CIWorkflows = []string{ciWorkflow}
	res := j.run()
	if res.Result != record.ResultReady || res.CI != "passed" {
		t.Fatalf("Job ended %s (%s: %s), want ready\n%s", res.Result, res.Failure, res.Reason, j.log.String())
	}
	// The first messages of each repair step, whole.
	repairs := map[string]string{}
	for _, r := range j.model.Requests() {
		u := firstUser(r)
		for _, key := range []string{"exited 1 at the head", "PR check test failed"} {
			if strings.Contains(u, "a check fails at the head") && strings.Contains(u, key) && repairs[key] == "" {
				repairs[key] = prompt(r)
			}
		}
	}
	if stopped, ok := w.record().Stopped(); ok && stopped != "" {
		t.Errorf("implement.stopped = %q, want no stop", stopped)
	}
	branch := "roadmap/" + fmt.Sprint(w.issue) + "-add-greetings"

	t.Run("at the scoped checks", func(t *testing.T) {
		full := repairs["exited 1 at the head"]
		if full == "" {
			t.Fatalf("no repair step for the scoped checks; first user messages: %q", j.firstUsers())
		}
		if !strings.Contains(full, `grep -q "hello 1" greeting-1.txt`) {
			t.Errorf("the repair step's prompt lacks the failing check:\n%s", full)
		}
		// The repair's commit is the first repair at the head on the branch.
		first := strings.Fields(run(t, w.dir, "git", "--git-dir", w.remote, "log", "--reverse", "--format=%H", "--grep=^roadmap: repair at the head$", branch))
		if len(first) == 0 {
			t.Fatal("no repair commit on the branch")
		}
		if got := run(t, w.dir, "git", "--git-dir", w.remote, "show", first[0]+":greeting-1.txt"); got != "hello 1" {
			t.Errorf("greeting-1.txt at the repair = %q, want the repair", got)
		}
	})

	t.Run("after the archive, for a PR check", func(t *testing.T) {
		if full := repairs["PR check test failed"]; !strings.Contains(full, "--- FAIL: TestGreetingPunctuation") {
			t.Errorf("the repair step's prompt lacks the PR check's failing test:\n%s", full)
		}
		msgs := run(t, w.dir, "git", "--git-dir", w.remote, "log", "-2", "--format=%s", branch)
		if !strings.HasPrefix(msgs, "roadmap: repair at the head\nroadmap: archive add-greetings") {
			t.Errorf("the branch's last commits = %q, want the repair after the archive", msgs)
		}
		if got := run(t, w.dir, "git", "--git-dir", w.remote, "show", branch+":greeting-1.txt"); got != "hello 1!" {
			t.Errorf("greeting-1.txt on the branch = %q, want the repair", got)
		}
		if comment := w.prComment(res.PR); !strings.Contains(comment, "repaired the head") || !strings.Contains(comment, "its log goes to the agent") {
			t.Errorf("PR comment lacks the decisions:\n%s", comment)
		}
	})
}

// TestLifeThroughTheWatch is an item's life over three Jobs that meet the PR
// checks, and what only those whole Jobs show, each concern a subtest on the
// same life. The item has two groups, and its record holds the hand-off of
// an earlier stop (the failing check's log and the files in conflict) and
// an implement.checked_sha at another head.
//
//   - Job 1 takes the hand-off into its first step only and clears it at its
//     second mark; its group 1 fails its checks once and passes in a repair
//     round, which is a retry event in the record's copy of the trace (issue
//     17's gap 1); group 1's mark carries the published head in the same
//     write (gap 3); the checked_sha at another head does not skip the
//     scoped checks at its own (gap 2); it archives the OpenSpec change in
//     the PR's last commit, pushed before the watch; and it watches the PR
//     checks, still running, for its five minutes at a 45 s interval, a
//     progress line a poll, and yields.
//   - Job 2, a rerun at the same head with no new outcome, yields too: the
//     PR has one marker comment, whose table has both Jobs.
//   - Job 3, once the checks passed, reads the plan where the archive moved
//     it and goes ready with no scoped check and no model call: the checks
//     passed at that head already (implement.checked_sha), and the change
//     is not archived again.
//
// These were ten Jobs of eight tests (TestHandoff, TestCheckedSHA,
// TestPRCommentMarker, TestWatchProgressLine, TestArchiveAtReady,
// TestRepairRoundIsARetryInTheRecordTrace,
// TestScopedChecksRunWhenCheckedSHAIsAnotherHead,
// TestGroupMarkCarriesPublishedSHA), seven of them a fresh item's.
func TestLifeThroughTheWatch(t *testing.T) {
	stale := strings.Repeat("ab", 20)
	body := "Add greetings.\n\n<!-- roadmap:record v1\n" +
		"implement.check_log: \"--- FAIL: TestGreeting (0.00s)\\n    greeting_test.go:12: got \\\"\\\", want \\\"hello\\\"\"\n" +
		"implement.checked_sha: " + stale + "\n" +
		"implement.conflict: [\"greeting-1.txt\",\"README.md\"]\n" +
		"implement.failure: checks_failed\n" +
		"implement.result: stopped\n" +
		"stage.plan: " + planDir + "\n-->\n"
	w := newWorld(t, 2, body)
	branch := fmt.Sprintf("roadmap/%d-add-greetings", w.issue)

	// Job 1: group 1's first round finishes without writing its file, its
	// second writes it; group 2 as the sample's.
	first := w.newJob([]*llm.Conversation{conv(t, "group-1", 1, finish, write(1), finish), w.conversations()[1]})
	first.opts.PollInterval = 45 * time.Second
	first.opts.WatchTimeout = 5 * time.Minute
	start := w.clock.Now()
	res := first.runWithCIRunning()
	if res.Result != record.ResultYielded {
		t.Fatalf("Job 1 ended %s (%s %s), want yielded at the watch\n%s", res.Result, res.Failure, res.Reason, first.log.String())
	}
	if res.RecordComment == 0 || first.outputs["record_comment"] != fmt.Sprint(res.RecordComment) {
		t.Fatalf("Job 1 handed over record comment %d (output %q)", res.RecordComment, first.outputs["record_comment"])
	}
	watched := w.clock.Now().Sub(start)
	patches := w.patches()
	rec1 := w.record()

	t.Run("the hand-off reaches the first step only", func(t *testing.T) {
		if p := prompt(first.model.Requests()[0]); !containsAll(p, "--- FAIL: TestGreeting", "greeting_test.go:12", "greeting-1.txt", "README.md") {
			t.Errorf("the first step's prompt lacks the hand-off:\n%s", p)
		}
		// The second group's step starts clean.
		for _, req := range first.model.Requests()[1:] {
			if strings.Contains(req.Messages[0].Content+req.Messages[len(req.Messages)-1].Content, "task group 2 of") &&
				strings.Contains(fmt.Sprint(req.Messages), "--- FAIL: TestGreeting") {
				t.Error("the hand-off reached a later step too")
			}
		}
		if len(patches) < 2 {
			t.Fatalf("%d record writes, want at least 2", len(patches))
		}
		if !strings.Contains(patches[0], "implement.check_log") || !strings.Contains(patches[0], "implement.conflict") {
			t.Errorf("the first mark cleared the hand-off keys:\n%s", patches[0])
		}
		if strings.Contains(patches[1], "implement.check_log") || strings.Contains(patches[1], "implement.conflict") {
			t.Errorf("the hand-off keys survive the second mark:\n%s", patches[1])
		}
	})

	t.Run("a repair round is a retry in the record's trace", func(t *testing.T) {
		var retries []trace.Event
		for _, e := range recordTrace(t, rec1).Events {
			if e.Type == trace.TypeRetry {
				retries = append(retries, e)
			}
		}
		if len(retries) != 1 || !strings.Contains(retries[0].Reason, "checks_failed: repair round") || retries[0].Attempt != 2 {
			t.Errorf("retry events in the record's trace = %+v, want one repair round, attempt 2", retries)
		}
	})

	t.Run("the group mark carries the published head", func(t *testing.T) {
		// The group marks wait for the Job's next write: both ride with
		// the checked mark, where the archive sets published_sha too.
		mark, sha := recordWrite(patches, "implement.group: 2\n")
		if mark == "" {
			t.Fatalf("no record write holds the group marks:\n%v", patches)
		}
		if sha == "" || !strings.Contains(mark, "implement.published_sha: "+sha) {
			t.Errorf("the group marks lack implement.published_sha equal to their implement.sha %q:\n%s", sha, mark)
		}
	})

	t.Run("a checked_sha at another head does not skip the scoped checks", func(t *testing.T) {
		if got, _ := rec1.CheckedSHA(); string(got) != res.HeadSHA {
			t.Errorf("implement.checked_sha = %s, want the head %s: the scoped checks did not run at the new head", got, res.HeadSHA)
		}
		// Group 1's verify command in its two rounds, group 2's in its one,
		// and both again in the scoped checks at the head.
		// (The runner counts each command as its argv, joined.)
		g1, g2 := "grep -q hello 1 greeting-1.txt", "grep -q hello 2 greeting-2.txt"
		want := []string{g1, g1, g2, g1, g2}
		if got := first.checks.cmds; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("check commands run: %q, want %q: the groups' and the scoped checks at the head", got, want)
		}
	})

	t.Run("the watch writes a line a poll within its bound", func(t *testing.T) {
		var lines int
		for _, l := range strings.Split(first.log.String(), "\n") {
			if strings.Contains(l, "roadmap: watch PR #") {
				lines++
			}
		}
		// 5 minutes at a 45 s interval: a line at 0 s and after each of the 6 sleeps that fit.
		if lines < 6 {
			t.Errorf("%d watch lines in 5 min at a 45 s interval, want at least 6:\n%s", lines, first.log.String())
		}
		if watched > 6*time.Minute {
			t.Errorf("the watch ran %s past its 5 min bound", watched)
		}
	})

	// Job 2: a rerun with no new outcome; the checks have not reported.
	second := w.newJob(w.conversations())
	second.opts.WatchTimeout = time.Minute
	second.opts.RecordComment = res.RecordComment
	if res2 := second.runWithCIRunning(); res2.Result != record.ResultYielded {
		t.Fatalf("Job 2 ended %s (%s %s), want yielded at the watch\n%s", res2.Result, res2.Failure, res2.Reason, second.log.String())
	}

	t.Run("one PR comment holds every Job", func(t *testing.T) {
		var marked int
		for _, c := range w.fake.Comments(res.PR) {
			if b := strings.TrimSpace(c.Body); b == "" || b == "-" {
				t.Errorf("comment %d has an empty body %q", c.ID, c.Body)
			}
			if strings.Contains(c.Body, "<!-- roadmap:implement -->") {
				marked++
				for _, row := range []string{"| 1 | 101 | yielded", "| 2 | 102 | yielded", "| **total** |"} {
					if !strings.Contains(c.Body, row) {
						t.Errorf("the comment lacks the row %q:\n%s", row, c.Body)
					}
				}
			}
		}
		if marked != 1 {
			t.Errorf("%d comments hold the marker, want exactly 1", marked)
		}
	})

	// Job 3: the PR checks passed at the head.
	w.fake.AddStatus(res.HeadSHA, "ci/test", "success", "CI passed")
	third := w.newJob(w.conversations())
	third.opts.RecordComment = res.RecordComment
	res3 := third.run()
	if res3.Result != record.ResultReady {
		t.Fatalf("Job 3 ended %s (%s %s), want ready\n%s", res3.Result, res3.Failure, res3.Reason, third.log.String())
	}

	t.Run("the checks are not run again at a head they passed at", func(t *testing.T) {
		if n := len(third.checks.cmds); n != 0 {
			t.Errorf("Job 3 at the same head ran %d scoped checks (%v), want 0", n, third.checks.cmds)
		}
		if n := len(third.model.Requests()); n != 0 {
			t.Errorf("Job 3 made %d model calls, want 0", n)
		}
	})

	t.Run("the PR ends with the OpenSpec archive", func(t *testing.T) {
		// The archive is the PR's last commit (trailer Roadmap-Archive),
		// pushed by Job 1 before its watch; Job 3 read the plan where
		// OpenSpec moved it and did not archive again.
		msg := run(t, w.remote, "git", "log", "-1", "--format=%B", branch)
		if !strings.Contains(msg, "Roadmap-Archive: add-greetings") {
			t.Errorf("the PR's last commit is not the archive:\n%s", msg)
		}
		if head := run(t, w.remote, "git", "rev-parse", branch); head != res.HeadSHA {
			t.Errorf("the branch is at %s, want Job 1's head %s, the archive", head, res.HeadSHA)
		}
		tree := run(t, w.remote, "git", "ls-tree", "-r", "--name-only", branch)
		date := w.clock.Now().Format("2006-01-02")
		if !strings.Contains(tree, "openspec/changes/archive/"+date+"-add-greetings/tasks.md") {
			t.Errorf("the archive directory is missing from the last commit:\n%s", tree)
		}
		if strings.Contains(tree, "openspec/changes/add-greetings/") {
			t.Errorf("the change is still under openspec/changes/:\n%s", tree)
		}
		if !w.prReady() {
			t.Error("the PR was not marked ready (or prReady cannot see it)")
		}
		if archives := strings.Count(run(t, w.remote, "git", "log", "--format=%B", branch), "Roadmap-Archive:"); archives != 1 {
			t.Errorf("%d archive commits, want 1 (the continuation must not archive again)", archives)
		}
	})
}

// containsAll reports whether s holds every one of subs.
func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// parCheck is a check in the sample repository, `make -s par`, that passes
// only when the process runs as implement.parallelism 1 says: GOMAXPROCS 1,
// and go test's -p 1 (GOFLAGS), so at most one package builds or runs at a
// time. What it proves is the environment the check runner gives a check's
// process, which a make rule reads as well as the go test it replaces did,
// without building a test binary.
const parCheck = "par:\n" +
	"\t@test \"$$GOMAXPROCS\" = 1 || { echo \"GOMAXPROCS $$GOMAXPROCS, want 1\"; exit 1; }\n" +
	"\t@test \"$$GOFLAGS\" = -p=1 || { echo \"GOFLAGS $$GOFLAGS, want -p=1\"; exit 1; }\n"

// TestOOMLessParallelism (implement's half; report's is in internal/report):
// a Job whose record holds implement.parallelism, set by report after an
// oom, runs its scoped checks with that parallelism, and says so.
func TestOOMLessParallelism(t *testing.T) {
	for _, tc := range []struct {
		name string
		rec  string
		pass bool
	}{
		{"after an oom the checks run with parallelism 1", "implement.parallelism: 1\n", true},
		{"without it they run with the machine's own", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := "Add greetings.\n\n<!-- roadmap:record v1\n" + tc.rec + "stage.plan: " + planDir + "\n-->\n"
			w := newWorldWith(t, 1, body, func(o *theworld.Options) { o.Files["Makefile"] = parCheck })
			j := w.newJob(w.conversations())
			j.opts.WatchTimeout = time.Minute
			j.opts.CheckCommands = []string{"make -s par"}
			res := j.runWithCIRunning()
			log := j.log.String()
			if tc.pass {
				if res.Result != record.ResultYielded || res.Group != 1 {
					t.Fatalf("Job ended %s/%s at group %d (%s), want group 1 passed with the checks at parallelism 1\n%s",
						res.Result, res.Failure, res.Group, res.Reason, log)
				}
				if !strings.Contains(log, "less parallelism") || !strings.Contains(log, "GOMAXPROCS=1 GOFLAGS=-p=1") {
					t.Errorf("the log does not say the checks run with less parallelism:\n%s", log)
				}
				return
			}
			if res.Group != 0 || res.Result == record.ResultReady {
				t.Fatalf("without implement.parallelism the check passed (%s at group %d): it cannot tell", res.Result, res.Group)
			}
		})
	}
}
