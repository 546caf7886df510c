package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/items"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// blockedItem is an item a Job of phase left waiting for blockers: its
// record has the Job's yielded line and item.blocked_by; its body is body.
// Phase "plan" is an item whose plan was approved and no Job has a line for.
func (e *env) blockedItem(t *testing.T, phase, body, blockedBy string) int {
	t.Helper()
	var ch record.Changes
	line := []record.JobOutcome{{Job: 1, RunID: 9001, Result: record.ResultYielded, Failure: string(failure.Blocked)}}
	switch phase {
	case PhaseStage:
		ch.SetStageJobs(line)
	case "plan":
		ch.SetStagePlan("openspec/changes/add-backoff")
	default:
		ch.SetResult(record.ResultYielded)
		ch.SetFailure(string(failure.Blocked))
		ch.SetAttempt(1)
		ch.SetJobs(line)
	}
	ch.SetBlockedBy(blockedBy)
	n := e.fake.CreateIssue(githubfake.Issue{Title: "waits", Body: body, Author: "maintainer", Labels: []string{DefaultBlockedLabel}})
	rec := e.recordOn(t, n, ch)
	if got := items.Of(1, "", rec).BlockedBy; got != blockedBy {
		t.Fatalf("the record does not hold %s %q (got %q)", record.KeyItemBlockedBy, blockedBy, got)
	}
	return n
}

// unblock runs Unblock on a fresh Client (another run, for GitHub).
func (e *env) unblock(t *testing.T) (UnblockOutcome, string) {
	t.Helper()
	var log bytes.Buffer
	out, err := Unblock(ctx, UnblockOptions{GitHub: e.client(t), Workflow: workflow, Ref: ref, Mask: e.mask.Mask, Log: &log})
	if err != nil {
		t.Fatalf("Unblock: %v\n%s", err, log.String())
	}
	return out, log.String()
}

// dispatched is "issue/phase/attempt" of each dispatch from the n-th on.
func (e *env) dispatched(from int) []string {
	var out []string
	for _, in := range e.dispatchInputs()[from:] {
		s := in["issue"].(string) + "/" + in["phase"].(string)
		if a, ok := in["attempt"].(string); ok {
			s += "/" + a
		}
		out = append(out, s)
	}
	return out
}

func (e *env) blockedBy(t *testing.T, issue, blocker int) {
	t.Helper()
	if err := e.fake.AddBlockedBy(issue, blocker); err != nil {
		t.Fatal(err)
	}
}

// TestUnblockedStartsItself: B (stage), G (implement) and H (a plan, no
// Job line) wait for A through GitHub's dependencies; D waits for E (a dependency) and F (its body).
// While A is open nothing starts, and each waiting item costs at most 2
// counted requests besides the one list. A closed as completed: B, G and H
// get their next Job (stage; implement Job 2; implement Job 1) and lose the
// label; D waits. A
// second wake dispatches nothing.
func TestUnblockedStartsItself(t *testing.T) {
	e := newEnv(t)
	a := e.fake.CreateIssue(githubfake.Issue{Title: "A", Author: "maintainer"})
	b := e.blockedItem(t, PhaseStage, "Needs A's change.\n", "#"+itoa(a))
	g := e.blockedItem(t, PhaseImplement, "Also needs A.\n", "#"+itoa(a))
	h := e.blockedItem(t, "plan", "Planned; needs A.\n", "#"+itoa(a))
	ei := e.fake.CreateIssue(githubfake.Issue{Title: "E", Author: "maintainer"})
	f := e.fake.CreateIssue(githubfake.Issue{Title: "F", Author: "maintainer"})
	d := e.blockedItem(t, PhaseStage, "Blocked by #"+itoa(f)+".\n", "#"+itoa(ei)+", #"+itoa(f))
	e.blockedBy(t, b, a)
	e.blockedBy(t, g, a)
	e.blockedBy(t, h, a)
	e.blockedBy(t, d, ei)

	out, log := e.unblock(t)
	if out.Dispatched != 0 || len(e.fake.Dispatches()) != 0 {
		t.Fatalf("with A open: %d dispatched\n%s", out.Dispatched, log)
	}
	// The list, then B, G and H 1 each (their dependencies), D 2 (its
	// dependencies and its body's F).
	if out.Requests != 6 {
		t.Errorf("4 waiting items cost %d counted requests, want 6 (1 list + at most 2 each)\n%s", out.Requests, log)
	}
	if !strings.Contains(log, "waiting for #"+itoa(a)) || !strings.Contains(log, "waiting for #"+itoa(ei)+", #"+itoa(f)) {
		t.Errorf("the log does not say what each item waits for:\n%s", log)
	}

	if err := e.fake.CloseIssue(a, "completed"); err != nil {
		t.Fatal(err)
	}
	out, log = e.unblock(t)
	want := []string{itoa(b) + "/stage", itoa(g) + "/implement/2", itoa(h) + "/implement/1"}
	if diff := cmp.Diff(want, e.dispatched(0)); diff != "" {
		t.Errorf("dispatched (issue/phase/attempt) (-want +got):\n%s\n%s", diff, log)
	}
	if out.Dispatched != 3 {
		t.Errorf("Dispatched = %d, want 3", out.Dispatched)
	}
	for _, n := range []int{b, g, h} {
		if e.hasLabel(n, DefaultBlockedLabel) {
			t.Errorf("issue %d keeps %s after its dispatch", n, DefaultBlockedLabel)
		}
	}
	if !e.hasLabel(d, DefaultBlockedLabel) {
		t.Errorf("D lost %s while E and F are open", DefaultBlockedLabel)
	}
	if got := e.dispatchInputs()[0]["record-comment"]; got != e.recordCommentInput(t, b) {
		t.Errorf("B's dispatch hands record comment %v, want %s", got, e.recordCommentInput(t, b))
	}

	out, log = e.unblock(t)
	if out.Dispatched != 0 || len(e.fake.Dispatches()) != 3 {
		t.Errorf("a second wake dispatched again: %v\n%s", e.dispatched(3), log)
	}
	if out.Requests != 3 {
		t.Errorf("a second wake with D waiting cost %d counted requests, want 3 (1 list + 2)\n%s", out.Requests, log)
	}
}

// TestUnblockOrderRespectsDependencies: C waits for B (its body), B for A
// (a dependency), both labelled. A closed: B starts, C waits for B; B
// closed: C starts.
func TestUnblockOrderRespectsDependencies(t *testing.T) {
	e := newEnv(t)
	a := e.fake.CreateIssue(githubfake.Issue{Title: "A", Author: "maintainer"})
	b := e.blockedItem(t, PhaseStage, "B.\n", "#"+itoa(a))
	c := e.blockedItem(t, PhaseStage, "Start this issue after #"+itoa(b)+".\n", "#"+itoa(b))
	e.blockedBy(t, b, a)

	if err := e.fake.CloseIssue(a, "completed"); err != nil {
		t.Fatal(err)
	}
	out, log := e.unblock(t)
	if diff := cmp.Diff([]string{itoa(b) + "/stage"}, e.dispatched(0)); diff != "" {
		t.Fatalf("A closed: dispatched (-want +got):\n%s\n%s", diff, log)
	}
	// C waits for B, a waiting item: the list says it is open, no query.
	// B's closed dependency A is asked once more, in one query: was it
	// closed by a merged pull request?
	if out.Requests != 1+1+1+1+3 {
		t.Errorf("A closed: %d counted requests, want 7 (list, 2 dependencies, the query for A's closing pull requests, B's record, dispatch, label)\n%s", out.Requests, log)
	}
	if !e.hasLabel(c, DefaultBlockedLabel) {
		t.Errorf("C lost %s while B is open", DefaultBlockedLabel)
	}

	if err := e.fake.CloseIssue(b, "completed"); err != nil {
		t.Fatal(err)
	}
	_, log = e.unblock(t)
	if diff := cmp.Diff([]string{itoa(c) + "/stage"}, e.dispatched(1)); diff != "" {
		t.Errorf("B closed: dispatched (-want +got):\n%s\n%s", diff, log)
	}
}

// TestDependencyCycleRefused: X waits for Y (a dependency), Y for X (its
// body): neither starts, the cycle is named on each in one comment roadmap
// keeps, and a second wake writes nothing new.
func TestDependencyCycleRefused(t *testing.T) {
	e := newEnv(t)
	x := e.blockedItem(t, PhaseStage, "X.\n", "#2")
	y := e.blockedItem(t, PhaseStage, "Blocked by #"+itoa(x)+".\n", "#"+itoa(x))
	e.blockedBy(t, x, y)

	out, log := e.unblock(t)
	if out.Dispatched != 0 || len(e.fake.Dispatches()) != 0 {
		t.Fatalf("a cycle dispatched: %v\n%s", e.dispatched(0), log)
	}
	paths := map[int]string{x: "#" + itoa(x) + " → #" + itoa(y) + " → #" + itoa(x), y: "#" + itoa(y) + " → #" + itoa(x) + " → #" + itoa(y)}
	count := func(n int) int {
		k := 0
		for _, c := range e.fake.Comments(n) {
			if strings.Contains(c.Body, CycleMarker) {
				k++
			}
		}
		return k
	}
	for n, path := range paths {
		if got := e.commentWith(n, CycleMarker); !strings.Contains(got, path) || !strings.Contains(got, "dependency cycle") {
			t.Errorf("issue %d: the cycle comment does not name %s:\n%s", n, path, got)
		}
		if count(n) != 1 {
			t.Errorf("issue %d has %d cycle comments, want 1", n, count(n))
		}
	}
	for _, it := range out.Items {
		if it.Action != UnblockCycle {
			t.Errorf("issue %d: %s, want %s", it.Issue, it.Action, UnblockCycle)
		}
	}

	e.fake.ResetLog()
	out, log = e.unblock(t)
	for n := range paths {
		if count(n) != 1 {
			t.Errorf("after a second wake issue %d has %d cycle comments, want 1", n, count(n))
		}
	}
	if w := e.fake.CountByEndpoint()["PATCH /repos/{owner}/{repo}/issues/comments/{id}"]; w != 0 {
		t.Errorf("a second wake edited %d comments, want none", w)
	}
	if out.Requests > 1+2*2 {
		t.Errorf("a second wake of a cycle of 2 cost %d counted requests, want at most 5\n%s", out.Requests, log)
	}
}

// TestBlockedClassAgrees: internal/items names the blocked class itself
// (it cannot import internal/failure); the two must agree.
func TestBlockedClassAgrees(t *testing.T) {
	if items.BlockedClass != string(failure.Blocked) {
		t.Errorf("items.BlockedClass = %q, failure.Blocked = %q", items.BlockedClass, failure.Blocked)
	}
}
