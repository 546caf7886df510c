package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/redact"
)

// TestReportNoResult: a Job that wrote no result gets its class from its job
// log and conclusion, and the class's one action follows. The logs are the
// real-shaped ones in testdata/logs; the conclusions are what GitHub gives
// such a job (a timeout and a cancel conclude cancelled).
func TestReportNoResult(t *testing.T) {
	tests := []struct {
		name       string
		log        string
		conclusion string
		class      failure.Class
		kill       string // the kill reason, for killed
		action     Action
	}{
		{"OOM with evidence", "oom.log", "failure", failure.OOM, "", ActionContinue},
		{"exit 137 without evidence is killed, not oom", "exit137-no-evidence.log", "failure", failure.Killed, failure.ReasonSIGKILL, ActionContinue},
		{"timeout", "timeout.log", "cancelled", failure.Killed, failure.ReasonTimeout, ActionContinue},
		{"cancel", "cancelled.log", "cancelled", failure.Killed, failure.ReasonCancelled, ActionContinue},
		{"runner lost", "runner-lost.log", "failure", failure.Killed, failure.ReasonRunnerLost, ActionContinue},
		{"runner lost with exit 137 is not oom", "runner-lost-137.log", "failure", failure.Killed, failure.ReasonRunnerLost, ActionContinue},
		{"rate limit", "rate-limited.log", "failure", failure.RateLimited, "", ActionContinue},
		{"checks failed", "checks-failed.log", "failure", failure.ChecksFailed, "", ActionContinue},
		{"auth", "auth.log", "failure", failure.Auth, "", ActionStop},
		{"conflict", "conflict.log", "failure", failure.Conflict, "", ActionContinue},
		{"transient 5xx", "transient-5xx.log", "failure", failure.Transient, "", ActionContinue},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			log := readLog(t, tc.log)
			runID := e.run(t, tc.conclusion, log)
			n := e.issue(t, base(), "roadmap:implement")
			o := e.options(n, runID)
			o.JobResult = tc.conclusion // the needs context says failure or cancelled; the outputs are empty
			out, err := Run(ctx, o)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if out.Class != tc.class || out.Action != tc.action {
				t.Errorf("Class, Action = %s, %s; want %s, %s (evidence %q)", out.Class, out.Action, tc.class, tc.action, out.Evidence)
			}
			if tc.kill != "" && out.KillReason != tc.kill {
				t.Errorf("KillReason = %q, want %q", out.KillReason, tc.kill)
			}
			if out.Result != "" || out.Job != 2 {
				t.Errorf("Result, Job = %q, %d; want no result, Job 2 (the record's attempt 1 + 1)", out.Result, out.Job)
			}
			// The evidence is a real line of the log (masked, so compare its start).
			if out.Evidence == "" || out.EvidenceLine < 1 || !strings.Contains(log, out.Evidence[:min(len(out.Evidence), 40)]) {
				t.Errorf("Evidence = %q at line %d, want a line of %s", out.Evidence, out.EvidenceLine, tc.log)
			}

			rec := e.record(t, n)
			if _, has := rec.Result(); has && !out.Stopped {
				t.Error("implement.result is still set; the last Job wrote none")
			}
			jobs, _ := rec.Jobs()
			// At: report wrote the line, at its clock's time.
			wantLine := record.JobOutcome{Job: 2, RunID: runID, Failure: string(tc.class), Group: 1, At: t0.Unix()}
			if tc.action == ActionContinue {
				wantLine.Dispatching = t0.Unix() // the intent mark, written before the dispatch
			}
			if len(jobs) != 2 || !cmp.Equal(jobs[1], wantLine) {
				t.Errorf("implement.jobs = %+v, want Job 2's line %+v", jobs, wantLine)
			}
			fail, _ := rec.Failure()
			switch tc.action {
			case ActionContinue:
				if fail != string(tc.class) {
					t.Errorf("implement.failure = %q, want %s", fail, tc.class)
				}
				want := []map[string]any{{"issue": itoa(n), "attempt": "3", "record-comment": e.recordCommentInput(t, n)}}
				if diff := cmp.Diff(want, e.dispatchInputs()); diff != "" {
					t.Errorf("dispatch inputs (-want +got):\n%s", diff)
				}
				if out.Stopped || e.hasLabel(n, "roadmap:stopped") {
					t.Errorf("a class with an automatic action stopped the item")
				}
			case ActionStop:
				stopped, _ := rec.Stopped()
				if fail != string(tc.class) || stopped != "job implement: Run roadmap implement" {
					t.Errorf("implement.failure, stopped = %q, %q; want %s, the failed step", fail, stopped, tc.class)
				}
				if !e.hasLabel(n, "roadmap:stopped") || len(e.fake.Dispatches()) != 0 {
					t.Errorf("labels %v, dispatches %d; want roadmap:stopped and none", e.fake.Labels(n), len(e.fake.Dispatches()))
				}
				c := e.commentWith(n, MarkerStop)
				// The evidence as the comment shows it: neutralised (its
				// "##[error]" can never be a workflow command).
				if !strings.Contains(c, redact.Neutralise(out.Evidence, e.gh.ServerHost())) || !strings.Contains(c, "job log line") {
					t.Errorf("stop comment lacks the evidence %q:\n%s", out.Evidence, c)
				}
				if got, want := e.statuses(headSHA), []string{"failure"}; !cmp.Equal(got, want) {
					t.Errorf("roadmap/implement = %v, want %v", got, want)
				}
			}
		})
	}

	t.Run("a lost runner is read from the job's annotations", func(t *testing.T) {
		// GitHub puts the lost-communication message in the job's annotations,
		// not its log; report reads them with the log.
		e := newEnv(t)
		lost := "The self-hosted runner: ci-runner-3 lost communication with the server. Verify the machine is running and has a healthy network connection."
		id := e.fake.AddRun(githubfake.Run{WorkflowFile: workflow, HeadBranch: ref, Conclusion: "failure"})
		if _, err := e.fake.AddJob(id, githubfake.Job{Name: "implement", Conclusion: "failure",
			Log: readLog(t, "lost-communication.log"), Annotations: []string{lost}}); err != nil {
			t.Fatal(err)
		}
		n := e.issue(t, base())
		o := e.options(n, id)
		o.JobResult = "failure"
		out, err := Run(ctx, o)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if out.Class != failure.Killed || out.Action != ActionContinue || out.Stopped {
			t.Errorf("Class, Action, Stopped = %s, %s, %v; want killed, continue, false (evidence %q)", out.Class, out.Action, out.Stopped, out.Evidence)
		}
		if len(e.fake.Dispatches()) != 1 {
			t.Errorf("%d continuations dispatched, want 1", len(e.fake.Dispatches()))
		}
	})

	t.Run("a lost runner with nothing in the log or the annotations is not guessed", func(t *testing.T) {
		// With a failure conclusion and no evidence anywhere the class is
		// unknown, a stop: never retried blindly.
		e := newEnv(t)
		runID := e.run(t, "failure", readLog(t, "lost-communication.log"))
		n := e.issue(t, base())
		o := e.options(n, runID)
		o.JobResult = "failure"
		out, err := Run(ctx, o)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if out.Class != failure.Unknown || !out.Stopped {
			t.Errorf("Class, Stopped = %s, %v; want unknown, true", out.Class, out.Stopped)
		}
	})

	t.Run("a run without the implement job is an error, not a guess", func(t *testing.T) {
		e := newEnv(t)
		id := e.fake.AddRun(githubfakeRun())
		n := e.issue(t, base())
		o := e.options(n, id)
		o.JobResult = "failure"
		if _, err := Run(ctx, o); err == nil || !strings.Contains(err.Error(), `no job named "implement"`) {
			t.Errorf("Run = %v, want an error naming the missing job", err)
		}
		if len(e.fake.Dispatches()) != 0 {
			t.Error("dispatched without knowing how the Job ended")
		}
	})
}

// TestReportLogSections: reading a killed Job's log and the action are
// sections of report's job log; the killed Job's log, hostile text, cannot
// open one.
func TestReportLogSections(t *testing.T) {
	e := newEnv(t)
	runID := e.run(t, "failure", readLog(t, "oom.log")+"::group::from the killed Job\n")
	n := e.issue(t, base(), "roadmap:implement")
	o := e.options(n, runID)
	o.JobResult = "failure"
	var log bytes.Buffer
	o.Log = &log
	if _, err := Run(ctx, o); err != nil {
		t.Fatal(err)
	}
	var opened []string
	depth := 0
	for _, line := range strings.Split(log.String(), "\n") {
		switch {
		case strings.HasPrefix(line, "::group::"):
			if depth++; depth > 1 {
				t.Errorf("a section opened inside another: %q", line)
			}
			opened = append(opened, strings.TrimPrefix(line, "::group::"))
		case line == "::endgroup::":
			depth--
		}
	}
	want := []string{fmt.Sprintf("report: read the log of the Job that wrote no result (run %d)", runID), "report: continue"}
	if depth != 0 || strings.Join(opened, "|") != strings.Join(want, "|") {
		t.Errorf("sections %q (open at the end: %d), want %q\n%s", opened, depth, want, log.String())
	}
}
