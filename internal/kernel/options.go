package kernel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/clock"
	"github.com/roadmap-dev/roadmap/internal/git"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// Clock is a Job's time; tests use a fake one.
type Clock interface {
	Now() time.Time
	Sleep(ctx context.Context, d time.Duration) error
}

// Options is what every Job runs with, stage's and implement's alike. Each
// phase's own Options embeds it and adds only what its loop needs.
type Options struct {
	// Phase is the phase the Job runs for (its runner's Defaults sets it);
	// Peers the other phases whose Jobs may hold the item's lease (their
	// lines are read in their own jobs keys). A holder of a phase in
	// neither is not a lease roadmap wrote.
	Phase Phase
	Peers []Phase

	Issue int
	RunID int64

	GitHub *github.Client
	Repo   *git.Repo
	Remote string // default "origin"
	Base   string // default "main"
	// RecordComment is the id of the issue's record comment when an earlier
	// job handed it over (an output, a dispatch input); 0 lists the comments
	// once to find it.
	RecordComment int64
	// RunURL links this Job's run in the record comment; "" names the run id.
	RunURL string

	// Sandbox is where the agent's tool commands run: inside the isolation
	// boundary, under the shell policy.
	Sandbox agent.Sandbox
	// StepBudget bounds one agent step; ItemBudget the item over all its
	// Jobs (the record's spend counts against it).
	StepBudget agent.Budget
	ItemBudget agent.Budget
	MaxOutput  int
	// Window is the model's input window in tokens (0: the phase's default).
	Window int64

	// Deadline is when the Job must have handed over (the job's start plus
	// its timeout-minutes); zero means none.
	Deadline time.Time
	Clock    Clock

	// Unisolated, when set, is why no isolation boundary could be set up:
	// the Job ends (class unisolated) before any model-written command runs.
	Unisolated string
	// IsolationNote, when set, is said in summaries and comments: the run is
	// not isolated (`isolation: none`).
	IsolationNote string

	// Log is the Job's log: one spend line per model call, progress lines.
	Log io.Writer
	// Trace records the run's events (required: it masks every event).
	Trace *trace.Recorder
	// Mask masks text that leaves the process outside the GitHub client.
	Mask func(string) string
	// SetOutput receives the step outputs; nil ignores them.
	SetOutput func(name, value string)
	// Marker is the PR comment's marker line (default: Phase.Marker).
	Marker string
	// Blockers is the check of the item's blockers at the Job's start
	// (Job.Blockers; off when its Label is "").
	Blockers BlockerOptions
	// MarkInterval is the least time between two writes of the record for
	// marks that may wait (MarkDue; default DefaultMarkInterval).
	MarkInterval time.Duration
}

// DefaultMarkInterval is how long a mark that may wait (a group's, whose
// work git already holds) waits for the next write of the record: a Job's
// requests for its marks follow its time, not its plan's groups
// (docs/record.md, "What a Job costs").
const DefaultMarkInterval = 10 * time.Minute

// Defaults sets the phase the Job runs for, checks what a phase cannot run
// without and fills the rest; phase names the phase in errors and gives the
// default marker.
func (o *Options) Defaults(phase Phase) error {
	o.Phase = phase
	switch {
	case o.Issue <= 0:
		return fmt.Errorf("%s: an issue number is required", phase)
	case o.GitHub == nil || o.Repo == nil:
		return fmt.Errorf("%s: a GitHub client and a git repository are required", phase)
	case o.Sandbox == nil:
		return fmt.Errorf("%s: a sandbox is required", phase)
	case o.Trace == nil:
		return errors.New(phase.Name + ": a trace recorder is required")
	}
	if o.Remote == "" {
		o.Remote = "origin"
	}
	if o.Base == "" {
		o.Base = "main"
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
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
		o.Marker = phase.Marker
	}
	if o.MarkInterval <= 0 {
		o.MarkInterval = DefaultMarkInterval
	}
	return nil
}
