package checks

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/roadmap-dev/roadmap/internal/policy"
)

// policy.Split is the Splitter to pass with these runners: it reads a check
// command as the policy does (no shell; pipes, redirections and chaining
// refused).
var _ Splitter = policy.Split

// PolicyRunner runs checks under the shell policy with env (the caller passes
// policy.ToolEnv's result, so checks see what the agent's tools see).
func PolicyRunner(p *policy.Policy, env []string) Runner {
	return policyRunner{p: p, env: env}
}

type policyRunner struct {
	p   *policy.Policy
	env []string
}

func (r policyRunner) Run(ctx context.Context, dir string, argv []string) (Result, error) {
	res, err := r.p.Run(ctx, dir, argv, r.env)
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
