package report

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// calls returns n model calls with different, realistic spends.
func calls(n, seed int) []record.Spend {
	out := make([]record.Spend, n)
	for i := range out {
		k := int64(seed*31 + i*17)
		out[i] = record.Spend{TokensIn: 900 + k*37%2600, TokensOut: 80 + k*13%600,
			USD: float64(150+k*7%400) / 1e6, ModelCalls: 1}
	}
	return out
}

func sum(parts ...[]record.Spend) record.Spend {
	var s record.Spend
	for _, p := range parts {
		for _, c := range p {
			s = s.Add(c)
		}
	}
	return s
}

// killedLog is exit137-no-evidence.log with the Job's spend lines printed
// before the kill, each with the runner's timestamp, plus a tool echoing a
// spend line inside its own output (which is not spend).
func killedLog(t *testing.T, lines []string) string {
	t.Helper()
	log := readLog(t, "exit137-no-evidence.log")
	kill := "##[error]Process completed with exit code 137."
	i := strings.Index(log, kill)
	if i < 0 {
		t.Fatal("the log has no exit 137 line")
	}
	i = strings.LastIndex(log[:i], "\n") + 1
	var b strings.Builder
	for k, l := range lines {
		fmt.Fprintf(&b, "2026-11-29T10:15:%02d.%07dZ %s\n", 38+k%8, k, l)
	}
	fmt.Fprintf(&b, "2026-11-29T10:15:46.9000000Z go test: fixture says: %s\n",
		strings.Replace(lines[len(lines)-1], `"call":`, `"call":99`, 1))
	return log[:i] + b.String() + log[i:]
}

func usdEqual(a, b float64, n int) bool { return math.Abs(a-b) <= float64(n)*1e-9 }

func spendEqual(a, b record.Spend) bool {
	return a.TokensIn == b.TokensIn && a.TokensOut == b.TokensOut && a.ModelCalls == b.ModelCalls &&
		usdEqual(a.USD, b.USD, a.ModelCalls+b.ModelCalls)
}

func TestKilledSpendRecovered(t *testing.T) {
	job1 := calls(6, 1)
	job2 := calls(9, 2) // the killed Job: calls 1..5 before its group mark, 6..9 after

	// record builds the record as the runner leaves it after Job 1 and, when
	// marked > 0, after Job 2's group mark that counted its first marked calls.
	recordAfter := func(marked int, runID int64) record.Changes {
		var ch record.Changes
		s1 := sum(job1)
		ch.SetResult(record.ResultYielded)
		ch.SetAttempt(1)
		ch.SetGroup(1)
		ch.SetSpend(s1)
		jobs := []record.JobOutcome{{Job: 1, RunID: 9001, Result: record.ResultYielded, Group: 1, Spend: s1}}
		if marked > 0 {
			s2 := sum(job2[:marked])
			ch.SetAttempt(2)
			ch.SetGroup(2)
			ch.SetSpend(s1.Add(s2))
			jobs = append(jobs, record.JobOutcome{Job: 2, RunID: runID, Group: 2, Spend: s2})
		}
		ch.SetJobs(jobs)
		return ch
	}

	tests := []struct {
		name   string
		marked int // Job 2's model calls its last mark counted
	}{
		{"killed between two group marks", 5},
		{"killed before its first mark", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			log := killedLog(t, spendLines(t, 2, 2, job2, 1))
			runID := e.run(t, "failure", log)
			n := e.issue(t, recordAfter(tc.marked, runID), "roadmap:implement")
			o := e.options(n, runID)
			o.JobResult = "failure"
			out, err := Run(ctx, o)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if out.Class != failure.Killed || out.Job != 2 {
				t.Errorf("Class, Job = %s, %d; want killed, 2", out.Class, out.Job)
			}
			every := sum(job1, job2) // every model call made
			rec := e.record(t, n)
			got, _ := rec.Spend()
			if !spendEqual(got, every) {
				t.Errorf("implement.spend = %+v, want the sum of every model call %+v", got, every)
			}
			if want := sum(job2[tc.marked:]); !spendEqual(out.SpendRecovered, want) {
				t.Errorf("SpendRecovered = %+v, want the calls after the mark %+v", out.SpendRecovered, want)
			}
			jobs, _ := rec.Jobs()
			if len(jobs) != 2 {
				t.Fatalf("implement.jobs = %+v, want two lines", jobs)
			}
			line := jobs[1]
			if line.Job != 2 || line.Result != "" || line.Failure != "killed" || !spendEqual(line.Spend, sum(job2)) {
				t.Errorf("Job 2's line = %+v, want no result, killed, the spend of its 9 calls %+v", line, sum(job2))
			}
			var lines record.Spend
			for _, j := range jobs {
				lines = lines.Add(j.Spend)
			}
			if !spendEqual(lines, got) {
				t.Errorf("the lines of implement.jobs sum to %+v, implement.spend is %+v", lines, got)
			}
			if want := []map[string]any{{"issue": itoa(n), "attempt": "3", "record-comment": e.recordCommentInput(t, n)}}; !cmp.Equal(e.dispatchInputs(), want) {
				t.Errorf("dispatches = %v, want %v", e.dispatchInputs(), want)
			}

			// Reporting the same Job again adds nothing.
			before := e.body(t, n)
			again, err := Run(ctx, o)
			if err != nil {
				t.Fatalf("Run again: %v", err)
			}
			if e.body(t, n) != before || !again.SpendRecovered.Zero() {
				t.Errorf("a second report changed the record (recovered %+v):\n%s", again.SpendRecovered, cmp.Diff(before, e.body(t, n)))
			}
		})
	}

	for _, status := range []int{404, 410} {
		t.Run(fmt.Sprintf("log gone (%d): the record says the spend is lost", status), func(t *testing.T) {
			e := newEnv(t)
			runID := e.run(t, "cancelled", killedLog(t, spendLines(t, 2, 2, job2, 1)))
			e.fake.AddFault(githubfake.Rule{Method: "GET", Path: "/repos/acme/widgets/actions/jobs/*/logs", Status: status})
			n := e.issue(t, recordAfter(5, runID), "roadmap:implement")
			o := e.options(n, runID)
			o.JobResult = "cancelled"
			out, err := Run(ctx, o)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if !out.SpendLost || out.Class != failure.Killed || out.Action != ActionContinue {
				t.Errorf("SpendLost, Class, Action = %v, %s, %s; want true, killed (from the conclusion), continue",
					out.SpendLost, out.Class, out.Action)
			}
			if !strings.Contains(out.Reason, "spend") || !strings.Contains(out.Reason, "lost") {
				t.Errorf("Reason = %q, want it to say the spend is lost", out.Reason)
			}
			rec := e.record(t, n)
			jobs, _ := rec.Jobs()
			fail, _ := rec.Failure()
			spend, _ := rec.Spend()
			if len(jobs) != 2 || jobs[1].Failure != spendLost || fail != "killed" {
				t.Errorf("implement.jobs = %+v, implement.failure = %q; want Job 2's line to say %s and the class killed", jobs, fail, spendLost)
			}
			if want := sum(job1, job2[:5]); !spendEqual(spend, want) {
				t.Errorf("implement.spend = %+v, want the marked spend %+v", spend, want)
			}
		})
	}
}
