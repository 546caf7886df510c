package demotest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/roadmap-dev/roadmap/internal/demo"
)

// The two line comments a maintainer leaves on the ready PR of the review
// world's item (README.md as group 3 leaves it: lines 5 and 6 are the list
// the group added), and what the agent does for each.
const (
	// ReviewBody is the review's own text: the agent changes nothing for
	// it and answers that the line comments say what to change.
	ReviewBody           = "Two small things in the README."
	ReviewCommentHello   = "Say in which package Hello lives."
	ReviewCommentExample = "Add a usage example after the list."
	// ReviewLineHello and ReviewLineExample are the lines of README.md the
	// comments are on.
	ReviewLineHello   = 5
	ReviewLineExample = 6
)

// NewReviewWorld is demo.NewWorld whose agent also answers a maintainer's
// review of the ready PR: one recorded conversation for each of the two
// line comments (matched by the comment's words in the repair step's task),
// each an edit of README.md and a finish.
func NewReviewWorld(ctx context.Context, dir string, latency time.Duration) (*demo.World, error) {
	return demo.NewSampleWorld(ctx, dir, latency, demo.GoSample(), true, func(_ map[string]string, fixtures string) error {
		for name, c := range map[string]struct{ match, old, new, summary string }{
			"review-comment-hello.json": {ReviewCommentHello, "- `Hello(name)` returns", "- `greet.Hello(name)` returns",
				"Named the package in the list."},
			"review-comment-example.json": {ReviewCommentExample, "returns `Goodbye, NAME!`.\n",
				"returns `Goodbye, NAME!`.\n\nExample: `greet.Hello(\"world\")` returns `Hello, world!`.\n", "Added a usage example."},
		} {
			turn := func(name string, args map[string]any, in, out int) map[string]any {
				return map[string]any{"response": map[string]any{
					"tool_calls": []map[string]any{{"name": name, "arguments": args}},
					"usage":      map[string]int{"tokens_in": in, "tokens_out": out}}}
			}
			data, err := json.MarshalIndent(map[string]any{
				"comment": "Written by hand for the review round (e2e): the agent's answer to one line comment.",
				"source":  "hand",
				"match":   c.match,
				"turns": []any{
					turn("edit_file", map[string]any{"path": "README.md", "old": c.old, "new": c.new}, 1900, 80),
					turn("finish", map[string]any{"summary": c.summary}, 2000, 20),
				},
			}, "", " ")
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(fixtures, name), data, 0o644); err != nil {
				return err
			}
		}
		// The review's body asks for nothing of its own: the agent changes
		// nothing, and its finish is the answer.
		data, err := json.MarshalIndent(map[string]any{
			"comment": "Written by hand for the review round (e2e): the review's body asks for nothing the line comments do not.",
			"source":  "hand",
			"match":   ReviewBody,
			"turns": []any{map[string]any{"response": map[string]any{
				"tool_calls": []map[string]any{{"name": "finish", "arguments": map[string]any{
					"summary": "Nothing to change for the review itself: each line comment is answered in its thread."}}},
				"usage": map[string]int{"tokens_in": 1800, "tokens_out": 30}}}},
		}, "", " ")
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(fixtures, "review-body.json"), data, 0o644)
	})
}
