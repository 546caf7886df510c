package implement_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// recordComments are the issue's comments by roadmap's identity that hold
// a record block.
func recordComments(w *world) []githubfake.Comment {
	var out []githubfake.Comment
	for _, c := range w.fake.Comments(w.issue) {
		if c.Author == github.DefaultIdentity && record.HasBlock(c.Body) {
			out = append(out, c)
		}
	}
	return out
}

// TestRecordRead404Reconciled: a 404 on the record comment, while the
// comment is there, is reconciled by listing roadmap's own comments: the Job
// writes every mark to the one record comment, never a second one (readers
// take the oldest, which a second comment would leave behind).
func TestRecordRead404Reconciled(t *testing.T) {
	const byID = "/repos/acme/widgets/issues/comments/*"
	for _, tc := range []struct {
		name string
		rule githubfake.Rule
		// handed: the Job is given the comment's id, as a continuation is.
		handed bool
	}{
		{"one 404 on the read inside a mark's write", githubfake.Rule{Method: "GET", Path: byID, Call: 1, Status: 404}, false},
		{"every read by id answers 404", githubfake.Rule{Method: "GET", Path: byID, Status: 404}, true},
		{"one 404 on the PATCH", githubfake.Rule{Method: "PATCH", Path: byID, Call: 2, Status: 404}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, 1, "")
			staged, ok := w.recordComment()
			if !ok {
				t.Fatal("no record comment from stage")
			}
			w.fake.AddFault(tc.rule)
			j := w.newJob(w.conversations())
			if tc.handed {
				j.opts.RecordComment = staged.ID
			}
			res := j.runWithGreenCI()
			if res.Result != record.ResultReady {
				t.Fatalf("result = %s/%s (%s), want ready\n%s", res.Result, res.Failure, res.Reason, j.log.String())
			}
			if !faulted(w, tc.rule) {
				t.Fatalf("the fake never answered %d on %s %s: the test no longer injects its fault", tc.rule.Status, tc.rule.Method, tc.rule.Path)
			}
			if rcs := recordComments(w); len(rcs) != 1 || rcs[0].ID != staged.ID {
				var ids []int64
				for _, c := range rcs {
					ids = append(ids, c.ID)
				}
				t.Fatalf("record comments %v; want the one stage made, %d", ids, staged.ID)
			}
			rec := w.record()
			if got, _ := rec.Result(); got != record.ResultReady {
				t.Errorf("the record comment says %q, want ready: the marks went elsewhere", got)
			}
			if g, _ := rec.Group(); g != 1 {
				t.Errorf("the record comment's implement.group = %d, want 1", g)
			}
			if got, want := j.outputs["record_comment"], fmt.Sprint(staged.ID); got != want {
				t.Errorf("record_comment output = %q, want %s: the next Job must read the same comment", got, want)
			}
		})
	}
}

// faulted reports whether the fake answered rule's status to a request rule
// matches.
func faulted(w *world, rule githubfake.Rule) bool {
	for _, r := range w.fake.Requests() {
		if r.Method == rule.Method && r.Status == rule.Status && r.Fault != "" && strings.HasPrefix(r.Path, strings.TrimSuffix(rule.Path, "*")) {
			return true
		}
	}
	return false
}
