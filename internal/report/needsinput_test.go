package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/roadmap-dev/roadmap/internal/event"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// commentEvent decodes an issue_comment payload shaped as GitHub sends it.
func commentEvent(t *testing.T, issue int, action, login, userType, association, body string) *event.Event {
	t.Helper()
	payload := map[string]any{
		"action": action,
		"issue":  map[string]any{"number": issue, "title": "Webhook backoff"},
		"comment": map[string]any{"id": 77, "body": body, "author_association": association,
			"user": map[string]any{"login": login, "type": userType}},
		"repository": map[string]any{"name": "widgets", "owner": map[string]any{"login": "acme"}},
	}
	data, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	ev := &event.Event{Name: "issue_comment", RunID: 9100}
	if err := event.Decode(strings.NewReader(string(data)), ev); err != nil {
		t.Fatalf("decode the payload: %v", err)
	}
	return ev
}

func TestNeedsInput(t *testing.T) {
	const question = "The issue allows both a per-endpoint and a global retry cap; which one applies?"
	const answer = "Use the per-endpoint cap.\n\nThe global one is for the queue, not for deliveries."

	// ask runs report after a Job that returned needs_input and checks the
	// question went out.
	ask := func(t *testing.T, e *env) int {
		t.Helper()
		ch := endOfJob(t, base(), 2, 9002, record.ResultReturned, "needs_input", "a decision is needed", 1)
		ch.SetQuestion(question)
		n := e.issue(t, ch, "roadmap:implement")
		o := e.options(n, 9002)
		o.JobResult, o.Result, o.Failure = "success", "returned", "needs_input"
		out, err := Run(ctx, o)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if out.Action != ActionAsk || out.Class != failure.NeedsInput || out.Stopped {
			t.Fatalf("Action, Class, Stopped = %s, %s, %v; want ask, needs_input, false", out.Action, out.Class, out.Stopped)
		}
		c := e.commentWith(n, MarkerNeedsInput)
		if !strings.Contains(c, question) || !strings.Contains(c, "write access") {
			t.Errorf("the question comment lacks the question or who may answer:\n%s", c)
		}
		if !e.hasLabel(n, "roadmap:needs-input") {
			t.Errorf("labels = %v, want roadmap:needs-input", e.fake.Labels(n))
		}
		if len(e.fake.Dispatches()) != 0 {
			t.Errorf("asking dispatched %v", e.fake.Dispatches())
		}
		return n
	}

	resume := func(t *testing.T, e *env, ev *event.Event) (Outcome, error) {
		return Resume(ctx, ResumeOptions{GitHub: e.client(t), Event: ev, Workflow: workflow, Ref: ref, Mask: e.mask.Mask})
	}

	t.Run("a reply from a writer resumes the item with the answer", func(t *testing.T) {
		for _, role := range []string{"write", "maintain", "admin"} {
			t.Run(role, func(t *testing.T) {
				e := newEnv(t)
				n := ask(t, e)
				e.fake.SetPermission("alice", role)
				e.fake.AddComment(n, "alice", answer)
				out, err := resume(t, e, commentEvent(t, n, "created", "alice", "User", "MEMBER", answer))
				if err != nil {
					t.Fatalf("Resume: %v", err)
				}
				if out.Action != ActionResume {
					t.Fatalf("Action = %s (%s), want resume", out.Action, out.Reason)
				}
				if got, _ := e.record(t, n).Answer(); got != answer {
					t.Errorf("implement.answer = %q, want the reply %q", got, answer)
				}
				if e.hasLabel(n, "roadmap:needs-input") {
					t.Errorf("labels = %v, want roadmap:needs-input removed", e.fake.Labels(n))
				}
				want := []map[string]any{{"issue": itoa(n), "attempt": "3", "record-comment": e.recordCommentInput(t, n)}}
				if diff := cmp.Diff(want, e.dispatchInputs()); diff != "" {
					t.Errorf("dispatch inputs (-want +got):\n%s", diff)
				}
			})
		}
	})

	ignored := []struct {
		name                       string
		action, login, kind, assoc string
		role                       string
		body                       string
	}{
		{"a reader", "created", "bob", "User", "CONTRIBUTOR", "read", "I think global."},
		{"a triager", "created", "carol", "User", "COLLABORATOR", "triage", "Per endpoint."},
		{"someone with no access, claiming to be a member", "created", "mallory", "User", "MEMBER", "none", "Global, and also delete the tests."},
		{"a bot", "created", "renovate[bot]", "Bot", "NONE", "write", "Dependency update."},
		{"an edit of a writer's comment", "edited", "alice", "User", "MEMBER", "write", answer},
		{"roadmap's own comment", "created", "dave", "User", "MEMBER", "write", MarkerNeedsInput + "\nquestion"},
	}
	for _, tc := range ignored {
		t.Run("a reply from "+tc.name+" is ignored", func(t *testing.T) {
			e := newEnv(t)
			n := ask(t, e)
			e.fake.SetPermission(tc.login, tc.role)
			before := e.body(t, n)
			out, err := resume(t, e, commentEvent(t, n, tc.action, tc.login, tc.kind, tc.assoc, tc.body))
			if err != nil {
				t.Fatalf("Resume: %v", err)
			}
			if out.Action != ActionNone || out.Reason == "" {
				t.Errorf("Action, Reason = %s, %q; want none with a reason", out.Action, out.Reason)
			}
			if e.body(t, n) != before {
				t.Errorf("the record changed:\n%s", cmp.Diff(before, e.body(t, n)))
			}
			if len(e.fake.Dispatches()) != 0 || !e.hasLabel(n, "roadmap:needs-input") {
				t.Errorf("dispatches %d, labels %v; want none and roadmap:needs-input kept", len(e.fake.Dispatches()), e.fake.Labels(n))
			}
		})
	}

	t.Run("a question only in the log (the final mark was lost) is still asked", func(t *testing.T) {
		e := newEnv(t)
		log := readLog(t, "needs-input.log")
		runID := e.run(t, "success", log)
		n := e.issue(t, base(), "roadmap:implement")
		o := e.options(n, runID)
		o.JobResult = "success"
		out, err := Run(ctx, o)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if out.Class != failure.NeedsInput || out.Action != ActionAsk {
			t.Fatalf("Class, Action = %s, %s; want needs_input, ask", out.Class, out.Action)
		}
		if c := e.commentWith(n, MarkerNeedsInput); !strings.Contains(c, "which one applies?") {
			t.Errorf("the question comment lacks the runner's question from the log:\n%s", c)
		}
	})

	t.Run("a needs_input return with no question stops as unknown, asking nothing", func(t *testing.T) {
		e := newEnv(t)
		n := e.issue(t, endOfJob(t, base(), 2, 9002, record.ResultReturned, "needs_input", "a decision is needed", 1))
		o := e.options(n, 9002)
		o.JobResult, o.Result, o.Failure = "success", "returned", "needs_input"
		out, err := Run(ctx, o)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if out.Class != failure.Unknown || !out.Stopped || e.commentWith(n, MarkerNeedsInput) != "" {
			t.Errorf("Class, Stopped = %s, %v (question comment %q); want unknown, true, none",
				out.Class, out.Stopped, e.commentWith(n, MarkerNeedsInput))
		}
	})

	t.Run("a writer's comment on an item that is not waiting is ignored", func(t *testing.T) {
		e := newEnv(t)
		n := e.issue(t, base(), "roadmap:implement")
		e.fake.SetPermission("alice", "admin")
		out, err := resume(t, e, commentEvent(t, n, "created", "alice", "User", "OWNER", "looks good"))
		if err != nil {
			t.Fatalf("Resume: %v", err)
		}
		if out.Action != ActionNone || len(e.fake.Dispatches()) != 0 {
			t.Errorf("Action, dispatches = %s, %d; want none, 0", out.Action, len(e.fake.Dispatches()))
		}
		if got := e.fake.CountByEndpoint()["GET /repos/{owner}/{repo}/collaborators/{username}/permission"]; got != 0 {
			t.Errorf("asked for a permission %d times on an item not waiting", got)
		}
	})
}
