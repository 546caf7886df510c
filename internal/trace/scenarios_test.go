package trace

import (
	"testing"
	"time"
)

// The runs the summary, timeline and record tests draw from. Each is built
// through a Recorder, as implement would build it.

// runStopped is Job 2: group 1 passes; group 2 fails its checks in three
// agent rounds, waits out a rate limit, and the Job stops on checks_failed.
func runStopped(t *testing.T) []Event {
	r := newRunner(t, 2)
	r.marker(0, PhaseJobStarted, "", "")
	r.marker(1, PhaseGroupStarted, "Add a failing test for the backoff schedule", "")
	start := r.clk.now()
	r.model(1, 1200, 310, 0.0004, 4*time.Second)
	r.tool(1, "read", `{"path":"internal/webhook/backoff.go"}`, "ok")
	r.tool(1, "write", `{"path":"internal/webhook/backoff_test.go"}`, "ok")
	r.model(1, 1800, 420, 0.0006, 5*time.Second)
	r.span(1, PhaseAgent, start, "finished")
	start = r.clk.now()
	r.check(1, "go vet ./internal/webhook", 0, 3*time.Second)
	r.check(1, "go test ./internal/webhook -run TestBackoffSchedule", 0, 6*time.Second)
	r.span(1, PhaseChecks, start, "passed")
	r.phase(1, PhaseCommit, time.Second, "ok")
	r.phase(1, PhasePush, 2*time.Second, "ok")
	r.marker(1, PhaseGroupPassed, "", "")

	r.marker(2, PhaseGroupStarted, "Compute the delay, capped at one hour", "")
	start = r.clk.now()
	r.model(2, 2400, 600, 0.0009, 6*time.Second)
	r.tool(2, "edit", `{"path":"internal/webhook/backoff.go"}`, "ok")
	r.span(2, PhaseAgent, start, "finished")
	start = r.clk.now()
	r.check(2, "go test ./internal/webhook -run TestBackoffSchedule", 1, 8*time.Second)
	r.span(2, PhaseChecks, start, "failed")
	// The repair round's first model call waits out a rate limit.
	start = r.clk.now()
	r.add(time.Second, Event{Type: TypeRetry, Group: 2, Reason: "rate_limited", Attempt: 1, Wait: 30 * time.Second})
	r.clk.advance(30 * time.Second)
	r.model(2, 3100, 700, 0.0011, 7*time.Second)
	r.tool(2, "run", `{"cmd":"go test ./internal/webhook"}`, "exit_1")
	r.span(2, PhaseAgent, start, "finished")
	start = r.clk.now()
	r.check(2, "go test ./internal/webhook -run TestBackoffSchedule", 1, 8*time.Second)
	r.span(2, PhaseChecks, start, "failed")
	start = r.clk.now()
	r.model(2, 3500, 650, 0.0012, 6*time.Second)
	r.span(2, PhaseAgent, start, "finished")
	start = r.clk.now()
	r.check(2, "go test ./internal/webhook", 1, 11*time.Second)
	r.span(2, PhaseChecks, start, "failed")
	r.marker(2, PhaseGroupFailed, "", "checks_failed")
	r.marker(0, PhaseStopped, "", "checks_failed")
	return r.rec.Events()
}

// runReady is Job 1: two groups pass, the PR checks are watched, the PR is
// marked ready.
func runReady(t *testing.T) []Event {
	r := newRunner(t, 1)
	r.marker(0, PhaseJobStarted, "", "")
	for g, title := range []string{"Parse the retry header", "Honour it in the client"} {
		group := g + 1
		r.marker(group, PhaseGroupStarted, title, "")
		start := r.clk.now()
		r.model(group, 2000, 500, 0.0008, 5*time.Second)
		r.span(group, PhaseAgent, start, "finished")
		start = r.clk.now()
		r.check(group, "go test ./...", 0, 20*time.Second)
		r.span(group, PhaseChecks, start, "passed")
		r.phase(group, PhasePush, 3*time.Second, "ok")
		r.marker(group, PhaseGroupPassed, "", "")
	}
	r.phase(0, PhaseWatch, 4*time.Minute, "success")
	r.marker(0, PhaseReady, "", "")
	return r.rec.Events()
}

// runKilled is Job 3, killed in the middle of group 3's first agent step.
func runKilled(t *testing.T) []Event {
	r := newRunner(t, 3)
	r.marker(0, PhaseJobStarted, "", "")
	r.marker(3, PhaseGroupStarted, "Document the schedule", "")
	r.model(3, 900, 200, 0.0003, 3*time.Second)
	r.tool(3, "read", `{"path":"docs/webhook.md"}`, "ok")
	r.model(3, 1100, 0, 0, 40*time.Second)
	return r.rec.Events()
}

// runHostile carries text that could break a table, a mention or a chart.
func runHostile(t *testing.T) []Event {
	r := newRunner(t, 1)
	r.marker(1, PhaseGroupStarted, "Fix `a|b` for @octocat <b>now</b> #1: x; y % z\nnext [link](http://x) *bold* _it_", "")
	r.model(1, 10, 5, 0, time.Second)
	r.check(1, "echo `x` | grep -v '|' ; printf '%s' \"#:\"\nline2 ``` end", 3, 2*time.Second)
	r.add(time.Second, Event{Type: TypeRetry, Group: 1, Reason: "transient: EOF; #retry%", Attempt: 2, Wait: 5 * time.Second})
	r.marker(1, PhaseGroupFailed, "", "unknown")
	r.marker(0, PhaseStopped, "", "unknown")
	return r.rec.Events()
}

var scenarios = []struct {
	name string
	run  func(*testing.T) []Event
}{
	{"stopped", runStopped},
	{"ready", runReady},
	{"killed", runKilled},
	{"hostile", runHostile},
}
