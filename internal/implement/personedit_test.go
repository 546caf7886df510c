package implement_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// TestPersonEditKept: a person with write access edits the record comment
// while a Job writes a mark: GitHub has answered the Job's read of the
// comment for the write, the Job has not sent its PATCH. The Job's marks and
// the person's line both end in the record, at whichever of the Job's writes
// the edit lands. The protocol's side, and the window that remains, are
// TestPersonEditKept and TestWriteRecordResidualWindows in internal/github.
func TestPersonEditKept(t *testing.T) {
	// One Job meets an edit at its first write by id and another at its
	// second (they were a Job each): each edit's line must survive, and the
	// Job's marks land too.
	w := newWorld(t, 2, "")
	staged, _ := w.recordComment()
	comment := "/repos/acme/widgets/issues/comments/*"
	// The Job's first read for a write follows its last PATCH (it found the
	// comment by listing, then writes it by id).
	patched, writes := false, 0
	var edited []int
	w.fake.AddFault(githubfake.Rule{Method: "PATCH", Path: comment, After: func() { patched = true }})
	w.fake.AddFault(githubfake.Rule{Method: "GET", Path: comment, After: func() {
		if !patched {
			return
		}
		patched = false
		if writes++; writes > 2 {
			return
		}
		edited = append(edited, writes)
		line := fmt.Sprintf("x.person%d: keep this line", writes)
		if err := w.fake.EditComment(staged.ID, func(cur string) string {
			return strings.Replace(cur, "<!-- roadmap:record v1\n", "<!-- roadmap:record v1\n"+line+"\n", 1)
		}); err != nil {
			t.Error(err)
		}
	}})
	j := w.newJob(w.conversations())
	res := j.runWithGreenCI()
	if res.Result != record.ResultReady {
		t.Fatalf("result = %s/%s (%s), want ready\n%s", res.Result, res.Failure, res.Reason, j.log.String())
	}
	if len(edited) != 2 {
		t.Fatalf("the person edited during writes %v by id, want 1 and 2: the Job made fewer writes by id", edited)
	}
	rec := w.record()
	for _, write := range edited {
		t.Run(fmt.Sprintf("during write %d by id", write), func(t *testing.T) {
			if got, ok := rec.Raw(record.Key(fmt.Sprintf("x.person%d", write))); !ok || got != "keep this line" {
				t.Errorf("the person's line is gone from the record (keys %v)", rec.Keys())
			}
		})
	}
	if g, _ := rec.Group(); g != 2 {
		t.Errorf("implement.group = %d, want 2: the Job's marks must land too", g)
	}
	if n := len(recordComments(w)); n != 1 {
		t.Errorf("%d record comments, want 1", n)
	}
}
