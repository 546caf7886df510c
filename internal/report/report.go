package report

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/roadmap-dev/roadmap/internal/actionsio"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/recordstore"
	"github.com/roadmap-dev/roadmap/internal/report/decide"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// Run reads how one implement Job ended and takes the one action its class
// has. It reads the issue once, writes the record at most once (through the
// record write protocol), then acts: a status, labels, a comment, a dispatch,
// the day ledger. Every step is idempotent, so running it again for the same
// Job (a re-run of the report job) adds no spend twice, posts no second
// comment and dispatches no second continuation (see continuation).
//
// An *InputError says the options were wrong; any other error is GitHub's or
// the record's, and the Outcome holds what was done before it.
func Run(ctx context.Context, o Options) (Outcome, error) {
	if err := o.defaults(); err != nil {
		return Outcome{}, inputErr(err)
	}
	before := o.GitHub.Requests()
	r := &reporter{o: o}
	r.out.Issue = o.Issue
	run := r.run
	if o.Phase == PhaseStage {
		run = r.runStage
	}
	if o.Result == string(record.ResultYielded) && (o.Failure == string(failure.Busy) || o.Failure == string(failure.NotHeld) || o.Failure == string(failure.Blocked)) {
		run = r.leave
	}
	if o.Result == string(record.ResultYielded) && o.Failure == string(failure.Tracker) {
		run = r.drive
	}
	err := run(ctx)
	r.out.Requests = o.GitHub.Requests().Sub(before).Counted()
	return r.out, err
}

type reporter struct {
	o     Options
	issue *github.Issue // read only when a label decision needs it
	rc    recordstore.RecordComment
	rec   *record.Record
	out   Outcome
	job   int
	// end is how the reported Job ended: its typed result and class, or
	// the class its log gives.
	end   decide.Ending
	facts *jobFacts
	d     decide.Decision
	// dispatching is the reported Job's intent mark as report first read
	// it: an earlier run of report set out to dispatch the next Job then.
	dispatching int64
	// stage: the reported Job is a stage Job (its line is in stage.jobs).
	stage bool
	// dispatchErr is the class of a continuation's dispatch that did not
	// land: the record comment says so.
	dispatchErr failure.Class
	// heldBy: the person who stopped the item; the Job's ending starts nothing.
	heldBy string
}

// leave reports a Job that did nothing: it found a live Job holding the
// item's lease (busy; the holder's own report decides what follows), or it
// was started by a reopening with no closing to lift (not_held; the item
// goes on as its record says), or it found an open blocker (blocked: it
// wrote the label and item.blocked_by itself, and the item starts again
// when its blockers are met). It made no mark and took no number, so
// report reads nothing, writes nothing and dispatches nothing.
func (r *reporter) leave(context.Context) error {
	r.out.Result, r.out.Class, r.out.Action = r.o.Result, failure.Class(r.o.Failure), ActionNone
	r.out.Reason = r.o.Mask(r.o.Reason)
	what := "left the item to the Job holding its lease"
	switch r.out.Class {
	case failure.NotHeld:
		what = "found no closing to resume from"
	case failure.Blocked:
		what = "found the item's blockers open"
	}
	r.logf("report: issue #%d: the Job %s (%s): nothing to do", r.o.Issue, what, r.out.Reason)
	return nil
}

// drive reports a Job that found its item a tracker: it made no mark and
// took no number. The tracker gets the tracker label (which every later
// wake drives it by) and its first drive: the sub-issues whose blockers are
// met start, up to tracker.max_active (Drive).
func (r *reporter) drive(ctx context.Context) error {
	o := r.o
	r.out.Result, r.out.Class, r.out.Action = o.Result, failure.Tracker, ActionDrive
	r.out.Reason = o.Mask(o.Reason)
	t := o.Tracker
	t.defaults()
	if err := o.GitHub.AddLabels(ctx, o.Issue, t.Label); err != nil {
		return fmt.Errorf("tracker #%d: label it %s: %w", o.Issue, t.Label, err)
	}
	d, err := Drive(ctx, DriveOptions{GitHub: o.GitHub, Workflow: o.Workflow, Ref: o.Ref, Tracker: t, Blockers: o.Blockers,
		Mask: o.Mask, Log: o.Log}, o.Issue)
	r.out.Tracker = &d
	if err != nil {
		return err
	}
	r.logf("report: issue #%d is a tracker: %d of its sub-issues started now, %d active of at most %d", o.Issue, d.Started, d.Active, d.MaxActive)
	return nil
}

func (r *reporter) run(ctx context.Context) error {
	o := r.o
	if err := r.read(ctx); err != nil {
		return err
	}
	if o.JobResult == "skipped" {
		r.out.Action = ActionNone
		r.out.Reason = "the implement job was skipped: no Job ran"
		r.logf("report: issue #%d: %s", o.Issue, r.out.Reason)
		return nil
	}

	jobs, _ := r.rec.Jobs()
	line, hasLine := findLine(jobs, func(j record.JobOutcome) bool { return o.RunID != 0 && j.RunID == o.RunID })
	r.end.Result, r.end.Class = record.Result(o.Result), o.Failure
	if r.end.Result == "" && hasLine && line.Result != "" {
		// The outputs were lost (a kill after the final mark): the record has it.
		r.end.Result, r.end.Class = line.Result, line.Failure
	}
	if r.end.Result == "" {
		if o.RunID == 0 {
			return inputErr(errors.New("the Job wrote no result: report needs the run id to read its log"))
		}
		if err := r.readLog(ctx, "Job"); err != nil {
			return err
		}
	}
	r.job = r.jobNumber(line, hasLine)
	r.out.Job, r.out.Result = r.job, string(r.end.Result)
	if r.end.Result != "" && r.end.Class == "" {
		r.end.Class = decide.RunnerClass(r.rec, r.job, r.end.Result)
	}

	if r.end.Result != "" {
		r.d = decide.Typed(r.end.Result, r.end.Class)
		if r.d.Reason == "" {
			r.d.Reason = r.runnerReason()
		}
	} else {
		r.d = decide.Killed(r.facts.ended())
	}
	if r.d.Action == ActionContinue {
		// The caps read the Job's line as report will write it.
		r.d = decide.Continuation(r.d, withLine(mustJobs(r.rec), r.settle(r.rec).line), r.job, r.o.MaxJobs, r.end)
	}
	return r.carryOut(ctx, jobs, "Job", r.act)
}

// carryOut carries the decision out, in the same order for a stage Job and
// an implement Job: the decision taken into the outcome and the log
// (decided, on the Jobs' lines), the day's budget checked before a
// continuation (before the write, so the record says what really happens),
// the record written, the Job's share booked in the day ledger, and then the
// action (act), inside the log's section for it.
func (r *reporter) carryOut(ctx context.Context, lines []record.JobOutcome, what string, act func(context.Context) error) error {
	if err := r.decided(lines, what); err != nil {
		return err
	}
	if err := r.dayGate(ctx); err != nil {
		return err
	}
	defer r.section("report: %s", r.d.Action)()

	if err := r.write(ctx); err != nil {
		return err
	}
	if err := r.book(ctx); err != nil {
		return err
	}
	if err := act(ctx); err != nil {
		return err
	}
	r.keepDashboard(ctx)
	return nil
}

// decided takes the decision into the outcome and the log: an item a
// person stopped held where it is, the reported Job's intent mark from its
// line in lines, and a continuation refused without the workflow to
// dispatch it.
func (r *reporter) decided(lines []record.JobOutcome, what string) error {
	if who, ok := r.rec.StoppedBy(); ok && who != "" {
		// The Job's line and spend are still written and booked.
		if d, held := decide.Held(r.d, who, r.end); held {
			r.d, r.heldBy, r.out.Stopped = d, who, true
		}
	}
	if l, ok := findLine(lines, func(j record.JobOutcome) bool { return j.Job == r.job }); ok {
		r.dispatching = l.Dispatching
	}
	if (r.d.Action == ActionContinue || r.d.Action == ActionReturnToStage) && (r.o.Workflow == "" || r.o.Ref == "") {
		return inputErr(fmt.Errorf("the %s ended %s, which continues the item: report needs the workflow file and ref to dispatch it", what, r.end))
	}
	r.out.Class, r.out.Action = r.d.Class, r.d.Action
	r.out.Reason = r.o.Mask(r.d.Reason)
	if r.out.Reason == "" {
		r.logf("report: issue #%d %s %d: %s → %s", r.o.Issue, what, r.job, r.end, r.d.Action)
	} else {
		r.logf("report: issue #%d %s %d: %s → %s: %s", r.o.Issue, what, r.job, r.end, r.d.Action, r.out.Reason)
	}
	return nil
}

// read reads the item's record from roadmap's record comment: by its id
// when the implement job handed it over, else by one list of the comments.
func (r *reporter) read(ctx context.Context) error {
	rc, err := recordstore.New(r.o.GitHub).Read(ctx, r.o.Issue, r.o.RecordComment)
	if err != nil {
		return fmt.Errorf("issue %d: %w", r.o.Issue, err)
	}
	r.rc, r.rec = rc, rc.Record
	return nil
}

// readIssue reads the issue (its labels), once.
func (r *reporter) readIssue(ctx context.Context) (*github.Issue, error) {
	if r.issue != nil {
		return r.issue, nil
	}
	is, err := r.o.GitHub.Issue(ctx, r.o.Issue)
	if err != nil {
		return nil, fmt.Errorf("read issue %d: %w", r.o.Issue, err)
	}
	r.issue = &is
	return r.issue, nil
}

// jobNumber is the reported Job's number: the option, the record's line for
// the run, the Job the log's spend lines name, else what the runner would
// have taken (the record's attempt, plus one for a Job that wrote nothing).
func (r *reporter) jobNumber(line record.JobOutcome, hasLine bool) int {
	if r.o.Attempt > 0 {
		return r.o.Attempt
	}
	if hasLine {
		return line.Job
	}
	if r.facts != nil {
		if js := jobsFromLog(r.facts.spend); len(js) > 0 {
			return js[len(js)-1]
		}
	}
	n, _ := r.rec.Attempt()
	if r.end.Result != "" && n > 0 {
		return n
	}
	return n + 1
}

// readLog reads the log of the reported job, which wrote no result.
func (r *reporter) readLog(ctx context.Context, what string) error {
	end := r.section("report: read the log of the %s that wrote no result (run %d)", what, r.o.RunID)
	defer end()
	f, err := readKilledJob(ctx, r.o.GitHub, r.o.RunID, r.o.JobName)
	if err != nil {
		return err
	}
	r.facts = &f
	v := f.verdict
	r.end.Killed, r.end.KillReason = v.Class, v.Reason
	r.out.KillReason = v.Reason
	r.out.Evidence, r.out.EvidenceLine = r.o.Mask(v.Evidence), v.Line
	return nil
}

// runnerReason is the reason the runner gave for its ending: the option, or
// the end event of the Job in the record's trace copy.
func (r *reporter) runnerReason() string {
	if r.o.Reason != "" {
		return r.o.Reason
	}
	for _, e := range traceEvents(r.rec) {
		if e.Type == trace.TypePhase && e.Phase.End() && (e.Job == 0 || e.Job == r.job) && e.Reason != "" {
			return e.Reason
		}
	}
	return ""
}

// traceEvents returns the record's trace copy, newest last (nil when absent
// or unreadable: the trace is for a person, not for a decision).
func traceEvents(rec *record.Record) []trace.Event {
	raw, ok := rec.Trace()
	if !ok {
		return nil
	}
	c, err := trace.ParseRecordCopy(string(raw))
	if err != nil {
		return nil
	}
	// Newest first for the reason search.
	ev := append([]trace.Event(nil), c.Events...)
	sort.SliceStable(ev, func(a, b int) bool { return ev[a].Seq > ev[b].Seq })
	return ev
}

func findLine(jobs []record.JobOutcome, match func(record.JobOutcome) bool) (record.JobOutcome, bool) {
	var found record.JobOutcome
	ok := false
	for _, j := range jobs {
		if match(j) && (!ok || j.Job > found.Job) {
			found, ok = j, true
		}
	}
	return found, ok
}

// withLine returns jobs with j's line replaced or added, sorted by Job.
func withLine(jobs []record.JobOutcome, j record.JobOutcome) []record.JobOutcome {
	return record.WithJob(jobs, j)
}

// section opens a section of the job log and returns its closer. Only
// report's own lines open or close one: everything else it prints goes
// through logf, made plain.
func (r *reporter) section(format string, args ...any) func() {
	fmt.Fprintln(r.o.Log, actionsio.Group(r.o.Mask(fmt.Sprintf(format, args...))))
	return func() { fmt.Fprintln(r.o.Log, actionsio.EndGroup) }
}

// logf prints a line of report's log; reasons and questions in it are
// model text, so the line is masked and made plain (never a workflow command).
func (r *reporter) logf(format string, args ...any) {
	fmt.Fprintln(r.o.Log, actionsio.PlainLine(r.o.Mask(fmt.Sprintf(format, args...))))
}
