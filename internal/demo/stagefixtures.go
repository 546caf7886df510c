package demo

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/roadmap-dev/roadmap/internal/llm"
)

// issueBody is the sample issue as a person files it.
const issueBody = `The greet package is empty: callers need a greeting and a farewell.

## Acceptance

- Hello("Ada") returns "Hello, Ada!".
- Goodbye("Ada") returns "Goodbye, Ada!".
- The README documents both.
`

// WritePlannerFixtures writes into fixtures the planner's conversation
// (named name, matched by match): it reads the file s.Reads, writes each
// file of plan (path in the change's folder to content) with
// write_plan_file and finishes with summary; and the verifier's: it reads
// the same file, has no objection and judges the acceptance map as
// s.Acceptance says (which group meets each criterion and why). They are
// made from the plan's own files, so a sample plan has one source.
func (s Sample) WritePlannerFixtures(plan map[string]string, fixtures, name, match, summary string) error {
	reads, acceptance := s.Reads, s.Acceptance
	files := slices.Sorted(maps.Keys(plan))
	type call struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	}
	turn := func(name string, args map[string]any, in, out int) map[string]any {
		return map[string]any{"response": map[string]any{
			"tool_calls": []call{{Name: name, Arguments: args}},
			"usage":      map[string]int{"tokens_in": in, "tokens_out": out},
		}}
	}
	planner := []map[string]any{turn("read_file", map[string]any{"path": reads}, 1650, 40)}
	for i, f := range files {
		data := plan[f]
		planner = append(planner, turn("write_plan_file", map[string]any{"path": f, "content": data}, 1900+200*i, 60+len(data)/4))
	}
	planner = append(planner, turn("finish", map[string]any{"summary": summary}, 2600, 30))
	convs := map[string]map[string]any{
		name: {"comment": "Made by the demo from the sample plan's files: the planner reads the package, writes the plan and finishes.",
			"source": "hand", "match": match, "turns": planner},
		"stage-verifier": {"comment": "Made by the demo: the verifier reads the package, has no objection and maps each acceptance criterion to the group that meets it.",
			"source": "hand", "match": "Review the plan for issue", "turns": []map[string]any{
				turn("read_file", map[string]any{"path": reads}, 2100, 40),
				turn("verdict", map[string]any{"objections": "none", "acceptance": acceptance}, 2300, 20)}},
	}
	for name, c := range convs {
		data, err := json.MarshalIndent(c, "", " ")
		if err != nil {
			return err
		}
		if _, err := llm.ParseConversation(name, data); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(fixtures, name+".json"), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
