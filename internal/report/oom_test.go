package report

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/roadmap-dev/roadmap/internal/failure"
)

// TestOOMLessParallelism (report's half; implement's is in
// internal/implement): a Job killed out of memory is continued with less
// parallelism recorded for the continuation's checks, and when that Job
// runs out of memory too with no new mark, the item stops.
func TestOOMLessParallelism(t *testing.T) {
	e := newEnv(t)
	n := e.issue(t, base(), "roadmap:implement")

	run2 := e.run(t, "failure", readLog(t, "oom.log"))
	o := e.options(n, run2)
	o.JobResult, o.Attempt = "failure", 2
	out, err := Run(ctx, o)
	if err != nil {
		t.Fatalf("Run (Job 2): %v", err)
	}
	if out.Class != failure.OOM || out.Action != ActionContinue || out.Parallelism != 1 {
		t.Fatalf("Job 2: Class, Action, Parallelism = %s, %s, %d; want oom, continue, 1", out.Class, out.Action, out.Parallelism)
	}
	if got := e.record(t, n).Parallelism(); got != 1 {
		t.Errorf("implement.parallelism = %d, want 1 for the continuation's checks", got)
	}
	want := []map[string]any{{"issue": itoa(n), "attempt": "3", "record-comment": e.recordCommentInput(t, n)}}
	if diff := cmp.Diff(want, e.dispatchInputs()); diff != "" {
		t.Errorf("the continuation (-want +got):\n%s", diff)
	}

	// Job 3 ran with parallelism 1 and ran out of memory again, at the
	// same group: less parallelism did not help, so the item stops.
	run3 := e.run(t, "failure", readLog(t, "oom.log"))
	o = e.options(n, run3)
	o.JobResult, o.Attempt = "failure", 3
	out, err = Run(ctx, o)
	if err != nil {
		t.Fatalf("Run (Job 3): %v", err)
	}
	if out.Action != ActionStop || !out.Stopped || out.Class != failure.NoProgress {
		t.Errorf("Job 3: Class, Action, Stopped = %s, %s, %v; want no_progress, stop, true", out.Class, out.Action, out.Stopped)
	}
	if len(e.fake.Dispatches()) != 1 {
		t.Errorf("dispatches = %d, want only Job 2's continuation", len(e.fake.Dispatches()))
	}
}
