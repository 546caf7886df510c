package console

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/inputerr"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/recordstore"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// Source is what the console reads: GitHub (*github.Client) or a saved
// fake GitHub state.
type Source interface {
	// Comments lists the issue's comments; the record is found among them
	// as every reader finds it (github.RecordFrom).
	Comments(ctx context.Context, n int) ([]github.Comment, error)
	Identity() string
	// RunJobs lists the jobs of a run (conditional: a 304 when unchanged).
	RunJobs(ctx context.Context, runID int64) ([]github.WorkflowJob, error)
	// JobLog streams a completed job's log; github.ErrNotFound while the
	// job runs.
	JobLog(ctx context.Context, jobID int64) (io.ReadCloser, error)
}

// Masker hides secrets in text before it reaches an event.
type Masker interface{ Mask(string) string }

// Clock is the time the console reads and waits on.
type Clock interface {
	Now() time.Time
	Sleep(ctx context.Context, d time.Duration) error
}

// Options says which item to show and where to read it.
type Options struct {
	Issue  int
	Source Source
	Mask   Masker
	Clock  Clock
	// Budget is the item budget in USD the status line holds the spend
	// against (0: not shown).
	Budget float64
	// JobTimeout is how long a Job may run from its start (the workflow's
	// timeout-minutes); the status line shows the time left of the running
	// Job against it (0: not shown).
	JobTimeout time.Duration
	// Interval is how long Follow waits between polls (default 5 s).
	Interval time.Duration
}

// DefaultInterval is the poll interval of --follow.
const DefaultInterval = 5 * time.Second

// InputError is a failure the caller can fix (no such issue, no record).
type InputError = inputerr.Error

// The phases a Job belongs to.
const (
	PhaseStage     = "stage"
	PhaseImplement = "implement"
)

// Event types the console adds to the trace's own (model_call, tool_call,
// check_run, retry, phase).
const (
	TypeJobStarted = "job_started" // the Job's line appeared in the record
	TypeMark       = "mark"        // the Job marked: its group or spend moved
	TypeJobEnded   = "job_ended"   // the Job wrote its result
	TypeRunStatus  = "run_status"  // GitHub's status of the Job's workflow job
	TypeStatus     = "status"      // the status line changed
)

// Event is one line of the timeline. Field names are stable: scripts read
// the --json stream.
type Event struct {
	Seq   int       `json:"seq"`
	Time  time.Time `json:"time"`
	Issue int       `json:"issue"`
	Job   int       `json:"job"`
	RunID int64     `json:"run_id"`
	Phase string    `json:"phase"`
	// Group is the group the event belongs to (0: none); Groups the plan's
	// group count when the record says it (0: unknown).
	Group  int    `json:"group"`
	Groups int    `json:"groups"`
	Type   string `json:"type"`
	// Step is a trace event's step or phase name, a run status's status.
	Step    string `json:"step"`
	Reason  string `json:"reason"`
	Outcome string `json:"outcome"`
	// SpendUSD, TokensIn and TokensOut are a model call's own spend, or
	// the Job's spend so far on job_started, mark and job_ended, or the
	// item's on status.
	SpendUSD  float64 `json:"spend_usd"`
	TokensIn  int64   `json:"tokens_in"`
	TokensOut int64   `json:"tokens_out"`
	// Source says where the event was read: record, trace (the record's
	// implement.trace or stage.trace), log (a completed Job's spend lines) or run
	// (GitHub's jobs list).
	Source string `json:"source"`
	// Detail is a one-line reading of the rest, for a person.
	Detail string `json:"detail"`

	key string
}

// Console holds what has been shown: each event once, numbered in the
// order it was first seen.
type Console struct {
	o Options

	seq    int
	seen   map[string]bool
	lines  map[jobRef]record.JobOutcome // last line shown per Job
	runs   map[jobRef]*runState
	traced map[jobRef]bool // the record's trace copy covered the Job
	status string
}

type jobRef struct {
	phase string
	job   int
}

// runState is what the console knows of a Job's workflow job on GitHub.
type runState struct {
	jobID      int64
	status     string
	conclusion string
	startedAt  time.Time
	logRead    bool
	gone       bool // the run has no job to read (404, or none listed)
}

func (r *runState) completed() bool { return r != nil && (r.status == "completed" || r.gone) }

// New returns a console for one item.
func New(o Options) *Console {
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	return &Console{o: o, seen: map[string]bool{}, lines: map[jobRef]record.JobOutcome{},
		runs: map[jobRef]*runState{}, traced: map[jobRef]bool{}}
}

// Poll reads the item once and returns what is new since the last poll,
// numbered on from it, and whether the item's last Job has ended for good
// (there is nothing more to follow).
func (c *Console) Poll(ctx context.Context) (events []Event, done bool, err error) {
	comments, err := c.o.Source.Comments(ctx, c.o.Issue)
	if err != nil {
		if errors.Is(err, github.ErrNotFound) {
			return nil, false, &InputError{Err: fmt.Errorf("issue #%d not found", c.o.Issue)}
		}
		return nil, false, fmt.Errorf("read issue %d comments: %w", c.o.Issue, err)
	}
	rc, err := recordstore.From(c.o.Issue, comments, c.o.Source.Identity())
	if err != nil {
		return nil, false, &InputError{Err: fmt.Errorf("issue #%d record: %w", c.o.Issue, err)}
	}
	if rc.ID == 0 || len(rc.Record.Keys()) == 0 {
		return nil, false, &InputError{Err: fmt.Errorf("issue #%d has no roadmap record (roadmap's own comment, by %s): nothing has run for it", c.o.Issue, c.o.Source.Identity())}
	}
	body := ""
	for _, cm := range comments {
		if cm.ID == rc.ID {
			body = cm.Body
		}
	}
	rec := rc.Record
	now := c.o.Clock.Now().UTC()
	k, n := DoingGroups(body)

	var out []Event
	add := func(e Event) {
		if c.seen[e.key] {
			return
		}
		c.seen[e.key] = true
		c.seq++
		e.Seq, e.Issue = c.seq, c.o.Issue
		if e.Time.IsZero() {
			e.Time = now
		}
		if e.Groups == 0 {
			e.Groups = n
		}
		e.Time = e.Time.UTC()
		out = append(out, e)
	}

	copyEvents, copyPhase, copyJob := c.traceCopy(rec)
	stageLines, _ := rec.StageJobs()
	implLines, _ := rec.Jobs()
	for _, ph := range []struct {
		name  string
		lines []record.JobOutcome
	}{{PhaseStage, stageLines}, {PhaseImplement, implLines}} {
		for _, l := range ph.lines {
			ref := jobRef{ph.name, l.Job}
			if err := c.readRun(ctx, ref, l); err != nil {
				return nil, false, err
			}
			var traced []trace.Event
			if ph.name == copyPhase && l.Job == copyJob && l.Result != "" {
				traced = copyEvents
			}
			var calls []trace.SpendEntry
			if !c.traced[ref] && len(traced) == 0 {
				if calls, err = c.logEvents(ctx, ref, c.runs[ref]); err != nil {
					return nil, false, err
				}
			}
			for _, e := range c.jobEvents(ref, l, traced, calls) {
				add(e)
			}
		}
	}

	st := c.statusLine(rec, stageLines, implLines, k, n, now)
	if st.Detail != c.status {
		c.status = st.Detail
		st.key = fmt.Sprintf("status/%d", c.seq)
		add(st)
	}
	return out, c.finished(rec, stageLines, implLines), nil
}

// traceCopy reads the record's bounded trace copy: the events of the last
// Job that wrote its last mark, and its phase (stage.trace is a stage
// Job's, implement.trace an implement Job's). A copy that does not parse is
// left out (the record is editable), not an error.
func (c *Console) traceCopy(rec *record.Record) ([]trace.Event, string, int) {
	raw, key, ok := rec.LastTrace()
	if !ok {
		return nil, "", 0
	}
	rc, err := trace.ParseRecordCopy(string(raw))
	if err != nil || len(rc.Events) == 0 {
		return nil, "", 0
	}
	phase := PhaseImplement
	if key == record.KeyStageTrace {
		phase = PhaseStage
	}
	return rc.Events, phase, rc.Events[len(rc.Events)-1].Job
}

// readRun reads the Job's workflow job from the run's jobs list until it
// has completed, then its log once when the record has no trace of it.
func (c *Console) readRun(ctx context.Context, ref jobRef, l record.JobOutcome) error {
	if l.RunID <= 0 {
		return nil
	}
	rs := c.runs[ref]
	if rs == nil {
		rs = &runState{}
		c.runs[ref] = rs
	}
	if !rs.completed() {
		jobs, err := c.o.Source.RunJobs(ctx, l.RunID)
		switch {
		case errors.Is(err, github.ErrNotFound):
			rs.gone = true
		case err != nil:
			return fmt.Errorf("read the jobs of run %d (%s Job %d): %w", l.RunID, ref.phase, ref.job, err)
		default:
			j, ok := pickJob(jobs, ref.phase)
			if !ok {
				rs.gone = true
				break
			}
			rs.jobID, rs.status, rs.conclusion, rs.startedAt = j.ID, j.Status, j.Conclusion, j.StartedAt
		}
	}
	return nil
}

// pickJob finds the Job's workflow job among its run's: the one named for
// the phase, else the only one.
func pickJob(jobs []github.WorkflowJob, phase string) (github.WorkflowJob, bool) {
	for _, j := range jobs {
		if strings.Contains(strings.ToLower(j.Name), phase) {
			return j, true
		}
	}
	if len(jobs) == 1 {
		return jobs[0], true
	}
	return github.WorkflowJob{}, false
}

// logEvents reads a completed Job's spend lines once: its model calls,
// for a Job the record's trace copy does not cover (an earlier Job, or one
// killed before its last mark).
func (c *Console) logEvents(ctx context.Context, ref jobRef, rs *runState) ([]trace.SpendEntry, error) {
	if rs == nil || rs.logRead || rs.gone || rs.status != "completed" || rs.jobID == 0 {
		return nil, nil
	}
	rs.logRead = true
	body, err := c.o.Source.JobLog(ctx, rs.jobID)
	if errors.Is(err, github.ErrNotFound) {
		return nil, nil // expired or deleted: the record is all there is
	}
	if err != nil {
		return nil, fmt.Errorf("read the log of %s Job %d: %w", ref.phase, ref.job, err)
	}
	defer body.Close()
	return LogCalls(body, ref.job)
}
