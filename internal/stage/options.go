package stage

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/clock"
	"github.com/roadmap-dev/roadmap/internal/gates"
	"github.com/roadmap-dev/roadmap/internal/git"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// Clock is the Job's time; tests use a fake one.
type Clock interface {
	Now() time.Time
	Sleep(ctx context.Context, d time.Duration) error
}

// GateInput is what the plan gates look at: the issue, the repository work
// tree at the staging commit and the change under openspec/changes/.
type GateInput struct {
	Issue    github.Issue
	Root     string
	ChangeID string
}

// Gates checks a plan: OpenSpec's validation and the plan gates. Findings
// that fail (ERROR, WARNING) send the plan back to the planner.
type Gates func(ctx context.Context, in GateInput) ([]plan.Finding, error)

// Options is everything one stage Job runs with. The caller (the CLI verb,
// the demo, tests) builds the parts; the runner only wires them.
type Options struct {
	Issue int
	RunID int64

	GitHub *github.Client
	Repo   *git.Repo
	Remote string // default "origin"
	Base   string // default "main"
	// RecordComment is the id of the issue's record comment when known; 0
	// lists the comments once to find it.
	RecordComment int64
	RunURL        string

	// Planner is the ladder the planner climbs; Verifier is the independent
	// verifier's (another model or tier by configuration; nil takes the
	// planner's last tier).
	Planner  []agent.Tier
	Verifier []agent.Tier
	// Sandbox is where the read-only toolbox runs: inside the isolation
	// boundary, under the shell policy.
	Sandbox agent.Sandbox
	// Gates checks each round's plan (default: plan.Validate and the seven
	// plan gates of internal/gates).
	Gates Gates
	// Rounds bounds the planner's revision rounds (default 3).
	Rounds     int
	StepBudget agent.Budget
	ItemBudget agent.Budget
	MaxOutput  int
	// Window is the model's input window in tokens (default 8,000: the low
	// tiers of GitHub Models).
	Window int64

	Deadline time.Time
	Clock    Clock

	// Unisolated, when set, is why no isolation boundary could be set up:
	// the Job stops (class unisolated) before the planner runs anything.
	Unisolated    string
	IsolationNote string

	// Log is the Job's log: one spend line per model call, progress lines.
	Log   io.Writer
	Trace *trace.Recorder
	Mask  func(string) string
	// SetOutput receives the step outputs; nil ignores them.
	SetOutput func(name, value string)
	// Marker is the PR comment's marker line; default "<!-- roadmap:stage -->".
	Marker string
}

// Defaults.
const (
	DefaultRounds = 3
	DefaultWindow = 8000
)

func (o *Options) defaults() error {
	switch {
	case o.Issue <= 0:
		return errors.New("stage: an issue number is required")
	case o.GitHub == nil || o.Repo == nil:
		return errors.New("stage: a GitHub client and a git repository are required")
	case len(o.Planner) == 0:
		return errors.New("stage: at least one planner model is required")
	case o.Sandbox == nil:
		return errors.New("stage: a sandbox is required")
	case o.Trace == nil:
		return errors.New("stage: a trace recorder is required")
	}
	if o.Remote == "" {
		o.Remote = "origin"
	}
	if o.Base == "" {
		o.Base = "main"
	}
	if len(o.Verifier) == 0 {
		o.Verifier = o.Planner[len(o.Planner)-1:]
	}
	if o.Gates == nil {
		o.Gates = o.defaultGates
	}
	if o.Rounds <= 0 {
		o.Rounds = DefaultRounds
	}
	if o.Window <= 0 {
		o.Window = DefaultWindow
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
		o.Marker = "<!-- roadmap:stage -->"
	}
	return nil
}

// defaultGates are OpenSpec's validation and roadmap's plan rules, then the
// seven plan gates (internal/gates); a premise's command runs in the
// sandbox, its output masked.
func (o *Options) defaultGates(ctx context.Context, in GateInput) ([]plan.Finding, error) {
	findings, err := ValidateOnly(ctx, in)
	if err != nil {
		return nil, err
	}
	run := gates.RunnerFunc(func(ctx context.Context, command string) (int, string, error) {
		argv, err := o.Sandbox.Split(command)
		if err != nil {
			return 0, "", err
		}
		res, err := o.Sandbox.Run(ctx, argv)
		if err != nil {
			return 0, "", err
		}
		return res.ExitCode, o.Mask(res.Output), nil
	})
	is := &gates.Issue{Number: in.Issue.Number, Title: in.Issue.Title, Body: in.Issue.Body}
	gf, err := gates.Check(ctx, gates.Input{Issue: is, Root: in.Root, ChangeID: in.ChangeID, Run: run})
	if err != nil {
		return nil, err
	}
	return append(findings, gf...), nil
}

// ValidateOnly is the gate of OpenSpec's validation alone
// (`openspec validate --strict` and roadmap's plan rules).
func ValidateOnly(_ context.Context, in GateInput) ([]plan.Finding, error) {
	rep, err := plan.Validate(in.Root, in.ChangeID)
	if err != nil {
		return nil, err
	}
	return rep.Findings, nil
}
