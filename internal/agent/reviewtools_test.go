package agent

import (
	"context"
	"strings"
	"testing"
)

// TestReviewEndTools: the review's end tools end the step with the JSON
// array they were given, refuse anything else with a message the model can
// act on, and are offered only in the review's toolboxes.
func TestReviewEndTools(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		tool, args string
		ends       bool
		summary    string
	}{
		{"review_findings", `{"findings": "[]"}`, true, "[]"},
		{"review_findings", `{"findings": " [{\"file\": \"a.go\"}] "}`, true, `[{"file": "a.go"}]`},
		{"review_findings", `{"findings": "none"}`, false, ""},
		{"review_findings", `{"findings": "[{\"file\": "}`, false, ""},
		{"review_findings", `{"findings": "{}"}`, false, ""},
		{"review_findings", `{"findings": "[` + strings.Repeat(" ", MaxReviewAnswer) + `]"}`, false, ""},
		{"refute", `{"verdicts": "[{\"id\": \"abc\", \"verdict\": \"refuted\"}]"}`, true, `[{"id": "abc", "verdict": "refuted"}]`},
		{"refute", `{"verdicts": ""}`, false, ""},
	} {
		t.Run(tc.tool+" "+tc.args[:min(len(tc.args), 40)], func(t *testing.T) {
			names := ReviewerTools()
			if tc.tool == "refute" {
				names = RefuterTools()
			}
			s, err := newSession(Config{Models: []Tier{{Name: "m", Model: noModel{}}}, Sandbox: fuzzSandbox{dir}, Tools: names})
			if err != nil {
				t.Fatal(err)
			}
			res, err := s.dispatch(context.Background(), ToolCall{ID: "1", Name: tc.tool, Arguments: tc.args})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.end != nil; got != tc.ends {
				t.Fatalf("ends = %v, want %v (%s: %s)", got, tc.ends, res.class, res.content)
			}
			if tc.ends && (res.end.status != StatusFinished || res.end.summary != tc.summary) {
				t.Errorf("ending = %+v, want finished with %q", res.end, tc.summary)
			}
			if !tc.ends && res.class != ResultError && res.class != ResultMalformed {
				t.Errorf("class = %s, want an error for the model", res.class)
			}
		})
	}
	for _, name := range []string{"review_findings", "refute"} {
		for _, n := range ToolNames() {
			if n == name {
				t.Errorf("%s is in implement's default toolbox", name)
			}
		}
	}
	for _, n := range append(ReviewerTools(), RefuterTools()...) {
		for _, w := range []string{"write_file", "edit_file", "run", "write_plan_file"} {
			if n == w {
				t.Errorf("the review's toolbox offers %s", w)
			}
		}
	}
}
