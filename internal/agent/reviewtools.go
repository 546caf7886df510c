package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// The review's toolboxes (internal/review). The reviewer reads the change and
// ends with its findings; the refuter reads the same tree and ends with a
// verdict on each blocking finding. Both only read: the review judges a
// head, it never changes it.

// MaxReviewAnswer bounds the text an end tool of the review accepts, in
// bytes: the answer is model output and is parsed whole.
const MaxReviewAnswer = 64 << 10

// ReviewerTools is the independent reviewer's toolbox: read-only tools and
// review_findings.
func ReviewerTools() []string {
	return []string{"read_file", "list_dir", "search", "git_log", "git_blame", "go_doc", "review_findings"}
}

// RefuterTools is the refutation pass's toolbox: read-only tools and refute.
func RefuterTools() []string {
	return []string{"read_file", "list_dir", "search", "git_log", "git_blame", "go_doc", "refute"}
}

var reviewTools = []tool{
	{
		name: "review_findings",
		desc: "End the review with your findings: a JSON array (an empty array [] when the change is fine). Each element is an object " +
			`{"file": path relative to the repository root, "start": first line, "end": last line (in the head), "severity": "blocking" or "advisory", ` +
			`"kind": "bug", "security", "test" or "plan", "title": one line, "trigger": the realistic scenario that makes it go wrong, ` +
			`"quote": the code copied verbatim from the head file}.`,
		stage:  true,
		params: []param{{name: "findings", typ: "string", desc: "the JSON array of findings, or []", required: true}},
		run:    reviewAnswer("findings"),
	},
	{
		name: "refute",
		desc: "End the refutation with a verdict on each finding: a JSON array of objects " +
			`{"id": the finding's id, "verdict": "refuted" or "upheld", "reason": the evidence, one or two sentences}.`,
		stage:  true,
		params: []param{{name: "verdicts", typ: "string", desc: "the JSON array of verdicts", required: true}},
		run:    reviewAnswer("verdicts"),
	},
}

// reviewAnswer is an end tool whose one argument must be a JSON array: a
// reply that is not one goes back to the model to correct, so the parser in
// internal/review sees an answer it can read (and still reads it
// defensively).
func reviewAnswer(name string) func(context.Context, *session, args) toolResult {
	return func(_ context.Context, _ *session, a args) toolResult {
		v := strings.TrimSpace(a.str(name))
		if err := checkJSONArray(v); err != nil {
			return errorResult(fmt.Errorf("%s: %w", name, err))
		}
		return toolResult{class: ResultOK, content: "Recorded.", end: &ending{status: StatusFinished, summary: v}}
	}
}

func checkJSONArray(v string) error {
	if len(v) > MaxReviewAnswer {
		return fmt.Errorf("%d bytes is more than the %d accepted: keep the most important entries", len(v), MaxReviewAnswer)
	}
	if !strings.HasPrefix(v, "[") {
		return errors.New("must be a JSON array, [] when there is nothing")
	}
	var raw []json.RawMessage
	if err := json.Unmarshal([]byte(v), &raw); err != nil {
		return fmt.Errorf("not a JSON array: %v", err)
	}
	return nil
}
