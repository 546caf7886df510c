package implement_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

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
		// Group 1's mark is a write of its own (the last group's rides with
		// the checked mark, where the archive sets published_sha too).
		var mark string
		for _, p := range patches {
			var req struct {
				Body string `json:"body"`
			}
			if json.Unmarshal([]byte(p), &req) == nil && strings.Contains(req.Body, "implement.group: 1\n") {
				mark = req.Body
				break
			}
		}
		if mark == "" {
			t.Fatalf("no record write holds group 1's mark:\n%v", patches)
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
