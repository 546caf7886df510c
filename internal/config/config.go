package config

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// DefaultPath is where a repository keeps its configuration.
const DefaultPath = ".github/roadmap.yml"

// Config is the whole configuration. Field comments are the reference that
// docs/configuration.md repeats.
type Config struct {
	// Models are the tiers of the model ladder: attempt i uses Models[min(i, len-1)].
	Models []Model `yaml:"models"`
	// Prices are USD per million tokens, by model name: the built-in table
	// (BuiltinPrices, dated) with the configuration's entries over it.
	Prices map[string]Price `yaml:"prices"`
	// Budgets bound what a step, an item and a day may spend.
	Budgets Budgets `yaml:"budgets"`
	// Policy is the shell policy table, decoded by internal/policy.
	Policy yaml.Node `yaml:"policy"`
	// Checks are run after every group and at the head, besides the plan's
	// verify commands.
	Checks Checks `yaml:"checks"`
	// Labels are the labels roadmap reads and sets.
	Labels Labels `yaml:"labels"`
	// Implement tunes the implement loop.
	Implement Implement `yaml:"implement"`
	// Stage tunes the stage phase: the planner and its verifier (docs/stage.md).
	Stage Stage `yaml:"stage"`
	// Review is the independent review of the diff before the PR is
	// marked ready (docs/review.md).
	Review Review `yaml:"review"`
	// Gates tunes the plan gates (docs/gates.md).
	Gates Gates `yaml:"gates"`
	// Isolation is the OS boundary model-written commands run in
	// (docs/isolation.md). Only an explicit "none" runs them without one.
	Isolation Isolation `yaml:"isolation" jsonschema:"enum=auto,enum=user,enum=none"`
	// Sandbox tunes the boundary (docs/isolation.md).
	Sandbox Sandbox `yaml:"sandbox"`
	// Eval holds the floors `roadmap eval` holds the golden sets to.
	Eval Eval `yaml:"eval"`
	// Alerts are the dashboard's alert thresholds and who they mention
	// (docs/dashboard.md).
	Alerts Alerts `yaml:"alerts"`
	// Blockers say when an item's blockers are met (docs/tracker.md).
	Blockers Blockers `yaml:"blockers"`
	// Tracker tunes how a tracker drives its sub-issues (docs/tracker.md).
	Tracker Tracker `yaml:"tracker"`
}

// Blockers say when the issues an item waits for are met.
type Blockers struct {
	// NotPlannedMet counts a blocker closed as not planned (or as a
	// duplicate) as met. Off by default: the work the item waits for was not
	// delivered, so the item keeps waiting and the blocker is named on it.
	NotPlannedMet bool `yaml:"not_planned_met"`
}

// Tracker tunes how a tracker drives its sub-issues.
type Tracker struct {
	// MaxActive is how many sub-issues of one tracker are active (staged or
	// implemented, not yet ready) at once, from 1 to 50.
	MaxActive int `yaml:"max_active"`
	// OnComplete is what roadmap does when every sub-issue of a tracker it
	// drives is closed: close the tracker (close, the default) or say so
	// in its status comment and leave it open (comment).
	OnComplete string `yaml:"on_complete" jsonschema:"enum=close,enum=comment"`
}

// Alerts say when the dashboard issue raises an alert (a comment on it) and
// whom it mentions. internal/dashboard's Rules are this, as the verbs pass
// it on (config imports no other package of roadmap's).
type Alerts struct {
	// Owners are mentioned in an alert's comment: "@login" or "@org/team".
	Owners []string `yaml:"owners"`
	// StopsPerDay fires an alert for a failure class once that many stops of
	// it happened across items in 24 hours; 0 turns it off.
	StopsPerDay int `yaml:"stops_per_day"`
	// DayBudgetShare fires an alert when the day's spend reaches that share
	// of budgets.day.usd (0.8: 80%); 0 turns it off.
	DayBudgetShare float64 `yaml:"day_budget_share"`
}

// Eval is the floors of `roadmap eval gates`, `roadmap eval stage` and
// `roadmap eval implement`: an overall score (0 to 1) below its floor fails
// the run. 0 is no floor.
type Eval struct {
	// Gates is the floor of `roadmap eval gates`.
	Gates EvalFloor `yaml:"gates"`
	// Stage is the floor of `roadmap eval stage`.
	Stage EvalFloor `yaml:"stage"`
	// Implement is the floor of `roadmap eval implement`.
	Implement EvalFloor `yaml:"implement"`
}

// EvalFloor is one golden set's floor.
type EvalFloor struct {
	// Floor is the least overall score (0 to 1) that passes; 0 is no floor.
	Floor float64 `yaml:"floor"`
}

// Sandbox tunes the isolation boundary.
type Sandbox struct {
	// Network is what a model-written command may reach: "loopback" (the
	// default: its own network namespace with only loopback) or "none".
	// Anything wider is the runner's firewall's to allow.
	Network string `yaml:"network" jsonschema:"enum=loopback,enum=none"`
	// UnixSockets are absolute paths of UNIX sockets the project's tests
	// need (a database's, a daemon's). Empty (the default), the boundary
	// refuses every socket(AF_UNIX) call; with any entry it allows them all,
	// since the system-call filter cannot see a path (docs/isolation.md).
	UnixSockets []string `yaml:"unix_sockets"`
}

// Isolation names the OS boundary that model-written commands run in.
type Isolation string

const (
	// IsolationAuto uses the best boundary the runner offers, and runs no
	// model-written command when it offers none. The default.
	IsolationAuto Isolation = "auto"
	// IsolationUser runs them as a separate unprivileged user, and fails
	// when that is not possible.
	IsolationUser Isolation = "user"
	// IsolationNone runs them as the runner's own user. Never a default:
	// a configuration has to say it.
	IsolationNone Isolation = "none"
)

// Bounds that keep later writes possible.
const (
	// MaxRepairRounds bounds implement.repair_rounds: every round is model
	// calls and a check run, recorded and paid for.
	MaxRepairRounds = 10
	// MaxJobsLimit bounds implement.max_jobs; it is the number of Jobs the
	// record keeps (record.MaxJobs), so the cap can always be counted.
	MaxJobsLimit = 100
	// DefaultMaxGroups and MaxGroupsLimit bound implement.max_groups, the
	// task groups one plan may hold (plan.DefaultMaxGroups is the same 50:
	// config imports no other package of roadmap's). A plan is model
	// output, and every group is a session, checks and a mark.
	DefaultMaxGroups = 50
	MaxGroupsLimit   = 1000
	// MaxLabelChars is GitHub's limit on a label name.
	MaxLabelChars = 50
	// MaxStringChars bounds any other string of the configuration: a
	// command, a model name, a URL, a form.
	MaxStringChars = 4096
	// MaxFileBytes bounds the configuration file: the whole reference
	// configuration is a few kilobytes.
	MaxFileBytes = 1 << 20
	// DefaultCheckReruns and MaxCheckReruns bound implement.check_reruns:
	// re-runs of CI jobs the infrastructure failed, per head.
	DefaultCheckReruns = 2
	MaxCheckReruns     = 5
	// MinPollInterval is the shortest implement.poll_interval: a faster
	// watch spends the API rate limit without learning anything.
	MinPollInterval = time.Second
	// DefaultMaxFindings and MaxFindingsLimit bound review.max_findings:
	// a review that raises more than a few blocking findings is noise.
	DefaultMaxFindings = 3
	MaxFindingsLimit   = 10
	// MaxReviewRounds bounds review.rounds.
	MaxReviewRounds = 5
	// DefaultTestStrengthFloor is implement.test_strength_floor when unset.
	DefaultTestStrengthFloor = 0.6
	// DefaultStopsPerDay and DefaultDayBudgetShare are alerts.stops_per_day
	// and alerts.day_budget_share when unset.
	DefaultStopsPerDay    = 3
	DefaultDayBudgetShare = 0.8
	// MaxOwners bounds alerts.owners: every alert comment mentions them all.
	MaxOwners = 20
	// DefaultTrackerMaxActive is tracker.max_active when unset;
	// MaxTrackerActive bounds it (each active sub-issue runs its own Jobs).
	DefaultTrackerMaxActive = 3
	MaxTrackerActive        = 50
)

// The values of tracker.on_complete.
const (
	TrackerClose   = "close"
	TrackerComment = "comment"
)

// Model is one tier of the ladder.
type Model struct {
	// Provider: github-models (default), openai, openai-compatible, anthropic, replay.
	Provider string `yaml:"provider" jsonschema:"enum=github-models,enum=openai,enum=openai-compatible,enum=anthropic,enum=replay"`
	// Name is the model name sent to the provider.
	Name string `yaml:"name"`
	// BaseURL is the API root; empty takes the provider's.
	BaseURL string `yaml:"base_url"`
	// APIKeyEnv names the environment variable holding the key (never the key itself).
	APIKeyEnv string `yaml:"api_key_env"`
	// InputWindow is input tokens per request (0: 8000); prompts are packed
	// to fit.
	InputWindow int `yaml:"input_window"`
	// MaxOutput is output tokens per request (0: 4000).
	MaxOutput int `yaml:"max_output"`
	// Fixtures is the directory of recorded exchanges, for provider replay.
	Fixtures string `yaml:"fixtures"`
}

// Price is USD per million tokens.
type Price struct {
	// Input is USD per million input tokens.
	Input float64 `yaml:"input"`
	// Output is USD per million output tokens.
	Output float64 `yaml:"output"`
}

// Budgets bound what a step, an item and a day may spend.
type Budgets struct {
	// Step bounds one agent step.
	Step Budget `yaml:"step"`
	// Item bounds an item over all its Jobs, from the recorded sum.
	Item Budget `yaml:"item"`
	// Day bounds a day across items; it is checked only with a dashboard
	// issue, which keeps the day's ledger.
	Day Budget `yaml:"day"`
}

// Budget is one bound; a zero field is unlimited.
type Budget struct {
	// Turns bounds the model turns.
	Turns int `yaml:"turns"`
	// TokensIn bounds the input tokens.
	TokensIn int64 `yaml:"tokens_in"`
	// TokensOut bounds the output tokens.
	TokensOut int64 `yaml:"tokens_out"`
	// USD bounds the spend, from prices.
	USD float64 `yaml:"usd"`
	// Wall bounds the wall-clock time (a step's only).
	Wall time.Duration `yaml:"wall"`
}

// Checks are the scoped checks run after every group, besides its verify commands.
type Checks struct {
	// Commands are run with each group's verify commands and in the scoped
	// checks at the head. Empty, the Job detects them from the work tree as
	// roadmap init does (go.mod: go vet and go test; Cargo.toml, a Python
	// project, package.json: their test commands) unless Detect is off.
	Commands []string `yaml:"commands"`
	// Detect lets a Job whose configuration names no commands detect them
	// from the repository (on by default); false runs only the plan's
	// verify commands.
	Detect bool `yaml:"detect"`
	// Timeout bounds one command.
	Timeout time.Duration `yaml:"timeout"`
}

// Labels are the labels roadmap reads and sets.
type Labels struct {
	// Stage asks roadmap to plan an item.
	Stage string `yaml:"stage"`
	// Implement asks roadmap to implement an item's plan.
	Implement string `yaml:"implement"`
	// NeedsInput marks an item that waits for a person's answer.
	NeedsInput string `yaml:"needs_input"`
	// Stopped marks an item roadmap stopped.
	Stopped string `yaml:"stopped"`
	// Stop is the label a person sets to stop the item for good.
	Stop string `yaml:"stop"`
	// Waiting marks an item that yielded for the day's budget: roadmap wake
	// lists the items with it.
	Waiting string `yaml:"waiting"`
	// Blocked marks an item that waits for its blockers (docs/tracker.md,
	// "Blockers"): a Job that finds one open puts it on the issue, and the
	// first Job that finds them met takes it off.
	Blocked string `yaml:"blocked"`
	// Tracker marks a tracker whose sub-issues roadmap drives
	// (docs/tracker.md, "Driving a tracker"): report puts it on a tracker
	// a Job handed over, and every wake drives the open issues that have it.
	Tracker string `yaml:"tracker"`
}

// Implement tunes the implement loop.
type Implement struct {
	// PollInterval is how often the watch of PR checks polls and logs a line.
	PollInterval time.Duration `yaml:"poll_interval"`
	// WatchTimeout bounds the watch of PR checks within one Job.
	WatchTimeout time.Duration `yaml:"watch_timeout"`
	// RepairRounds bounds the repair rounds of one group.
	RepairRounds int `yaml:"repair_rounds"`
	// MaxJobs caps the Jobs (continuations included) of one item.
	MaxJobs int `yaml:"max_jobs"`
	// MaxGroups caps the task groups of one plan: the plan gates refuse a
	// plan with more, and implement returns it to stage.
	MaxGroups int `yaml:"max_groups"`
	// BaseBranch is the branch PRs target.
	BaseBranch string `yaml:"base_branch"`
	// CIWorkflows are workflow files (in .github/workflows) roadmap
	// dispatches on the work branch when no check has reported on the head:
	// pushes made with GITHUB_TOKEN start no workflow run, a dispatch does.
	CIWorkflows []string `yaml:"ci_workflows"`
	// ReadyWithoutCI lets the watch mark the PR ready when no check was
	// reported on the head. Off by default: a PR no CI ran on is never
	// called green; the item asks a person instead.
	ReadyWithoutCI bool `yaml:"ready_without_ci"`
	// CheckReruns bounds the re-runs of a head's failed CI jobs whose log
	// shows the infrastructure failed (network, rate limit, runner lost).
	CheckReruns int `yaml:"check_reruns"`
	// TestStrength runs mutants on each group's changed, covered lines (Go
	// and Python; docs/strength.md) after its checks pass: survivors go back
	// to the agent, and a score under TestStrengthFloor keeps the PR a
	// draft. On by default; false turns it off.
	TestStrength bool `yaml:"test_strength"`
	// TestStrengthFloor is the least share of measured mutants a group's
	// tests must kill (0 to 1). A group where no mutant ran, or every one
	// timed out, never passes, whatever the floor.
	TestStrengthFloor float64 `yaml:"test_strength_floor"`
	// ParallelGroups runs the agent sessions of the plan's groups that claim
	// disjoint units, and that the group-order gate finds independent, at
	// once, each in a work tree and a boundary of its own; their commits are
	// applied, checked and published in plan order (docs/parallel-groups.md).
	// Off by default.
	ParallelGroups bool `yaml:"parallel_groups"`
}

// Review tunes the review before ready.
type Review struct {
	// Enabled runs the review after the last group's checks. On by default;
	// false turns it off.
	Enabled bool `yaml:"enabled"`
	// Model names the reviewer (one of models); "" takes the last model
	// of the ladder, or another model of it when the head's last agent
	// step ran on the last.
	Model string `yaml:"model"`
	// MaxFindings bounds the blocking findings one review raises.
	MaxFindings int `yaml:"max_findings"`
	// Rounds bounds the repair rounds blocking findings get; a finding
	// still standing after them stops the item (review_blocked).
	Rounds int `yaml:"rounds"`
}

// Stage is the stage phase's settings.
type Stage struct {
	// Rounds bounds the planner's revision rounds.
	Rounds int `yaml:"rounds"`
	// Verifier names the model (one of models) the independent verifier
	// uses; "" takes the last model of the ladder, or another model of it
	// when the planner wrote the round on the last.
	Verifier string `yaml:"verifier"`
}

// Gates tunes the plan gates.
type Gates struct {
	// VerifyForms replace the verify-form gate's default forms (the common
	// test runners, make, file checks): a plain entry is a command prefix,
	// one starting with ^ a regular expression over the whole command.
	// Empty keeps the default.
	VerifyForms []string `yaml:"verify_forms"`
	// ExtraVerifyForms are added to VerifyForms, or to the default.
	ExtraVerifyForms []string `yaml:"extra_verify_forms"`
}

// Default returns the configuration used when the repository has none.
func Default() *Config {
	return &Config{
		Models: []Model{{Provider: "github-models", Name: "openai/gpt-4o-mini", BaseURL: "https://models.github.ai/inference",
			APIKeyEnv: "GITHUB_TOKEN", InputWindow: 8000, MaxOutput: 4000}},
		Prices: builtinPrices(),
		Budgets: Budgets{
			Step: Budget{Turns: 40, Wall: 30 * time.Minute},
			Item: Budget{TokensIn: 2_000_000, TokensOut: 400_000, USD: 5},
			Day:  Budget{USD: 50},
		},
		Checks: Checks{Timeout: 10 * time.Minute, Detect: true},
		Labels: Labels{Stage: "roadmap:stage", Implement: "roadmap:implement", NeedsInput: "roadmap:needs-input", Stopped: "roadmap:stopped",
			Stop: "roadmap:stop", Waiting: "roadmap:waiting", Blocked: "roadmap:blocked",
			Tracker: "roadmap:tracker"},
		Implement: Implement{PollInterval: 30 * time.Second, WatchTimeout: 60 * time.Minute, RepairRounds: 3, MaxJobs: 6, MaxGroups: DefaultMaxGroups,
			BaseBranch: "main", CheckReruns: DefaultCheckReruns, TestStrength: true, TestStrengthFloor: DefaultTestStrengthFloor},
		Stage:     Stage{Rounds: 3},
		Review:    Review{Enabled: true, MaxFindings: DefaultMaxFindings, Rounds: 1},
		Isolation: IsolationAuto,
		Sandbox:   Sandbox{Network: "loopback"},
		Alerts:    Alerts{StopsPerDay: DefaultStopsPerDay, DayBudgetShare: DefaultDayBudgetShare},
		Tracker:   Tracker{MaxActive: DefaultTrackerMaxActive, OnComplete: TrackerClose},
	}
}

// Error is a problem in the configuration file, at a line.
type Error struct {
	File string
	Line int
	Key  string
	Msg  string
}

func (e *Error) Error() string {
	where := e.File
	if e.Line > 0 {
		where = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.Key != "" {
		return fmt.Sprintf("%s: %s: %s", where, e.Key, e.Msg)
	}
	return fmt.Sprintf("%s: %s", where, e.Msg)
}

// Load reads the repository's configuration at path; a missing file gives
// the defaults, as a repository need not have one.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return Default(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("read configuration: %w", err)
	}
	return Parse(path, data)
}

// LoadExplicit reads a configuration a person named (--config, the config
// input): a missing file is an error, since running on the defaults would
// quietly ignore what they asked for.
func LoadExplicit(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, &Error{File: path, Msg: "does not exist (an explicit --config must name a file)"}
	}
	if err != nil {
		return nil, fmt.Errorf("read configuration: %w", err)
	}
	return Parse(path, data)
}

// Parse decodes data (named file in errors) over the defaults and validates it.
func Parse(file string, data []byte) (*Config, error) {
	cfg := Default()
	if len(bytes.TrimSpace(data)) == 0 {
		return cfg, nil
	}
	if len(data) > MaxFileBytes {
		return nil, &Error{File: file, Msg: fmt.Sprintf("is %d bytes; a configuration holds at most %d", len(data), MaxFileBytes)}
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlError(file, err)
	}
	if len(root.Content) == 0 {
		return cfg, nil
	}
	doc := root.Content[0]
	if doc.Kind != yaml.MappingNode {
		return nil, &Error{File: file, Line: doc.Line, Msg: "the configuration must be a mapping of keys"}
	}
	if key, n := longString(doc, ""); n != nil {
		return nil, &Error{File: file, Line: n.Line, Key: key,
			Msg: fmt.Sprintf("a string of %d characters; a configuration string holds at most %d", utf8.RuneCountInString(n.Value), MaxStringChars)}
	}
	if err := checkSchema(file, doc); err != nil {
		return nil, err
	}
	// Models replace the default ladder rather than merging into it.
	if n := lookup(doc, "models"); n != nil {
		cfg.Models = nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil {
		return nil, keyed(yamlError(file, err), doc)
	}
	if err := validate(file, doc, cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// longString finds the first key or scalar value over MaxStringChars under n
// (aliases are not followed: their anchor is checked where it stands).
func longString(n *yaml.Node, prefix string) (string, *yaml.Node) {
	over := func(s *yaml.Node) bool {
		return s.Kind == yaml.ScalarNode && len(s.Value) > MaxStringChars && utf8.RuneCountInString(s.Value) > MaxStringChars
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			key := k.Value
			if over(k) {
				return prefix, k
			}
			if prefix != "" {
				key = prefix + "." + k.Value
			}
			if over(v) {
				return key, v
			}
			if key, s := longString(v, key); s != nil {
				return key, s
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			key := fmt.Sprintf("%s[%d]", prefix, i)
			if over(c) {
				return key, c
			}
			if key, s := longString(c, key); s != nil {
				return key, s
			}
		}
	}
	return "", nil
}

// workflowFileRE is a file name in .github/workflows: no directory, a YAML
// extension.
var workflowFileRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}\.ya?ml$`)

// keyed adds the key to a decoder error that has only a line: the key whose
// value is on that line.
func keyed(err error, doc *yaml.Node) error {
	var ce *Error
	if !errors.As(err, &ce) || ce.Key != "" || ce.Line == 0 {
		return err
	}
	ce.Key = keyAt(doc, ce.Line, "")
	return err
}

// keyAt is the dotted key (models[1].name) whose scalar value is on line,
// "" when there is none.
func keyAt(n *yaml.Node, line int, prefix string) string {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			key := k.Value
			if prefix != "" {
				key = prefix + "." + k.Value
			}
			if v.Kind == yaml.ScalarNode && v.Line == line {
				return key
			}
			if got := keyAt(v, line, key); got != "" {
				return got
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			key := fmt.Sprintf("%s[%d]", prefix, i)
			if c.Kind == yaml.ScalarNode && c.Line == line {
				return key
			}
			if got := keyAt(c, line, key); got != "" {
				return got
			}
		}
	}
	return ""
}

func lookup(n *yaml.Node, path ...string) *yaml.Node {
	for _, key := range path {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				next = n.Content[i+1]
			}
		}
		n = next
	}
	return n
}

func lineOf(doc *yaml.Node, path ...string) int {
	if n := lookup(doc, path...); n != nil {
		return n.Line
	}
	return doc.Line
}

// ownerRE is a GitHub login ("@octocat") or a team ("@acme/platform"):
// what an alert's comment mentions, so nothing else may reach it.
var ownerRE = regexp.MustCompile(`^@[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:/[A-Za-z0-9][A-Za-z0-9_.-]{0,99})?$`)

// validateAlerts checks the alerts section: owners that are logins or
// teams, and thresholds in their ranges.
func validateAlerts(file string, doc *yaml.Node, a Alerts) error {
	at := func(key, msg string, line int) error {
		if line == 0 {
			line = lineOf(doc, "alerts", key)
		}
		return &Error{File: file, Line: line, Key: "alerts." + key, Msg: msg}
	}
	list := lookup(doc, "alerts", "owners")
	if len(a.Owners) > MaxOwners {
		return at("owners", fmt.Sprintf("%d owners, over %d: name a team instead", len(a.Owners), MaxOwners), 0)
	}
	for i, o := range a.Owners {
		if !ownerRE.MatchString(o) {
			line := 0
			if list != nil && list.Kind == yaml.SequenceNode && i < len(list.Content) {
				line = list.Content[i].Line
			}
			return at(fmt.Sprintf("owners[%d]", i), fmt.Sprintf("%q is not @login or @org/team", o), line)
		}
	}
	switch {
	case a.StopsPerDay < 0:
		return at("stops_per_day", "must be 0 (off) or more", 0)
	case math.IsNaN(a.DayBudgetShare) || a.DayBudgetShare < 0 || a.DayBudgetShare > 1:
		return at("day_budget_share", "must be a number from 0 (off) to 1", 0)
	}
	return nil
}

func validate(file string, doc *yaml.Node, c *Config) error {
	models := lookup(doc, "models")
	if len(c.Models) == 0 {
		return &Error{File: file, Line: lineOf(doc, "models"), Key: "models", Msg: "the ladder needs at least one model"}
	}
	for i, m := range c.Models {
		line := doc.Line
		if models != nil && i < len(models.Content) {
			line = models.Content[i].Line
		}
		key := fmt.Sprintf("models[%d]", i)
		if m.Provider == "" {
			c.Models[i].Provider = "github-models"
			m.Provider = "github-models"
		}
		if m.Name == "" {
			return &Error{File: file, Line: line, Key: key + ".name", Msg: "a model needs a name"}
		}
		if m.Provider == "replay" && m.Fixtures == "" {
			return &Error{File: file, Line: line, Key: key + ".fixtures", Msg: "the replay provider needs a fixtures directory"}
		}
		if m.Provider == "openai-compatible" && m.BaseURL == "" {
			return &Error{File: file, Line: line, Key: key + ".base_url", Msg: "an openai-compatible provider needs base_url"}
		}
		if m.InputWindow < 0 || m.MaxOutput < 0 {
			return &Error{File: file, Line: line, Key: key, Msg: "input_window and max_output must not be negative"}
		}
		if m.InputWindow == 0 {
			c.Models[i].InputWindow = 8000
		}
		if m.MaxOutput == 0 {
			c.Models[i].MaxOutput = 4000
		}
		if strings.HasPrefix(m.APIKeyEnv, "ghp_") || strings.HasPrefix(m.APIKeyEnv, "sk-") || strings.HasPrefix(m.APIKeyEnv, "github_pat_") {
			return &Error{File: file, Line: line, Key: key + ".api_key_env", Msg: "holds a key; it must name the environment variable that holds the key"}
		}
	}
	if err := validatePrices(file, doc, c.Prices); err != nil {
		return err
	}
	for _, b := range []struct {
		name string
		b    Budget
	}{{"step", c.Budgets.Step}, {"item", c.Budgets.Item}, {"day", c.Budgets.Day}} {
		at := func(field, msg string) error {
			return &Error{File: file, Line: lineOf(doc, "budgets", b.name, field), Key: "budgets." + b.name + "." + field, Msg: msg}
		}
		switch {
		case b.b.Turns < 0:
			return at("turns", "must not be negative")
		case b.b.TokensIn < 0:
			return at("tokens_in", "must not be negative")
		case b.b.TokensOut < 0:
			return at("tokens_out", "must not be negative")
		case !usable(b.b.USD):
			return at("usd", notUsable)
		case b.b.Wall < 0:
			return at("wall", "must not be negative")
		}
	}
	for i, cmd := range c.Checks.Commands {
		if strings.TrimSpace(cmd) == "" {
			return &Error{File: file, Line: lineOf(doc, "checks", "commands"), Key: fmt.Sprintf("checks.commands[%d]", i), Msg: "empty command"}
		}
	}
	if c.Checks.Timeout <= 0 {
		return &Error{File: file, Line: lineOf(doc, "checks", "timeout"), Key: "checks.timeout", Msg: "must be positive"}
	}
	for _, l := range []struct {
		key   string
		value string
	}{{"stage", c.Labels.Stage}, {"implement", c.Labels.Implement}, {"needs_input", c.Labels.NeedsInput}, {"stopped", c.Labels.Stopped},
		{"stop", c.Labels.Stop}, {"waiting", c.Labels.Waiting}, {"blocked", c.Labels.Blocked}, {"tracker", c.Labels.Tracker}} {
		n := lookup(doc, "labels", l.key)
		if strings.TrimSpace(l.value) == "" || (n != nil && n.Tag == "!!null") {
			return &Error{File: file, Line: lineOf(doc, "labels", l.key), Key: "labels." + l.key, Msg: "must not be empty"}
		}
		if c := utf8.RuneCountInString(l.value); c > MaxLabelChars {
			return &Error{File: file, Line: lineOf(doc, "labels", l.key), Key: "labels." + l.key,
				Msg: fmt.Sprintf("is %d characters; GitHub's label names hold at most %d", c, MaxLabelChars)}
		}
	}
	im := c.Implement
	at := func(key, msg string) error {
		return &Error{File: file, Line: lineOf(doc, "implement", key), Key: "implement." + key, Msg: msg}
	}
	switch {
	case im.PollInterval < MinPollInterval:
		return at("poll_interval", "must be at least "+MinPollInterval.String())
	case im.WatchTimeout <= 0:
		return at("watch_timeout", "must be positive")
	case im.RepairRounds < 1 || im.RepairRounds > MaxRepairRounds:
		return at("repair_rounds", fmt.Sprintf("must be from 1 to %d", MaxRepairRounds))
	case im.MaxJobs < 1 || im.MaxJobs > MaxJobsLimit:
		return at("max_jobs", fmt.Sprintf("must be from 1 to %d", MaxJobsLimit))
	case im.MaxGroups < 1 || im.MaxGroups > MaxGroupsLimit:
		return at("max_groups", fmt.Sprintf("must be from 1 to %d", MaxGroupsLimit))
	case im.CheckReruns < 0 || im.CheckReruns > MaxCheckReruns:
		return at("check_reruns", fmt.Sprintf("must be from 0 to %d", MaxCheckReruns))
	case math.IsNaN(im.TestStrengthFloor) || im.TestStrengthFloor < 0 || im.TestStrengthFloor > 1:
		return at("test_strength_floor", "must be a number from 0 to 1")
	}
	rv := c.Review
	rat := func(key, msg string) error {
		return &Error{File: file, Line: lineOf(doc, "review", key), Key: "review." + key, Msg: msg}
	}
	switch {
	case rv.MaxFindings < 1 || rv.MaxFindings > MaxFindingsLimit:
		return rat("max_findings", fmt.Sprintf("must be from 1 to %d", MaxFindingsLimit))
	case rv.Rounds < 0 || rv.Rounds > MaxReviewRounds:
		return rat("rounds", fmt.Sprintf("must be from 0 to %d", MaxReviewRounds))
	case rv.Model != "" && !slices.ContainsFunc(c.Models, func(m Model) bool { return m.Name == rv.Model }):
		return rat("model", fmt.Sprintf("%q is not the name of one of models", rv.Model))
	}
	for _, wf := range im.CIWorkflows {
		if !workflowFileRE.MatchString(wf) {
			return at("ci_workflows", fmt.Sprintf("%q is not a workflow file name in .github/workflows (e.g. ci.yml)", wf))
		}
	}
	if st := c.Stage; st.Rounds < 1 || st.Rounds > MaxRepairRounds {
		return &Error{File: file, Line: lineOf(doc, "stage", "rounds"), Key: "stage.rounds", Msg: fmt.Sprintf("must be from 1 to %d", MaxRepairRounds)}
	} else if st.Verifier != "" && !slices.ContainsFunc(c.Models, func(m Model) bool { return m.Name == st.Verifier }) {
		return &Error{File: file, Line: lineOf(doc, "stage", "verifier"), Key: "stage.verifier", Msg: fmt.Sprintf("%q is not the name of one of models", st.Verifier)}
	}
	for _, f := range []struct {
		key   string
		forms []string
	}{{"verify_forms", c.Gates.VerifyForms}, {"extra_verify_forms", c.Gates.ExtraVerifyForms}} {
		if err := validateForms(file, doc, f.key, f.forms); err != nil {
			return err
		}
	}
	for _, e := range []struct {
		set   string
		floor float64
	}{{"gates", c.Eval.Gates.Floor}, {"stage", c.Eval.Stage.Floor}, {"implement", c.Eval.Implement.Floor}} {
		// A score is a mean of per-case scores in [0, 1]: a floor outside
		// that range either always or never passes, which is a slip.
		if math.IsNaN(e.floor) || e.floor < 0 || e.floor > 1 {
			return &Error{File: file, Line: lineOf(doc, "eval", e.set, "floor"), Key: "eval." + e.set + ".floor", Msg: "must be a number from 0 to 1"}
		}
	}
	// The schema holds isolation to its words; a key with no value would
	// quietly keep the default, and the boundary is to be said outright.
	if n := lookup(doc, "isolation"); n != nil && n.Tag == "!!null" {
		return &Error{File: file, Line: n.Line, Key: "isolation", Msg: `"" is not auto, user or none`}
	}
	if err := validateAlerts(file, doc, c.Alerts); err != nil {
		return err
	}
	if n := c.Tracker.MaxActive; n < 1 || n > MaxTrackerActive {
		return &Error{File: file, Line: lineOf(doc, "tracker", "max_active"), Key: "tracker.max_active", Msg: fmt.Sprintf("must be from 1 to %d", MaxTrackerActive)}
	}
	if v := c.Tracker.OnComplete; v != TrackerClose && v != TrackerComment {
		return &Error{File: file, Line: lineOf(doc, "tracker", "on_complete"), Key: "tracker.on_complete", Msg: fmt.Sprintf("%q is not close or comment", v)}
	}
	for _, p := range c.Sandbox.UnixSockets {
		if !strings.HasPrefix(p, "/") || strings.ContainsAny(p, "\x00\n") {
			return &Error{File: file, Line: lineOf(doc, "sandbox", "unix_sockets"), Key: "sandbox.unix_sockets",
				Msg: fmt.Sprintf("%q is not an absolute path of a UNIX socket", p)}
		}
	}
	return nil
}

// validateForms refuses a verify form the gate could not use: an empty one
// (it would match nothing, and a person meant something) or a regular
// expression that does not compile.
func validateForms(file string, doc *yaml.Node, key string, forms []string) error {
	list := lookup(doc, "gates", key)
	for i, f := range forms {
		line := lineOf(doc, "gates", key)
		if list != nil && list.Kind == yaml.SequenceNode && i < len(list.Content) {
			line = list.Content[i].Line
		}
		at := func(msg string) error {
			return &Error{File: file, Line: line, Key: fmt.Sprintf("gates.%s[%d]", key, i), Msg: msg}
		}
		if strings.TrimSpace(f) == "" {
			return at("empty form")
		}
		if strings.HasPrefix(f, "^") {
			if _, err := regexp.Compile(f); err != nil {
				return at(fmt.Sprintf("%q is not a regular expression: %v", f, err))
			}
		}
	}
	return nil
}

// notUsable is the message for a price or an amount of money that is
// negative, NaN or infinite: spend is summed and written from these, and
// such a sum cannot be written back.
const notUsable = "must be a finite number, 0 or more"

func usable(f float64) bool { return f >= 0 && !math.IsInf(f, 0) }

func validatePrices(file string, doc *yaml.Node, prices map[string]Price) error {
	names := make([]string, 0, len(prices))
	for name := range prices {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p := prices[name]
		for _, f := range []struct {
			key string
			v   float64
		}{{"input", p.Input}, {"output", p.Output}} {
			if !usable(f.v) {
				return &Error{File: file, Line: lineOf(doc, "prices", name, f.key), Key: "prices." + name + "." + f.key, Msg: notUsable}
			}
		}
	}
	return nil
}

// yamlError turns a yaml error ("yaml: line 3: …") into an *Error with the file.
func yamlError(file string, err error) error {
	msg := err.Error()
	line := 0
	if te := (*yaml.TypeError)(nil); errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if n, tail, ok := strings.Cut(rest, ":"); ok {
			fmt.Sscanf(n, "%d", &line)
			msg = strings.TrimSpace(tail)
		}
	}
	return &Error{File: file, Line: line, Msg: msg}
}
