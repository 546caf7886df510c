package github

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/roadmap-dev/roadmap/internal/githubfake"
)

func TestDispatchWorkflow(t *testing.T) {
	e := newEnv(t, githubfake.Options{})
	res, err := e.c.DispatchWorkflow(ctx, "roadmap-implement.yml", "main", map[string]any{"issue": "7", "continuation": true})
	if err != nil {
		t.Fatalf("DispatchWorkflow: %v", err)
	}
	d := e.fake.Dispatches()
	if len(d) != 1 || d[0].RunID != res.RunID || res.RunID == 0 || res.URL == "" {
		t.Fatalf("result %+v, dispatches %+v", res, d)
	}
	if diff := cmp.Diff(map[string]any{"issue": "7", "continuation": true}, d[0].Inputs); diff != "" || d[0].Ref != "main" || d[0].Workflow != "roadmap-implement.yml" {
		t.Errorf("dispatch %+v (-want +got inputs):\n%s", d[0], diff)
	}
	if runs := e.fake.Runs(); len(runs) != 1 || runs[0].Status != "queued" {
		t.Errorf("runs %+v: want one queued run", runs)
	}

	// A GitHub that answers 204 (no run details) is success with no id.
	old := newEnv(t, githubfake.Options{NoRunDetails: true})
	res, err = old.c.DispatchWorkflow(ctx, "w.yml", "main", nil)
	if err != nil || res.RunID != 0 {
		t.Errorf("204 dispatch: %+v, %v", res, err)
	}
	if len(old.fake.Dispatches()) != 1 {
		t.Error("the 204 dispatch was not recorded")
	}

	// A dispatch whose answer is lost is not repeated: the error says so.
	e.fake.AddFault(githubfake.Rule{Method: "POST", Path: "/repos/**/dispatches", ApplyThenFail: true, Status: 502})
	_, err = e.c.DispatchWorkflow(ctx, "w.yml", "main", nil)
	if !Indeterminate(err) {
		t.Errorf("lost dispatch: err = %v, want indeterminate", err)
	}
	if got := len(e.fake.Dispatches()); got != 2 {
		t.Errorf("%d dispatches, want 2 (no blind retry)", got)
	}
}

func TestRunJobs(t *testing.T) {
	e := newEnv(t, githubfake.Options{})
	run := e.fake.AddRun(githubfake.Run{WorkflowFile: "roadmap-implement.yml", HeadBranch: "main"})
	id, _ := e.fake.AddJob(run, githubfake.Job{Name: "implement", Status: "completed", Conclusion: "cancelled",
		Steps: []githubfake.Step{{Name: "checkout", Status: "completed", Conclusion: "success"}, {Name: "roadmap implement", Status: "completed", Conclusion: "cancelled"}}})
	id2, _ := e.fake.AddJob(run, githubfake.Job{Name: "report", Status: "in_progress"})
	got, err := e.c.RunJobs(ctx, run)
	if err != nil {
		t.Fatalf("RunJobs: %v", err)
	}
	want := []WorkflowJob{
		{ID: id, Name: "implement", Status: "completed", Conclusion: "cancelled", Steps: []Step{
			{Number: 1, Name: "checkout", Status: "completed", Conclusion: "success"},
			{Number: 2, Name: "roadmap implement", Status: "completed", Conclusion: "cancelled"},
		}},
		{ID: id2, Name: "report", Status: "in_progress"},
	}
	// The fake stamps each job's start; the status line of roadmap console
	// reads it, so it must come through, but its value is the fake's.
	for i := range got {
		if got[i].StartedAt.IsZero() {
			t.Errorf("job %d: no StartedAt", got[i].ID)
		}
		got[i].StartedAt = time.Time{}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("RunJobs (-want +got):\n%s", diff)
	}
	if _, err := e.c.RunJobs(ctx, 123456); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown run: %v, want ErrNotFound", err)
	}
}

func TestJobLog(t *testing.T) {
	e := newEnv(t, githubfake.Options{})
	run := e.fake.AddRun(githubfake.Run{})
	const log = "2099-03-01T12:00:00Z spend {\"usd\":0.01}\n##[error]The operation was canceled.\n"
	id, _ := e.fake.AddJob(run, githubfake.Job{Name: "implement", Status: "completed", Conclusion: "cancelled", Log: log})

	for i := range 2 { // each read gets a fresh one-time URL
		rc, err := e.c.JobLog(ctx, id)
		if err != nil {
			t.Fatalf("JobLog %d: %v", i, err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || string(data) != log {
			t.Errorf("JobLog %d = %q, %v; want %q", i, data, err, log)
		}
	}
	acct := e.c.Requests()
	if got := acct.ByEndpoint["GET /repos/{owner}/{repo}/actions/jobs/{job_id}/logs"].Reads; got != 2 {
		t.Errorf("log API reads: %d, want 2", got)
	}
	if acct.Unmetered != 2 || acct.ByEndpoint["GET {log URL}"].Unmetered != 2 {
		t.Errorf("log downloads: %+v; want 2 unmetered under GET {log URL}", acct)
	}

	// The download dropping once is recovered with a new URL.
	e.fake.AddFault(githubfake.Rule{Method: "GET", Path: "/_logs/*", Call: 1, Drop: true})
	rc, err := e.c.JobLog(ctx, id)
	if err != nil {
		t.Fatalf("JobLog after a dropped download: %v", err)
	}
	data, _ := io.ReadAll(rc)
	rc.Close()
	if string(data) != log {
		t.Errorf("log = %q", data)
	}
	dropped := 0
	for _, r := range e.fake.Requests() {
		if r.Endpoint == "GET /_logs/{token}" && r.Fault == "drop" {
			dropped++
		}
	}
	if dropped != 1 {
		t.Errorf("%d dropped downloads in the fake's log, want 1", dropped)
	}

	running, _ := e.fake.AddJob(run, githubfake.Job{Name: "report", Status: "in_progress"})
	if _, err := e.c.JobLog(ctx, running); !errors.Is(err, ErrNotFound) {
		t.Errorf("log of a running job: %v, want ErrNotFound", err)
	}
}

func TestJobAnnotations(t *testing.T) {
	e := newEnv(t, githubfake.Options{})
	run := e.fake.AddRun(githubfake.Run{WorkflowFile: "roadmap.yml", HeadBranch: "main", Conclusion: "failure"})
	msg := "The self-hosted runner: ci-3 lost communication with the server."
	job, err := e.fake.AddJob(run, githubfake.Job{Name: "implement", Conclusion: "failure", Log: "…\n", Annotations: []string{msg}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.c.JobAnnotations(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != msg {
		t.Errorf("annotations = %q, want [%q]", got, msg)
	}
	if _, err := e.c.JobAnnotations(ctx, 999999); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown job: err = %v, want ErrNotFound", err)
	}
}

// TestRerunFailedJobs: a failed Actions check run is read as a job (its
// run and attempt), re-run, and the re-run's attempt is the next.
func TestRerunFailedJobs(t *testing.T) {
	e := newEnv(t, githubfake.Options{})
	c := e.c
	e.fake.ScriptCI("ci.yml", githubfake.CIJob{Name: "test", Outcomes: []githubfake.CIOutcome{
		{Conclusion: "failure", Log: "npm ERR! code ECONNRESET\n"}, {Conclusion: "success"}}})
	runID, err := e.fake.StartCI("ci.yml", "main")
	if err != nil {
		t.Fatal(err)
	}
	runs := e.fake.Runs()
	head := runs[len(runs)-1].HeadSHA
	sum, err := c.Checks(ctx, head)
	if err != nil {
		t.Fatal(err)
	}
	if sum.State != "failure" || len(sum.Checks) != 1 || sum.Checks[0].App != ActionsApp || sum.Checks[0].ID == 0 {
		t.Fatalf("checks = %+v, want one failed Actions check run with its id", sum)
	}
	job, err := c.Job(ctx, sum.Checks[0].ID)
	if err != nil || job.RunID != runID || job.RunAttempt != 1 {
		t.Fatalf("job = %+v (%v), want attempt 1 of run %d", job, err, runID)
	}
	if err := c.RerunFailedJobs(ctx, runID); err != nil {
		t.Fatal(err)
	}
	sum, err = c.Checks(ctx, head)
	if err != nil || sum.State != "success" {
		t.Fatalf("checks after the re-run = %+v (%v), want success", sum, err)
	}
	if job, _ := c.Job(ctx, sum.Checks[0].ID); job.RunAttempt != 2 {
		t.Errorf("the re-run job's attempt = %d, want 2", job.RunAttempt)
	}
	if err := c.RerunFailedJobs(ctx, 424242); err == nil {
		t.Error("re-running a run that does not exist succeeded")
	}
}

// TestDispatchedRuns: the runs list finds a dispatch that landed, from the
// time it was sent, and not the runs before it or of another event.
func TestDispatchedRuns(t *testing.T) {
	e := newEnv(t, githubfake.Options{})
	e.fake.AddRun(githubfake.Run{WorkflowFile: "roadmap-implement.yml", HeadBranch: "main", Event: "issues", Status: "completed", CreatedAt: e.clock.Now()})
	if _, err := e.c.DispatchWorkflow(ctx, "roadmap-implement.yml", "main", map[string]any{"issue": "7", "attempt": "2"}); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Minute)
	since := e.clock.Now()
	runs, err := e.c.DispatchedRuns(ctx, "roadmap-implement.yml", since)
	if err != nil || len(runs) != 0 {
		t.Fatalf("before the second dispatch: %+v, %v; want none", runs, err)
	}
	res, err := e.c.DispatchWorkflow(ctx, "roadmap-implement.yml", "main", map[string]any{"issue": "7", "attempt": "3"})
	if err != nil {
		t.Fatal(err)
	}
	runs, err = e.c.DispatchedRuns(ctx, "roadmap-implement.yml", since)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].ID != res.RunID || runs[0].Event != "workflow_dispatch" || runs[0].Status != "queued" || !runs[0].CreatedAt.Equal(since) {
		t.Errorf("runs %+v, want the one dispatched at %s (run %d)", runs, since, res.RunID)
	}
	// A workflow without run-name: GitHub titles the run with its name.
	if runs[0].DisplayTitle != "roadmap-implement" {
		t.Errorf("display title %q, want the workflow's name", runs[0].DisplayTitle)
	}
	// With a run-name, the title GitHub evaluated for the run.
	e.fake.SetRunName("roadmap-implement.yml", "roadmap #{issue} implement")
	e.clock.Advance(time.Minute)
	since = e.clock.Now()
	if _, err := e.c.DispatchWorkflow(ctx, "roadmap-implement.yml", "main", map[string]any{"issue": "8", "attempt": "2"}); err != nil {
		t.Fatal(err)
	}
	runs, err = e.c.DispatchedRuns(ctx, "roadmap-implement.yml", since)
	if err != nil || len(runs) != 1 || runs[0].DisplayTitle != "roadmap #8 implement" {
		t.Errorf("runs %+v, %v; want one titled %q", runs, err, "roadmap #8 implement")
	}
	if _, err := e.c.DispatchedRuns(ctx, "absent.yml", since); !errors.Is(err, ErrNotFound) {
		t.Errorf("an absent workflow: %v, want not found", err)
	}
}
