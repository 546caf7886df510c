package decide

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// TestActionFor: the action each class leads to, as DESIGN §4 and issue 7
// give it. The Job-level actions (retry, wait, rebase, repair, reconcile,
// less parallelism, continue) are a continuation for report.
func TestActionFor(t *testing.T) {
	want := map[failure.Class]Action{
		failure.Transient:          Continue,
		failure.Indeterminate:      Continue,
		failure.RateLimited:        Continue,
		failure.Conflict:           Continue,
		failure.ChecksFailed:       Continue,
		failure.PlanWrong:          ReturnToStage,
		failure.NeedsInput:         Ask,
		failure.BudgetExhausted:    Stop,
		failure.DayBudgetExhausted: Yield,
		failure.OOM:                Continue,
		failure.Killed:             Continue,
		failure.Auth:               Stop,
		failure.NoProgress:         Stop,
		failure.Unisolated:         Stop,
		failure.ReviewBlocked:      Stop,
		failure.TestsWeak:          Stop,
		failure.Busy:               None,
		failure.ClaimWait:          None,
		failure.Blocked:            None,
		failure.PRClosed:           None,
		failure.IssueClosed:        None,
		failure.LabelRemoved:       None,
		failure.PRMerged:           None,
		failure.NotHeld:            None,
		failure.Tracker:            Drive,
		failure.Unknown:            Stop,
	}
	seen := map[failure.Class]int{}
	for _, row := range failure.Table() {
		seen[row.Class]++
		if row.Action == "" {
			t.Errorf("%s has no action", row.Class)
		}
		got := ActionFor(row.Class)
		if got != want[row.Class] {
			t.Errorf("ActionFor(%s) = %s, want %s", row.Class, got, want[row.Class])
		}
		if row.Automatic && got == Stop {
			t.Errorf("%s has an automatic action (%s) but leads to a stop", row.Class, row.Action)
		}
		if row.Stop != (got == Stop) {
			t.Errorf("%s: the table's Stop is %v, the action is %s", row.Class, row.Stop, got)
		}
	}
	for c, n := range seen {
		if n != 1 {
			t.Errorf("%s has %d rows, want 1", c, n)
		}
	}
	for c := range want {
		if seen[c] == 0 {
			t.Errorf("%s is not in the table", c)
		}
	}
	if got := ActionFor("disk_full"); got != Stop {
		t.Errorf("ActionFor(a class the table lacks) = %s, want stop", got)
	}
}

func TestTyped(t *testing.T) {
	for _, tc := range []struct {
		result record.Result
		class  string
		want   Decision
	}{
		{record.ResultReady, "", Decision{Action: Ready}},
		{record.ResultYielded, "", Decision{Action: Continue}},
		{record.ResultYielded, "transient", Decision{Class: failure.Transient, Action: Continue}},
		// A stop on a class with an automatic action is continued.
		{record.ResultStopped, "checks_failed", Decision{Class: failure.ChecksFailed, Action: Continue}},
		{record.ResultStopped, "auth", Decision{Class: failure.Auth, Action: Stop}},
		{record.ResultReturned, "plan_wrong", Decision{Class: failure.PlanWrong, Action: ReturnToStage}},
		{record.ResultReturned, "needs_input", Decision{Class: failure.NeedsInput, Action: Ask}},
		{record.ResultStopped, "", Decision{Class: failure.Unknown, Action: Stop,
			Reason: "the Job ended stopped without a failure class"}},
		{record.ResultYielded, "disk_full", Decision{Class: failure.Unknown, Action: Stop,
			Reason: `the Job ended yielded with class "disk_full", which the taxonomy does not have`}},
	} {
		if diff := cmp.Diff(tc.want, Typed(tc.result, tc.class)); diff != "" {
			t.Errorf("Typed(%s, %q) (-want +got):\n%s", tc.result, tc.class, diff)
		}
	}
}

func TestKilled(t *testing.T) {
	v := failure.Verdict{Class: failure.Killed, Reason: "timeout", Evidence: "The job has exceeded", Line: 41}
	for _, tc := range []struct {
		name string
		job  KilledJob
		want []string
	}{
		{"the log", KilledJob{Name: "implement", Conclusion: "cancelled", Verdict: v},
			[]string{`job "implement" concluded cancelled`, "killed (timeout) at log line 41"}},
		{"no conclusion", KilledJob{Name: "implement", Verdict: failure.Verdict{Class: failure.OOM}},
			[]string{"concluded unknown", "its log shows oom"}},
		{"the log gone", KilledJob{Name: "implement", Conclusion: "failure", LogGone: true, LogErr: errors.New("410 Gone"),
			Verdict: failure.Verdict{Class: failure.Killed, Reason: "log_gone"}},
			[]string{"its log is gone (410 Gone)", "classified killed from the job's conclusion (failure) alone", "is lost"}},
		{"the tail lost", KilledJob{Name: "implement", Conclusion: "failure", Verdict: v, TailLost: true},
			[]string{"the runner lost communication", "any call after them is lost"}},
	} {
		d := Killed(tc.job)
		if d.Class != tc.job.Verdict.Class || d.Action != ActionFor(tc.job.Verdict.Class) {
			t.Errorf("%s: Class, Action = %s, %s", tc.name, d.Class, d.Action)
		}
		for _, w := range tc.want {
			if !strings.Contains(d.Reason, w) {
				t.Errorf("%s: Reason = %q, want it to say %q", tc.name, d.Reason, w)
			}
		}
	}
}

func TestEnding(t *testing.T) {
	for _, tc := range []struct {
		e    Ending
		want string
	}{
		{Ending{Result: record.ResultYielded, Class: "transient"}, "yielded (transient)"},
		{Ending{Result: record.ResultReady}, "ready"},
		{Ending{Killed: failure.Killed, KillReason: "timeout"}, "no result, killed (timeout)"},
		{Ending{Killed: failure.OOM}, "no result, oom"},
	} {
		if got := tc.e.String(); got != tc.want {
			t.Errorf("%+v = %q, want %q", tc.e, got, tc.want)
		}
	}
}

func TestRunnerClass(t *testing.T) {
	var ch record.Changes
	ch.SetJobs([]record.JobOutcome{{Job: 1, Result: record.ResultYielded, Failure: "transient"}})
	ch.SetResult(record.ResultStopped)
	ch.SetFailure("auth")
	ch.SetAttempt(2)
	body, err := record.Update("", ch)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := record.Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		job    int
		result record.Result
		want   string
	}{
		{1, record.ResultYielded, "transient"}, // the Job's line
		{2, record.ResultStopped, "auth"},      // the last mark is the Job's
		{2, record.ResultYielded, ""},          // the last mark is another ending
		{3, record.ResultStopped, ""},          // the last mark is an earlier Job's
	} {
		if got := RunnerClass(rec, tc.job, tc.result); got != tc.want {
			t.Errorf("RunnerClass(Job %d, %s) = %q, want %q", tc.job, tc.result, got, tc.want)
		}
	}
}
