package job

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/checks"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/policy"
	"github.com/roadmap-dev/roadmap/internal/sandbox"
)

// privateVars name the runner's own files and folders, which Landlock keeps
// from the boundary's commands: its temporary folder (the workflow command files, the event, the
// trace), each workflow command file where it lives elsewhere, and its HOME.
var privateVars = []string{"RUNNER_TEMP", "GITHUB_ENV", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY",
	"GITHUB_PATH", "GITHUB_STATE", "GITHUB_EVENT_PATH", "HOME"}

// OpenBoundary opens the isolation boundary on the work tree dir as cfg's
// `isolation` and `sandbox` say, for a process whose environment is env: no
// PATH entry holding one of the runner's own files that env names is given
// to the boundary. An *sandbox.Unavailable error means model-written
// commands must not run. Every verb that runs them (stage, implement,
// checks, ci fail-to-pass) opens its boundary here.
func OpenBoundary(ctx context.Context, cfg *config.Config, dir string, env map[string]string, probe *sandbox.Probe) (*sandbox.Boundary, error) {
	m, err := sandbox.ParseMode(string(cfg.Isolation))
	if err != nil {
		return nil, err
	}
	network, err := sandbox.ParseNetwork(cfg.Sandbox.Network)
	if err != nil {
		return nil, err
	}
	var private []string
	for _, name := range privateVars {
		if v := env[name]; v != "" && filepath.IsAbs(v) {
			private = append(private, v)
		}
	}
	environ := Setup{Env: env}.environ()
	return sandbox.Open(ctx, sandbox.Options{Mode: m, Workspace: dir, Environ: environ, Private: private,
		Network: network, GoCache: sandbox.GoDirs(environ)["GOCACHE"], Probe: probe, UnixSockets: cfg.Sandbox.UnixSockets})
}

func (k *Kit) boundaryOn(ctx context.Context, dir string) (*sandbox.Boundary, error) {
	return OpenBoundary(ctx, k.s.Config, dir, k.s.Env, k.s.Probe)
}

// openBoundary opens the boundary for the Job and says so in its log, and
// the tools inside it. An unavailable boundary is not a setup error: the Job
// runs and ends with the unisolated class before any model-written command,
// its tools refusing every command.
func (k *Kit) openBoundary(ctx context.Context) error {
	s := k.s
	b, err := k.boundaryOn(ctx, s.Dir)
	var u *sandbox.Unavailable
	if errors.As(err, &u) {
		k.Unisolated = u.Error()
		fmt.Fprintf(s.Log, "roadmap: %s: %s\n", s.Phase, k.Unisolated)
		k.Sandbox, k.CheckRunner = refusing{why: k.Unisolated}, refusingChecks{why: k.Unisolated}
		return nil
	}
	if err != nil {
		return &Error{Part: "isolation", Usage: true, Err: err}
	}
	k.boundary = b
	k.closers = append(k.closers, func() { _ = k.closeBoundary(b) })
	fmt.Fprintf(s.Log, "roadmap: %s: %s\n", s.Phase, b.Describe())
	if !b.Isolated() {
		fmt.Fprintf(s.Log, "::warning title=roadmap: not isolated::%s\n", sandbox.NotIsolatedWarning)
	}
	sb := policy.NewSandbox(b, k.Policy, s.environ())
	k.Sandbox, k.CheckRunner = sandboxTools{sb}, checks.SandboxRunner(sb)
	return nil
}

// beforeTree opens a boundary of the same mode on another work tree (the
// tree before a group, for implement's fail-to-pass); nil when there is no
// boundary at all (then nothing model-written runs).
func (k *Kit) beforeTree() func(context.Context, string) (checks.Runner, string, func() error, error) {
	if k.boundary == nil {
		return nil
	}
	return func(ctx context.Context, dir string) (checks.Runner, string, func() error, error) {
		b, err := k.boundaryOn(ctx, dir)
		if err != nil {
			return nil, "", nil, err
		}
		sb := policy.NewSandbox(b, k.Policy, k.s.environ())
		ws, err := sb.Workspace()
		if err != nil {
			_ = b.Close()
			return nil, "", nil, err
		}
		return checks.SandboxRunner(sb), ws, func() error { return k.closeBoundary(b) }, nil
	}
}

// groupTree opens a boundary of the same mode on a scratch work tree for a
// group that runs beside another (implement.parallel_groups): the agent's
// tools and the checks there. nil when there is no boundary at all.
func (k *Kit) groupTree() func(context.Context, string) (agent.Sandbox, checks.Runner, string, func() error, error) {
	if k.boundary == nil {
		return nil
	}
	return func(ctx context.Context, dir string) (agent.Sandbox, checks.Runner, string, func() error, error) {
		b, err := k.boundaryOn(ctx, dir)
		if err != nil {
			return nil, nil, "", nil, err
		}
		sb := policy.NewSandbox(b, k.Policy, k.s.environ())
		ws, err := sb.Workspace()
		if err != nil {
			_ = b.Close()
			return nil, nil, "", nil, err
		}
		return sandboxTools{sb}, checks.SandboxRunner(sb), ws, func() error { return k.closeBoundary(b) }, nil
	}
}

// closeBoundary closes b and says in the log, as a warning a person sees on
// the run, which repositories the model had made below the work tree's top:
// Close removed them, so no later step's git (actions/checkout's cleanup
// walks every submodule folder) obeys a configuration the model wrote.
func (k *Kit) closeBoundary(b *sandbox.Boundary) error {
	err := b.Close()
	if err != nil {
		fmt.Fprintf(k.s.Log, "roadmap: %s: close the isolation boundary: %v\n", k.s.Phase, err)
	}
	for _, p := range b.Planted() {
		fmt.Fprintf(k.s.Log, "::warning title=roadmap: planted repository removed::a command the model wrote made a repository at %q in the work tree; roadmap removed it before any later step could run its git configuration (docs/isolation.md)\n", p)
	}
	return err
}

// sandboxTools gives the policy sandbox the agent's Run signature.
type sandboxTools struct{ *policy.Sandbox }

func (s sandboxTools) Run(ctx context.Context, argv []string) (agent.RunResult, error) {
	r, err := s.Sandbox.Run(ctx, argv)
	return agent.RunResult(r), err
}

// refusing runs nothing: the boundary is unavailable.
type refusing struct{ why string }

func (r refusing) Workspace() (string, error)         { return "", errors.New(r.why) }
func (r refusing) Resolve(string) (string, error)     { return "", errors.New(r.why) }
func (r refusing) Split(cmd string) ([]string, error) { return policy.Split(cmd) }
func (r refusing) Run(context.Context, []string) (agent.RunResult, error) {
	return agent.RunResult{}, errors.New(r.why)
}

type refusingChecks struct{ why string }

func (r refusingChecks) Run(context.Context, string, []string) (checks.Result, error) {
	return checks.Result{}, errors.New(r.why)
}
