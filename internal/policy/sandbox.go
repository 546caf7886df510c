package policy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Sandbox is the workspace, the table and the tool environment together: what
// the agent's tools use to resolve paths and run commands. Its methods have
// the shape of the agent's Sandbox interface; Run returns this package's
// Result, which converts to agent.RunResult (same fields) in a one-line
// adapter where the two are wired.
type Sandbox struct {
	workspace string
	policy    *Policy
	environ   []string

	once    sync.Once
	initErr error
	ws      string // real workspace path
	wsAbs   string // workspace as given, made absolute
	home    string
	env     []string
	secrets []string
}

// NewSandbox returns a sandbox for workspace under p. environ is the
// environment tool processes start from (normally the process's own); it is
// scrubbed and completed by ToolEnv. Tool processes get a fresh empty HOME,
// created on first use outside the workspace; Close removes it.
func NewSandbox(workspace string, p *Policy, environ []string) *Sandbox {
	return &Sandbox{workspace: workspace, policy: p, environ: append([]string(nil), environ...)}
}

func (s *Sandbox) init() error {
	s.once.Do(func() {
		if s.policy == nil {
			s.initErr = fmt.Errorf("sandbox for %s: no policy", s.workspace)
			return
		}
		ws, err := realDir(s.workspace)
		if err != nil {
			s.initErr = err
			return
		}
		s.ws = ws
		s.wsAbs, _ = filepath.Abs(s.workspace)
		tmp := ""
		for _, kv := range s.environ {
			if v, ok := strings.CutPrefix(kv, "TMPDIR="); ok && filepath.IsAbs(v) {
				tmp = v
			}
		}
		home, err := os.MkdirTemp(tmp, "roadmap-tool-home-")
		if err != nil {
			s.initErr = fmt.Errorf("sandbox for %s: make tool HOME: %w", s.workspace, err)
			return
		}
		s.home = home
		_, removed := scrub(s.environ)
		s.secrets = masks(removed)
		s.env = ToolEnv(s.environ, home, ws)
	})
	return s.initErr
}

// Workspace returns the real path of the workspace.
func (s *Sandbox) Workspace() (string, error) {
	if err := s.init(); err != nil {
		return "", err
	}
	return s.ws, nil
}

// Resolve is the package's Resolve for this workspace, and also refuses the
// repository's .git directory: it can hold the checkout's token, and a hook
// written there would run later in the runner's own process.
func (s *Sandbox) Resolve(path string) (string, error) {
	if err := s.init(); err != nil {
		return "", err
	}
	r, err := resolveIn(s.ws, s.wsAbs, path)
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

// Run runs argv in the workspace under the table with the tool environment.
// Values of the variables the scrub removed are masked in the output, in case
// a file (a .env, a git config) printed one.
func (s *Sandbox) Run(ctx context.Context, argv []string) (Result, error) {
	if err := s.init(); err != nil {
		return Result{}, err
	}
	res, err := s.policy.Run(ctx, s.ws, argv, s.env)
	res.Output = mask(res.Output, s.secrets)
	return res, err
}

// Env returns the environment tool processes get (for tests and `explain`).
func (s *Sandbox) Env() ([]string, error) {
	if err := s.init(); err != nil {
		return nil, err
	}
	return append([]string(nil), s.env...), nil
}

// Close removes the tool HOME.
func (s *Sandbox) Close() error {
	if s.home == "" {
		return nil
	}
	if err := os.RemoveAll(s.home); err != nil {
		return fmt.Errorf("remove tool HOME %s: %w", s.home, err)
	}
	return nil
}
