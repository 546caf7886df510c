package report

import (
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/recordstore"
)

// TestReportRerunAfterBrokenRecord: a person broke the record block after
// the last Job wrote it, and the Job was then killed. Report reads the
// broken record: its first run repairs the block from the lines that still
// read (it has no last good record of its own), says so once on the issue,
// and acts; a re-run finds the repaired record and does not fail.
func TestReportRerunAfterBrokenRecord(t *testing.T) {
	e := newEnv(t)
	runID := e.run(t, "failure", readLog(t, "auth.log"))
	n := e.issue(t, base(), "roadmap:implement")
	rc := e.recordComment(t, n)
	if err := e.fake.EditComment(rc.ID, func(cur string) string {
		cur = strings.Replace(cur, "implement.group: 1\n", "implement.group: one\n", 1)
		return strings.Replace(cur, "\n-->", "\nsee the PR for the group\n-->", 1)
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := record.Parse(e.body(t, n)); err == nil {
		t.Fatal("the person's edit did not break the record")
	}
	repairs := func() []string {
		var out []string
		for _, c := range e.fake.Comments(n) {
			if strings.Contains(c.Body, recordstore.RepairMarker) {
				out = append(out, c.Body)
			}
		}
		return out
	}
	for run := 1; run <= 2; run++ {
		o := e.options(n, runID)
		o.GitHub = e.client(t) // a re-run is another process
		o.JobResult = "failure"
		out, err := Run(ctx, o)
		if err != nil {
			t.Fatalf("run %d: Run: %v", run, err)
		}
		if out.Class != failure.Auth || out.Action != ActionStop || !e.hasLabel(n, "roadmap:stopped") {
			t.Errorf("run %d: Class, Action = %s, %s, labels %v; want auth, stop, roadmap:stopped", run, out.Class, out.Action, e.fake.Labels(n))
		}
		rec := e.record(t, n) // fails the test unless the record reads whole
		if sp, _ := rec.Spend(); sp.ModelCalls != 6 {
			t.Errorf("run %d: implement.spend = %+v, want Job 1's 6 calls kept", run, sp)
		}
		if fail, _ := rec.Failure(); fail != string(failure.Auth) {
			t.Errorf("run %d: implement.failure = %q, want auth", run, fail)
		}
		got := repairs()
		if len(got) != 1 || !strings.Contains(got[0], "implement.group: one") || !strings.Contains(got[0], "see the PR for the group") {
			t.Errorf("run %d: repair comments %q, want one naming both lines not read", run, got)
		}
	}
	if c := e.commentWith(n, MarkerStop); c == "" {
		t.Error("no stop comment")
	}
}
