package policy

import (
	"context"
	"fmt"
	"io"
	"os/exec"

	"github.com/roadmap-dev/roadmap/internal/sandbox"
)

// Jail is what an OS boundary does to a process before it starts: its user,
// its process group, its environment (*sandbox.Boundary is one).
type Jail interface {
	Confine(cmd *exec.Cmd)
}

// Sandbox is the workspace, the table and the isolation boundary together:
// what the agent's tools use to resolve paths and run commands. Its methods
// have the shape of the agent's Sandbox interface; Run returns this package's
// Result, which converts to agent.RunResult (same fields) in a one-line
// adapter where the two are wired.
type Sandbox struct {
	b       *sandbox.Boundary
	policy  *Policy
	ws      string
	env     []string
	secrets []string
}

// NewSandbox returns a sandbox for the boundary's workspace under p. environ
// is the runner's environment: the values of its credential-looking
// variables are masked in every output, in case a file printed one (the
// processes never get them: their environment is the boundary's allow-list).
func NewSandbox(b *sandbox.Boundary, p *Policy, environ []string) *Sandbox {
	_, removed := scrub(environ)
	return &Sandbox{b: b, policy: p, ws: b.Workspace(), env: b.Env(), secrets: masks(removed)}
}

func (s *Sandbox) check() error {
	if s.policy == nil {
		return fmt.Errorf("sandbox for %s: no policy", s.ws)
	}
	return nil
}

// Workspace returns the real path of the workspace.
func (s *Sandbox) Workspace() (string, error) {
	if err := s.check(); err != nil {
		return "", err
	}
	return s.ws, nil
}

// Resolve is the package's Resolve for this workspace, and also refuses the
// repository's .git directory: the agent's tools never write there (and
// under the boundary cannot).
func (s *Sandbox) Resolve(path string) (string, error) {
	if err := s.check(); err != nil {
		return "", err
	}
	r, err := resolveIn(s.ws, s.ws, path)
	if err != nil {
		return "", err
	}
	if inGitDir(s.ws, r) {
		return "", &Refusal{Rule: "path", Reason: fmt.Sprintf("%q is inside .git, which tools do not touch; use git status, git diff or git log", path)}
	}
	return r, nil
}

// Split is the package's Split.
func (s *Sandbox) Split(cmd string) ([]string, error) { return Split(cmd) }

// Run runs argv in the workspace under the table, inside the boundary.
// Values of the runner's credential-looking variables are masked in the
// output.
func (s *Sandbox) Run(ctx context.Context, argv []string) (Result, error) {
	if err := s.check(); err != nil {
		return Result{}, err
	}
	res, err := s.policy.Run(ctx, s.b, s.ws, argv, s.env)
	res.Output = mask(res.Output, s.secrets)
	return res, err
}

// RunStream is Run with the process's stdout streamed, whole, to stdout
// (Policy.RunStream); Result.Output holds stderr, masked and capped. What
// reaches stdout is not masked: the caller parses it and masks what it keeps.
func (s *Sandbox) RunStream(ctx context.Context, argv []string, stdout io.Writer) (Result, error) {
	if err := s.check(); err != nil {
		return Result{}, err
	}
	res, err := s.policy.RunStream(ctx, s.b, s.ws, argv, s.env, stdout)
	res.Output = mask(res.Output, s.secrets)
	return res, err
}

// Env returns the environment tool processes get (for tests and `explain`).
func (s *Sandbox) Env() ([]string, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	return append([]string(nil), s.env...), nil
}
