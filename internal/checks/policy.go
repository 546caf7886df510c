package checks

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/roadmap-dev/roadmap/internal/policy"
	"github.com/roadmap-dev/roadmap/internal/sandbox"
)

// policy.Split is the Splitter to pass with these runners: it reads a check
// command as the policy does (no shell; pipes, redirections and chaining
// refused).
var _ Splitter = policy.Split

// PolicyRunner runs checks under the shell policy inside the boundary b, with
// its environment, so checks see what the agent's tools see.
func PolicyRunner(p *policy.Policy, b *sandbox.Boundary) Runner {
	return policyRunner{p: p, b: b}
}

type policyRunner struct {
	p *policy.Policy
	b *sandbox.Boundary
}

func (r policyRunner) Run(ctx context.Context, dir string, argv []string) (Result, error) {
	res, err := r.p.Run(ctx, r.b, dir, argv, r.b.Env())
	return fromPolicy(res), err
}

// SandboxRunner runs checks in the agent's sandbox: the same table, tool
// environment and output masking as the agent's own runs. dir must be the
// sandbox's workspace.
func SandboxRunner(s *policy.Sandbox) Runner { return sandboxRunner{s: s} }

type sandboxRunner struct{ s *policy.Sandbox }

func (r sandboxRunner) Run(ctx context.Context, dir string, argv []string) (Result, error) {
	ws, err := r.s.Workspace()
	if err != nil {
		return Result{}, err
	}
	if real, err := filepath.EvalSymlinks(dir); err != nil || real != ws {
		return Result{}, fmt.Errorf("run %s in %s: the sandbox's workspace is %s", argv[0], dir, ws)
	}
	res, err := r.s.Run(ctx, argv)
	return fromPolicy(res), err
}

func fromPolicy(r policy.Result) Result {
	return Result{ExitCode: r.ExitCode, Output: r.Output, Duration: r.Duration, TimedOut: r.TimedOut}
}
