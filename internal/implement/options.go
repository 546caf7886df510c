package implement

import (
	"context"
	"errors"
	"github.com/roadmap-dev/roadmap/internal/clock"
	"io"
	"time"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/checks"
	"github.com/roadmap-dev/roadmap/internal/git"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// Clock is the runner's time; tests use a fake one.
type Clock interface {
	Now() time.Time
	Sleep(ctx context.Context, d time.Duration) error
}

// Options is everything one Job runs with. The caller (the CLI verb, the demo,
// tests) builds the parts; the runner only wires them.
type Options struct {
	Issue int
	// Attempt is this Job's number for the item (a continuation's dispatch
	// input); 0 takes the record's implement.attempt + 1.
	Attempt int
	RunID   int64

	GitHub *github.Client
	Repo   *git.Repo
	Remote string // default "origin"
	Base   string // default "main"
	// PlanDir is the OpenSpec change directory relative to the workspace;
	// "" takes the record's stage.plan. Either must be a directory under
	// openspec/changes/ inside the repository.
	PlanDir string
	// RecordComment is the id of the issue's record comment when an earlier
	// job handed it over (an output, a dispatch input); 0 lists the comments
	// once to find it.
	RecordComment int64
	// RunURL links this Job's run in the record comment; "" names the run id.
	RunURL string

	// Models is the ladder the agent climbs.
	Models  []agent.Tier
	Sandbox agent.Sandbox
	// CheckRunner and Split run the scoped checks under the shell policy.
	CheckRunner checks.Runner
	Split       checks.Splitter
	// CheckCommands run after every group, besides its verify commands.
	CheckCommands []string
	// BeforeTree opens the isolation boundary on another work tree of the
	// repository (the tree before a group, for its fail-to-pass) and returns
	// a check runner confined to it, the directory its commands run in, and
	// what closes the boundary. nil leaves fail-to-pass not checked (the
	// trace and the PR comment say so).
	BeforeTree func(ctx context.Context, dir string) (checks.Runner, string, func() error, error)
	// TempDir holds the before trees ("" is the system's).
	TempDir string
	// CheckTimeout bounds one check command (0: the policy row's timeout).
	CheckTimeout time.Duration
	StepBudget   agent.Budget
	ItemBudget   agent.Budget
	RepairRounds int
	MaxOutput    int
	Window       int64

	// Deadline is when the Job must have handed over (the job's start plus
	// its timeout-minutes); zero means none.
	Deadline time.Time
	// Reserve is kept free before the deadline for the final marks and the
	// WIP commit (default 2 minutes).
	Reserve time.Duration
	Clock   Clock
	// PollInterval is how often the watch of PR checks polls and writes a
	// progress line; WatchTimeout bounds the watch within one Job.
	PollInterval time.Duration
	WatchTimeout time.Duration
	// NoChecksGrace is how long the watch waits for a first check to report
	// on the head before it decides the repository has none (default 5 min).
	NoChecksGrace time.Duration
	// CIWorkflows are dispatched on the work branch when no check has
	// reported on the head (pushes made with GITHUB_TOKEN start no run).
	CIWorkflows []string
	// ReadyWithoutCI marks the PR ready when no check reported on the head
	// within NoChecksGrace; false (the default) asks a person instead.
	ReadyWithoutCI bool
	// CheckReruns bounds, per head, the re-runs of failed CI jobs whose log
	// shows an infrastructure failure (0: none).
	CheckReruns int

	// Unisolated, when set, is why no isolation boundary could be set up:
	// the Job stops (class unisolated) before any model-written command
	// runs.
	Unisolated string
	// IsolationNote, when set, is said in the PR comment: the run was not
	// isolated (`isolation: none`).
	IsolationNote string
	// Log is the Job's log: one spend line per model call, progress lines.
	Log io.Writer
	// Trace records the run's events (required: it masks every event).
	Trace *trace.Recorder
	// Mask masks text that leaves the process outside the GitHub client
	// (check logs kept in the record go through the client's masker too).
	Mask func(string) string
	// SetOutput receives the step outputs (result, failure, group, head_sha,
	// spend); nil ignores them.
	SetOutput func(name, value string)
	// Marker is the PR comment's marker line; default "<!-- roadmap:implement -->".
	Marker string
	// Title of the draft PR when the runner has to open one.
	PRTitle string
}

func (o *Options) defaults() error {
	switch {
	case o.Issue <= 0:
		return errors.New("implement: an issue number is required")
	case o.GitHub == nil || o.Repo == nil:
		return errors.New("implement: a GitHub client and a git repository are required")
	case len(o.Models) == 0:
		return errors.New("implement: at least one model is required")
	case o.Sandbox == nil || o.CheckRunner == nil || o.Split == nil:
		return errors.New("implement: a sandbox and a check runner are required")
	case o.Trace == nil:
		return errors.New("implement: a trace recorder is required")
	}
	if o.Remote == "" {
		o.Remote = "origin"
	}
	if o.Base == "" {
		o.Base = "main"
	}
	if o.Reserve == 0 {
		o.Reserve = 2 * time.Minute
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.PollInterval <= 0 {
		o.PollInterval = 30 * time.Second
	}
	if o.WatchTimeout <= 0 {
		o.WatchTimeout = time.Hour
	}
	if o.NoChecksGrace <= 0 {
		o.NoChecksGrace = 5 * time.Minute
	}
	if o.RepairRounds <= 0 {
		o.RepairRounds = 3
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Mask == nil {
		o.Mask = func(s string) string { return s }
	}
	if o.SetOutput == nil {
		o.SetOutput = func(string, string) {}
	}
	if o.Marker == "" {
		o.Marker = "<!-- roadmap:implement -->"
	}
	return nil
}
