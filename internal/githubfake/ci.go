package githubfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

const docsRerun = "https://docs.github.com/rest/actions/workflow-runs#re-run-failed-jobs-from-a-workflow-run"

// CIJob is one job of a scripted CI workflow. Each time the job runs (a new
// run of the workflow, or a re-run of the failed job) it takes the next of
// Outcomes; the last one repeats. A job with no outcomes succeeds.
type CIJob struct {
	Name     string      `json:"name"`
	Outcomes []CIOutcome `json:"outcomes"`
	// Ran counts the times the job ran, which picks the next outcome.
	Ran int `json:"ran"`
}

// CIOutcome is how one execution of a scripted job ends.
type CIOutcome struct {
	// Conclusion is success, failure, cancelled or timed_out ("" is success).
	Conclusion string `json:"conclusion"`
	// Log is the job's log, served by the job-log endpoint once it completed.
	Log string `json:"log"`
	// Annotations are the messages on the job's check run.
	Annotations []string `json:"annotations,omitempty"`
	// Duration is how long the job stays in_progress, on the fake's clock.
	Duration time.Duration `json:"duration"`
}

// ScriptCI makes workflow file (e.g. "ci.yml") a CI the fake plays: a
// dispatch of it on a branch, or StartCI, creates a run on the branch's head
// with a job and a check run (the job's id, as on GitHub) per CIJob; the
// check runs complete with the scripted outcomes; rerun-failed-jobs runs the
// failed jobs again as the run's next attempt.
func (f *Fake) ScriptCI(workflow string, jobs ...CIJob) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.st.CI == nil {
		f.st.CI = map[string][]*CIJob{}
	}
	var list []*CIJob
	for _, j := range jobs {
		list = append(list, &j)
	}
	f.st.CI[workflow] = list
}

// StartCI runs the scripted workflow on branch's head as a push would, and
// returns the run's id.
func (f *Fake) StartCI(workflow, branch string) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.st.CI[workflow] == nil {
		return 0, fmt.Errorf("githubfake: %s is not a scripted CI workflow", workflow)
	}
	if !f.hasRef(branch) {
		return 0, fmt.Errorf("githubfake: no branch %s", branch)
	}
	sha := f.branchSHA(branch)
	run := &Run{ID: f.st.id(), WorkflowFile: workflow, HeadBranch: branch, HeadSHA: sha, Event: "push",
		Status: "in_progress", RunAttempt: 1, CreatedAt: f.stamp()}
	f.st.Runs = append(f.st.Runs, run)
	f.startCIJobs(run, nil)
	return run.ID, nil
}

// startCIJobs starts run's scripted jobs, those named in only when only is
// not nil. f.mu is held.
func (f *Fake) startCIJobs(run *Run, only map[string]bool) {
	for _, cj := range f.st.CI[run.WorkflowFile] {
		if only != nil && !only[cj.Name] {
			continue
		}
		out := CIOutcome{}
		if n := len(cj.Outcomes); n > 0 {
			out = cj.Outcomes[min(cj.Ran, n-1)]
		}
		cj.Ran++
		if out.Conclusion == "" {
			out.Conclusion = "success"
		}
		now := f.stamp()
		j := &Job{ID: f.st.id(), RunID: run.ID, RunAttempt: run.RunAttempt, HeadSHA: run.HeadSHA, Name: cj.Name,
			Status: "in_progress", StartedAt: now, Log: out.Log, Annotations: out.Annotations,
			Planned: out.Conclusion, Until: f.clock.Now().Add(out.Duration)}
		f.st.Jobs = append(f.st.Jobs, j)
		f.st.CheckRuns = append(f.st.CheckRuns, &CheckRun{ID: j.ID, SHA: run.HeadSHA, Name: cj.Name, Status: "in_progress"})
	}
	run.Status, run.Conclusion = "in_progress", ""
	f.settleCI()
}

// settleCI completes the scripted jobs whose time has come, their check
// runs and their runs. f.mu is held.
func (f *Fake) settleCI() {
	now := f.clock.Now()
	for _, j := range f.st.Jobs {
		if j.Planned == "" || j.Status == "completed" || now.Before(j.Until) {
			continue
		}
		j.Status, j.Conclusion = "completed", j.Planned
		for _, cr := range f.st.CheckRuns {
			if cr.ID == j.ID {
				cr.Status, cr.Conclusion = "completed", j.Planned
			}
		}
	}
	for _, r := range f.st.Runs {
		if r.Status == "completed" || f.st.CI[r.WorkflowFile] == nil {
			continue
		}
		done, failed := true, false
		for _, j := range f.latestJobs(r) {
			switch {
			case j.Status != "completed":
				done = false
			case j.Conclusion != "success" && j.Conclusion != "skipped" && j.Conclusion != "neutral":
				failed = true
			}
		}
		if done {
			r.Status, r.Conclusion = "completed", "success"
			if failed {
				r.Conclusion = "failure"
			}
		}
	}
}

// latestJobs are run's jobs, the newest attempt of each name. f.mu is held.
func (f *Fake) latestJobs(r *Run) []*Job {
	latest := map[string]*Job{}
	var order []string
	for _, j := range f.st.Jobs {
		if j.RunID != r.ID {
			continue
		}
		if cur, ok := latest[j.Name]; !ok || j.ID > cur.ID {
			if !ok {
				order = append(order, j.Name)
			}
			latest[j.Name] = j
		}
	}
	out := make([]*Job, 0, len(order))
	for _, n := range order {
		out = append(out, latest[n])
	}
	return out
}

// getJob answers a workflow job by id.
func (f *Fake) getJob(c *call) reply {
	f.settleCI()
	id, _ := strconv.ParseInt(c.params["job_id"], 10, 64)
	j := f.findJob(id)
	if j == nil {
		return notFound()
	}
	return reply{status: http.StatusOK, body: f.jobJSON(c.base, j)}
}

// rerunFailedJobs re-runs the failed jobs of a completed run as its next
// attempt (201). A run still in progress cannot be re-run (403, as GitHub
// answers); a run with no failed job is accepted and changes nothing.
func (f *Fake) rerunFailedJobs(c *call) reply {
	f.settleCI()
	id, _ := strconv.ParseInt(c.params["run_id"], 10, 64)
	run := f.findRun(id)
	if run == nil {
		return notFound()
	}
	if len(c.body) > 0 {
		var in map[string]any
		if err := json.Unmarshal(c.body, &in); err != nil {
			return reply{status: http.StatusBadRequest, body: map[string]any{"message": "Problems parsing JSON", "documentation_url": docsRerun}}
		}
	}
	if run.Status != "completed" {
		return reply{status: http.StatusForbidden, body: map[string]any{
			"message": "This workflow is already running", "documentation_url": docsRerun}}
	}
	failed := map[string]bool{}
	for _, j := range f.latestJobs(run) {
		if j.Conclusion != "success" && j.Conclusion != "skipped" && j.Conclusion != "neutral" {
			failed[j.Name] = true
		}
	}
	if len(failed) == 0 {
		return reply{status: http.StatusCreated, body: map[string]any{}}
	}
	run.RunAttempt = max(run.RunAttempt, 1) + 1
	f.st.Reruns = append(f.st.Reruns, Rerun{RunID: run.ID, Attempt: run.RunAttempt, At: f.stamp()})
	if f.st.CI[run.WorkflowFile] != nil {
		f.startCIJobs(run, failed)
	}
	return reply{status: http.StatusCreated, body: map[string]any{}}
}

// Reruns returns every accepted rerun-failed-jobs request, oldest first.
func (f *Fake) Reruns() []Rerun {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Rerun(nil), f.st.Reruns...)
}

// ciHead is the SHA a dispatch on ref runs at. f.mu is held.
func (f *Fake) ciHead(ref string) string {
	return f.branchSHA(strings.TrimPrefix(ref, "refs/heads/"))
}
