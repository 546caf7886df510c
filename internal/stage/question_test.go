package stage_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/event"
	"github.com/roadmap-dev/roadmap/internal/redact"
	"github.com/roadmap-dev/roadmap/internal/report"
	"github.com/roadmap-dev/roadmap/internal/stage"
)

// TestStageQuestionAnswered: the planner asks a question; report after the
// stage job posts it with the needs-input label; a reply from a person with
// write access is recorded and resumes stage (not implement); the next
// planner gets the question and the answer, the plan stages, and the record
// no longer holds either.
func TestStageQuestionAnswered(t *testing.T) {
	w := newWorld(t)
	const question = "Should the greeting be in English only, or also in French?"
	const answer = "English only for now."
	masker := redact.New(redact.Config{Secrets: []string{token}})

	j1 := w.newJob(conv("planner: asks", "Write the plan for issue", call{"ask", map[string]any{"question": question}}))
	r1 := j1.run(context.Background())
	if r1.Result != stage.ResultReturned || r1.Failure != "needs_input" {
		t.Fatalf("Job 1: %s (%s), want returned (needs_input)\n%s", r1.Result, r1.Failure, j1.log.String())
	}
	out, err := report.Run(context.Background(), report.Options{Issue: w.issue, GitHub: j1.opts.GitHub, Phase: report.PhaseStage,
		JobResult: "success", Result: r1.Result, Failure: r1.Failure, Attempt: r1.Job, RunID: j1.opts.RunID,
		Workflow: "roadmap-caller.yml", Ref: "main", Clock: w.clock, Mask: masker.Mask})
	if err != nil || out.Action != report.ActionAsk {
		t.Fatalf("report after stage: %s, %v; want ask", out.Action, err)
	}
	asked := false
	for _, c := range w.fake.Comments(w.issue) {
		asked = asked || (strings.Contains(c.Body, report.MarkerNeedsInput) && strings.Contains(c.Body, question))
	}
	if !asked || !hasLabel(w, "roadmap:needs-input") {
		t.Fatalf("the question is not on the issue (labels %v)", w.fake.Labels(w.issue))
	}

	w.fake.SetPermission("bob", "write")
	w.fake.AddWorkflow("roadmap-caller.yml")
	if _, err := w.fake.AddComment(w.issue, "bob", answer); err != nil {
		t.Fatal(err)
	}
	res, err := report.Resume(context.Background(), report.ResumeOptions{GitHub: j1.opts.GitHub,
		Event: replyEvent(t, w.issue, "bob", answer), Workflow: "roadmap-caller.yml", Ref: "main", Mask: masker.Mask})
	if err != nil || res.Action != report.ActionResume {
		t.Fatalf("Resume: %s, %v; want resume", res.Action, err)
	}
	if d := w.fake.Dispatches(); len(d) != 1 || d[0].Inputs["phase"] != "stage" {
		t.Fatalf("dispatches %+v, want one stage continuation", d)
	}

	j2 := w.newJob(soundPlanner("Write the plan for issue"), cleanVerifier("Review the plan for issue"))
	r2 := j2.run(context.Background())
	if r2.Result != stage.ResultStaged {
		t.Fatalf("Job 2: %s (%s: %s), want staged\n%s", r2.Result, r2.Failure, r2.Reason, j2.log.String())
	}
	first := j2.model.Requests()[0].Messages[1].Content
	if !strings.Contains(first, question) || !strings.Contains(first, answer) {
		t.Errorf("the planner's first request lacks the question and the answer:\n%s", first)
	}
	rec := w.record()
	if q, _ := rec.Question(); q != "" {
		t.Errorf("implement.question = %q after the answer was used", q)
	}
	if a, _ := rec.Answer(); a != "" {
		t.Errorf("implement.answer = %q after it was used", a)
	}
}

func hasLabel(w *world, l string) bool {
	for _, x := range w.fake.Labels(w.issue) {
		if x == l {
			return true
		}
	}
	return false
}

// replyEvent is the issue_comment event of login's reply.
func replyEvent(t *testing.T, issue int, login, body string) *event.Event {
	t.Helper()
	data, err := json.Marshal(map[string]any{
		"action": "created",
		"issue":  map[string]any{"number": issue, "title": "Add greetings"},
		"comment": map[string]any{"id": 99, "body": body, "author_association": "MEMBER",
			"user": map[string]any{"login": login, "type": "User"}},
		"repository": map[string]any{"name": repo, "owner": map[string]any{"login": owner}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ev := &event.Event{Name: "issue_comment", RunID: 9100}
	if err := event.Decode(strings.NewReader(string(data)), ev); err != nil {
		t.Fatal(err)
	}
	return ev
}
