package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/roadmap-dev/roadmap/internal/event"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// labelEvent decodes an issues.labeled payload: sender added label.
func labelEvent(t *testing.T, issue int, sender, label string) *event.Event {
	t.Helper()
	payload := map[string]any{
		"action":     "labeled",
		"issue":      map[string]any{"number": issue, "title": "Webhook backoff"},
		"label":      map[string]any{"name": label},
		"sender":     map[string]any{"login": sender, "type": "User"},
		"repository": map[string]any{"name": "widgets", "owner": map[string]any{"login": "acme"}},
	}
	data, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	ev := &event.Event{Name: "issues", RunID: 9200, Actor: sender}
	if err := event.Decode(strings.NewReader(string(data)), ev); err != nil {
		t.Fatalf("decode the payload: %v", err)
	}
	return ev
}

// TestCommentCommandsWritersOnly: a person with write access stops an item
// for good and restarts it; the same commands from anyone else change
// nothing, and the log says they were ignored.
func TestCommentCommandsWritersOnly(t *testing.T) {
	command := func(t *testing.T, e *env, ev *event.Event) (Outcome, string) {
		t.Helper()
		var log bytes.Buffer
		out, err := Resume(ctx, ResumeOptions{GitHub: e.client(t), Event: ev, Workflow: workflow, Ref: ref, Mask: e.mask.Mask, Log: &log})
		if err != nil {
			t.Fatalf("Resume: %v", err)
		}
		return out, log.String()
	}
	comment := func(t *testing.T, n int, login, body string) *event.Event {
		return commentEvent(t, n, "created", login, "User", "MEMBER", body)
	}

	t.Run("a writer's stop holds the item through a cancelled run; a writer's retry restarts it", func(t *testing.T) {
		e := newEnv(t)
		n := e.issue(t, base(), "roadmap:implement")
		e.fake.SetPermission("alice", "write")
		e.fake.SetPermission("bob", "read")

		out, _ := command(t, e, comment(t, n, "alice", "/roadmap stop\nwrong direction"))
		if out.Action != ActionStop || !out.Stopped {
			t.Fatalf("stop: Action, Stopped = %s, %v (%s); want stop, true", out.Action, out.Stopped, out.Reason)
		}
		if by, _ := e.record(t, n).StoppedBy(); by != "alice" {
			t.Errorf("item.stopped_by = %q, want alice", by)
		}
		if !e.hasLabel(n, "roadmap:stopped") {
			t.Errorf("labels = %v, want roadmap:stopped", e.fake.Labels(n))
		}
		if c := e.commentWith(n, MarkerStop); !strings.Contains(c, "/roadmap retry") || !strings.Contains(c, "alice") {
			t.Errorf("the stop comment does not say who stopped it and how to retry:\n%s", c)
		}

		// The person cancels the running Job: report reads a killed Job,
		// whose class (killed) would continue it, and leaves it stopped.
		runID := e.run(t, "cancelled", readLog(t, "cancelled.log"))
		o := e.options(n, runID)
		o.JobResult = "cancelled"
		rep, err := Run(ctx, o)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if rep.Class != failure.Killed || rep.Action != ActionNone || !rep.Stopped {
			t.Errorf("report of the cancelled run: Class, Action, Stopped = %s, %s, %v; want killed, none, true", rep.Class, rep.Action, rep.Stopped)
		}
		if d := e.fake.Dispatches(); len(d) != 0 {
			t.Fatalf("a stopped item was continued: %v", d)
		}

		// A reader's retry is ignored, and the log says so.
		before := e.body(t, n)
		out, log := command(t, e, comment(t, n, "bob", "/roadmap retry"))
		if out.Action != ActionNone || !strings.Contains(log, "ignored") || !strings.Contains(log, "bob has read access") {
			t.Errorf("reader's retry: Action %s, log %q; want none, and the log saying it was ignored", out.Action, log)
		}
		if e.body(t, n) != before || len(e.fake.Dispatches()) != 0 {
			t.Errorf("a reader's retry changed the record or dispatched: %v", e.fake.Dispatches())
		}

		out, _ = command(t, e, comment(t, n, "alice", "/roadmap retry"))
		if out.Action != ActionRetry {
			t.Fatalf("retry: Action = %s (%s), want retry", out.Action, out.Reason)
		}
		// Job 1 is in the record; the cancelled Job 2 has its line: Job 3 next.
		want := []map[string]any{{"issue": itoa(n), "attempt": "3", "record-comment": e.recordCommentInput(t, n)}}
		if diff := cmp.Diff(want, e.dispatchInputs()); diff != "" {
			t.Errorf("retry's dispatch (-want +got):\n%s", diff)
		}
		if _, held := e.record(t, n).StoppedBy(); held {
			t.Errorf("item.stopped_by kept after a retry")
		}
		if e.hasLabel(n, "roadmap:stopped") {
			t.Errorf("labels = %v, want roadmap:stopped removed", e.fake.Labels(n))
		}
	})

	for _, tc := range []struct {
		name string
		ev   func(t *testing.T, n int) *event.Event
	}{
		{"a reader's /roadmap stop comment", func(t *testing.T, n int) *event.Event { return comment(t, n, "bob", "/roadmap stop") }},
		{"a triager's roadmap:stop label", func(t *testing.T, n int) *event.Event { return labelEvent(t, n, "carol", "roadmap:stop") }},
		{"a stranger claiming membership", func(t *testing.T, n int) *event.Event { return comment(t, n, "mallory", "/roadmap stop") }},
	} {
		t.Run(tc.name+" is ignored and logged", func(t *testing.T) {
			e := newEnv(t)
			n := e.issue(t, base(), "roadmap:implement")
			e.fake.SetPermission("bob", "read")
			e.fake.SetPermission("carol", "triage")
			before := e.body(t, n)
			out, log := command(t, e, tc.ev(t, n))
			if out.Action != ActionNone || out.Stopped {
				t.Errorf("Action, Stopped = %s, %v; want none, false", out.Action, out.Stopped)
			}
			if !strings.Contains(log, "ignored") || !strings.Contains(log, "only a person with write access") {
				t.Errorf("the log does not say the command was ignored and why:\n%s", log)
			}
			if e.body(t, n) != before || e.hasLabel(n, "roadmap:stopped") || e.commentWith(n, MarkerStop) != "" {
				t.Errorf("an ignored stop changed the item: labels %v", e.fake.Labels(n))
			}
		})
	}

	t.Run("a writer's roadmap:stop label stops the item and its next report does not continue it", func(t *testing.T) {
		e := newEnv(t)
		ch := endOfJob(t, base(), 2, 9002, record.ResultYielded, "", "PR checks still running", 2)
		n := e.issue(t, ch, "roadmap:implement", "roadmap:stop")
		e.fake.SetPermission("dana", "maintain")
		out, _ := command(t, e, labelEvent(t, n, "dana", "roadmap:stop"))
		if out.Action != ActionStop {
			t.Fatalf("Action = %s (%s), want stop", out.Action, out.Reason)
		}
		o := e.options(n, 9002)
		o.JobResult, o.Result = "success", "yielded"
		rep, err := Run(ctx, o)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if rep.Action != ActionNone || len(e.fake.Dispatches()) != 0 {
			t.Errorf("a yield of a stopped item: Action %s, dispatches %v; want none, none", rep.Action, e.fake.Dispatches())
		}
	})

	t.Run("a retry of an item that is not stopped does nothing", func(t *testing.T) {
		e := newEnv(t)
		n := e.issue(t, base(), "roadmap:implement")
		e.fake.SetPermission("alice", "admin")
		out, log := command(t, e, comment(t, n, "alice", "/roadmap retry"))
		if out.Action != ActionNone || len(e.fake.Dispatches()) != 0 || !strings.Contains(log, "not stopped") {
			t.Errorf("Action %s, dispatches %v, log %q; want none, none, 'not stopped'", out.Action, e.fake.Dispatches(), log)
		}
	})
}
