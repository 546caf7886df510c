package githubfake

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// The methods here set up and inspect the fake's state directly, the way a
// person or another system would change GitHub outside the client under
// test. They take the same lock as requests, so they interleave with them.

// CreateIssue stores an issue (Title, Body, Author, Labels, State are read
// from in) and returns its number.
func (f *Fake) CreateIssue(in Issue) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	in.Pull = nil
	return f.newIssue(in).Number
}

// SetIssueBody replaces an issue's body as login, like a person saving the
// whole text in the web editor. updated_at moves.
func (f *Fake) SetIssueBody(n int, login, body string) error {
	return f.EditIssueBody(n, login, func(string) string { return body })
}

// EditIssueBody changes an issue's body as login by applying edit to the
// current text, atomically: a person editing the text as it is now.
func (f *Fake) EditIssueBody(n int, login string, edit func(current string) string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	is := f.st.Issues[n]
	if is == nil {
		return fmt.Errorf("githubfake: no issue %d", n)
	}
	is.Body = edit(is.Body)
	is.UpdatedAt = f.stamp()
	return nil
}

// AddComment adds a comment to issue n as login and returns its id.
func (f *Fake) AddComment(n int, login, body string) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	is := f.st.Issues[n]
	if is == nil {
		return 0, fmt.Errorf("githubfake: no issue %d", n)
	}
	return f.newComment(is, login, body).ID, nil
}

// EditComment changes comment id by applying edit to its current text,
// atomically: a person with write access editing it on GitHub.
func (f *Fake) EditComment(id int64, edit func(current string) string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, cm := range f.st.Comments {
		if cm.ID == id {
			cm.Body = edit(cm.Body)
			cm.UpdatedAt = f.stamp()
			return nil
		}
	}
	return fmt.Errorf("githubfake: no comment %d", id)
}

// SetPermission gives login a role on the repository: admin, maintain,
// write, triage, read or none.
func (f *Fake) SetPermission(login, role string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.st.Permissions[login] = role
}

// AddToken accepts another token, acting as login. A read-only token gets
// 403 "Resource not accessible by integration" on every write, like a
// GITHUB_TOKEN whose job lacks the permission. What kind of token it is
// follows from login, as GitHub shows it: github-actions[bot] is a
// workflow's GITHUB_TOKEN, another "[bot]" login a GitHub App's
// installation token, anything else a person's token.
func (f *Fake) AddToken(tok, login string, readOnly bool) {
	f.AddIdentity(tok, Identity{Login: login, Kind: kindOf(login), ReadOnly: readOnly})
}

// AddIdentity accepts another token as id: the login its requests act as
// and the kind of token it is, which decides whether the events its writes
// cause start workflow runs (Events).
func (f *Fake) AddIdentity(tok string, id Identity) {
	if id.Kind == "" {
		id.Kind = kindOf(id.Login)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tokens[tok] = token{login: id.Login, kind: id.Kind, readOnly: id.ReadOnly, name: id.Name}
}

// CreatePullRequest stores an open pull request and returns its number.
func (f *Fake) CreatePullRequest(head, base, title, body string, draft bool) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := f.st.id()
	return f.newIssue(Issue{Title: title, Body: body,
		Pull: &Pull{ID: id, NodeID: nodeID("PR", id), Head: head, Base: base, Draft: draft}}).Number
}

// SetPRHead sets the head SHA of pull request n (a configured GitRemote
// takes precedence when it has the branch).
func (f *Fake) SetPRHead(n int, sha string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	is := f.st.Issues[n]
	if is == nil || is.Pull == nil {
		return fmt.Errorf("githubfake: no pull request %d", n)
	}
	is.Pull.HeadSHA = strings.ToLower(sha)
	is.UpdatedAt = f.stamp()
	return nil
}

// AddCheckRun adds a check run on sha and returns its id.
func (f *Fake) AddCheckRun(sha string, cr CheckRun) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	cr.ID, cr.SHA = f.st.id(), strings.ToLower(sha)
	f.st.CheckRuns = append(f.st.CheckRuns, &cr)
	return cr.ID
}

// SetCheckRun changes a check run's status and conclusion.
func (f *Fake) SetCheckRun(id int64, status, conclusion string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, cr := range f.st.CheckRuns {
		if cr.ID == id {
			cr.Status, cr.Conclusion = status, conclusion
			return nil
		}
	}
	return fmt.Errorf("githubfake: no check run %d", id)
}

// AddStatus adds a commit status on sha as the fake's login.
func (f *Fake) AddStatus(sha, context, state, description string) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.addStatus(strings.ToLower(sha), context, state, description, "", f.opts.Login).ID
}

// AddRun stores a workflow run and returns its id.
func (f *Fake) AddRun(r Run) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	r.ID = f.st.id()
	if r.Status == "" {
		r.Status = "completed"
	}
	if r.Event == "" {
		r.Event = "workflow_dispatch"
	}
	r.CreatedAt = f.stamp()
	f.st.Runs = append(f.st.Runs, &r)
	return r.ID
}

// AddJob adds a job, with its steps and log text, to run runID.
func (f *Fake) AddJob(runID int64, j Job) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.findRun(runID) == nil {
		return 0, fmt.Errorf("githubfake: no run %d", runID)
	}
	j.ID, j.RunID = f.st.id(), runID
	if j.Status == "" {
		j.Status = "completed"
	}
	for i := range j.Steps {
		if j.Steps[i].Number == 0 {
			j.Steps[i].Number = int64(i + 1)
		}
	}
	j.StartedAt = f.stamp()
	f.st.Jobs = append(f.st.Jobs, &j)
	return j.ID, nil
}

// Issue returns a copy of issue (or pull request) n.
func (f *Fake) Issue(n int) (Issue, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	is := f.st.Issues[n]
	if is == nil {
		return Issue{}, false
	}
	cp := *is
	cp.Labels = append([]string(nil), is.Labels...)
	cp.SubIssues = append([]int(nil), is.SubIssues...)
	if is.Pull != nil {
		p := *is.Pull
		p.HeadSHA = f.headSHA(is.Pull)
		cp.Pull = &p
	}
	return cp, true
}

// Comments returns the comments of issue n, oldest first.
func (f *Fake) Comments(n int) []Comment {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Comment
	for _, c := range f.st.Comments {
		if c.Issue == n {
			out = append(out, *c)
		}
	}
	return out
}

// Labels returns the label names on issue n.
func (f *Fake) Labels(n int) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if is := f.st.Issues[n]; is != nil {
		return append([]string(nil), is.Labels...)
	}
	return nil
}

// Statuses returns the commit statuses on sha, oldest first.
func (f *Fake) Statuses(sha string) []Status {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Status
	for _, s := range f.statusesOf(strings.ToLower(sha)) {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// SchedulesFiredThrough sets the time up to which the schedules have
// fired, as if the fake had been running since then: the next RunSchedules
// fires the entries due from t to the clock's now. A test on a real clock
// uses it to play a schedule that came due before the test began.
func (f *Fake) SchedulesFiredThrough(t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.st.ScheduledThrough = t.UTC()
}

// Reviews returns every review of pull request n, oldest first.
func (f *Fake) Reviews(n int) []Review {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Review
	for _, r := range f.st.Reviews {
		if r.PullRequest == n {
			out = append(out, *r)
		}
	}
	return out
}

// Dispatches returns every accepted workflow dispatch, oldest first.
func (f *Fake) Dispatches() []Dispatch {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Dispatch(nil), f.st.Dispatches...)
}

// Runs returns every workflow run, oldest first.
func (f *Fake) Runs() []Run {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Run
	for _, r := range f.st.Runs {
		out = append(out, *r)
	}
	return out
}

// AddCommit makes the repository have commits with these SHAs, so statuses
// can be created on them (GitHub answers 422 for a SHA no commit has).
// Pull request heads, SHAs with seeded statuses or check runs, and commits
// of the git remote exist without it.
func (f *Fake) AddCommit(shas ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, sha := range shas {
		f.st.Commits = append(f.st.Commits, strings.ToLower(sha))
	}
}

// AddWorkflow makes the repository have a workflow file
// (.github/workflows/<file>) that can be dispatched. Workflows of seeded
// runs, and of the git remote's default branch, exist without it.
func (f *Fake) AddWorkflow(files ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.st.Workflows = append(f.st.Workflows, files...)
}

// SetRunName gives workflowFile a run-name: the title GitHub shows for its
// runs (display_title in the runs list). The fake does not evaluate
// workflow expressions: in template, "{name}" stands for the dispatch input
// name's value ("" when the dispatch did not send it), the way a run-name
// such as "roadmap #${{ inputs.issue }}" reads for a workflow_dispatch run.
// A title that comes out empty or blank is the workflow's name, as on
// GitHub. It applies to runs dispatched after it; a seeded run takes
// Run.DisplayTitle.
func (f *Fake) SetRunName(workflowFile, template string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.st.RunNames == nil {
		f.st.RunNames = map[string]string{}
	}
	f.st.RunNames[workflowFile] = template
}

// SetWorkflowPermissions sets the repository's Actions "Workflow
// permissions": the default token permissions (read or write) and whether
// Actions may create and approve pull requests.
func (f *Fake) SetWorkflowPermissions(defaultPerm string, canApprove bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.st.WorkflowPermissions = WorkflowPermissions{Default: defaultPerm, CanApprove: canApprove}
}

// SetTopics sets the repository's topics.
func (f *Fake) SetTopics(topics ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.st.Topics = append([]string(nil), topics...)
}

// SetJobStatus moves job id to status (queued, in_progress or completed),
// as its runner would; conclusion is required for completed and dropped
// otherwise. A job put back to in_progress has no log to serve again, as
// on GitHub while a job runs.
func (f *Fake) SetJobStatus(id int64, status, conclusion string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	j := f.findJob(id)
	if j == nil {
		return fmt.Errorf("githubfake: no job %d", id)
	}
	switch status {
	case "queued", "in_progress":
		conclusion = ""
	case "completed":
		if conclusion == "" {
			return fmt.Errorf("githubfake: complete job %d: no conclusion", id)
		}
	default:
		return fmt.Errorf("githubfake: job %d: %q is not a job status", id, status)
	}
	j.Status, j.Conclusion = status, conclusion
	return nil
}

// AppendJobLog adds text to the end of job id's log, as the runner streams
// a running job's lines. GitHub serves none of it through the REST log
// endpoint until the job completes (404 while it runs); the fake does the
// same, so the text is readable only after SetJobStatus completes the job.
func (f *Fake) AppendJobLog(id int64, text string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	j := f.findJob(id)
	if j == nil {
		return fmt.Errorf("githubfake: no job %d", id)
	}
	j.Log += text
	return nil
}
