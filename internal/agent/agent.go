package agent

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Status is how a step ended. The values are stable: the implement runner
// maps them to failure classes and they appear in traces.
type Status string

const (
	// StatusFinished: the model called finish (and, with repair rounds, the
	// checks passed).
	StatusFinished Status = "finished"
	// StatusNeedsInput: the model asked a question only a person can answer.
	StatusNeedsInput Status = "needs_input"
	// StatusPlanWrong: the model said the plan cannot work.
	StatusPlanWrong Status = "plan_wrong"
	// StatusBudgetExhausted: the next model call would pass a budget, so it
	// was not made.
	StatusBudgetExhausted Status = "budget_exhausted"
	// StatusFormatError: too many malformed tool calls in a row.
	StatusFormatError Status = "format_error"
	// StatusModelError: the model call failed after the provider's retries.
	StatusModelError Status = "model_error"
	// StatusChecksFailed: RunWithRepair used every round and the checks still
	// fail; Outcome.CheckLog holds the last log.
	StatusChecksFailed Status = "checks_failed"
)

// RunResult is what one command did. It has the fields of policy.Result in
// the same order, so a policy sandbox converts with agent.RunResult(r).
type RunResult struct {
	ExitCode int
	Output   string
	Duration time.Duration
	TimedOut bool
}

// Sandbox is where tools touch the workspace: paths are checked against it and
// commands run under the shell policy. internal/policy's Sandbox implements it
// (with Run's result converted to RunResult).
//
// An error that has a method `Refused() bool` returning true is a policy
// refusal and is reported to the model and the trace as "refused".
type Sandbox interface {
	// Workspace returns the workspace's real path. The file tools open it
	// once per step as an os.Root and open every file inside that root.
	Workspace() (string, error)
	// Resolve returns the absolute path for a workspace-relative path, or
	// refuses it. The file tools use it as the policy's check only: they
	// never open the path it returns.
	Resolve(path string) (string, error)
	// Run runs argv in the workspace. A non-zero exit is not an error.
	Run(ctx context.Context, argv []string) (RunResult, error)
	// Split turns a command line into argv, or refuses it.
	Split(cmd string) ([]string, error)
}

// Observer receives the loop's trace events. Calls come from the goroutine
// that called Run.
//
// Every model call is reported twice: ModelBooked just before the request
// goes out, with what the call can cost at most, and ModelCall when it
// ended. A process killed in between leaves the booking as the call's
// spend (DESIGN §9: spend is never under-counted).
type Observer interface {
	ModelBooked(ModelBookedEvent)
	ModelCall(ModelCallEvent)
	ToolCall(ToolCallEvent)
	Retry(RetryEvent)
}

// ModelBookedEvent is a model call about to be sent, at the most it can
// cost: the most input tokens a server can count for the request
// (MaxInputTokens, or the Estimator's count when that is higher), the
// request's max_tokens out, and their price on the tier.
type ModelBookedEvent struct {
	Model     string
	TokensIn  int64
	TokensOut int64
	USD       float64
}

// ModelCallEvent is one model call, as it ended.
type ModelCallEvent struct {
	Model     string
	TokensIn  int64
	TokensOut int64
	USD       float64
	Duration  time.Duration
	// Outcome is "ok", "error" or "cancelled".
	Outcome string
	// Unanswered: the call ended with no answer from the provider (the
	// Job's context ended, or a transport error after the provider's own
	// retries): the request may have been served and charged, so its
	// booking stands as its spend. A refusal (an HTTP status) is an answer.
	Unanswered bool
	// Attempts is, for an unanswered call, how many of its attempts may
	// have been served (each a request the provider's retries sent again
	// after the connection dropped); each counts at the booking. 0 means 1.
	Attempts int
}

// Tool result classes, as ToolCallEvent.ResultClass reports them.
const (
	ResultOK        = "ok"
	ResultError     = "error"
	ResultRefused   = "refused"
	ResultMalformed = "malformed"
)

// ToolCallEvent is one tool call. ArgsDigest is the first 16 hex digits of the
// SHA-256 of the raw arguments: enough to tell calls apart, nothing of their
// content. A reply that called no tool at all is reported with an empty Name
// and class malformed.
type ToolCallEvent struct {
	Name        string
	ArgsDigest  string
	ResultClass string
	Duration    time.Duration
}

// Clock tells the time, for wall-time budgets and durations.
type Clock interface {
	Now() time.Time
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

type nopObserver struct{}

func (nopObserver) ModelBooked(ModelBookedEvent) {}
func (nopObserver) ModelCall(ModelCallEvent)     {}
func (nopObserver) ToolCall(ToolCallEvent)       {}
func (nopObserver) Retry(RetryEvent)             {}

// Spend is what model calls cost, summed. Its JSON is the record's
// implement.spend value.
type Spend struct {
	TokensIn   int64   `json:"tokens_in"`
	TokensOut  int64   `json:"tokens_out"`
	USD        float64 `json:"usd"`
	ModelCalls int     `json:"model_calls"`
}

// Add returns the sum of s and o.
func (s Spend) Add(o Spend) Spend {
	return Spend{
		TokensIn:   s.TokensIn + o.TokensIn,
		TokensOut:  s.TokensOut + o.TokensOut,
		USD:        s.USD + o.USD,
		ModelCalls: s.ModelCalls + o.ModelCalls,
	}
}

// Budget limits spend. A zero field is no limit.
type Budget struct {
	// Turns bounds model calls.
	Turns     int
	TokensIn  int64
	TokensOut int64
	USD       float64
	// Wall bounds elapsed time from the start of the step. It is a step
	// budget only: ItemBudget.Wall must be zero (the Job deadline bounds
	// time across Jobs).
	Wall time.Duration
}

// Tier is one rung of the model ladder.
type Tier struct {
	// Name is sent as the request's model.
	Name  string
	Model Model
	// USDPerMTokIn and USDPerMTokOut (USD per million tokens) price the
	// estimate of the next call for the USD budget. Zero means unknown: the
	// USD budget then sees only spend already recorded, so one call may pass
	// it. The spend itself is what the provider reports.
	USDPerMTokIn  float64
	USDPerMTokOut float64
	// MaxOutput and Window are this tier's max_tokens and input window; 0
	// takes Config.MaxOutput and Config.Window. Tiers differ: a cheap model
	// may take 8k tokens in, the next one 128k.
	MaxOutput int
	Window    int64
}

// ContextPart is one piece of context for the prompt. Higher Priority comes
// first and is dropped last when the prompt must fit the window.
type ContextPart struct {
	Name     string
	Text     string
	Priority int
}

// Step is one unit of work for the agent.
type Step struct {
	// Task is the instruction, e.g. a task group's text.
	Task    string
	Context []ContextPart
	// CheckLog and Conflict are the hand-off from an earlier Job that
	// stopped: the failing check log and the files left in conflict.
	CheckLog string
	Conflict []string
	// Question and Answer: a person's answer to a question an earlier step
	// asked.
	Question string
	Answer   string
}

// Outcome is how a step ended and what it cost.
type Outcome struct {
	Status  Status
	Summary string // finish
	// Acceptance is the verifier's acceptance map as verdict received it: a
	// JSON array (checked to be one), "" when the verdict gave none. It is
	// model output; internal/stage reads it defensively.
	Acceptance string
	Question   string // ask (needs_input)
	// Reason says why for plan_wrong, budget_exhausted, format_error and
	// model_error.
	Reason string
	// CheckLog is the last failing check log (bounded) when RunWithRepair
	// ran checks that failed.
	CheckLog string
	// Usage is this step's spend, every round included.
	Usage Spend
	// Turns counts model calls.
	Turns int
	// Attempts counts rounds (Run makes one; RunWithRepair up to its bound).
	Attempts int
	// Tier is the ladder index and Model the name of the tier of the last
	// round.
	Tier  int
	Model string
}

// Config is what a step runs with.
type Config struct {
	// Models is the ladder. Conversation i of a step (the first, then each
	// fresh start after a repeated failure) uses tier min(StartTier+i, len-1).
	Models []Tier
	// StartTier is the tier the step's first conversation uses: the tier
	// the item's last failing round reached in an earlier Job (the record's
	// implement.tier), so a continuation does not climb the ladder again
	// from the bottom. Out of range is clamped.
	StartTier int

	Sandbox  Sandbox
	Observer Observer // nil: no events
	Clock    Clock    // nil: the system clock

	// Budget bounds this step; ItemBudget bounds the item across Jobs,
	// counted from ItemSpent, the recorded spend of the item's earlier
	// Jobs (given by the caller).
	Budget     Budget
	ItemBudget Budget
	ItemSpent  Spend

	// MaxOutput is the max_tokens of every call on a tier without its own
	// (default 4096). The budget
	// check reserves it in full for the next call.
	MaxOutput int
	// Window is the model's input window in tokens; 0 is unbounded. The
	// first prompt drops low-priority context until it takes at most half
	// the window, and old tool output is elided as the conversation grows.
	Window int64
	// Estimator estimates a request's input tokens (default EstimateTokens:
	// bytes/3, conservative).
	Estimator func(ModelRequest) int64

	// System replaces the default system prompt.
	System string
	// Tools limits the tools offered (nil: implement's toolbox, ToolNames).
	// Stage's toolboxes are PlannerTools and VerifierTools.
	Tools []string
	// PlanDir is the workspace-relative directory write_plan_file writes
	// into (the OpenSpec change of a stage step); "" offers no plan writing.
	PlanDir string
	// ToolOutputCap bounds what one tool call returns to the model, in
	// bytes (default 8 KiB).
	ToolOutputCap int
	// CheckLogCap bounds the check log handed to the model (default 4 KiB,
	// the tail).
	CheckLogCap int
	// MaxMalformed is how many malformed tool calls in a row end the step
	// with format_error (default 3).
	MaxMalformed int
}

// RetryObserver returns a callback for a provider to report its retries
// through the observer (a no-op without one).
func (c Config) RetryObserver() func(RetryEvent) {
	if c.Observer == nil {
		return func(RetryEvent) {}
	}
	return c.Observer.Retry
}

// Defaults.
const (
	DefaultMaxOutput     = 4096
	DefaultToolOutputCap = 8 << 10
	DefaultCheckLogCap   = 4 << 10
	DefaultMaxMalformed  = 3
)

func (c Config) withDefaults() (Config, error) {
	if len(c.Models) == 0 {
		return c, errors.New("agent config: no models")
	}
	for i, t := range c.Models {
		if t.Model == nil {
			return c, fmt.Errorf("agent config: model tier %d (%q) has no model", i, t.Name)
		}
	}
	if c.Sandbox == nil {
		return c, errors.New("agent config: no sandbox")
	}
	if c.ItemBudget.Wall != 0 {
		return c, errors.New("agent config: an item budget has no wall time (the Job deadline bounds it)")
	}
	for _, name := range c.Tools {
		if _, ok := toolIndex[name]; !ok {
			return c, fmt.Errorf("agent config: unknown tool %q", name)
		}
	}
	if c.Observer == nil {
		c.Observer = nopObserver{}
	}
	if c.Clock == nil {
		c.Clock = systemClock{}
	}
	if c.MaxOutput <= 0 {
		c.MaxOutput = DefaultMaxOutput
	}
	if c.Estimator == nil {
		c.Estimator = EstimateTokens
	}
	if c.ToolOutputCap <= 0 {
		c.ToolOutputCap = DefaultToolOutputCap
	}
	if c.CheckLogCap <= 0 {
		c.CheckLogCap = DefaultCheckLogCap
	}
	if c.MaxMalformed <= 0 {
		c.MaxMalformed = DefaultMaxMalformed
	}
	return c, nil
}
