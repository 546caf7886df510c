package githubfake

import (
	"io"
	"net/http"
	"testing"
	"time"

	gogithub "github.com/google/go-github/v66/github"
)

// TestScriptedCI: a dispatch of a scripted workflow on a branch creates a
// run with a job whose check run (the job's id) is on the branch's head; it
// completes with the scripted log; rerun-failed-jobs runs the failed job as
// the run's next attempt, whose check run hides the failed one in the
// default (latest) listing.
func TestScriptedCI(t *testing.T) {
	e := newAPIEnv(t, Options{Clock: NewManualClock(t0)})
	clock := e.h.f.clock.(*ManualClock)
	const flaky = "npm ERR! code ECONNRESET\n"
	e.h.f.ScriptCI("ci.yml", CIJob{Name: "test", Outcomes: []CIOutcome{
		{Conclusion: "failure", Log: flaky, Duration: time.Minute},
		{Conclusion: "success", Duration: time.Minute},
	}})
	resp, err := e.gh.Actions.CreateWorkflowDispatchEventByFileName(e.ctx, "acme", "widgets", "ci.yml",
		gogithub.CreateWorkflowDispatchEventRequest{Ref: "main"})
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("dispatch: %v %v", resp, err)
	}
	runs := e.h.f.Runs()
	run := runs[len(runs)-1]
	if run.HeadSHA == "" || run.RunAttempt != 1 {
		t.Fatalf("run = %+v, want one at the branch's head, attempt 1", run)
	}
	list := func(filter string) []*gogithub.CheckRun {
		t.Helper()
		res, _, err := e.gh.Checks.ListCheckRunsForRef(e.ctx, "acme", "widgets", run.HeadSHA, &gogithub.ListCheckRunsOptions{Filter: gogithub.String(filter)})
		if err != nil {
			t.Fatal(err)
		}
		return res.CheckRuns
	}
	if crs := list("latest"); len(crs) != 1 || crs[0].GetStatus() != "in_progress" || crs[0].GetApp().GetSlug() != "github-actions" {
		t.Fatalf("check runs before the job ends = %+v, want one in progress by github-actions", crs)
	}
	clock.Advance(time.Minute)
	crs := list("latest")
	if len(crs) != 1 || crs[0].GetConclusion() != "failure" {
		t.Fatalf("check runs = %+v, want the job's failure", crs)
	}
	job := crs[0].GetID()
	loc, _, err := e.gh.Actions.GetWorkflowJobLogs(e.ctx, "acme", "widgets", job, 1)
	if err != nil {
		t.Fatal(err)
	}
	got, err := http.Get(loc.String())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(got.Body)
	got.Body.Close()
	if string(body) != flaky {
		t.Errorf("the job's log = %q, want the scripted %q", body, flaky)
	}
	if _, err := e.gh.Actions.RerunFailedJobsByID(e.ctx, "acme", "widgets", run.ID); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute)
	crs = list("latest")
	if len(crs) != 1 || crs[0].GetConclusion() != "success" || crs[0].GetID() == job {
		t.Fatalf("latest check runs after the re-run = %+v, want the re-run's success only", crs)
	}
	if all := list("all"); len(all) != 2 {
		t.Errorf("filter=all lists %d check runs, want both attempts", len(all))
	}
	j, _, err := e.gh.Actions.GetWorkflowJobByID(e.ctx, "acme", "widgets", crs[0].GetID())
	if err != nil || j.GetRunAttempt() != 2 || j.GetRunID() != run.ID {
		t.Errorf("the re-run job = %v (%v), want attempt 2 of run %d", j, err, run.ID)
	}
	if rr := e.h.f.Reruns(); len(rr) != 1 || rr[0].RunID != run.ID || rr[0].Attempt != 2 {
		t.Errorf("reruns = %+v", rr)
	}
}
