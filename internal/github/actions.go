package github

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	gogithub "github.com/google/go-github/v66/github"
)

// DispatchResult names the run a dispatch created. RunID is 0 when GitHub
// answered 204 (it did not say).
type DispatchResult struct {
	RunID int64
	URL   string // the run's page
}

// WorkflowJob is a job of a workflow run.
type WorkflowJob struct {
	ID         int64
	Name       string
	Status     string // queued, in_progress, completed …
	Conclusion string // success, failure, cancelled, timed_out … when completed
	// StartedAt is when the job started (zero while queued): with the
	// workflow's timeout it says how long a running Job has left.
	StartedAt time.Time
	Steps     []Step
}

// Step is a step of a job.
type Step struct {
	Number     int64
	Name       string
	Status     string
	Conclusion string
}

// DispatchWorkflow starts workflowFile (e.g. "roadmap-implement.yml") on
// ref with inputs (string values masked), asking GitHub to return the new
// run's id (return_run_details). GitHub answers 200 with the run when it
// supports that, else 204; both are success. A dispatch is never sent twice
// on its own: a lost answer returns an error for which Indeterminate is
// true, and the caller reconciles from the runs before dispatching again.
//
// GitHub API docs: https://docs.github.com/rest/actions/workflows#create-a-workflow-dispatch-event
func (c *Client) DispatchWorkflow(ctx context.Context, workflowFile, ref string, inputs map[string]any) (DispatchResult, error) {
	masked := make(map[string]any, len(inputs))
	for k, v := range inputs {
		if s, ok := v.(string); ok {
			v = c.mask(s)
		}
		masked[k] = v
	}
	body := struct {
		Ref              string         `json:"ref"`
		Inputs           map[string]any `json:"inputs,omitempty"`
		ReturnRunDetails bool           `json:"return_run_details"`
	}{ref, masked, true}
	u := fmt.Sprintf("repos/%s/%s/actions/workflows/%s/dispatches", c.owner, c.repo, url.PathEscape(workflowFile))
	req, err := c.gh.NewRequest(http.MethodPost, u, body)
	if err != nil {
		return DispatchResult{}, fmt.Errorf("dispatch %s on %s: %w", workflowFile, ref, err)
	}
	var out struct {
		WorkflowRunID int64  `json:"workflow_run_id"`
		RunURL        string `json:"run_url"`
		HTMLURL       string `json:"html_url"`
	}
	if _, err := c.gh.Do(c.ctx(ctx), req, &out); err != nil {
		return DispatchResult{}, fmt.Errorf("dispatch %s on %s: %w", workflowFile, ref, c.fail(err))
	}
	return DispatchResult{RunID: out.WorkflowRunID, URL: out.HTMLURL}, nil
}

// WorkflowRun is a run of a workflow, as the runs list shows it. GitHub's
// list carries no dispatch inputs; DisplayTitle is the run's title, the
// workflow's run-name as GitHub evaluated it for the run (the workflow's
// name when it has none). It is text a dispatcher chose: untrusted.
type WorkflowRun struct {
	ID           int64
	Event        string
	Status       string
	CreatedAt    time.Time
	URL          string
	DisplayTitle string
}

// maxRunPages bounds the pages DispatchedRuns reads: a look for a run
// dispatched seconds ago needs the first page, never the whole history.
const maxRunPages = 3

// DispatchedRuns lists workflowFile's workflow_dispatch runs created at or
// after since, newest first (at most a few pages).
//
// GitHub API docs: https://docs.github.com/rest/actions/workflow-runs#list-workflow-runs-for-a-workflow
func (c *Client) DispatchedRuns(ctx context.Context, workflowFile string, since time.Time) ([]WorkflowRun, error) {
	opts := &gogithub.ListWorkflowRunsOptions{Event: "workflow_dispatch",
		Created: ">=" + since.UTC().Format(time.RFC3339), ListOptions: gogithub.ListOptions{PerPage: 100}}
	var out []WorkflowRun
	for page := 0; page < maxRunPages; page++ {
		runs, resp, err := c.gh.Actions.ListWorkflowRunsByFileName(c.ctx(ctx), c.owner, c.repo, workflowFile, opts)
		if err != nil {
			return nil, fmt.Errorf("list the %s runs of %s since %s: %w", opts.Event, workflowFile, opts.Created[2:], c.fail(err))
		}
		for _, r := range runs.WorkflowRuns {
			out = append(out, WorkflowRun{ID: r.GetID(), Event: r.GetEvent(), Status: r.GetStatus(),
				CreatedAt: r.GetCreatedAt().Time, URL: r.GetHTMLURL(), DisplayTitle: r.GetDisplayTitle()})
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return out, nil
}

// RunJobs lists the jobs of the latest attempt of run runID (all pages).
//
// GitHub API docs: https://docs.github.com/rest/actions/workflow-jobs#list-jobs-for-a-workflow-run
func (c *Client) RunJobs(ctx context.Context, runID int64) ([]WorkflowJob, error) {
	opts := &gogithub.ListWorkflowJobsOptions{Filter: "latest", ListOptions: gogithub.ListOptions{PerPage: 100}}
	var out []WorkflowJob
	for {
		jobs, resp, err := c.gh.Actions.ListWorkflowJobs(c.ctx(ctx), c.owner, c.repo, runID, opts)
		if err != nil {
			return nil, fmt.Errorf("list jobs of run %d: %w", runID, c.fail(err))
		}
		for _, j := range jobs.Jobs {
			wj := WorkflowJob{ID: j.GetID(), Name: j.GetName(), Status: j.GetStatus(), Conclusion: j.GetConclusion(),
				StartedAt: j.GetStartedAt().Time}
			for _, s := range j.Steps {
				wj.Steps = append(wj.Steps, Step{Number: s.GetNumber(), Name: s.GetName(), Status: s.GetStatus(), Conclusion: s.GetConclusion()})
			}
			out = append(out, wj)
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

// JobAnnotations lists the messages of a job's annotations (all pages). Some
// of the runner's own messages, a lost runner's among them, are there and not
// in the job's log. A job's check run has the job's id.
//
// GitHub API docs: https://docs.github.com/rest/checks/runs#list-check-run-annotations
func (c *Client) JobAnnotations(ctx context.Context, jobID int64) ([]string, error) {
	opts := &gogithub.ListOptions{PerPage: 100}
	var out []string
	for {
		list, resp, err := c.gh.Checks.ListCheckRunAnnotations(c.ctx(ctx), c.owner, c.repo, jobID, opts)
		if err != nil {
			return nil, fmt.Errorf("list annotations of job %d: %w", jobID, c.fail(err))
		}
		for _, a := range list {
			out = append(out, a.GetMessage())
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

// JobLog streams a finished job's log. GitHub answers the API request with
// a 302 to a short-lived URL (the fake's is good once); the log is fetched
// from there without the token. A failed download asks for a new URL, up
// to three times. A job still running has no log yet: ErrNotFound.
//
// GitHub API docs: https://docs.github.com/rest/actions/workflow-jobs#download-job-logs-for-a-workflow-run
func (c *Client) JobLog(ctx context.Context, jobID int64) (io.ReadCloser, error) {
	var why error
	for attempt := 1; attempt <= 3; attempt++ {
		loc, resp, err := c.gh.Actions.GetWorkflowJobLogs(c.ctx(ctx), c.owner, c.repo, jobID, 1)
		if err != nil {
			if resp != nil && resp.StatusCode != http.StatusFound {
				ep := endpointOf(http.MethodGet, "/repos/"+c.owner+"/"+c.repo+"/actions/jobs/0/logs")
				if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
					err = &AuthError{Method: http.MethodGet, Endpoint: ep, Status: resp.StatusCode, Message: http.StatusText(resp.StatusCode)}
				} else {
					err = &StatusError{Method: http.MethodGet, Endpoint: ep, Status: resp.StatusCode, Message: http.StatusText(resp.StatusCode)}
				}
			}
			return nil, fmt.Errorf("download log of job %d: %w", jobID, c.fail(err))
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc.String(), nil)
		if err != nil {
			return nil, fmt.Errorf("download log of job %d: %w", jobID, err)
		}
		got, err := c.logs.Do(req)
		switch {
		case err != nil:
			why = err
		case got.StatusCode == http.StatusOK:
			return got.Body, nil
		default:
			drain(got)
			why = fmt.Errorf("log URL answered %s", got.Status)
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("download log of job %d: %w", jobID, ctx.Err())
		}
		if c.sleep(ctx, backoff(attempt-1)) != nil {
			break
		}
	}
	return nil, fmt.Errorf("download log of job %d: %w", jobID, why)
}

// JobRun is where a workflow job ran: its run, the run's attempt and the
// commit.
type JobRun struct {
	JobID      int64
	RunID      int64
	RunAttempt int
	HeadSHA    string
	Name       string
	Conclusion string
}

// Job reads a workflow job: its run and the run's attempt, which says how
// often the run's failed jobs were re-run (attempt 1 is the first run).
//
// GitHub API docs: https://docs.github.com/rest/actions/workflow-jobs#get-a-job-for-a-workflow-run
func (c *Client) Job(ctx context.Context, jobID int64) (JobRun, error) {
	j, _, err := c.gh.Actions.GetWorkflowJobByID(c.ctx(ctx), c.owner, c.repo, jobID)
	if err != nil {
		return JobRun{}, fmt.Errorf("read job %d: %w", jobID, c.fail(err))
	}
	return JobRun{JobID: j.GetID(), RunID: j.GetRunID(), RunAttempt: int(j.GetRunAttempt()), HeadSHA: j.GetHeadSHA(),
		Name: j.GetName(), Conclusion: j.GetConclusion()}, nil
}

// RerunFailedJobs re-runs the failed jobs of run runID (and the jobs they
// need) as the run's next attempt. A lost answer is not sent again: a
// second re-run would spend an attempt; the caller reads the job's attempt
// on its next poll instead.
//
// GitHub API docs: https://docs.github.com/rest/actions/workflow-runs#re-run-failed-jobs-from-a-workflow-run
func (c *Client) RerunFailedJobs(ctx context.Context, runID int64) error {
	if _, err := c.gh.Actions.RerunFailedJobsByID(c.ctx(ctx), c.owner, c.repo, runID); err != nil {
		return fmt.Errorf("re-run the failed jobs of run %d: %w", runID, c.fail(err))
	}
	return nil
}

// RunState is a workflow run as GitHub reports it now.
type RunState struct {
	Status     string // queued, in_progress, completed …
	Conclusion string // when completed
}

// Done reports whether the run has ended: nothing of it runs any more.
func (s RunState) Done() bool { return s.Status == "completed" }

// ReadRun reads run runID's state. found is false when GitHub has no such
// run (404: deleted, or never in this repository).
//
// GitHub API docs: https://docs.github.com/rest/actions/workflow-runs#get-a-workflow-run
func (c *Client) ReadRun(ctx context.Context, runID int64) (state RunState, found bool, err error) {
	run, _, err := c.gh.Actions.GetWorkflowRunByID(c.ctx(ctx), c.owner, c.repo, runID)
	if err != nil {
		err = c.fail(err)
		if errors.Is(err, ErrNotFound) {
			return RunState{}, false, nil
		}
		return RunState{}, false, fmt.Errorf("read run %d: %w", runID, err)
	}
	return RunState{Status: run.GetStatus(), Conclusion: run.GetConclusion()}, true, nil
}
