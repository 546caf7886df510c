package report

import (
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// TestStopCommentNamesModels: the stop comment names the model each role
// ran on (item.models), in the roles' order, and says nothing of models
// when the record names none.
func TestStopCommentNamesModels(t *testing.T) {
	for _, tc := range []struct {
		name   string
		models map[string]string
		want   string
	}{
		{"all four", map[string]string{"reviewer": "openai/gpt-4.1", "planner": "openai/gpt-4o-mini", "verifier": "openai/gpt-4.1", "implementer": "openai/gpt-4o-mini"},
			"**Models:** planner `openai/gpt-4o-mini`, verifier `openai/gpt-4.1`, implementer `openai/gpt-4o-mini`, reviewer `openai/gpt-4.1`."},
		{"none", nil, ""},
	} {
		var class failure.Class
		for _, row := range failure.Table() {
			if row.Stop && row.Result == failure.ResultStopped && class == "" {
				class = row.Class
			}
		}
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			ch := endOfJob(t, base(), 2, 9002, record.ResultStopped, string(class), "the runner's reason", 2)
			ch.SetStopped("group 2")
			ch.SetModels(nil, tc.models)
			n := e.issue(t, ch, "roadmap:implement")
			o := e.options(n, 9002)
			o.JobResult, o.Result, o.Failure = "success", string(record.ResultStopped), string(class)
			_, err := Run(ctx, o)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			c := e.commentWith(n, MarkerStop)
			if c == "" {
				t.Fatal("no stop comment")
			}
			if tc.want != "" && !strings.Contains(c, tc.want) {
				t.Errorf("the stop comment lacks %q:\n%s", tc.want, c)
			}
			if tc.want == "" && strings.Contains(c, "**Models:**") {
				t.Errorf("the stop comment names models the record does not hold:\n%s", c)
			}
		})
	}
}
