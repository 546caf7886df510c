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
	"github.com/roadmap-dev/roadmap/internal/llm"
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
