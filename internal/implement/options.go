package implement

import (
	"context"
	"errors"
	"time"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/checks"
	"github.com/roadmap-dev/roadmap/internal/kernel"
)

// Options is everything one Job runs with. The caller (the CLI verb, the demo,
// tests) builds the parts; the runner only wires them.
type Options struct {
	// Options are what every Job runs with (the kernel's); the fields below
	// are implement's own.
	kernel.Options
	// Attempt is this Job's number for the item (a continuation's dispatch
	// input); 0 takes the record's implement.attempt + 1.
	Attempt int

	// PlanDir is the OpenSpec change directory relative to the workspace;
	// "" takes the record's stage.plan. Either must be a directory under
	// openspec/changes/ inside the repository.
	PlanDir string

	// TriggerLabel is the label whose `labeled` event started this Job
	// ("" for a dispatch): a Job that finds the issue without it does not
	// start (next.Unlabelled).
	TriggerLabel string

	// Reopened: a person's reopening of the issue or of the item's PR
	// started this Job: it resumes an item a closing held and does nothing
	// else (next.NotHeld).
	Reopened bool

	// Feedback: a person's review of the PR or a `/roadmap fix` comment on
	// it started this Job (a repair Job): it answers what people with
	// write access asked of the PR before the head's checks (prfeedback.go,
	// docs/review.md).
	Feedback bool

	// WaitingLabel marks an item waiting for the day's budget (configuration
	// labels.waiting): a Job that starts on such an item, whatever started
	// it, takes it out of the wait, so roadmap wake does not dispatch it too.
	WaitingLabel string

	// Models is the ladder the agent climbs.
	Models []agent.Tier
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
	// ParallelGroups runs the groups of a wave (internal/waves) at once: the
	// first in the Job's work tree, each other in a scratch tree GroupTree
	// opens a boundary on (implement.parallel_groups,
	// docs/parallel-groups.md).
	ParallelGroups bool
	// GroupTree opens the isolation boundary on a scratch work tree for a
	// group that runs beside another: the agent's sandbox there, a check
	// runner confined to it, the tree's real path, and what closes the
	// boundary. nil runs the groups one by one.
	GroupTree func(ctx context.Context, dir string) (agent.Sandbox, checks.Runner, string, func() error, error)
	// TempDir holds the before trees ("" is the system's).
	TempDir string
	// CheckTimeout bounds one check command (0: the policy row's timeout).
	CheckTimeout time.Duration
	RepairRounds int
	// MaxGroups bounds the task groups of the plan (implement.max_groups;
	// 0 is plan.DefaultMaxGroups): a plan over it goes back to stage.
	MaxGroups int

	// Reserve is kept free before the deadline for the final marks and the
	// WIP commit (default 2 minutes).
	Reserve time.Duration
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
	// NoCIPath: roadmap pushes with the workflow's GITHUB_TOKEN (no push
	// token) and has no CI workflow to dispatch, so no workflow run can
	// start on its pushes. A head no check reported on is then decided at
	// once, not after NoChecksGrace: the item says what a person must do.
	NoCIPath bool
	// ReadyWithoutCI marks the PR ready when no check reported on the head
	// within NoChecksGrace; false (the default) asks a person instead.
	ReadyWithoutCI bool
	// CheckReruns bounds, per head, the re-runs of failed CI jobs whose log
	// shows an infrastructure failure (0: none).
	CheckReruns int

	// Title of the draft PR when the runner has to open one.
	PRTitle string

	// Review is the review before ready; Strength the test strength of each
	// group (quality.go). Both off when zero.
	Review   ReviewOptions
	Strength StrengthOptions
}

func (o *Options) defaults() error {
	if err := o.Options.Defaults(Phase()); err != nil {
		return err
	}
	switch {
	case len(o.Models) == 0:
		return errors.New("implement: at least one model is required")
	case o.CheckRunner == nil || o.Split == nil:
		return errors.New("implement: a sandbox and a check runner are required")
	}
	if o.Reserve == 0 {
		o.Reserve = 2 * time.Minute
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
	return nil
}
