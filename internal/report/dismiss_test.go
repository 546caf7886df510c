package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// TestDismissWritersOnly: a writer's "/roadmap dismiss ID" closes the finding
// in the record's ledger for good and, when it was the last one standing on
// an item stopped review_blocked, dispatches the next Job; a reader's is
// ignored and changes nothing; an id the ledger does not hold is refused.
func TestDismissWritersOnly(t *testing.T) {
	const id, other = "a1b2c3d4e5f6", "0f0f0f0f0f0f"
	stopped := func() record.Changes {
		ch := base()
		ch.SetResult(record.ResultStopped)
		ch.SetFailure(string(failure.ReviewBlocked))
		ch.SetCheckLog("The review raised 1 blocking finding: the greeting has no name")
		ch.SetReview(record.ReviewLedger{SHA: record.SHA(headSHA), Open: []record.OpenFinding{{ID: id, File: "calc/add.go", Line: 3, Title: "off by one"}}})
		return ch
	}
	command := func(t *testing.T, e *env, n int, login, body string) (Outcome, string) {
		t.Helper()
		var log bytes.Buffer
		ev := commentEvent(t, n, "created", login, "User", "MEMBER", body)
		out, err := Resume(ctx, ResumeOptions{GitHub: e.client(t), Event: ev, Workflow: workflow, Ref: ref, Mask: e.mask.Mask, Log: &log})
		if err != nil {
			t.Fatalf("Resume: %v", err)
		}
		return out, log.String()
	}

	e := newEnv(t)
	n := e.issue(t, stopped(), "roadmap:implement", "roadmap:stopped")
	e.fake.SetPermission("alice", "write")
	e.fake.SetPermission("bob", "read")

	before := e.body(t, n)
	if out, log := command(t, e, n, "bob", "/roadmap dismiss "+id); out.Action != ActionNone || !strings.Contains(log, "ignored") {
		t.Errorf("a reader's dismiss: Action %s, log %q; want none and ignored", out.Action, log)
	}
	if e.body(t, n) != before || len(e.fake.Dispatches()) != 0 {
		t.Fatal("a reader's dismiss changed the record or dispatched")
	}
	if out, _ := command(t, e, n, "alice", "/roadmap dismiss "+other); out.Action != ActionNone || !strings.Contains(out.Reason, other) {
		t.Errorf("dismiss of an unknown id: Action %s (%s); want none, naming the id", out.Action, out.Reason)
	}

	out, _ := command(t, e, n, "alice", "/roadmap dismiss "+id+" the quote is fixture data")
	if out.Action != ActionRetry || !strings.Contains(out.Reason, "dismissed review finding "+id) {
		t.Fatalf("a writer's dismiss of the last finding: Action %s (%s); want retry", out.Action, out.Reason)
	}
	l, _ := e.record(t, n).Review()
	if why, ok := l.IsClosed(id); !ok || why != "dismissed by alice" || len(l.Open) != 0 || !l.PassedAt(record.SHA(headSHA)) {
		t.Errorf("ledger after dismiss = %+v; want %s closed by alice, nothing open, passed at the head", l, id)
	}
	if log, ok := e.record(t, n).CheckLog(); ok {
		t.Errorf("the dismissed findings stay the hand-off (implement.check_log %q): the next Job would repair them", log)
	}
	if len(e.fake.Dispatches()) != 1 {
		t.Errorf("dispatches = %v, want the next Job once", e.fake.Dispatches())
	}
}
