package report

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/roadmap-dev/roadmap/internal/blockers"
	"github.com/roadmap-dev/roadmap/internal/clock"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/ledger"

	"github.com/roadmap-dev/roadmap/internal/dashboard"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/inputerr"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/report/decide"
)

// Clock is report's time: the day a Job's spend is booked on, and the
// waits between the dispatches of a continuation.
type Clock interface {
	Now() time.Time
	Sleep(ctx context.Context, d time.Duration) error
}

// Labels are the labels report sets and removes (config `labels:`).
type Labels struct {
	Stage      string // the item goes back to stage (plan amendment)
	Implement  string // removed when the item goes back to stage
	NeedsInput string // the item waits for a person's answer
	Stopped    string // the item stopped
	Stop       string // a person stops the item with it
	Waiting    string // the item waits for the day's budget (roadmap wake lists it)
}

// DefaultLabels are the labels of the default configuration, where label
// names are defined (config.Default).
func DefaultLabels() Labels {
	l := config.Default().Labels
	return Labels{Stage: l.Stage, Implement: l.Implement, NeedsInput: l.NeedsInput, Stopped: l.Stopped,
		Stop: l.Stop, Waiting: l.Waiting}
}

func (l *Labels) defaults() {
	d := DefaultLabels()
	if l.Stage == "" {
		l.Stage = d.Stage
	}
	if l.Implement == "" {
		l.Implement = d.Implement
	}
	if l.NeedsInput == "" {
		l.NeedsInput = d.NeedsInput
	}
	if l.Stopped == "" {
		l.Stopped = d.Stopped
	}
	if l.Stop == "" {
		l.Stop = d.Stop
	}
	if l.Waiting == "" {
		l.Waiting = d.Waiting
	}
}

// DefaultMaxJobs caps the Jobs of one item when Options.MaxJobs is 0; it is
// the configuration's default (implement.max_jobs).
const DefaultMaxJobs = 6

// StatusContext is the commit status report sets on the PR head.
const StatusContext = "roadmap/implement"

// Marker lines of the comments report keeps on the issue, one of each.
const (
	MarkerStop       = "<!-- roadmap:stop -->"
	MarkerNeedsInput = "<!-- roadmap:needs-input -->"
	MarkerReturned   = "<!-- roadmap:returned -->"
	MarkerWaiting    = "<!-- roadmap:waiting -->"
)

// Options are the inputs of Run: the implement job's outputs and result (the
// `needs` context of the report job), where to dispatch a continuation, and
// the caps. Fields map one to one to the flags of `roadmap report`.
type Options struct {
	Issue  int
	GitHub *github.Client
	// Phase is the Job reported on: PhaseImplement ("" too) or PhaseStage,
	// whose results are staged, returned, stopped and yielded.
	Phase string

	// JobResult is needs.<implement>.result: success, failure, cancelled or
	// skipped ("" is taken as failure: nothing is known).
	JobResult string
	// The implement job's outputs. Any may be empty: a killed Job sends none.
	Result  string // ready, stopped, yielded, returned
	Failure string // a failure class
	Group   int
	Spend   string // the item's spend as JSON (a record.Spend)
	HeadSHA string
	PR      int
	// Attempt is the implement Job's number (its `attempt` output or the
	// dispatch input it ran with); 0 finds it in the record or the log.
	Attempt int
	// Reason is the runner's one-sentence reason, when the implement action
	// gives one; otherwise the trace copy in the record is read for it.
	Reason string

	// RunID is the workflow run of the implement job (GITHUB_RUN_ID).
	RunID int64
	// RunAttempt is GitHub's attempt of the run report is in
	// ($GITHUB_RUN_ATTEMPT): above 1, report is a re-run of a workflow run
	// whose earlier attempt may have dispatched the continuation already.
	RunAttempt int
	// RecordComment is the record comment's id (the implement job's
	// record_comment output); 0 lists the issue's comments once to find it.
	RecordComment int64
	// RunURL links the implement Job's run in the record comment.
	RunURL string
	// JobName is the implement job's name in the run (default "implement");
	// "<caller> / implement" and "implement (…)" match too.
	JobName string

	// Workflow is the implement workflow file a continuation dispatches (e.g.
	// "roadmap.yml"), on Ref.
	Workflow string
	Ref      string
	// MaxJobs caps the Jobs of an item, continuations included (default 6).
	MaxJobs int

	// Dashboard is the dashboard issue (label roadmap:dashboard): report
	// keeps its item's line there (internal/dashboard) and, with a day
	// budget, the day ledger; 0 keeps no line, and the ledger on the
	// ledger issue roadmap opens (internal/ledger, Label).
	Dashboard int
	// Alerts are the dashboard's alert rules (configuration alerts.*).
	Alerts dashboard.Rules
	// DayBudget is checked before a continuation: when the day is spent
	// the item yields until the next day instead.
	DayBudget ledger.Budget

	Labels Labels
	// Tracker and Blockers drive a tracker a Job handed over (class
	// tracker): its sub-issues start when their blockers are met.
	Tracker  TrackerOptions
	Blockers blockers.Options
	Clock    Clock
	// Mask masks text report prints or returns (evidence from a log, reasons);
	// what it writes to GitHub the client masks. Required.
	Mask func(string) string
	// Log receives one line per decision, for the job log.
	Log io.Writer
}

func (o *Options) defaults() error {
	switch {
	case o.Issue <= 0:
		return errors.New("report: an issue number is required")
	case o.GitHub == nil:
		return errors.New("report: a GitHub client is required")
	case o.Mask == nil:
		return errors.New("report: a masker is required")
	case o.Phase != "" && o.Phase != PhaseImplement && o.Phase != PhaseStage:
		return fmt.Errorf("report: phase %q is not implement or stage", o.Phase)
	case o.Phase == PhaseStage && o.Result != "" && o.Result != decide.StageStaged && !record.Result(o.Result).Valid():
		return fmt.Errorf("report: stage result %q is not staged, returned, stopped or yielded", o.Result)
	case o.Phase == PhaseStage && o.Result == string(record.ResultReady):
		return fmt.Errorf("report: %q is not a stage result (staged, returned, stopped or yielded)", o.Result)
	case o.Phase != PhaseStage && o.Result != "" && !record.Result(o.Result).Valid():
		return fmt.Errorf("report: result %q is not ready, stopped, yielded or returned", o.Result)
	case o.Group < 0 || o.Attempt < 0 || o.MaxJobs < 0 || o.PR < 0 || o.Dashboard < 0:
		return errors.New("report: group, attempt, max jobs, pr and dashboard cannot be negative")
	case o.RunID < 0:
		return errors.New("report: run id cannot be negative")
	case o.Dashboard != 0 && o.Dashboard == o.Issue:
		// Keeping the dashboard would replace the item's own body.
		return fmt.Errorf("report: the dashboard issue (%d) is the item's own issue: name the issue labelled roadmap:dashboard (roadmap init opens it)", o.Dashboard)
	}
	switch o.JobResult {
	case "", "success", "failure", "cancelled", "skipped":
	default:
		return fmt.Errorf("report: job result %q is not success, failure, cancelled or skipped", o.JobResult)
	}
	if o.Failure != "" && !validWord(o.Failure) {
		return fmt.Errorf("report: failure %q is not a class name", o.Failure)
	}
	if o.Spend != "" {
		if _, err := parseSpend(o.Spend); err != nil {
			return fmt.Errorf("report: spend output: %w", err)
		}
	}
	if o.Phase == "" {
		o.Phase = PhaseImplement
	}
	if o.JobName == "" {
		o.JobName = o.Phase
	}
	if o.MaxJobs == 0 {
		o.MaxJobs = DefaultMaxJobs
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	o.Labels.defaults()
	return nil
}

// Action is what report did about a Job's ending (decide.Action): each
// failure class leads to exactly one (decide.ActionFor); ready, none and
// resume are report's own, and a person's commands add retry and dismiss.
type Action = decide.Action

// The actions of a Job's ending; decide says what each does.
const (
	ActionReady         = decide.Ready
	ActionContinue      = decide.Continue
	ActionYield         = decide.Yield
	ActionReturnToStage = decide.ReturnToStage
	ActionAsk           = decide.Ask
	ActionStop          = decide.Stop
	ActionNone          = decide.None
	ActionResume        = decide.Resume
	ActionDrive         = decide.Drive
)

// Outcome is what Run (or Resume) found and did. `roadmap report --json`
// prints it; the field names are stable.
type Outcome struct {
	Issue int `json:"issue"`
	// Job is the implement Job reported on (its attempt number).
	Job int `json:"job"`
	// Result is the typed result the Job wrote; "" when it wrote none.
	Result string        `json:"result"`
	Class  failure.Class `json:"class,omitempty"`
	// KillReason refines a class read from the log (timeout, cancelled,
	// runner_lost, sigkill …).
	KillReason string `json:"kill_reason,omitempty"`
	Action     Action `json:"action"`
	// Reason says why in a sentence: the runner's reason, the cap, the
	// no-progress evidence.
	Reason string `json:"reason,omitempty"`
	// Evidence is the log line (masked) that decided a class read from the
	// log, with its line number.
	Evidence     string `json:"evidence,omitempty"`
	EvidenceLine int    `json:"evidence_line,omitempty"`
	// Dispatched is the continuation started, if any; DispatchedRunID its
	// run (0 when GitHub did not say); NextAttempt its Job number.
	Dispatched      *github.DispatchResult `json:"dispatched,omitempty"`
	DispatchedRunID int64                  `json:"dispatched_run_id,omitempty"`
	NextAttempt     int                    `json:"next_attempt,omitempty"`
	// DispatchFailure is the class of the continuation's dispatch when an
	// attempt failed (indeterminate: a 5xx or a lost answer, reconciled by
	// looking for the run; auth, rate_limited …), and DispatchAttempts the
	// dispatches sent then. With Dispatched set, a later attempt or the look
	// found the run; without it, the next Job is not known to have started.
	DispatchFailure  failure.Class `json:"dispatch_failure,omitempty"`
	DispatchAttempts int           `json:"dispatch_attempts,omitempty"`
	// Woken are the items that waited for this item's claims
	// (item.waiting_for) and were dispatched when it ended (ClaimWaiters).
	Woken []int `json:"woken,omitempty"`
	// Tracker is the drive of a tracker's sub-issues (class tracker).
	Tracker *DriveOutcome `json:"tracker,omitempty"`
	Stopped bool          `json:"stopped"`
	// Step is implement.stopped of a stop.
	Step string `json:"step,omitempty"`
	Head string `json:"head,omitempty"`
	// SpendRecovered is what the killed Job's log added to the record;
	// SpendEstimated the part of it at booked estimates (calls booked and
	// never settled: the Job was killed while they were in flight; its
	// model_calls count them). SpendLost is true only when report cannot know what
	// the Job spent after its last mark: the log is gone, or the runner lost
	// communication and the log's tail with it.
	SpendRecovered record.Spend `json:"spend_recovered"`
	SpendEstimated record.Spend `json:"spend_estimated"`
	SpendLost      bool         `json:"spend_lost"`
	// Spend is the item's spend after report; JobSpend the Job's share.
	Spend    record.Spend `json:"spend"`
	JobSpend record.Spend `json:"job_spend"`
	// ResumeAfter is when a yielded item may go on (the next day).
	ResumeAfter time.Time `json:"resume_after,omitzero"`
	// Parallelism is implement.parallelism as report set it for the
	// continuation of an oom (0: unchanged).
	Parallelism int `json:"parallelism,omitempty"`
	// Requests is the GitHub requests report spent (counted ones).
	Requests int `json:"requests"`
	// Dashboard is what keeping the dashboard did (nil: not kept this time);
	// DashboardError why it was not, when it failed. A dashboard that
	// cannot be kept does not fail report: the item's own action is done,
	// and the next report or the refresh brings the dashboard back.
	Dashboard      *dashboard.Kept `json:"dashboard,omitempty"`
	DashboardError string          `json:"dashboard_error,omitempty"`
}

// InputError is a problem with what report was given (flags, outputs, the
// event), not with GitHub: the CLI exits 2 for it.
type InputError = inputerr.Error

func inputErr(err error) error { return inputerr.New(err) }

func validWord(s string) bool {
	if s == "" || len(s) > record.MaxWord || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' && c != '-' {
			return false
		}
	}
	return true
}
