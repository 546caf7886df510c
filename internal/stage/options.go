package stage

import (
	"context"
	"errors"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/gates"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/kernel"
	"github.com/roadmap-dev/roadmap/internal/plan"
)

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
	// Options are what every Job runs with (the kernel's); the fields below
	// are stage's own. Window defaults to 8,000 tokens (the low tiers of
	// GitHub Models); Marker to "<!-- roadmap:stage -->".
	kernel.Options

	// Planner is the ladder the planner climbs; Verifier is the independent
	// verifier's (another model or tier by configuration; nil takes the
	// planner's last tier).
	Planner  []agent.Tier
	Verifier []agent.Tier
	// VerifierNamed says the configuration named the verifier
	// (stage.verifier): it is used as named. Otherwise a verifier on the
	// model the planner wrote the round on gives way to another model of
	// the planner's ladder when there is one (verifierTiers).
	VerifierNamed bool

	// WaitingLabel marks an item waiting for the day's budget (configuration
	// labels.waiting): a Job that starts on such an item, whatever started
	// it, takes it out of the wait, so roadmap wake does not dispatch it too.
	WaitingLabel string
	// Gates checks each round's plan (default: plan.Validate and the seven
	// plan gates of internal/gates).
	Gates Gates
	// Rounds bounds the planner's revision rounds (default 3).
	Rounds int
	// GateConfig tunes the default Gates (configuration gates.*).
	GateConfig gates.Config
}

// Defaults.
const (
	DefaultRounds = 3
	DefaultWindow = 8000
)

func (o *Options) defaults() error {
	if err := o.Options.Defaults(Phase()); err != nil {
		return err
	}
	if len(o.Planner) == 0 {
		return errors.New("stage: at least one planner model is required")
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
	gf, err := gates.Check(ctx, gates.Input{Issue: is, Root: in.Root, ChangeID: in.ChangeID, Run: run, Config: o.GateConfig})
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
