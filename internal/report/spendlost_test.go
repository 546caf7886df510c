package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/redact"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// bookedLines are the spend lines a Job prints for calls, as the kernel's
// observer prints them through the one writer: a booking before each
// request (its estimate: the request's input, max_tokens out) and a
// settling line when it ended. inFlight more calls are booked and never
// settled: the Job was killed while they were out.
func bookedLines(t *testing.T, job, group int, calls []record.Spend, inFlight int) []string {
	t.Helper()
	rec, err := trace.NewRecorder(&bytes.Buffer{}, redact.New(redact.Config{}), func() time.Time { return t0 }, job)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := range len(calls) + inFlight {
		booking := estimateOf(i)
		out = append(out, rec.SpendLine(trace.SpendEntry{Job: job, Group: group, Call: i + 1, Model: "gpt-4o-mini", Booked: true,
			TokensIn: booking.TokensIn, TokensOut: booking.TokensOut, USD: booking.USD}))
		if i < len(calls) {
			c := calls[i]
			out = append(out, rec.SpendLine(trace.SpendEntry{Job: job, Group: group, Call: i + 1, Model: "gpt-4o-mini",
				TokensIn: c.TokensIn, TokensOut: c.TokensOut, USD: c.USD}))
		}
	}
	return out
}

// estimateOf is the booking of call i+1: more than the call can cost, as the
// agent's estimate is (a third of the request's bytes in, max_tokens out).
func estimateOf(i int) record.Spend {
	return record.Spend{TokensIn: 4000 + int64(i)*100, TokensOut: 4096, USD: 0.0027, ModelCalls: 1}
}

// lostLog is the log GitHub keeps of a Job whose runner lost communication:
// lost-communication.log, whose upload stopped after the lines given.
func lostLog(t *testing.T, lines []string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(readLog(t, "lost-communication.log"))
	for k, l := range lines {
		fmt.Fprintf(&b, "\n2026-11-29T10:15:%02d.%07dZ %s", 43+k%8, k, l)
	}
	return b.String()
}

// TestSpendLostOnlyWhenUnknown: report books what a killed Job's log shows,
// a call booked and never settled at its booking, and says spend_lost only
// when it cannot know what the Job spent: the log is gone, or the runner
// lost communication and the log's tail with it. A log the runner finished
// (a SIGKILL, a shutdown signal) is whole, so nothing is lost.
func TestSpendLostOnlyWhenUnknown(t *testing.T) {
	job2 := calls(3, 7)
	lost := "The self-hosted runner: ci-runner-3 lost communication with the server. Verify the machine is running and has a healthy network connection."
	prior := record.Spend{TokensIn: 5200, TokensOut: 1300, USD: 0.0123, ModelCalls: 6} // base()'s Job 1
	tests := []struct {
		name        string
		log         func(t *testing.T) string
		annotations []string
		conclusion  string
		gone        int // the log's download answers this status
		// What report must have booked from the log, how many calls at their
		// booking, and whether it says the rest is unknown.
		recovered record.Spend
		estimated int
		lost      bool
	}{
		{name: "SIGKILL with a call in flight: its booking is counted, nothing lost",
			log:        func(t *testing.T) string { return killedLog(t, bookedLines(t, 2, 2, job2, 1)) },
			conclusion: "failure", recovered: sum(job2, []record.Spend{estimateOf(3)}), estimated: 1},
		{name: "SIGKILL between calls: exact, nothing lost",
			log:        func(t *testing.T) string { return killedLog(t, bookedLines(t, 2, 2, job2, 0)) },
			conclusion: "failure", recovered: sum(job2)},
		{name: "a shutdown signal: the runner finished the log, nothing lost",
			log: func(t *testing.T) string {
				log := readLog(t, "runner-lost.log")
				i := strings.Index(log, "2026-11-29T10:15:42.0770000Z ##[error]The runner has received a shutdown signal")
				var b strings.Builder
				for k, l := range bookedLines(t, 2, 2, job2, 1) {
					fmt.Fprintf(&b, "2026-11-29T10:15:41.%07dZ %s\n", k, l)
				}
				return log[:i] + b.String() + log[i:]
			},
			conclusion: "failure", recovered: sum(job2, []record.Spend{estimateOf(3)}), estimated: 1},
		{name: "runner lost communication: the log's lines are counted, the rest is unknown",
			log:         func(t *testing.T) string { return lostLog(t, bookedLines(t, 2, 2, job2[:2], 1)) },
			annotations: []string{lost}, conclusion: "failure",
			recovered: sum(job2[:2], []record.Spend{estimateOf(2)}), estimated: 1, lost: true},
		{name: "log gone: nothing is known past the last mark",
			log:        func(t *testing.T) string { return killedLog(t, bookedLines(t, 2, 2, job2, 1)) },
			conclusion: "failure", gone: 410, lost: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			id := e.fake.AddRun(githubfake.Run{WorkflowFile: workflow, HeadBranch: ref, Conclusion: tc.conclusion})
			if _, err := e.fake.AddJob(id, githubfake.Job{Name: "implement", Conclusion: tc.conclusion, Log: tc.log(t), Annotations: tc.annotations}); err != nil {
				t.Fatal(err)
			}
			if tc.gone != 0 {
				e.fake.AddFault(githubfake.Rule{Method: "GET", Path: "/repos/acme/widgets/actions/jobs/*/logs", Status: tc.gone})
			}
			n := e.issue(t, base(), "roadmap:implement")
			o := e.options(n, id)
			o.JobResult, o.Attempt = "failure", 2
			// Job 2 is the last the cap allows: the stop comment shows what
			// report booked.
			o.MaxJobs = 2
			out, err := Run(ctx, o)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if out.SpendLost != tc.lost {
				t.Errorf("spend_lost = %v, want %v (reason %q)", out.SpendLost, tc.lost, out.Reason)
			}
			if !spendEqual(out.SpendRecovered, tc.recovered) || out.SpendEstimated.ModelCalls != tc.estimated {
				t.Errorf("recovered %+v (%d estimated), want %+v (%d estimated)", out.SpendRecovered, out.SpendEstimated.ModelCalls, tc.recovered, tc.estimated)
			}
			rec := e.record(t, n)
			if got, _ := rec.Spend(); !spendEqual(got, prior.Add(tc.recovered)) {
				t.Errorf("implement.spend = %+v, want Job 1's and what the log shows %+v", got, prior.Add(tc.recovered))
			}
			if got := rec.SpendEstimated(); got != tc.estimated {
				t.Errorf("implement.spend_estimated = %d, want %d", got, tc.estimated)
			}
			jobs, _ := rec.Jobs()
			line, _ := findLine(jobs, func(j record.JobOutcome) bool { return j.Job == 2 })
			if (line.Failure == spendLost) != tc.lost {
				t.Errorf("Job 2's line says %q; spend lost is %v", line.Failure, tc.lost)
			}
			stop := e.commentWith(n, MarkerStop)
			if got := strings.Contains(stop, "**Spend lost:**"); got != tc.lost {
				t.Errorf("the stop comment says spend lost: %v, want %v:\n%s", got, tc.lost, stop)
			}
			if got := strings.Contains(stop, "**Spend estimated:** 1 of the item's model calls"); got != (tc.estimated == 1) {
				t.Errorf("the stop comment flags the estimate: %v, want %v:\n%s", got, tc.estimated == 1, stop)
			}
			if got := strings.Contains(e.body(t, n), "1 estimated)"); got != (tc.estimated == 1) {
				t.Errorf("the record comment flags the estimate: %v, want %v:\n%s", got, tc.estimated == 1, e.body(t, n))
			}

			// A second report for the same Job books nothing again.
			before := e.body(t, n)
			if _, err := Run(ctx, o); err != nil {
				t.Fatalf("Run again: %v", err)
			}
			if after := e.body(t, n); after != before {
				t.Errorf("a second report changed the record:\n%s\nwas\n%s", after, before)
			}
		})
	}
}
