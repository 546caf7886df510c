package trace

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/roadmap-dev/roadmap/internal/text"
	"math"
	"strconv"
	"strings"
	"time"
)

// Type says what an event records. The JSON names are stable: scripts and
// older artifacts depend on them.
type Type string

const (
	// TypeModelCall is one call to a model: Model, TokensIn, TokensOut, USD,
	// Duration, Outcome (and Error when it failed).
	TypeModelCall Type = "model_call"
	// TypeToolCall is one tool the agent ran: Tool, ArgsDigest, ResultClass,
	// Duration.
	TypeToolCall Type = "tool_call"
	// TypeCheckRun is one check command: Command, ExitCode, Duration, Step.
	TypeCheckRun Type = "check_run"
	// TypeRetry is one retry of a failed operation: Reason, Attempt, Wait.
	TypeRetry Type = "retry"
	// TypePhase is a phase boundary: Phase, Step, and Duration for spans.
	TypePhase Type = "phase"
)

// Known reports whether t is one of the types this package defines.
func (t Type) Known() bool {
	switch t {
	case TypeModelCall, TypeToolCall, TypeCheckRun, TypeRetry, TypePhase:
		return true
	}
	return false
}

// Phase names a phase event. Markers are instants; spans are recorded once,
// when they end, with the time they took in Duration, so the start of a span
// is Time - Duration. A Job killed inside a span leaves no event for it; the
// group marker before it and the calls inside it still show where it was.
type Phase string

// Markers.
const (
	PhaseJobStarted   Phase = "job_started"
	PhaseGroupStarted Phase = "group_started"
	PhaseGroupPassed  Phase = "group_passed"
	PhaseGroupFailed  Phase = "group_failed"
	// PhaseFailToPass is a group's fail-to-pass: Outcome "held", "failed"
	// or "not checked", Reason the evidence (each `fails` command's exit
	// before the group's change, or why it was not checked).
	PhaseFailToPass Phase = "fail_to_pass"
	// The four ends of a Job, named as implement.result names them.
	PhaseReady    Phase = "ready"
	PhaseYielded  Phase = "yielded"
	PhaseStopped  Phase = "stopped"
	PhaseReturned Phase = "returned"
	// PhaseStaged ends a stage Job whose plan is clean and in a draft PR.
	PhaseStaged Phase = "staged"
)

// Spans (recorded at their end, with Duration).
const (
	PhaseAgent  Phase = "agent"  // one agent step or repair round
	PhaseChecks Phase = "checks" // the scoped checks of a group
	PhaseCommit Phase = "commit"
	PhasePush   Phase = "push"
	PhaseWatch  Phase = "watch" // waiting on the PR checks
	// Stage's spans: the plan gates and the independent verifier of a round.
	PhaseGates    Phase = "gates"
	PhaseVerifier Phase = "verifier"
	// Implement's quality spans: a group's test strength (mutants on its
	// changed lines) and the review of the diff before ready.
	PhaseStrength Phase = "test_strength"
	PhaseReview   Phase = "review"
)

// Span reports whether p is recorded as a span with a Duration.
func (p Phase) Span() bool {
	switch p {
	case PhaseAgent, PhaseChecks, PhaseCommit, PhasePush, PhaseWatch, PhaseGates, PhaseVerifier, PhaseStrength, PhaseReview:
		return true
	}
	return false
}

// End reports whether p ends a Job.
func (p Phase) End() bool {
	switch p {
	case PhaseReady, PhaseYielded, PhaseStopped, PhaseReturned:
		return true
	}
	return false
}

// Event is one thing a run did. Seq orders events within a Job; Time is when
// the event was added (for a span, when it ended). Fields that do not belong
// to an event's Type stay zero and are left out of its JSON.
type Event struct {
	Seq  int
	Time time.Time
	Type Type
	// Job is the Job (attempt) number of the item that recorded the event.
	Job int
	// Group is the task group the event belongs to; 0 for Job-level events.
	Group int
	// Step names the step: a group's title on group_started, the check step of
	// a check_run, a stage step ("plan", "verify") for events outside groups.
	Step string

	// model_call
	Model     string
	TokensIn  int64
	TokensOut int64
	USD       float64

	// tool_call
	Tool        string
	ArgsDigest  string
	ResultClass string

	// check_run
	Command  string
	ExitCode int

	// retry
	Reason  string
	Attempt int
	Wait    time.Duration

	// phase
	Phase Phase

	// Shared: how long the call, check or span took; how it ended ("ok",
	// "error", "refused", "passed", "failed", …); a short error text.
	Duration time.Duration
	Outcome  string
	Error    string
}

// wireEvent is the JSON form of an Event: one JSONL line of the artifact and
// the --json output of explain. Durations are whole milliseconds.
type wireEvent struct {
	Seq         int     `json:"seq"`
	Time        string  `json:"time"`
	Type        Type    `json:"type"`
	Job         int     `json:"job,omitempty"`
	Group       int     `json:"group,omitempty"`
	Step        string  `json:"step,omitempty"`
	Phase       Phase   `json:"phase,omitempty"`
	Model       string  `json:"model,omitempty"`
	TokensIn    int64   `json:"tokens_in,omitempty"`
	TokensOut   int64   `json:"tokens_out,omitempty"`
	USD         float64 `json:"usd,omitempty"`
	Tool        string  `json:"tool,omitempty"`
	ArgsDigest  string  `json:"args_digest,omitempty"`
	ResultClass string  `json:"result_class,omitempty"`
	Command     string  `json:"command,omitempty"`
	ExitCode    int     `json:"exit_code,omitempty"`
	Reason      string  `json:"reason,omitempty"`
	Attempt     int     `json:"attempt,omitempty"`
	WaitMS      int64   `json:"wait_ms,omitempty"`
	DurationMS  int64   `json:"duration_ms,omitempty"`
	Outcome     string  `json:"outcome,omitempty"`
	Error       string  `json:"error,omitempty"`
}

// MarshalJSON writes the stable snake_case form, omitting empty fields.
func (e Event) MarshalJSON() ([]byte, error) {
	w := wireEvent{
		Seq: e.Seq, Type: e.Type, Job: e.Job, Group: e.Group, Step: e.Step,
		Phase: e.Phase, Model: e.Model, TokensIn: e.TokensIn, TokensOut: e.TokensOut,
		USD: finite(e.USD), Tool: e.Tool, ArgsDigest: e.ArgsDigest, ResultClass: e.ResultClass,
		Command: e.Command, ExitCode: e.ExitCode, Reason: e.Reason, Attempt: e.Attempt,
		WaitMS: millis(e.Wait), DurationMS: millis(e.Duration), Outcome: e.Outcome, Error: e.Error,
	}
	if !e.Time.IsZero() {
		w.Time = e.Time.UTC().Format(time.RFC3339Nano)
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads what MarshalJSON writes. Unknown fields are ignored so
// an older reader survives a newer artifact.
func (e *Event) UnmarshalJSON(b []byte) error {
	var w wireEvent
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	var t time.Time
	if w.Time != "" {
		var err error
		if t, err = time.Parse(time.RFC3339Nano, w.Time); err != nil {
			return fmt.Errorf("event time: %w", err)
		}
		t = t.UTC()
	}
	*e = Event{
		Seq: w.Seq, Time: t, Type: w.Type, Job: w.Job, Group: w.Group, Step: w.Step,
		Phase: w.Phase, Model: w.Model, TokensIn: w.TokensIn, TokensOut: w.TokensOut,
		USD: w.USD, Tool: w.Tool, ArgsDigest: w.ArgsDigest, ResultClass: w.ResultClass,
		Command: w.Command, ExitCode: w.ExitCode, Reason: w.Reason, Attempt: w.Attempt,
		Wait: time.Duration(w.WaitMS) * time.Millisecond, Duration: time.Duration(w.DurationMS) * time.Millisecond,
		Outcome: w.Outcome, Error: w.Error,
	}
	return nil
}

// Detail is a one-line reading of the event for a terminal: the fields that
// matter for its type, without Seq, Time or Type.
func (e Event) Detail() string {
	var parts []string
	add := func(s string) {
		if s != "" {
			parts = append(parts, s)
		}
	}
	if e.Group > 0 {
		add("group " + strconv.Itoa(e.Group))
	}
	switch e.Type {
	case TypeModelCall:
		add(e.Model)
		add(fmt.Sprintf("tokens %d in, %d out", e.TokensIn, e.TokensOut))
		if e.USD != 0 {
			add(formatUSD(e.USD))
		}
	case TypeToolCall:
		add(e.Tool)
		if e.ArgsDigest != "" {
			add("args " + e.ArgsDigest)
		}
		add(e.ResultClass)
	case TypeCheckRun:
		add(e.Step)
		add(strconv.Quote(e.Command))
		add("exit " + strconv.Itoa(e.ExitCode))
	case TypeRetry:
		add(e.Reason)
		add("attempt " + strconv.Itoa(e.Attempt))
		add("wait " + e.Wait.String())
	case TypePhase:
		add(string(e.Phase))
		add(e.Step)
	}
	if e.Duration != 0 {
		add(e.Duration.String())
	}
	add(e.Outcome)
	if e.Error != "" {
		add("error: " + e.Error)
	}
	return strings.Join(parts, " · ")
}

// ArgsDigest returns the digest a tool_call event carries instead of the
// arguments themselves: the first 16 hex digits of their SHA-256. Equal
// arguments give equal digests, so repeated calls show, and nothing of the
// arguments can be read back.
func ArgsDigest(args string) string {
	sum := sha256.Sum256([]byte(args))
	return hex.EncodeToString(sum[:8])
}

func millis(d time.Duration) int64 { return int64(d.Round(time.Millisecond) / time.Millisecond) }

func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}

// formatUSD prints a cost with enough digits to see a single cheap call.
func formatUSD(u float64) string { return text.USD(finite(u)) }
