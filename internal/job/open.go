package job

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/adopt"
	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/checks"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/git"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/kernel"
	"github.com/roadmap-dev/roadmap/internal/ledger"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/policy"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/redact"
	"github.com/roadmap-dev/roadmap/internal/sandbox"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// Setup is what Open builds a Job from: what the Job is for, the
// configuration and the environment, and the parts a test may replace.
type Setup struct {
	// Phase is the phase the Job runs for (stage.Phase, implement.Phase).
	Phase         kernel.Phase
	Issue         int
	RunID         int64
	RecordComment int64
	// Number is the Job's number when the caller knows it (a continuation's
	// dispatch input); 0 takes the record's next. It also numbers the trace.
	Number int
	// Dir is the work tree; Remote and Base the git remote and the base
	// branch ("" takes origin and the configuration's base branch).
	Dir          string
	Remote, Base string
	// Deadline is when the Job must have handed over; zero means none.
	Deadline time.Time
	// Config is the configuration (budgets, models, checks, policy,
	// isolation); ConfigPath names its file in errors.
	Config     *config.Config
	ConfigPath string
	// Env is the environment the Job sees: GITHUB_REPOSITORY, GITHUB_API_URL,
	// the model keys, RUNNER_TEMP and the rest. Token is the GitHub token
	// (the CLI finds it as gh does). PushToken, when set, is what roadmap's
	// own pushes authenticate with (ROADMAP_PUSH_TOKEN), else Token.
	Env       map[string]string
	Token     string
	PushToken string
	// Dashboard is the issue holding the day's spend ledger (0: no day
	// budget is checked).
	Dashboard int
	// TraceFile is where the JSONL trace is appended ("" is
	// RUNNER_TEMP/TraceName); RecordDir, when set, keeps every model
	// exchange as replay fixtures.
	TraceFile string
	RecordDir string
	// Log is the Job's log (the step's stderr); SetOutput the step outputs.
	Log       io.Writer
	SetOutput func(name, value string)

	// Parts a test replaces; nil is the shipped part.
	//
	// Transport carries GitHub's requests (a fault injector).
	Transport http.RoundTripper
	// Clock is the Job's time, the GitHub client's and the model client's.
	Clock kernel.Clock
	// WrapModel wraps each tier's model inside the masker (a kill at a model
	// call).
	WrapModel func(agent.Model) agent.Model
	// GitHook is called around each of roadmap's git commands.
	GitHook func(args []string, done bool, err error)
	// Probe replaces the platform checks of the isolation boundary.
	Probe *sandbox.Probe
	// TraceOut receives the trace instead of TraceFile.
	TraceOut io.Writer
	// GitHubNoRetry turns the GitHub client's transient retries off (the
	// fault suite's TestRecoveryNeedsEvidence).
	GitHubNoRetry bool
}

// Kit is what a Job runs with, as Open built it. Close releases it.
type Kit struct {
	s      Setup
	cfg    *config.Config
	Masker *redact.Masker
	GitHub *github.Client
	Repo   *git.Repo
	Policy *policy.Policy
	// Checks are the checks run besides the plan's verify commands: the
	// configuration's checks.commands, else those detected from the work
	// tree (adopt.RunTimeChecks).
	Checks   []string
	boundary *sandbox.Boundary
	// Unisolated is why no isolation boundary could be opened ("" when one
	// is open): the Job then runs no model-written command.
	Unisolated  string
	Sandbox     agent.Sandbox
	CheckRunner checks.Runner
	Trace       *trace.Recorder
	// TraceFile is the file the trace is appended to ("" with TraceOut).
	TraceFile string
	Tiers     []agent.Tier
	closers   []func()
}

// Error is a setup that failed. Usage is set when the configuration, the
// environment or an argument is at fault (a person fixes it), unset when the
// machine failed.
type Error struct {
	Part  string
	Usage bool
	Err   error
}

func (e *Error) Error() string { return e.Part + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// DayRefused is Open's error when the day's budget is spent: the Job must
// not start, and the item waits for the next day (report does not continue
// it before).
type DayRefused struct {
	Budget ledger.Budget
	Spent  record.Spend
	Day    string
}

func (d *DayRefused) Error() string {
	return fmt.Sprintf("the day's budget is spent on %s (%s); the item waits for the next day",
		d.Day, ledger.Text(d.Spent, d.Budget))
}

// Open builds what the Job s describes runs with. On an error nothing is
// left open.
func Open(ctx context.Context, s Setup) (k *Kit, err error) {
	if s.Config == nil {
		s.Config = config.Default()
	}
	if s.Remote == "" {
		s.Remote = "origin"
	}
	if s.Base == "" {
		s.Base = s.Config.Implement.BaseBranch
	}
	if s.Log == nil {
		s.Log = io.Discard
	}
	if s.SetOutput == nil {
		s.SetOutput = func(string, string) {}
	}
	kit := &Kit{s: s, cfg: s.Config}
	defer func() {
		if err != nil {
			kit.Close()
		}
	}()
	k = kit
	k.Masker = s.masker()
	if k.GitHub, err = s.gitHub(k.Masker); err != nil {
		return nil, &Error{Part: "github", Usage: true, Err: err}
	}
	if err := s.dayGate(ctx, k.GitHub); err != nil {
		return nil, err
	}
	if k.Repo, err = s.repo(ctx); err != nil {
		return nil, err
	}
	k.Repo.SecretScan = k.Masker.Contains // no push carries a secret of the Job's
	if err := k.openChecks(); err != nil {
		return nil, err
	}
	if err := k.openBoundary(ctx); err != nil {
		return nil, err
	}
	if err := k.openTrace(); err != nil {
		return nil, err
	}
	if k.Tiers, err = k.tiers(); err != nil {
		return nil, err
	}
	return k, nil
}

// openChecks sets the Job's checks and its policy: the configuration's
// checks.commands, else those init would write for the work tree, with the
// policy rows they need laid under the configuration's own (logged, so a
// person sees where a check came from).
func (k *Kit) openChecks() error {
	s := k.s
	cmds, rows, by, err := adopt.RunTimeChecks(s.Config, s.Dir)
	if err != nil {
		// A tree that cannot be read for detection still runs: the plan's
		// verify commands are the checks.
		fmt.Fprintf(s.Log, "roadmap: checks.commands not detected: %v\n", err)
	}
	if by != "" {
		fmt.Fprintf(s.Log, "roadmap: checks.commands detected from %s: %s (checks.detect: false turns this off; docs/configuration.md)\n", by, strings.Join(cmds, "; "))
	}
	k.Checks = cmds
	if k.Policy, err = policy.ParseNodeOver(&s.Config.Policy, rows); err != nil {
		return &Error{Part: s.ConfigPath + ": policy", Usage: true, Err: err}
	}
	return nil
}

// Close closes the trace file and the isolation boundary.
func (k *Kit) Close() {
	for i := len(k.closers) - 1; i >= 0; i-- {
		k.closers[i]()
	}
	k.closers = nil
}

// IsolationNote is the warning summaries and comments carry when the run is
// not isolated by configuration ("" when it is).
func (k *Kit) IsolationNote() string {
	if k.boundary != nil && !k.boundary.Isolated() {
		return sandbox.NotIsolatedWarning
	}
	if k.boundary != nil {
		if missing := k.boundary.Missing(); len(missing) > 0 {
			return "The isolation boundary ran without " + strings.Join(missing, "; and without ") + " (docs/isolation.md)."
		}
	}
	return ""
}

// Config is the configuration the Job runs with.
func (k *Kit) Config() *config.Config { return k.cfg }

func (s Setup) getenv(k string) string { return s.Env[k] }

// environ is the environment as sorted KEY=VALUE lines.
func (s Setup) environ() []string {
	out := make([]string, 0, len(s.Env))
	for k, v := range s.Env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// masker masks the secret families, the value of every secret-looking
// variable of the environment, the model keys the configuration names by
// variable, and the tokens by value whatever their variables are called.
func (s Setup) masker() *redact.Masker {
	secrets := append(redact.SecretsFromEnv(s.environ()), s.modelKeys()...)
	for _, t := range []string{s.Token, s.PushToken} {
		if t != "" {
			secrets = append(secrets, t)
		}
	}
	return redact.New(redact.Config{Secrets: secrets})
}

// modelKeys are the values of the model keys the configuration names by
// variable (api_key_env): a neutral name (LLM) is no sign of a secret, so
// they are masked by name. They are read from the Setup's environment only;
// the process's is left as it is (Open changes nothing process-wide: the
// fault suite opens a hundred Jobs in one process). No process the Job
// starts inherits it: git gets its allow-list (internal/git) and tool
// commands the boundary's (sandbox.Boundary.Env), both built from Env.
func (s Setup) modelKeys() []string {
	var keys []string
	for _, m := range s.Config.Models {
		if m.APIKeyEnv == "" {
			continue
		}
		if v := s.getenv(m.APIKeyEnv); v != "" {
			keys = append(keys, v)
		}
	}
	return keys
}

// gitHub is the client for the repository the environment names.
func (s Setup) gitHub(m *redact.Masker) (*github.Client, error) {
	full := s.getenv("GITHUB_REPOSITORY")
	owner, repo, ok := strings.Cut(full, "/")
	if !ok || owner == "" || repo == "" {
		return nil, fmt.Errorf("GITHUB_REPOSITORY %q is not owner/repo", full)
	}
	if s.Token == "" {
		return nil, errors.New("no GitHub token")
	}
	base := s.getenv("GITHUB_API_URL")
	if base != "" && !strings.HasSuffix(base, "/") {
		base += "/"
	}
	timeout, err := github.Timeout(s.getenv(github.EnvTimeout))
	if err != nil {
		return nil, err
	}
	o := github.Options{BaseURL: base, GraphQLURL: s.getenv("GITHUB_GRAPHQL_URL"), Token: s.Token,
		Owner: owner, Repo: repo, Masker: m, Deadline: s.Deadline, Identity: s.getenv("ROADMAP_IDENTITY"),
		HTTPClient: &http.Client{Timeout: timeout, Transport: s.Transport},
		OnRecovery: github.LogRecoveries(s.Log), NoRetry: s.GitHubNoRetry}
	if s.Clock != nil {
		o.Clock = s.Clock
	}
	return github.New(o)
}

// dayGate, with a dashboard and a day budget, reads the day's ledger on
// the dashboard issue before the Job starts: a *DayRefused when the day's
// spend has reached the budget. A continuation (Job 2 on, its number a
// dispatch input) is not checked again: report and wake dispatch one only
// after reading the same ledger with the Job before it booked, so a second
// read would spend a request to learn the same. Without a dashboard the
// ledger is on the ledger issue report keeps (internal/ledger), and only
// report and wake read it, before each continuation and wake: finding that
// issue at every Job's start would cost each item two more requests than
// DESIGN's 30. So a Job a person starts (a label, a retry) is not refused
// at its start; a dashboard adds that check (docs/dashboard.md).
func (s Setup) dayGate(ctx context.Context, gh *github.Client) error {
	budget := DayBudget(s.Config.Budgets.Day)
	if s.Dashboard == 0 || budget.Zero() || s.Number > 1 {
		return nil
	}
	where := s.Dashboard
	now := time.Now()
	if s.Clock != nil {
		now = s.Clock.Now()
	}
	day := ledger.Day(now)
	spent, ok, err := ledger.Check(ctx, gh, where, day, budget, nil)
	if err != nil {
		return &Error{Part: "day budget", Err: err}
	}
	if !ok {
		return &DayRefused{Budget: budget, Spent: spent, Day: day}
	}
	return nil
}

// repo opens the checkout for roadmap's own git, with the credentials its
// pushes use: a push token (an App installation token or a fine-grained PAT)
// when there is one, so the repository's CI runs on the pushes as on a
// contributor's (GITHUB_TOKEN's pushes start no workflow run), else Token.
func (s Setup) repo(ctx context.Context) (*git.Repo, error) {
	repo, err := git.Open(ctx, s.Dir, s.environ())
	if err != nil {
		return nil, &Error{Part: "git", Usage: true, Err: err}
	}
	tok := s.PushToken
	if tok == "" {
		tok = s.Token
	}
	if server := s.getenv("GITHUB_SERVER_URL"); tok != "" && server != "" {
		repo.Authenticate(server, tok) // push, fetch and ls-remote only
	}
	repo.Hook = s.GitHook
	if err := repo.EnsureIdentity(ctx); err != nil {
		return nil, &Error{Part: "git", Err: err}
	}
	return repo, nil
}

// TraceName is the default trace file name of a Job: the run id tells the
// Jobs of an item apart (the Job's number may not be known before the record
// is read).
func TraceName(phase kernel.Phase, issue, runID string) string {
	return phase.TraceName + "-" + issue + "-run-" + runID + ".jsonl"
}

// openTrace opens the JSONL trace for appending.
func (k *Kit) openTrace() error {
	s := k.s
	w := s.TraceOut
	if w == nil {
		k.TraceFile = s.TraceFile
		if k.TraceFile == "" {
			tmp := s.getenv("RUNNER_TEMP")
			if tmp == "" {
				tmp = os.TempDir()
			}
			k.TraceFile = filepath.Join(tmp, TraceName(s.Phase, strconv.Itoa(s.Issue), strconv.FormatInt(s.RunID, 10)))
		}
		f, err := os.OpenFile(k.TraceFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return &Error{Part: "trace file", Usage: true, Err: err}
		}
		k.closers = append(k.closers, func() { f.Close() })
		w = f
	}
	now := time.Now
	if s.Clock != nil {
		now = s.Clock.Now
	}
	rec, err := trace.NewRecorder(w, k.Masker, now, s.Number)
	if err != nil {
		return &Error{Part: "trace", Err: err}
	}
	k.Trace = rec
	return nil
}

// tiers builds the model ladder: one client per configured model, retries
// traced, every exchange recorded as replay fixtures under RecordDir when it
// is set, every request masked.
func (k *Kit) tiers() ([]agent.Tier, error) {
	s, cfg := k.s, k.cfg
	opts := []llm.Option{llm.WithGetenv(s.getenv), llm.WithRetryObserver(func(ev agent.RetryEvent) {
		_ = k.Trace.Add(trace.Event{Type: trace.TypeRetry, Reason: ev.Reason, Attempt: ev.Attempt, Wait: ev.Wait})
	})}
	if s.Clock != nil {
		opts = append(opts, llm.WithClock(s.Clock))
	}
	if s.RecordDir != "" {
		if err := os.MkdirAll(s.RecordDir, 0o755); err != nil {
			return nil, &Error{Part: "--record", Usage: true, Err: err}
		}
	}
	wrap := func(model agent.Model) agent.Model {
		if s.RecordDir != "" {
			model = llm.Record(model, s.RecordDir)
		}
		if s.WrapModel != nil {
			model = s.WrapModel(model)
		}
		return model
	}
	var tiers []agent.Tier
	for i := range cfg.Models {
		t, err := NewTier(cfg, i, k.Masker.Mask, wrap, opts...)
		if err != nil {
			return nil, &Error{Part: s.ConfigPath, Usage: true, Err: err}
		}
		tiers = append(tiers, t)
	}
	return tiers, nil
}

// NewTier is the tier of the configuration's model i: its client with the
// configuration's prices, wrap (nil: none) around the model, every request
// masked by mask. Each tier has its own request limits: a cheap model's
// window is not a larger one's. The Job's ladder and the review verb's
// reviewer are both built here.
func NewTier(cfg *config.Config, i int, mask func(string) string, wrap func(agent.Model) agent.Model, opts ...llm.Option) (agent.Tier, error) {
	prices := map[string]llm.Price{}
	for name, p := range cfg.Prices {
		prices[name] = llm.Price{Input: p.Input, Output: p.Output}
	}
	m := cfg.Models[i]
	client, err := llm.New(llm.Config{Provider: m.Provider, BaseURL: m.BaseURL, Model: m.Name, APIKeyEnv: m.APIKeyEnv,
		InputWindow: m.InputWindow, MaxOutput: m.MaxOutput, Prices: prices, Fixtures: m.Fixtures}, opts...)
	if err != nil {
		return agent.Tier{}, fmt.Errorf("models[%d]: %w", i, err)
	}
	var model agent.Model = client
	if wrap != nil {
		model = wrap(model)
	}
	p := prices[m.Name]
	return agent.Tier{Name: m.Name, Model: agent.Masked(model, mask),
		USDPerMTokIn: p.Input, USDPerMTokOut: p.Output, MaxOutput: m.MaxOutput, Window: int64(m.InputWindow)}, nil
}

// NamedModel is the index of the model name names in the configuration's
// ladder, else the ladder's last: the reviewer (review.model) and the
// verifier (stage.verifier) are another tier than the one a Job starts on
// when the ladder has two. -1 when the ladder is empty.
func NamedModel(cfg *config.Config, name string) int {
	for i, m := range cfg.Models {
		if m.Name == name {
			return i
		}
	}
	return len(cfg.Models) - 1
}

// AgentBudget is a configured budget as the agent counts it.
func AgentBudget(b config.Budget) agent.Budget {
	return agent.Budget{Turns: b.Turns, TokensIn: b.TokensIn, TokensOut: b.TokensOut, USD: b.USD, Wall: b.Wall}
}

// DayBudget is the configuration's day budget as the ledger checks it (its
// turns and wall time bound no day).
func DayBudget(b config.Budget) ledger.Budget {
	return ledger.Budget{USD: b.USD, TokensIn: b.TokensIn, TokensOut: b.TokensOut}
}
