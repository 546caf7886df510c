package items

import (
	"sort"
	"time"

	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// State is where an item stands. The names are stable: the dashboard's
// state block, `roadmap metrics --json` and alert keys use them.
type State string

const (
	// Planning: a stage Job runs, or a stage continuation or an amendment
	// (plan_wrong) is on its way.
	Planning State = "planning"
	// Staged: the plan is in its draft PR; implement has not started.
	Staged State = "staged"
	// Implementing: an implement Job runs, or a continuation is on its way.
	Implementing State = "implementing"
	// WaitingChecks: the last Job yielded while the PR's checks still ran.
	WaitingChecks State = "waiting_checks"
	// NeedsInput: a question only a person can answer.
	NeedsInput State = "needs_input"
	// WaitingBudget: the item yielded for the day's budget (item.wake_at).
	WaitingBudget State = "waiting_budget"
	// WaitingClaim: the last Job found another item's live claim on a unit
	// its plan changes (claim_wait); it is woken when that item ends.
	WaitingClaim State = "waiting_claim"
	// WaitingBlockers: the last Job found an open blocker (class blocked,
	// the roadmap:blocked label); it starts by itself when the last one is
	// met (report.Unblock).
	WaitingBlockers State = "waiting_blockers"
	// Stopped: the item stopped on a class (Item.Class), or a person stopped it.
	Stopped State = "stopped"
	// Ready: every group passed; the PR is ready for review.
	Ready State = "ready"
	// Unknown: the record says nothing roadmap recognises yet.
	Unknown State = "unknown"
)

// States is every state, in the order a person reads them (the pipeline's).
var States = []State{Planning, Staged, Implementing, WaitingChecks, NeedsInput, WaitingBudget, WaitingClaim, WaitingBlockers, Stopped, Ready, Unknown}

// BlockedClass is the class of a Job that yielded because the item has an
// open blocker: failure.Blocked, which this package cannot import
// (internal/report's TestBlockedClassAgrees holds the two equal).
const BlockedClass = "blocked"

// Job is one Job of the item, stage's or implement's.
type Job struct {
	Phase  string       `json:"phase"` // "stage" or "implement"
	Job    int          `json:"job"`
	RunID  int64        `json:"run_id"`
	Result string       `json:"result,omitempty"`
	Class  string       `json:"class,omitempty"`
	Spend  record.Spend `json:"spend"`
	// Requests are the counted GitHub requests the Job made.
	Requests int `json:"requests,omitempty"`
	// At is when its line last changed (zero: a line older than the field).
	At time.Time `json:"at,omitzero"`
	// KilledStop: the Job wrote no result (killed) and report stopped the
	// item on its class (implement.result stopped).
	KilledStop bool `json:"killed_stop,omitempty"`
}

// Stop reports whether the Job ended the item on a class: a stopped
// result, or a killed Job report stopped (no result, class set, and
// implement.result stopped).
func (j Job) Stop() bool { return j.Result == string(record.ResultStopped) || j.KilledStop }

// Item is what the record says of one item.
type Item struct {
	Issue int    `json:"issue"`
	Title string `json:"title,omitempty"`
	State State  `json:"state"`
	// Class is the stop's class for Stopped, the yield's class for the
	// waiting states, and the last Job's class otherwise ("" when none).
	Class string `json:"class,omitempty"`
	// StoppedBy is the person who stopped the item (item.stopped_by).
	StoppedBy string `json:"stopped_by,omitempty"`
	PR        int    `json:"pr,omitempty"`
	// Spend is the item's whole spend, killed Jobs' recovered spend included
	// (implement.spend, which stage's Jobs add to as well).
	Spend record.Spend `json:"spend"`
	// Jobs are stage's then implement's Jobs, each in number order.
	Jobs []Job `json:"jobs"`
	// WakeAt is item.wake_at, for WaitingBudget.
	WakeAt time.Time `json:"wake_at,omitzero"`
	// StagedAt is when the plan was staged (the stage Job that staged it);
	// ReadyAt when the Job that marked the PR ready ended. Zero: unknown.
	StagedAt time.Time `json:"staged_at,omitzero"`
	ReadyAt  time.Time `json:"ready_at,omitzero"`
	// BlockedBy is what a WaitingBlockers item waits for, as its record
	// says (item.blocked_by: "#12, owner/repo#4"); BlockedSince is when the
	// Job that found it blocked ended (zero: unknown).
	BlockedBy    string    `json:"blocked_by,omitempty"`
	BlockedSince time.Time `json:"blocked_since,omitzero"`
}

// BlockedSeconds is how long the item waited for its blockers, up to now:
// from each Job line of class blocked to the next Job line after it (the
// Job that started once they were met), or to now while it still waits.
// Lines with no time are not counted.
func (it Item) BlockedSeconds(now time.Time) float64 {
	total := 0.0
	for _, j := range it.Jobs {
		if j.Class != BlockedClass || j.At.IsZero() {
			continue
		}
		end := now
		for _, k := range it.Jobs {
			if k.At.After(j.At) && k.At.Before(end) {
				end = k.At
			}
		}
		if end.After(j.At) {
			total += end.Sub(j.At).Seconds()
		}
	}
	return total
}

// Last is the item's newest Job (by its line's time, then run id), and
// false when it has none.
func (it Item) Last() (Job, bool) {
	if len(it.Jobs) == 0 {
		return Job{}, false
	}
	best := it.Jobs[0]
	for _, j := range it.Jobs[1:] {
		if newer(j, best) {
			best = j
		}
	}
	return best, true
}

func newer(a, b Job) bool {
	if !a.At.Equal(b.At) && !a.At.IsZero() && !b.At.IsZero() {
		return a.At.After(b.At)
	}
	if a.RunID != b.RunID {
		return a.RunID > b.RunID
	}
	if a.Phase != b.Phase {
		return a.Phase == "implement"
	}
	return a.Job > b.Job
}

// Requests sums the counted GitHub requests of every Job.
func (it Item) Requests() int {
	n := 0
	for _, j := range it.Jobs {
		n += j.Requests
	}
	return n
}

// ImplementJobs counts the implement Jobs.
func (it Item) ImplementJobs() int {
	n := 0
	for _, j := range it.Jobs {
		if j.Phase == "implement" {
			n++
		}
	}
	return n
}

// Of reads the item from its record. title is the issue's (untrusted: the
// caller masks and neutralises it before showing it).
func Of(issue int, title string, rec *record.Record) Item {
	it := Item{Issue: issue, Title: title, Jobs: []Job{}}
	it.Spend, _ = rec.Spend()
	it.PR, _ = rec.StagePR()
	it.StoppedBy, _ = rec.StoppedBy()
	it.WakeAt, _ = rec.WakeAt()
	stage, _ := rec.StageJobs()
	impl, _ := rec.Jobs()
	for _, l := range stage {
		it.Jobs = append(it.Jobs, job("stage", l))
		if l.Result == record.ResultStaged && l.At > 0 {
			it.StagedAt = time.Unix(l.At, 0).UTC()
		}
	}
	for _, l := range impl {
		it.Jobs = append(it.Jobs, job("implement", l))
		if l.Result == record.ResultReady && l.At > 0 {
			it.ReadyAt = time.Unix(l.At, 0).UTC()
		}
	}
	sort.SliceStable(it.Jobs, func(a, b int) bool {
		if it.Jobs[a].Phase != it.Jobs[b].Phase {
			return it.Jobs[a].Phase == "stage"
		}
		return it.Jobs[a].Job < it.Jobs[b].Job
	})
	it.State, it.Class = state(rec, stage, impl)
	if len(stage) == 0 && len(impl) == 0 && blockedBy(rec) != "" {
		// Found blocked before any Job wrote a line.
		it.State, it.Class = WaitingBlockers, BlockedClass
	}
	if it.State == Stopped && len(impl) > 0 {
		// The stop of a killed Job is its line's: mark it so Stop says so.
		for i := range it.Jobs {
			j := &it.Jobs[i]
			if j.Phase == "implement" && j.Job == lastJob(impl).Job && j.Result == "" && j.Class != "" && stopClass(rec) {
				j.KilledStop = true
			}
		}
	}
	if it.StoppedBy != "" {
		it.State = Stopped
	}
	if it.State == WaitingBlockers {
		it.BlockedBy = blockedBy(rec)
		if j, ok := it.Last(); ok {
			it.BlockedSince = j.At
		}
	}
	return it
}

// blockedBy is item.blocked_by: what a waiting item waits for ("#12,
// owner/repo#4"), written by the Job that yielded blocked.
func blockedBy(rec *record.Record) string {
	s, _ := rec.BlockedBy()
	return s
}

func job(phase string, l record.JobOutcome) Job {
	j := Job{Phase: phase, Job: l.Job, RunID: l.RunID, Result: string(l.Result), Class: l.Failure, Spend: l.Spend, Requests: l.Requests}
	if l.At > 0 {
		j.At = time.Unix(l.At, 0).UTC()
	}
	return j
}

// state is the item's state and its class. Implement's lines decide once
// there are any; stage's before.
func state(rec *record.Record, stage, impl []record.JobOutcome) (State, string) {
	if len(impl) == 0 {
		return stageState(rec, stage)
	}
	last := lastJob(impl)
	if last.Result == "" {
		// Running, or killed and classified by report (class set): either
		// way the item is in implement's hands.
		if last.Failure != "" && stopClass(rec) {
			return Stopped, last.Failure
		}
		return Implementing, last.Failure
	}
	result, _ := rec.Result()
	class, _ := rec.Failure()
	switch result {
	case record.ResultReady:
		return Ready, ""
	case record.ResultStopped:
		return Stopped, class
	case record.ResultReturned:
		if class == "plan_wrong" {
			return Planning, class
		}
		return NeedsInput, class
	case record.ResultYielded:
		if _, waiting := rec.WakeAt(); waiting || class == "day_budget_exhausted" {
			return WaitingBudget, class
		}
		if class == "" && yieldedWatching(rec) {
			return WaitingChecks, ""
		}
		if class == "claim_wait" {
			return WaitingClaim, class
		}
		if class == BlockedClass {
			return WaitingBlockers, class
		}
		return Implementing, class
	}
	return Implementing, class
}

// lastJob is the highest-numbered line; lines is not empty.
func lastJob(lines []record.JobOutcome) record.JobOutcome {
	last := lines[len(lines)-1]
	for _, l := range lines {
		if l.Job > last.Job {
			last = l
		}
	}
	return last
}

// stopClass reports whether report stopped the item after a Job that wrote
// no result: implement.result says stopped.
func stopClass(rec *record.Record) bool {
	r, _ := rec.Result()
	return r == record.ResultStopped
}

func stageState(rec *record.Record, lines []record.JobOutcome) (State, string) {
	st, _ := rec.StageState()
	class := ""
	if n := len(lines); n > 0 {
		class = lines[n-1].Failure
	}
	switch st {
	case "staged":
		return Staged, ""
	case "stopped":
		return Stopped, class
	case "returned":
		return NeedsInput, class
	}
	if n := len(lines); n > 0 {
		if _, waiting := rec.WakeAt(); waiting || class == "day_budget_exhausted" {
			return WaitingBudget, class
		}
		if class == BlockedClass && lines[n-1].Result == record.ResultYielded {
			return WaitingBlockers, class
		}
		return Planning, class
	}
	if st != "" {
		return Planning, ""
	}
	return Unknown, ""
}

// yieldedWatching reports whether the last Job's trace ends on a yield at
// the PR-checks watch (the runner yields there with no class).
func yieldedWatching(rec *record.Record) bool {
	raw, ok := rec.Trace()
	if !ok {
		return false
	}
	c, err := trace.ParseRecordCopy(string(raw))
	if err != nil {
		return false
	}
	for i := len(c.Events) - 1; i >= 0; i-- {
		e := c.Events[i]
		if e.Type == trace.TypePhase && e.Phase == trace.PhaseYielded {
			return e.Step == string(trace.PhaseWatch)
		}
	}
	return false
}
