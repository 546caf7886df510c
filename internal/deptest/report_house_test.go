package deptest

import "testing"

// reportConcerns are report's decisions in rooms of their own (issue 45):
// how a Job's ending is decided, and what a person's command says. Report
// keeps the effects (labels, dispatches, comments, the record write).
var reportConcerns = []string{"internal/report/decide", "internal/report/command"}

// TestReportConcernsApart: each of report's rooms exists and reaches
// neither internal/report nor a door to the outside (GitHub, git, a
// model) through any import, so its rules are table tests of small values,
// never a run against the fake.
func TestReportConcernsApart(t *testing.T) {
	roomsApart(t, reportConcerns, "internal/report", "internal/github", "internal/git", "internal/llm")
}
