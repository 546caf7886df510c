package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/checks"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/policy"

	"github.com/roadmap-dev/roadmap/internal/sandbox"
)

// privateVars name the runner's own files and folders, closed to the sandbox
// user: its temporary folder (the workflow command files, the event, the
// trace), each workflow command file where it lives elsewhere, and its HOME.
var privateVars = []string{"RUNNER_TEMP", "GITHUB_ENV", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY",
	"GITHUB_PATH", "GITHUB_STATE", "GITHUB_EVENT_PATH", "HOME"}

// boundary opens the isolation boundary for the work tree dir in the mode the
// configuration names. An *sandbox.Unavailable error means the verb must not
// run model-written commands.
func (e *Env) boundary(ctx context.Context, mode, dir string) (*sandbox.Boundary, error) {
	m, err := sandbox.ParseMode(mode)
	if err != nil {
		return nil, err
	}
	var private []string
	for _, k := range privateVars {
		if v := e.Getenv(k); v != "" && filepath.IsAbs(v) {
			private = append(private, v)
		}
	}
	environ := e.environ()
	return sandbox.Open(ctx, sandbox.Options{Mode: m, Workspace: dir, Environ: environ, Private: private,
		GoCache: sandbox.GoDirs(environ)["GOCACHE"], Probe: e.probe})
}

// unavailable returns the reason of an *sandbox.Unavailable error.
func unavailable(err error) (string, bool) {
	var u *sandbox.Unavailable
	if errors.As(err, &u) {
		return u.Error(), true
	}
	return "", false
}

// isolation is a verb's boundary: open (b set), or unavailable (why set), in
// which case every model-written command is refused.
type isolation struct {
	b   *sandbox.Boundary
	why string
}

// openBoundary opens the boundary for a verb and says so in the log. An
// unavailable boundary is not an error of the verb: it returns the reason,
// and the verb ends with the unisolated class. Any other failure is printed
// and its exit code returned.
func (e *Env) openBoundary(ctx context.Context, verb, mode, dir string) (*isolation, string, int) {
	b, err := e.boundary(ctx, mode, dir)
	if why, ok := unavailable(err); ok {
		e.Errorf("%s: %s", verb, why)
		return &isolation{why: why}, why, ExitOK
	}
	if err != nil {
		e.Errorf("%s: %v", verb, err)
		return nil, "", ExitUsage
	}
	fmt.Fprintf(e.Stderr, "roadmap: %s: %s\n", verb, b.Describe())
	if !b.Isolated() {
		fmt.Fprintf(e.Stderr, "::warning title=roadmap: not isolated::%s\n", sandbox.NotIsolatedWarning)
	}
	return &isolation{b: b}, "", ExitOK
}

// note is the warning summaries and comments carry when the run is not
// isolated by configuration.
func (i *isolation) note() string {
	if i.b != nil && !i.b.Isolated() {
		return sandbox.NotIsolatedWarning
	}
	return ""
}

func (i *isolation) close(e *Env, verb string) {
	if i.b == nil {
		return
	}
	if err := i.b.Close(); err != nil {
		e.Errorf("%s: close the isolation boundary: %v", verb, err)
	}
}

// tools returns the agent's sandbox and the check runner inside the
// boundary, or ones that refuse every command when there is none.
func (i *isolation) tools(pol *policy.Policy, environ []string) (agent.Sandbox, checks.Runner) {
	if i.b == nil {
		return refusing{why: i.why}, refusingChecks{why: i.why}
	}
	sb := policy.NewSandbox(i.b, pol, environ)
	return sandboxAdapter{sb}, checks.SandboxRunner(sb)
}

// beforeTree opens a boundary of the same mode on another work tree (the
// tree before a group, for implement's fail-to-pass); nil when there is no
// boundary at all (then nothing model-written runs).
func (i *isolation) beforeTree(e *Env, mode string, pol *policy.Policy) func(context.Context, string) (checks.Runner, string, func() error, error) {
	if i.b == nil {
		return nil
	}
	return func(ctx context.Context, dir string) (checks.Runner, string, func() error, error) {
		b, err := e.boundary(ctx, mode, dir)
		if err != nil {
			return nil, "", nil, err
		}
		sb := policy.NewSandbox(b, pol, e.environ())
		ws, err := sb.Workspace()
		if err != nil {
			_ = b.Close()
			return nil, "", nil, err
		}
		return checks.SandboxRunner(sb), ws, b.Close, nil
	}
}

// refusing runs nothing: the boundary is unavailable.
type refusing struct{ why string }

func (r refusing) Resolve(string) (string, error)     { return "", errors.New(r.why) }
func (r refusing) Split(cmd string) ([]string, error) { return policy.Split(cmd) }
func (r refusing) Run(context.Context, []string) (agent.RunResult, error) {
	return agent.RunResult{}, errors.New(r.why)
}

type refusingChecks struct{ why string }

func (r refusingChecks) Run(context.Context, string, []string) (checks.Result, error) {
	return checks.Result{}, errors.New(r.why)
}

// modelKeys are the values of the model keys the configuration names by
// variable (api_key_env): a neutral name (LLM) is no sign of a secret, so
// they are masked by name. The variables also leave the process's own
// environment.
func (e *Env) modelKeys(cfg *config.Config) []string {
	var keys []string
	for _, m := range cfg.Models {
		if m.APIKeyEnv == "" {
			continue
		}
		if v := e.Getenv(m.APIKeyEnv); v != "" {
			keys = append(keys, v)
		}
		forgetEnv(m.APIKeyEnv)
	}
	return keys
}

// forgetEnv removes a credential's variable from roadmap's own process
// environment once it has been read, so no process of the same user can find
// it there (with the process made non-dumpable, /proc/PID/environ is closed
// too). Tests run Main in-process with an environment of their own; the
// process's is left as it is there, minus a name it never had.
func forgetEnv(name string) { _ = os.Unsetenv(name) }

// Protect is what the roadmap binary does with its own environment before a
// verb runs: every credential-looking variable leaves the process's
// environment (the verb reads its copy, environ) and the process becomes
// non-dumpable, so no process of the same user finds a token in
// /proc/PID/environ. Model keys under neutral names leave it once the
// configuration names them (modelKeys).
func Protect(environ []string) {
	keep := map[string]bool{}
	for _, kv := range policy.ScrubEnv(environ) {
		k, _, _ := strings.Cut(kv, "=")
		keep[k] = true
	}
	for _, kv := range environ {
		if k, _, ok := strings.Cut(kv, "="); ok && !keep[k] {
			forgetEnv(k)
		}
	}
	_ = sandbox.NonDumpable()
}
