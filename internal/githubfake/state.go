package githubfake

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Issue is an issue (or the issue side of a pull request) as the fake holds it.
// CreateIssue reads Title, Body, Author, Labels and State from it; the fake
// fills in the rest.
type Issue struct {
	Number    int       `json:"number"`
	ID        int64     `json:"id"`
	Title     string    `json:"title"`
	Body      string    `json:"body"`
	State     string    `json:"state"` // open or closed
	Labels    []string  `json:"labels"`
	Author    string    `json:"author"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	ClosedAt  time.Time `json:"closed_at,omitzero"`
	// StateReason is why the state last changed: completed, not_planned,
	// duplicate or reopened ("" while it never changed).
	StateReason string `json:"state_reason,omitempty"`
	// Pull is set when the issue is a pull request.
	Pull *Pull `json:"pull,omitempty"`
	// Parent is the issue this one is a sub-issue of (0: none); SubIssues
	// are this issue's sub-issues, in order (subissues.go).
	Parent    int   `json:"parent,omitempty"`
	SubIssues []int `json:"sub_issues,omitempty"`
	// BlockedBy are the issues this one is blocked by, in the order they
	// were added (dependencies.go); what it blocks is read from the others.
	BlockedBy []int `json:"blocked_by,omitempty"`
}

// Pull is what a pull request adds to its issue.
type Pull struct {
	ID      int64  `json:"id"`
	NodeID  string `json:"node_id"`
	Head    string `json:"head"` // branch name
	Base    string `json:"base"`
	HeadSHA string `json:"head_sha"` // as set by SetPRHead; see Fake.headSHA for git
	Draft   bool   `json:"draft"`
	// HeadRepo is the fork the head branch is in ("owner/repo"), "" for
	// a branch of the repository itself.
	HeadRepo string `json:"head_repo,omitempty"`
	// Merged is set when the pull request was merged (PUT …/merge): by
	// MergedBy at MergedAt, the base branch then at MergeCommitSHA.
	Merged         bool      `json:"merged,omitempty"`
	MergedAt       time.Time `json:"merged_at,omitzero"`
	MergedBy       string    `json:"merged_by,omitempty"`
	MergeCommitSHA string    `json:"merge_commit_sha,omitempty"`
}

// WorkflowPermissions is GET /repos/{owner}/{repo}/actions/permissions/workflow.
type WorkflowPermissions struct {
	Default    string `json:"default"` // read or write; "" reads as read
	CanApprove bool   `json:"can_approve"`
}

// Comment is an issue comment.
type Comment struct {
	ID        int64     `json:"id"`
	Issue     int       `json:"issue"`
	Author    string    `json:"author"`
	Body      string    `json:"body"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Label is a repository label.
type Label struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	Color       string `json:"color"`
	Description string `json:"description"`
	Default     bool   `json:"default"`
}

// Status is a commit status.
type Status struct {
	ID          int64     `json:"id"`
	SHA         string    `json:"sha"`
	Context     string    `json:"context"`
	State       string    `json:"state"` // error, failure, pending, success
	Description string    `json:"description"`
	TargetURL   string    `json:"target_url"`
	Creator     string    `json:"creator"`
	CreatedAt   time.Time `json:"created_at"`
}

// CheckRun is a check run on a commit. Tests seed them with AddCheckRun.
type CheckRun struct {
	ID         int64  `json:"id"`
	SHA        string `json:"sha"`
	Name       string `json:"name"`
	Status     string `json:"status"`     // queued, in_progress, completed
	Conclusion string `json:"conclusion"` // set when completed: success, failure, …
	// App is the slug of the app that made the check run; "" is
	// github-actions (a job's check run, whose id is the job's).
	App string `json:"app,omitempty"`
	// Title, Summary and Text are the check run's output (another app's
	// check run says why it failed there, not in a job log).
	Title   string `json:"title,omitempty"`
	Summary string `json:"summary,omitempty"`
	Text    string `json:"text,omitempty"`
}

// Run is a workflow run. Dispatches create queued runs; tests seed others.
type Run struct {
	ID           int64          `json:"id"`
	WorkflowFile string         `json:"workflow_file"`
	HeadBranch   string         `json:"head_branch"`
	Event        string         `json:"event"`
	Status       string         `json:"status"`     // queued, in_progress, completed
	Conclusion   string         `json:"conclusion"` // when completed
	Inputs       map[string]any `json:"inputs,omitempty"`
	CreatedAt    time.Time      `json:"created_at"`
	// HeadSHA is the commit the run runs at ("" for a seeded run).
	HeadSHA string `json:"head_sha,omitempty"`
	// RunAttempt counts the run's attempts: a re-run of its failed jobs
	// is the next (0 reads as 1).
	RunAttempt int `json:"run_attempt,omitempty"`
	// DisplayTitle is the run's title in the runs list (display_title):
	// a dispatched run's comes from the workflow's run-name (SetRunName);
	// "" is the workflow's name, GitHub's title without a run-name.
	DisplayTitle string `json:"display_title,omitempty"`
	// Actor is who caused the event that started the run; TriggeringActor
	// who started this attempt (the same for a first attempt).
	Actor           string `json:"actor,omitempty"`
	TriggeringActor string `json:"triggering_actor,omitempty"`
	// EventID is the recorded event (Events) that started the run.
	EventID int64 `json:"event_id,omitempty"`
	// PullRequest is the pull request of a pull_request,
	// pull_request_target or pull_request_review run.
	PullRequest int `json:"pull_request,omitempty"`
	// ReadOnlyToken and NoSecrets are how GitHub runs a pull_request
	// workflow for a pull request from a fork: its GITHUB_TOKEN can only
	// read, and no secret but GITHUB_TOKEN is passed.
	ReadOnlyToken bool `json:"read_only_token,omitempty"`
	NoSecrets     bool `json:"no_secrets,omitempty"`
}

// Job is a job of a workflow run, with the log GitHub would serve for it.
type Job struct {
	ID         int64     `json:"id"`
	RunID      int64     `json:"run_id"`
	Name       string    `json:"name"`
	Status     string    `json:"status"`
	Conclusion string    `json:"conclusion"`
	Steps      []Step    `json:"steps"`
	Log        string    `json:"log"`
	StartedAt  time.Time `json:"started_at"`
	// Annotations are the messages GitHub attaches to the job's check run
	// rather than to its log ("The self-hosted runner: … lost communication
	// with the server", "The job running on runner … has exceeded …").
	Annotations []string `json:"annotations,omitempty"`
	// RunAttempt is the attempt of the run the job belongs to (0 reads as 1).
	RunAttempt int    `json:"run_attempt,omitempty"`
	HeadSHA    string `json:"head_sha,omitempty"`
	// Planned and Until are a scripted CI job's conclusion and the time it
	// completes at (ScriptCI).
	Planned string    `json:"planned,omitempty"`
	Until   time.Time `json:"until,omitzero"`
}

// Rerun is one accepted rerun-failed-jobs request.
type Rerun struct {
	RunID   int64     `json:"run_id"`
	Attempt int       `json:"attempt"` // the attempt it started
	At      time.Time `json:"at"`
}

// Step is a step of a job.
type Step struct {
	Number     int64  `json:"number"`
	Name       string `json:"name"`
	Status     string `json:"status"`
	Conclusion string `json:"conclusion"`
}

// Dispatch is one accepted workflow_dispatch request.
type Dispatch struct {
	Workflow string         `json:"workflow"`
	Ref      string         `json:"ref"`
	Inputs   map[string]any `json:"inputs"`
	RunID    int64          `json:"run_id"`
	At       time.Time      `json:"at"`
}

// state is everything Save writes and Load reads. `roadmap explain --state`
// reads the saved file without the fake (internal/explain/state.go): keep the
// issues' title and body and the comments' id, issue, author and body as named.
type state struct {
	NextID     int64          `json:"next_id"`
	NextNumber int            `json:"next_number"`
	Issues     map[int]*Issue `json:"issues"`
	Comments   []*Comment     `json:"comments"`
	Labels     []*Label       `json:"labels"`
	Statuses   []*Status      `json:"statuses"`
	CheckRuns  []*CheckRun    `json:"check_runs"`
	Runs       []*Run         `json:"runs"`
	Jobs       []*Job         `json:"jobs"`
	Dispatches []Dispatch     `json:"dispatches"`
	Reruns     []Rerun        `json:"reruns,omitempty"`
	// CI holds the scripted CI workflows (ScriptCI), by workflow file.
	CI          map[string][]*CIJob `json:"ci,omitempty"`
	Permissions map[string]string   `json:"permissions"`
	Users       map[string]int64    `json:"users"`
	Commits     []string            `json:"commits,omitempty"`   // AddCommit
	Workflows   []string            `json:"workflows,omitempty"` // AddWorkflow
	// RunNames are the workflows' run-name templates (SetRunName), by
	// workflow file.
	RunNames  map[string]string `json:"run_names,omitempty"`
	LastWrite time.Time         `json:"last_write"`
	// WorkflowPermissions is the repository's Actions setting "Workflow
	// permissions": the default GITHUB_TOKEN permissions ("read" or
	// "write", GitHub's default for a new repository is read) and whether
	// Actions may create and approve pull requests.
	WorkflowPermissions WorkflowPermissions `json:"workflow_permissions"`
	// Topics are the repository's topics (GET /repos/{owner}/{repo}).
	Topics []string `json:"topics,omitempty"`

	// Events are the events the fake's writes caused, oldest first, each
	// with the runs it started (triggers.go).
	Events []*Event `json:"events,omitempty"`
	// WorkflowFiles are workflow files with content (SetWorkflowFile), by
	// ref ("" is every ref) and file name.
	WorkflowFiles map[string]map[string]string `json:"workflow_files,omitempty"`
	// Disabled are the workflows disabled through the API.
	Disabled []string `json:"disabled_workflows,omitempty"`
	// Refs are the branches and tags (full ref to SHA) as the fake last
	// saw them: the git remote's at the last Pushed, or those RecordPush
	// set without one.
	Refs map[string]string `json:"refs,omitempty"`
	// RefPaths are the files recorded pushes changed on a ref, without a
	// git remote: what a pull request from that branch changes.
	RefPaths map[string][]string `json:"ref_paths,omitempty"`
	// Contributors have contributed before (AddContributor): their fork
	// pull requests need no approval.
	Contributors []string `json:"contributors,omitempty"`
	// ScheduledThrough is the time up to which schedules have fired.
	ScheduledThrough time.Time `json:"scheduled_through,omitzero"`
	// Reviews are the pull request reviews created through the API.
	Reviews []*Review `json:"reviews,omitempty"`
	// ReviewComments are the comments on lines of pull requests' diffs,
	// each in a review (reviews.go).
	ReviewComments []*ReviewComment `json:"review_comments,omitempty"`
}

// ReviewComment is a comment on a line (or a file) of a pull request's
// diff. A reply (InReplyTo set) is in the thread of the comment it
// answers and has its path and line.
type ReviewComment struct {
	ID          int64  `json:"id"`
	PullRequest int    `json:"pull_request"`
	Review      int64  `json:"review"`
	InReplyTo   int64  `json:"in_reply_to,omitempty"`
	Author      string `json:"author"`
	Body        string `json:"body"`
	Path        string `json:"path"`
	// Line and Side are the (last) line commented on and the side of the
	// diff it is on (LEFT or RIGHT); StartLine and StartSide the first of
	// a multi-line comment (0 and "" otherwise). SubjectType is line or
	// file.
	Line        int       `json:"line,omitempty"`
	Side        string    `json:"side,omitempty"`
	StartLine   int       `json:"start_line,omitempty"`
	StartSide   string    `json:"start_side,omitempty"`
	SubjectType string    `json:"subject_type"`
	CommitID    string    `json:"commit_id"`
	CreatedAt   time.Time `json:"created_at"`
}

// Review is a pull request review.
type Review struct {
	ID          int64     `json:"id"`
	PullRequest int       `json:"pull_request"`
	Author      string    `json:"author"`
	State       string    `json:"state"` // APPROVED, CHANGES_REQUESTED, COMMENTED, PENDING
	Body        string    `json:"body"`
	CommitID    string    `json:"commit_id"`
	SubmittedAt time.Time `json:"submitted_at,omitzero"`
}

func newState() *state {
	return &state{
		NextID:      1000,
		NextNumber:  1,
		Issues:      map[int]*Issue{},
		Permissions: map[string]string{},
		Users:       map[string]int64{},
	}
}

func (s *state) id() int64 {
	s.NextID++
	return s.NextID - 1
}

// Save writes the fake's state (issues, comments, labels, statuses, runs,
// jobs, dispatches, permissions) to path as JSON. The request log, fault
// rules and rate-limit windows are not state and are not saved.
func (f *Fake) Save(path string) error {
	f.mu.Lock()
	data, err := json.MarshalIndent(f.st, "", "  ")
	f.mu.Unlock()
	if err != nil {
		return fmt.Errorf("save fake state: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".fake-github-*")
	if err != nil {
		return fmt.Errorf("save fake state: %w", err)
	}
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("save fake state: %w", err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("save fake state: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("save fake state: %w", err)
	}
	return nil
}

// Load replaces the fake's state with the one saved at path.
func (f *Fake) Load(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("load fake state: %w", err)
	}
	st := newState()
	if err := json.Unmarshal(data, st); err != nil {
		return fmt.Errorf("load fake state %s: %w", path, err)
	}
	if st.Issues == nil {
		st.Issues = map[int]*Issue{}
	}
	if st.Permissions == nil {
		st.Permissions = map[string]string{}
	}
	if st.Users == nil {
		st.Users = map[string]int64{}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if st.Refs == nil {
		st.Refs = f.gitRefs() // a state saved before the fake kept refs
	}
	f.st = st
	return nil
}
