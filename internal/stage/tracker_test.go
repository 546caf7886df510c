package stage_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/stage"
)

// TestTrackerJobHandsOver: a stage Job on a tracker (native sub-issues, or
// a task list naming issues) plans nothing: it ends yielded with class
// tracker before any blocker read or model call, with no number and no
// record comment, so report drives the sub-issues (report.Drive). An issue
// whose task list names no issue is an ordinary item.
func TestTrackerJobHandsOver(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(w *world) // makes w.issue a tracker
		kind string
	}{
		{"native sub-issues", func(w *world) {
			for _, title := range []string{"Parse greetings", "Name the greeting"} {
				n := w.fake.CreateIssue(githubfake.Issue{Title: title, Author: "alice"})
				if err := w.fake.AddSubIssue(w.issue, n); err != nil {
					t.Fatal(err)
				}
			}
		}, "2 sub-issues"},
		{"a task list of issues", func(w *world) {
			n := w.fake.CreateIssue(githubfake.Issue{Title: "Parse greetings", Author: "alice"})
			body := fmt.Sprintf("%s\n## Tasks\n- [ ] #%d parse\n- [ ] write the docs\n", issueBody, n)
			if err := w.fake.SetIssueBody(w.issue, "alice", body); err != nil {
				t.Fatal(err)
			}
		}, "a task list of 1 issue"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			tc.make(w)
			w.fake.ResetLog()
			j := w.newJob(soundPlanner("Write the plan for issue"), cleanVerifier("Review the plan for issue"))
			res := j.run(context.Background())
			if res.Result != stage.ResultYielded || res.Failure != string(failure.Tracker) {
				t.Fatalf("result %s (%s: %s), want yielded (tracker)\n%s", res.Result, res.Failure, res.Reason, j.log.String())
			}
			if !strings.Contains(res.Reason, "is a tracker ("+tc.kind+")") || j.outputs["failure"] != "tracker" || j.outputs["job"] != "0" {
				t.Errorf("reason %q, outputs %v; want a tracker (%s), failure tracker, job 0", res.Reason, j.outputs, tc.kind)
			}
			if n := len(j.model.Requests()); n != 0 {
				t.Errorf("%d model calls; want none", n)
			}
			if !strings.Contains(j.log.String(), "class=tracker") {
				t.Errorf("the log has no typed line class=tracker:\n%s", j.log.String())
			}
			for _, r := range w.fake.Requests() {
				if r.Method != "GET" {
					t.Errorf("the hand-over wrote to GitHub: %s %s", r.Method, r.Path)
				}
				if strings.Contains(r.Path, "dependencies") {
					t.Errorf("the hand-over read the tracker's blockers: %s", r.Path)
				}
			}
		})
	}

	// A task list of work, not of issues: planned as an item.
	w := newWorld(t)
	if err := w.fake.SetIssueBody(w.issue, "alice", issueBody+"\n- [ ] write the docs\n- [x] see #notanissue\n"); err != nil {
		t.Fatal(err)
	}
	j := w.newJob(soundPlanner("Write the plan for issue"), cleanVerifier("Review the plan for issue"))
	if res := j.run(context.Background()); res.Failure == string(failure.Tracker) {
		t.Fatalf("an issue whose task list names no issue was taken for a tracker: %s", res.Reason)
	}
}
