package implement_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/implement"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// lastPatchHasResult checks the Job's last record write holds its typed result.
func lastPatchHasResult(t *testing.T, w *world, want record.Result) {
	t.Helper()
	p := w.patches()
	if len(p) == 0 {
		t.Fatal("no record write")
	}
	last := p[len(p)-1]
	if !strings.Contains(last, "implement.result: "+string(want)) {
		t.Errorf("last record write lacks implement.result: %s:\n%s", want, last)
	}
	for i, earlier := range p[:len(p)-1] {
		if strings.Contains(earlier, "implement.result:") {
			t.Errorf("write %d of %d already holds a result; the result is the last mark:\n%s", i+1, len(p), earlier)
		}
	}
}

// TestTypedResult: a Job's typed result is in its result, its outputs and
// its record's last write, for a stop and a yield (a Job that goes ready is
// TestReadyJob's).
func TestTypedResult(t *testing.T) {
	t.Run("stopped", func(t *testing.T) {
		w := newWorld(t, 1, "")
		convs := w.conversations()
		// The model finishes without writing the file: the checks fail every round.
		convs[0].Turns = convs[0].Turns[1:]
		j := w.newJob(convs)
		j.opts.RepairRounds = 1
		res := j.run()
		if res.Result != record.ResultStopped || res.Failure != "checks_failed" {
			t.Fatalf("result = %s/%s, want stopped/checks_failed\n%s", res.Result, res.Failure, j.log.String())
		}
		if got := j.outputs["result"]; got != "stopped" {
			t.Errorf("output result = %q, want stopped", got)
		}
		if got := j.outputs["failure"]; got != "checks_failed" {
			t.Errorf("output failure = %q, want checks_failed", got)
		}
		r := w.record()
		if log, _ := r.CheckLog(); !strings.Contains(log, "grep") {
			t.Errorf("check log %q does not name the failing command", log)
		}
		lastPatchHasResult(t, w, record.ResultStopped)
	})
	t.Run("yielded", func(t *testing.T) {
		w := newWorld(t, 1, "")
		j := w.newJob(w.conversations())
		j.opts.Deadline = t0.Add(time.Minute) // less than the reserve: nothing can start
		res := j.run()
		if res.Result != record.ResultYielded {
			t.Fatalf("result = %s, want yielded", res.Result)
		}
		if got := j.outputs["result"]; got != "yielded" {
			t.Errorf("output result = %q, want yielded", got)
		}
		lastPatchHasResult(t, w, record.ResultYielded)
	})
}

// runWithGreenCI runs the Job while a "CI" marks the pushed head green
// whenever the Job waits.
func (j *job) runWithGreenCI() implement.Result {
	j.w.t.Helper()
	j.opts.Clock = ciClock{ManualClock: j.w.clock, w: j.w, state: "success"}
	return j.run()
}

// runWithCIRunning runs the Job while the PR's CI stays pending.
func (j *job) runWithCIRunning() implement.Result {
	j.w.t.Helper()
	j.opts.Clock = ciClock{ManualClock: j.w.clock, w: j.w, state: "pending"}
	return j.run()
}

// ciClock plays CI: whenever the Job waits, the pushed head gets a status
// in state (once).
type ciClock struct {
	*githubfake.ManualClock
	w     *world
	state string
	// own, when set, is roadmap's own failing status from an earlier Job,
	// put on the head before the CI's.
	own string
}

func (c ciClock) Sleep(ctx context.Context, d time.Duration) error {
	cmd := exec.Command("git", "rev-parse", "refs/heads/roadmap/"+fmt.Sprint(c.w.issue)+"-add-greetings")
	cmd.Dir = c.w.remote
	if out, err := cmd.Output(); err == nil {
		sha := strings.TrimSpace(string(out))
		if len(c.w.fake.Statuses(sha)) == 0 {
			if c.own != "" {
				c.w.fake.AddStatus(sha, c.own, "failure", "stopped: checks_failed (an earlier Job)")
			}
			c.w.fake.AddStatus(sha, "ci/test", c.state, "CI")
		}
	}
	return c.ManualClock.Sleep(ctx, d)
}

func TestHandoff(t *testing.T) {
	body := "Add greetings.\n\n<!-- roadmap:record v1\n" +
		"implement.check_log: \"--- FAIL: TestGreeting (0.00s)\\n    greeting_test.go:12: got \\\"\\\", want \\\"hello\\\"\"\n" +
		"implement.conflict: [\"greeting-1.txt\",\"README.md\"]\n" +
		"implement.failure: checks_failed\n" +
		"implement.result: stopped\n" +
		"stage.plan: " + planDir + "\n-->\n"
	w := newWorld(t, 2, body)
	j := w.newJob(w.conversations())
	j.opts.WatchTimeout = time.Second // yield at the watch: the test is about the hand-off
	res := j.run()
	if res.Result == record.ResultStopped {
		t.Fatalf("job stopped: %s %s\n%s", res.Failure, res.Reason, j.log.String())
	}
	first := j.model.Requests()[0]
	prompt := ""
	for _, m := range first.Messages {
		prompt += m.Content + "\n"
	}
	for _, want := range []string{"--- FAIL: TestGreeting", "greeting_test.go:12", "greeting-1.txt", "README.md"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the first step's prompt lacks %q", want)
		}
	}
	// The second group's step starts clean.
	for _, req := range j.model.Requests()[1:] {
		if strings.Contains(req.Messages[0].Content+req.Messages[len(req.Messages)-1].Content, "task group 2 of") &&
			strings.Contains(fmt.Sprint(req.Messages), "--- FAIL: TestGreeting") {
			t.Error("the hand-off reached a later step too")
		}
	}
	p := w.patches()
	if len(p) < 2 {
		t.Fatalf("%d record writes, want at least 2", len(p))
	}
	if !strings.Contains(p[0], "implement.check_log") || !strings.Contains(p[0], "implement.conflict") {
		t.Errorf("the first mark cleared the hand-off keys:\n%s", p[0])
	}
	if strings.Contains(p[1], "implement.check_log") || strings.Contains(p[1], "implement.conflict") {
		t.Errorf("the hand-off keys survive the second mark:\n%s", p[1])
	}
}

func TestCheckedSHA(t *testing.T) {
	w := newWorld(t, 1, "")
	first := w.newJob(w.conversations())
	first.opts.WatchTimeout = time.Minute // PR checks still running: the Job yields at the watch
	first.opts.PollInterval = 40 * time.Second
	res := first.runWithCIRunning()
	if res.Result != record.ResultYielded {
		t.Fatalf("first Job: %s %s %s, want yielded at the watch\n%s", res.Result, res.Failure, res.Reason, first.log.String())
	}
	if len(first.checks.cmds) == 0 {
		t.Fatal("the first Job ran no scoped checks")
	}
	checked, _ := w.record().CheckedSHA()
	if string(checked) != res.HeadSHA {
		t.Fatalf("checked_sha = %s, want the head %s", checked, res.HeadSHA)
	}
	w.fake.AddStatus(res.HeadSHA, "ci/test", "success", "CI passed")
	second := w.newJob(w.conversations())
	res2 := second.run()
	if res2.Result != record.ResultReady {
		t.Fatalf("second Job: %s %s %s, want ready\n%s", res2.Result, res2.Failure, res2.Reason, second.log.String())
	}
	if n := len(second.checks.cmds); n != 0 {
		t.Errorf("the second Job at the same head ran %d scoped checks (%v), want 0", n, second.checks.cmds)
	}
	if n := len(second.model.Requests()); n != 0 {
		t.Errorf("the second Job made %d model calls, want 0", n)
	}
}

func TestPRCommentMarker(t *testing.T) {
	w := newWorld(t, 1, "")
	first := w.newJob(w.conversations())
	first.opts.WatchTimeout = time.Minute
	res := first.runWithCIRunning()
	if res.PR == 0 {
		t.Fatalf("no PR: %+v\n%s", res, first.log.String())
	}
	// A rerun with no new outcome: the checks still have not reported.
	second := w.newJob(w.conversations())
	second.opts.WatchTimeout = time.Minute
	second.runWithCIRunning()
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
}

func TestWatchProgressLine(t *testing.T) {
	w := newWorld(t, 1, "")
	j := w.newJob(w.conversations())
	j.opts.PollInterval = 45 * time.Second
	j.opts.WatchTimeout = 5 * time.Minute
	start := w.clock.Now()
	res := j.runWithCIRunning()
	if res.Result != record.ResultYielded {
		t.Fatalf("result %s, want yielded after the watch timeout", res.Result)
	}
	var lines int
	for _, l := range strings.Split(j.log.String(), "\n") {
		if strings.Contains(l, "roadmap: watch PR #") {
			lines++
		}
	}
	// 5 minutes at a 45 s interval: a line at 0 s and after each of the 6 sleeps that fit.
	if lines < 6 {
		t.Errorf("%d watch lines in 5 min at a 45 s interval, want at least 6:\n%s", lines, j.log.String())
	}
	if elapsed := w.clock.Now().Sub(start); elapsed > 6*time.Minute {
		t.Errorf("the watch ran %s past its 5 min bound", elapsed)
	}
}

func TestPublishedSHAReconcile(t *testing.T) {
	w := newWorld(t, 2, "")
	// Job 1 committed group 1 and pushed it, and was killed before its mark:
	// the remote has the commit, the record does not.
	killed := w.newJob(w.conversations())
	branch := "roadmap/" + fmt.Sprint(w.issue) + "-add-greetings"
	run(t, killed.ws, "git", "checkout", "-q", "-b", branch)
	os.WriteFile(filepath.Join(killed.ws, "greeting-1.txt"), []byte("hello 1\n"), 0o644)
	tasks, _ := os.ReadFile(filepath.Join(killed.ws, planDir, "tasks.md"))
	os.WriteFile(filepath.Join(killed.ws, planDir, "tasks.md"), []byte(strings.Replace(string(tasks), "- [ ] 1.1", "- [x] 1.1", 1)), 0o644)
	run(t, killed.ws, "git", "add", "-A")
	run(t, killed.ws, "git", "commit", "-q", "-m", "roadmap: 1. Greeting 1\n\nRoadmap-Group: 1")
	run(t, killed.ws, "git", "push", "-q", "origin", branch)
	pushed := run(t, killed.ws, "git", "rev-parse", "HEAD")
	// Count pushes from here on with a hook on the remote.
	hook := filepath.Join(w.remote, "hooks", "post-receive")
	// Branch pushes only: the item's lease is pushed by every Job.
	os.WriteFile(hook, []byte("#!/bin/sh\ngrep -q ' refs/heads/' && echo push >> \""+filepath.Join(w.dir, "pushes")+"\"\n"), 0o755)

	next := w.newJob(w.conversations())
	next.opts.WatchTimeout = time.Minute
	next.model.Before = func(n int, req agent.ModelRequest) {
		if strings.Contains(req.Messages[1].Content, "task group 1 of") {
			t.Errorf("group 1 was worked on again")
		}
	}
	res := next.run()
	if res.Result == record.ResultStopped {
		t.Fatalf("stopped: %s %s\n%s", res.Failure, res.Reason, next.log.String())
	}
	// The first write is the reconciled mark for the push that happened.
	p := w.patches()
	if len(p) == 0 || !strings.Contains(p[0], "implement.published_sha: "+pushed) {
		t.Errorf("the first write does not reconcile published_sha to %s:\n%v", pushed, p)
	}
	pushes, _ := os.ReadFile(filepath.Join(w.dir, "pushes"))
	if n := strings.Count(string(pushes), "push"); n != 2 {
		t.Errorf("%d pushes after the kill, want 2 (group 2, then the OpenSpec archive; group 1 is never pushed again)", n)
	}
	// Group 1's verify command runs once, in the scoped checks at the new
	// head; a redone group 1 would run it in its own repair loop too.
	var g1 int
	for _, c := range next.checks.cmds {
		if strings.Contains(c, "greeting-1.txt") {
			g1++
		}
	}
	if g1 != 1 {
		t.Errorf("group 1's verify command ran %d times, want 1 (the scoped checks): %v", g1, next.checks.cmds)
	}
}

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
	// With time enough the same item runs.
	j2 := w.newJob(w.conversations())
	j2.opts.Reserve = time.Minute
	j2.opts.Deadline = w.clock.Now().Add(20 * time.Minute)
	j2.opts.WatchTimeout = time.Minute
	if res := j2.run(); len(j2.model.Requests()) == 0 {
		t.Errorf("with 20 minutes left the group did not start: %s %s", res.Result, res.Reason)
	}
}
