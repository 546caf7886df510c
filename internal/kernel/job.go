package kernel

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/recordstore"
	"github.com/roadmap-dev/roadmap/internal/redact"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// Grace bounds the last mark written after the Job's context ended: the
// runner kills the process 10 s after SIGINT (SIGTERM at 7.5 s), and one
// record write fits well inside.
const Grace = 5 * time.Second

// Job is one GitHub job's run of a phase for an item: what it read when it
// started and what it has spent since. Its fields are the phase runners' to
// read; its spend changes only through the observer (Observer).
type Job struct {
	O Options

	// Issue is the issue as read once when the Job started.
	Issue github.Issue
	// RC is the record comment, Rec its record as last read or written.
	RC  recordstore.RecordComment
	Rec *record.Record
	// Notes are what was ignored (planted record blocks, marker comments by
	// others), shown in the record comment.
	Notes []string
	// Doing is what the record comment says the Job is doing now.
	Doing string

	// Prior is the item's spend recorded before this Job; Spend this Job's.
	Prior record.Spend
	Spend record.Spend
	// PriorEstimated is how many of Prior's calls are at their booked
	// estimate (implement.spend_estimated when the Job started).
	PriorEstimated int
	// Number is this Job's number for the item: its line in the phase's
	// jobs key and the job of its spend lines and trace events.
	Number int
	// Group is the group being worked on (0: none), for spend lines and
	// events.
	Group int

	// Estimated counts this Job's calls whose spend is their booked
	// estimate: they ended with no answer (the Job was stopped mid-call,
	// the connection failed), so what they cost is not known, only bounded.
	Estimated int

	// Busy, when set, is the live Job that holds the item's lease: this Job
	// does nothing (Start).
	Busy *Busy

	phases map[string]Phase  // the phases whose Jobs may hold the lease, by name
	lease  *lease            // the item's lease, while this Job holds it
	calls  int               // model calls of this Job, numbered for the spend lines
	booked *trace.SpendEntry // the call in flight: booked, not yet settled
	marks  int               // marks this Job has written
	wrote  time.Time         // when this Job last wrote the record (its start until it does)

	// mu keeps the log's lines, the trace's events, the call numbers and
	// Spend whole while group sessions run at once (SessionObserver,
	// implement.parallel_groups). The fields above it that a runner reads
	// (Spend, Group) are read by the runner only while no session runs.
	mu sync.Mutex
}

// Start takes the item's lease and then reads the item once: the issue and
// its record comment (the body is the person's, and a record block there is
// only reported). number is the Job's number when the caller knows it (a
// continuation's dispatch input); 0 takes the next after the record's.
//
// When a live Job holds the lease, the Job's Busy says so and nothing else
// is set up: the runner ends it at once, with no mark and no number.
//
// The Job runs as o.Phase; o.Peers are the phases whose Jobs it may find
// holding the lease.
func Start(ctx context.Context, o Options, number int) (*Job, error) {
	j := &Job{O: o, phases: phaseSet(o.Phase, o.Peers)}
	held, err := j.takeLease(ctx)
	if err != nil {
		return nil, err
	}
	if err := j.read(ctx); err != nil {
		j.Release(ctx)
		return nil, err
	}
	if held != nil {
		v, err := j.judgeHolder(ctx, *held)
		if err == nil && !v.gone {
			j.Busy = &Busy{Holder: v.holder, Why: v.why}
			return j, nil
		}
		if err == nil {
			err = j.takeOver(ctx, *held, v.why, v.holder)
		}
		var busy *Busy
		if errors.As(err, &busy) {
			j.Busy = busy
			return j, nil
		}
		if err != nil {
			return nil, err
		}
		if v.byRun {
			// The run may have ended after the record was read: read it as
			// the holder left it. (A record that showed the holder's ending
			// was read after its last write already.)
			if err := j.read(ctx); err != nil {
				j.Release(ctx)
				return nil, err
			}
		}
	}
	j.Number = number
	if j.Number == 0 {
		j.Number = j.nextNumber()
	}
	j.wrote = o.Clock.Now()
	return j, nil
}

// read reads the issue and the record comment.
func (j *Job) read(ctx context.Context) error {
	o := j.O
	is, err := o.GitHub.Issue(ctx, o.Issue)
	if err != nil {
		return fmt.Errorf("read issue %d: %w", o.Issue, err)
	}
	rc := recordstore.NoRecord()
	if o.RecordComment != 0 || is.Comments > 0 {
		// An issue with no comment has no record comment: the list that
		// would look for it is skipped (a new item's first Job).
		if rc, err = j.store().Read(ctx, o.Issue, o.RecordComment); err != nil {
			return fmt.Errorf("issue %d: %w", o.Issue, err)
		}
	}
	j.Issue, j.RC, j.Rec = is, rc, rc.Record
	j.Notes = append([]string(nil), rc.Ignored...)
	if record.HasBlock(is.Body) {
		j.Notes = append(j.Notes, "a record block in the issue body: the record is this comment, the body is never read for it")
	}
	j.Prior, _ = j.Rec.Spend()
	j.PriorEstimated = j.Rec.SpendEstimated()
	return nil
}

// nextNumber is the number after the last the record knows for the phase.
func (j *Job) nextNumber() int { return j.O.Phase.Last(j.Rec) + 1 }

// Total is the item's spend so far: the record's before this Job and this
// Job's own.
func (j *Job) Total() record.Spend { return j.total() }

func (j *Job) total() record.Spend {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.Prior.Add(j.Spend)
}

// MarkDue reports whether a mark that may wait is written now: the mark
// interval (Options.MarkInterval) has passed since this Job last wrote the
// record, or since it started. A mark that may wait is one whose work is
// kept elsewhere until it is written (a group's commits are on the remote,
// and the next Job reconciles their mark from git): it rides on the next
// write instead, and a Job whose log is lost loses at most the spend of
// the calls since its last write.
func (j *Job) MarkDue() bool { return !j.O.Clock.Now().Before(j.wrote.Add(j.O.MarkInterval)) }

// Marks is how many marks this Job has written.
func (j *Job) Marks() int { return j.marks }

// EnsureRecord makes the record comment when the item has none yet, with no
// mark in it: the first Job of an item acknowledges the label at once.
func (j *Job) EnsureRecord(ctx context.Context) error {
	if j.RC.ID != 0 {
		return nil
	}
	if err := j.store().Write(ctx, j.O.Issue, &j.RC,
		func(*record.Record) (record.Changes, error) { return record.Changes{}, nil }, j.View); err != nil {
		return fmt.Errorf("issue %d: create the record comment: %w", j.O.Issue, err)
	}
	j.Rec = j.RC.Record
	return nil
}

// Mark writes ch to the record in one write, with what every mark carries:
// the item's spend so far, what the phase adds (Phase.Marked: implement's
// number) and this Job's line in the phase's jobs key, whose Job, RunID, Spend and Requests
// the kernel fills. The record is read once inside the write, so the line
// joins the other Jobs' lines as they are now.
func (j *Job) Mark(ctx context.Context, ch record.Changes, line record.JobOutcome) error {
	var all record.Changes
	all.Merge(ch)
	all.SetSpend(j.Total())
	all.SetSpendEstimated(j.PriorEstimated + j.Estimated)
	phase := j.O.Phase
	phase.Marked(&all, j.Number)
	line.Job, line.RunID, line.Spend = j.Number, j.O.RunID, j.Spend
	line.At = j.O.Clock.Now().Unix()
	// Counted before this write: the line says what the Job had spent on
	// GitHub when it wrote its mark.
	line.Requests = j.O.GitHub.Requests().Counted()
	change := func(cur *record.Record) (record.Changes, error) {
		var c record.Changes
		c.Merge(all)
		phase.SetJobs(&c, record.WithJob(phase.Jobs(cur), line))
		return c, nil
	}
	if err := j.store().Write(ctx, j.O.Issue, &j.RC, change, j.View); err != nil {
		return fmt.Errorf("write marks %s: %w", keyList(all), err)
	}
	j.Rec = j.RC.Record
	j.marks++
	j.wrote = j.O.Clock.Now()
	return nil
}

// View is what the record comment shows people besides the block. What it
// says can hold text roadmap did not write (a group's title from the plan,
// a step label in the record, a plan finding, a login), so each line is
// masked and neutralised.
func (j *Job) View(cur *record.Record) record.View {
	safe := func(s string) string {
		return redact.NeutraliseIn(j.O.Mask(s), j.O.GitHub.ServerHost(), j.O.GitHub.FullName())
	}
	notes := make([]string, len(j.Notes))
	for i, n := range j.Notes {
		notes[i] = safe(n)
	}
	doing := j.Doing
	if doing == "" {
		doing = cur.State()
	}
	return record.View{Doing: safe(doing), RunURL: j.O.RunURL, Notes: notes}
}

// LastMarkContext is the context the last mark is written on: ctx while it
// lives, else a fresh one bounded by Grace, so a Job the runner signalled
// still writes its typed result. The caller calls cancel.
func LastMarkContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return lastMarkContext(ctx, time.Now)
}

// lastMarkContext is LastMarkContext with the time it is asked at read from
// now: the fresh context's deadline is Grace after it, on the machine's
// clock (a context's timer knows no other).
func lastMarkContext(ctx context.Context, now func() time.Time) (context.Context, context.CancelFunc) {
	if ctx.Err() == nil {
		return ctx, func() {}
	}
	return context.WithDeadline(context.WithoutCancel(ctx), now().Add(Grace))
}

// Signalled is the reason of a Job that ends because the runner asked it to
// stop (its context ended).
const Signalled = "the runner asked the Job to stop (signal)"

// Verdict is how an error ends a Job: the result its class's action leads
// to, the class and a reason.
type Verdict struct {
	Result record.Result
	Class  failure.Class
	Reason string
}

// Judge turns an error into the Verdict its class leads to: a signalled Job
// yields as killed, a rate limit yields, and any other class takes its row
// of the taxonomy, so a class with an automatic action never stops the item.
func Judge(ctx context.Context, err error) Verdict {
	if ctx.Err() != nil {
		return Verdict{Result: record.ResultYielded, Class: failure.Killed, Reason: Signalled}
	}
	var rl *github.RateLimitError
	if errors.As(err, &rl) {
		return Verdict{Result: record.ResultYielded, Class: failure.RateLimited,
			Reason: fmt.Sprintf("GitHub rate limit: waiting %s would pass the deadline", rl.Wait.Round(time.Second))}
	}
	return ClassVerdict(failure.ClassifyError(err), err.Error())
}

// ClassVerdict is the Verdict of a class: the result its row's action leads
// to (stopped for a class with no row).
func ClassVerdict(class failure.Class, reason string) Verdict {
	res := record.ResultStopped
	if row, ok := failure.Lookup(class); ok {
		res = record.Result(row.Result)
	}
	if !res.Valid() {
		res = record.ResultStopped
	}
	return Verdict{Result: res, Class: class, Reason: reason}
}

// Started records the Job's start in the trace and the log.
func (j *Job) Started(step string) {
	j.Event(trace.Event{Type: trace.TypePhase, Phase: trace.PhaseJobStarted, Step: step})
}

func keyList(c record.Changes) string {
	var ks []string
	for _, k := range c.Keys() {
		ks = append(ks, string(k))
	}
	return strings.Join(ks, ", ")
}
