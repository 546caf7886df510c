package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/roadmap-dev/roadmap/internal/actionsio"
	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/inputerr"
	"github.com/roadmap-dev/roadmap/internal/job"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/policy"
	"github.com/roadmap-dev/roadmap/internal/redact"
	"github.com/roadmap-dev/roadmap/internal/sandbox"
)

// Factory is what every verb builds its parts from, in the manner of the gh
// CLI's cmdutil.Factory: each part is a func field, built on its first call
// and once, so a verb that never reaches GitHub never looks for a token, and
// a test may replace a part before the verb runs. This file is the one place
// in the package that builds a GitHub client, a model, a policy, an
// isolation boundary or a Job's Kit, and that loads a configuration
// (TestVerbsThin holds it so).
type Factory struct {
	env *Env

	// ConfigPath and Workdir are what Config reads: the --config flag (a
	// file that must exist), else Workdir/.github/roadmap.yml (the defaults
	// without it). Workdir "" is $GITHUB_WORKSPACE, else the current
	// directory. A verb sets them from its flags before its first call of
	// Config; Config sets ConfigPath to the file it read.
	ConfigPath, Workdir string

	// Now is the verb's clock.
	Now func() time.Time
	// Build is what this roadmap knows of its version and commit
	// (currentBuild); init pins the workflows it writes to it.
	Build func() Build
	// IO is the step's outputs, summary and annotations (stdout in Actions).
	IO func() *actionsio.IO
	// Config is the configuration, loaded once. A verb that must trust
	// another configuration (the base's, ci) replaces it before its first
	// call, as gh's -R replaces BaseRepo.
	Config func() (*config.Config, error)
	// Masker masks the secret families, every secret-looking variable of
	// the environment and, once Config has loaded, the model keys the
	// configuration names by variable.
	Masker func() *redact.Masker
	// GitHub is the client for the repository the environment names (-R,
	// GITHUB_REPOSITORY, the origin remote), every error masked.
	GitHub func() (*github.Client, error)
	// Policy is the configuration's shell policy.
	Policy func() (*policy.Policy, error)
	// Reviewer is the review's one-tier ladder: the model review.model
	// names, else the ladder's last (job.NamedModel, the rule a Job's own
	// review follows).
	Reviewer func() (agent.Tier, error)
	// Boundary opens the isolation boundary on the work tree dir as the
	// configuration cfg says; an *sandbox.Unavailable error means no
	// model-written command may run.
	Boundary func(ctx context.Context, cfg *config.Config, dir string) (*sandbox.Boundary, error)
	// OpenJob opens what a stage or implement Job runs with (job.Open),
	// the environment's parts filled in: the token, the push token, the
	// log, the probe.
	OpenJob func(ctx context.Context, s job.Setup) (*job.Kit, error)

	// configLoaded is set once Config has read a configuration.
	configLoaded bool
}

// factory is the Env's Factory, made on first use.
func (e *Env) factory() *Factory {
	if e.f == nil {
		e.f = newFactory(e)
	}
	return e.f
}

// newFactory wires every part of env's Factory lazily.
func newFactory(env *Env) *Factory {
	f := &Factory{env: env, Now: time.Now, Build: currentBuild}
	f.IO = sync.OnceValue(func() *actionsio.IO { return actionsio.New(env.Getenv, env.Stdout) })
	f.Config = sync.OnceValues(func() (*config.Config, error) {
		cfg, path, err := loadConfig(f.ConfigPath, env.workdir(f.Workdir))
		f.ConfigPath, f.configLoaded = path, err == nil
		return cfg, err
	})
	var masker *redact.Masker
	masked := false // masker masks the configuration's model keys
	f.Masker = func() *redact.Masker {
		if masker == nil || f.configLoaded && !masked {
			var cfg *config.Config
			if f.configLoaded {
				cfg, _ = f.Config()
			}
			masker, masked = env.masker(modelKeys(env, cfg)...), f.configLoaded
		}
		return masker
	}
	f.GitHub = sync.OnceValues(func() (*github.Client, error) { return env.gitHubClient(f.Masker(), time.Time{}) })
	f.Policy = sync.OnceValues(func() (*policy.Policy, error) {
		cfg, err := f.Config()
		if err != nil {
			return nil, err
		}
		return policy.ParseNode(&cfg.Policy)
	})
	f.Reviewer = sync.OnceValues(func() (agent.Tier, error) { return f.reviewer() })
	f.Boundary = func(ctx context.Context, cfg *config.Config, dir string) (*sandbox.Boundary, error) {
		return job.OpenBoundary(ctx, cfg, dir, env.Vars, env.probe)
	}
	f.OpenJob = func(ctx context.Context, s job.Setup) (*job.Kit, error) {
		s.Env, s.Token, s.PushToken = env.Vars, env.token(), env.Getenv("ROADMAP_PUSH_TOKEN")
		s.Log, s.Probe = env.Stderr, env.probe
		if s.Token == "" {
			env.authMissing = true
			return nil, errNoAuth
		}
		return job.Open(ctx, s)
	}
	return f
}

// userToken is the caller's GitHub token (GH_TOKEN, GITHUB_TOKEN, gh's
// login), for the verb that hands it to a model as its key: roadmap try,
// whose configured GitHub Models read their key from a GitHub token.
func (f *Factory) userToken() string { return f.env.token() }

// loadConfig is the one way the verbs read a configuration: the file path
// names, which must exist, else dir/.github/roadmap.yml, the defaults
// without it. It returns the path it read.
func loadConfig(path, dir string) (*config.Config, string, error) {
	if path != "" {
		cfg, err := config.LoadExplicit(path)
		return cfg, path, err
	}
	path = filepath.Join(dir, config.DefaultPath)
	cfg, err := config.Load(path)
	return cfg, path, err
}

// configFailed says a configuration error on stderr and, in Actions, as an
// annotation on the file and line; it returns ExitUsage.
func (f *Factory) configFailed(err error) int {
	f.env.Errorf("%v", err)
	f.IO().Error(f.ConfigPath, lineOf(err), err.Error())
	return ExitUsage
}

// configAndGitHub is the configuration and the GitHub client, for the
// verbs that keep GitHub as the configuration says (report, wake,
// dashboard refresh, dashboard eval); a code other than ExitOK ends the
// verb, the error said: ExitUsage for a configuration, a repository or a
// login the caller must fix.
func (f *Factory) configAndGitHub() (*config.Config, *github.Client, int) {
	cfg, err := f.Config()
	if err != nil {
		return nil, nil, f.configFailed(err)
	}
	gh, err := f.GitHub()
	if err != nil {
		f.env.Errorf("%v", err)
		return nil, nil, ExitUsage
	}
	return cfg, gh, ExitOK
}

// lineOf is the line of a configuration error, 0 when it has none.
func lineOf(err error) int {
	var ce *config.Error
	if errors.As(err, &ce) {
		return ce.Line
	}
	return 0
}

// exitFor is the exit code of a verb's failure: ExitUsage when the caller
// can fix it (an *inputerr.Error, whatever package returned it), else
// ExitInternal.
func exitFor(err error) int {
	if inputerr.Is(err) {
		return ExitUsage
	}
	return ExitInternal
}

// reviewer builds the Reviewer tier.
func (f *Factory) reviewer() (agent.Tier, error) {
	cfg, err := f.Config()
	if err != nil {
		return agent.Tier{}, err
	}
	i := job.NamedModel(cfg, cfg.Review.Model)
	if i < 0 {
		return agent.Tier{}, errors.New("the configuration names no model")
	}
	return job.NewTier(cfg, i, f.Masker().Mask, nil, llm.WithGetenv(f.env.Getenv))
}

// modelKeys are the values of the model keys cfg names by variable, masked
// like every secret; none without a configuration.
func modelKeys(e *Env, cfg *config.Config) []string {
	if cfg == nil {
		return nil
	}
	var keys []string
	for _, m := range cfg.Models {
		if v := e.Getenv(m.APIKeyEnv); m.APIKeyEnv != "" && v != "" {
			keys = append(keys, v)
		}
	}
	return keys
}

// gitHubClient is a client for the repository the environment names: -R,
// else GITHUB_REPOSITORY, else GH_REPO, else the origin remote of the work
// tree (e.repository).
func (e *Env) gitHubClient(m *redact.Masker, deadline time.Time) (*github.Client, error) {
	repoFull, err := e.repository()
	if err != nil {
		return nil, err
	}
	if repoFull == "" {
		return nil, errors.New("no repository: pass -R OWNER/REPO, set GITHUB_REPOSITORY or GH_REPO, or run in a clone whose origin remote is on GitHub")
	}
	owner, repo, ok := strings.Cut(repoFull, "/")
	if !ok || owner == "" || repo == "" {
		return nil, fmt.Errorf("GITHUB_REPOSITORY %q is not owner/repo", repoFull)
	}
	token := e.token()
	if token == "" {
		e.authMissing = true
		return nil, errNoAuth
	}
	base := e.Getenv("GITHUB_API_URL")
	if base != "" && !strings.HasSuffix(base, "/") {
		base += "/"
	}
	timeout, err := github.Timeout(e.Getenv(github.EnvTimeout))
	if err != nil {
		return nil, err
	}
	return github.New(github.Options{
		BaseURL: base, GraphQLURL: e.Getenv("GITHUB_GRAPHQL_URL"), Token: token,
		Owner: owner, Repo: repo, Masker: m, Deadline: deadline, Identity: e.Getenv("ROADMAP_IDENTITY"),
		HTTPClient: &http.Client{Timeout: timeout}, OnRecovery: github.LogRecoveries(e.Stderr),
	})
}

// token is the GitHub token, looked for as the gh CLI does: GH_TOKEN, then
// GITHUB_TOKEN, then the gh CLI's own login (`gh auth token`). A token from
// gh is put in the environment as GH_TOKEN, so every masker built after it
// masks it too. The token is never printed.
func (e *Env) token() string {
	for _, k := range []string{"GH_TOKEN", "GITHUB_TOKEN"} {
		if t := strings.TrimSpace(e.Getenv(k)); t != "" {
			return t
		}
	}
	ask := e.ghAuthToken
	if ask == nil {
		ask = ghAuthToken
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	t, err := ask(ctx)
	if err != nil || t == "" {
		return ""
	}
	e.Vars["GH_TOKEN"] = t
	return t
}

// ghAuthToken runs `gh auth token`; an error when gh is missing or logged
// out. Only the first line of its output is read, and none of it is shown.
func ghAuthToken(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "gh", "auth", "token").Output()
	if err != nil {
		return "", err
	}
	line, _, _ := strings.Cut(string(out), "\n")
	line = strings.TrimSpace(line)
	if len(line) > 1024 || strings.ContainsAny(line, " \t") {
		return "", fmt.Errorf("gh auth token: not a token")
	}
	return line, nil
}
