package report

import (
	"fmt"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
)

// TestLogGoneIsKilled: a Job that wrote no result and whose log GitHub no
// longer has (404, 410) was killed (DESIGN §4: no result is killed), even
// when its conclusion says only "failure": it continues from its last mark
// instead of stopping as unknown, and the record says its spend is lost.
func TestLogGoneIsKilled(t *testing.T) {
	for _, status := range []int{404, 410} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			e := newEnv(t)
			runID := e.run(t, "failure", killedLog(t, bookedLines(t, 2, 2, calls(2, 3), 0)))
			e.fake.AddFault(githubfake.Rule{Method: "GET", Path: "/repos/acme/widgets/actions/jobs/*/logs", Status: status})
			n := e.issue(t, base(), "roadmap:implement")
			o := e.options(n, runID)
			o.JobResult = "failure"
			out, err := Run(ctx, o)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if out.Class != failure.Killed || out.KillReason != reasonLogGone || out.Action != ActionContinue || out.Stopped {
				t.Errorf("class, reason, action, stopped = %s, %s, %s, %v; want killed, %s, continue, false",
					out.Class, out.KillReason, out.Action, out.Stopped, reasonLogGone)
			}
			if d := e.fake.Dispatches(); len(d) != 1 || d[0].Inputs["attempt"] != "3" {
				t.Errorf("dispatches = %+v, want Job 3's", d)
			}
			if e.commentWith(n, MarkerStop) != "" || e.hasLabel(n, "roadmap:stopped") {
				t.Errorf("the item stopped for a log GitHub no longer has")
			}
			rec := e.record(t, n)
			if f, _ := rec.Failure(); f != string(failure.Killed) || !out.SpendLost {
				t.Errorf("implement.failure = %q, spend_lost = %v; want killed, true", f, out.SpendLost)
			}
		})
	}
	t.Run("a conclusion that says more keeps its class", func(t *testing.T) {
		e := newEnv(t)
		runID := e.run(t, "timed_out", killedLog(t, bookedLines(t, 2, 2, calls(2, 3), 0)))
		e.fake.AddFault(githubfake.Rule{Method: "GET", Path: "/repos/acme/widgets/actions/jobs/*/logs", Status: 410})
		n := e.issue(t, base(), "roadmap:implement")
		o := e.options(n, runID)
		o.JobResult = "failure"
		out, err := Run(ctx, o)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if out.Class != failure.Killed || out.KillReason != failure.ReasonTimeout {
			t.Errorf("class, reason = %s, %s; want killed, %s", out.Class, out.KillReason, failure.ReasonTimeout)
		}
	})
}
