package report

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/roadmap-dev/roadmap/internal/actionsio"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/redact"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// spendLost is the failure word of a killed Job's line in implement.jobs when
// its log was gone, or its tail lost with a runner that lost communication:
// the spend of its calls after its last mark (after the log's last line) is
// unknown. implement.failure keeps the class.
const spendLost = "spend_lost"

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
	if o.Result == string(record.ResultYielded) && o.Failure == string(failure.Busy) {
		run = r.leave
	}
	err := run(ctx)
	r.out.Requests = o.GitHub.Requests().Sub(before).Counted()
	return r.out, err
}

type reporter struct {
	o     Options
	issue *github.Issue // read only when a label decision needs it
	rc    github.RecordComment
	rec   *record.Record
	out   Outcome
	// cmdBody is the comment a person's command came in (its arguments).
	cmdBody string

	job   int
	typed record.Result
	class string // the class the runner wrote (typed results)
	facts *jobFacts
	// jobClass is how a Job that wrote no result ended, from its log.
	jobClass failure.Class
	d        decision
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

// leave reports a Job that found a live Job holding the item's lease: it
// made no mark and took no number, and the holder's own report decides what
// follows, so report reads nothing, writes nothing and dispatches nothing.
func (r *reporter) leave(context.Context) error {
	r.out.Result, r.out.Class, r.out.Action = r.o.Result, failure.Busy, ActionNone
	r.out.Reason = r.o.Mask(r.o.Reason)
	r.logf("report: issue #%d: the Job left the item to the Job holding its lease (%s): nothing to do", r.o.Issue, r.out.Reason)
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
	r.typed, r.class = record.Result(o.Result), o.Failure
	if r.typed == "" && hasLine && line.Result != "" {
		// The outputs were lost (a kill after the final mark): the record has it.
		r.typed, r.class = line.Result, line.Failure
	}
	if r.typed == "" {
		if o.RunID == 0 {
			return inputErr(errors.New("the Job wrote no result: report needs the run id to read its log"))
		}
		if err := r.readLog(ctx, "Job"); err != nil {
			return err
		}
	}
	r.job = r.jobNumber(line, hasLine)
	r.out.Job, r.out.Result = r.job, string(r.typed)
	if r.typed != "" && r.class == "" {
		r.class = r.runnerClass(jobs)
	}

	if r.typed != "" {
		r.d = decideTyped(r.typed, r.class)
		if r.d.reason == "" {
			r.d.reason = r.runnerReason()
		}
	} else {
		r.decideKilled()
	}
	r.gate()
	r.held()
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
	defer r.section("report: %s", r.d.action)()

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

// decided takes the decision into the outcome and the log: the reported
// Job's intent mark from its line in lines, and a continuation refused
// without the workflow to dispatch it.
func (r *reporter) decided(lines []record.JobOutcome, what string) error {
	if l, ok := findLine(lines, func(j record.JobOutcome) bool { return j.Job == r.job }); ok {
		r.dispatching = l.Dispatching
	}
	if (r.d.action == ActionContinue || r.d.action == ActionReturnToStage) && (r.o.Workflow == "" || r.o.Ref == "") {
		return inputErr(fmt.Errorf("the %s ended %s, which continues the item: report needs the workflow file and ref to dispatch it", what, r.ending()))
	}
	r.out.Class, r.out.Action = r.d.class, r.d.action
	r.out.Reason = r.o.Mask(r.d.reason)
	r.logf("report: issue #%d %s %d: %s → %s: %s", r.o.Issue, what, r.job, r.ending(), r.d.action, r.out.Reason)
	return nil
}

// read reads the item's record from roadmap's record comment: by its id
// when the implement job handed it over, else by one list of the comments.
func (r *reporter) read(ctx context.Context) error {
	rc, err := r.o.GitHub.ReadRecord(ctx, r.o.Issue, r.o.RecordComment)
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
	if r.typed != "" && n > 0 {
		return n
	}
	return n + 1
}

// runnerClass is the class the runner wrote with its result when the
// failure output is empty: the Job's line in implement.jobs, else
// implement.failure when implement.result and implement.attempt show that
// the last mark is this Job's.
func (r *reporter) runnerClass(jobs []record.JobOutcome) string {
	if l, ok := findLine(jobs, func(j record.JobOutcome) bool { return j.Job == r.job }); ok && l.Result == r.typed {
		return l.Failure
	}
	res, _ := r.rec.Result()
	n, _ := r.rec.Attempt()
	if res == r.typed && n == r.job {
		f, _ := r.rec.Failure()
		return f
	}
	return ""
}

func (r *reporter) ending() string {
	switch {
	case r.typed != "" && r.class != "":
		return fmt.Sprintf("%s (%s)", r.typed, r.class)
	case r.typed != "":
		return string(r.typed)
	case r.out.KillReason != "":
		return fmt.Sprintf("no result, %s (%s)", r.jobClass, r.out.KillReason)
	}
	return fmt.Sprintf("no result, %s", r.jobClass)
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
	return nil
}

// decideKilled decides by the class the log of a Job that wrote no result
// gives, with its evidence.
func (r *reporter) decideKilled() {
	v := r.facts.verdict
	r.jobClass = v.Class
	r.d = decision{class: v.Class, action: ActionFor(v.Class), reason: r.killedReason()}
	r.out.KillReason = v.Reason
	r.out.Evidence, r.out.EvidenceLine = r.o.Mask(v.Evidence), v.Line
}

func (r *reporter) killedReason() string {
	f := r.facts
	concl := f.job.Conclusion
	if concl == "" {
		concl = "unknown"
	}
	if f.logGone {
		return fmt.Sprintf("the Job wrote no result and its log is gone (%v); classified %s from the job's conclusion (%s) alone, and the spend of its model calls after its last mark is lost",
			f.logErr, f.verdict.Class, concl)
	}
	v := f.verdict
	where := ""
	if v.Line > 0 {
		where = fmt.Sprintf(" at log line %d", v.Line)
	}
	kind := string(v.Class)
	if v.Reason != "" {
		kind += " (" + v.Reason + ")"
	}
	out := fmt.Sprintf("the Job wrote no result; job %q concluded %s and its log shows %s%s", f.job.Name, concl, kind, where)
	if f.tailLost {
		out += "; the runner lost communication, so the log stops where its upload stopped: the spend lines it holds are counted, and any call after them is lost"
	}
	return out
}

// runnerReason is the reason the runner gave for its ending: the option, or
// the end event of the Job in the record's trace copy.
func (r *reporter) runnerReason() string {
	if r.o.Reason != "" {
		return r.o.Reason
	}
	for _, e := range r.traceEvents() {
		if e.Type == trace.TypePhase && e.Phase.End() && (e.Job == 0 || e.Job == r.job) && e.Reason != "" {
			return e.Reason
		}
	}
	return ""
}

// traceEvents returns the record's trace copy, newest last (nil when absent
// or unreadable: the trace is for a person, not for a decision).
func (r *reporter) traceEvents() []trace.Event {
	raw, ok := r.rec.Trace()
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

// gate caps continuations: no progress in two continuations in a row stops
// the item, and so does a continuation past the Jobs cap.
func (r *reporter) gate() {
	if r.d.action != ActionContinue {
		return
	}
	s := r.settle(r.rec)
	jobs, _ := r.rec.Jobs()
	jobs = withLine(jobs, s.line)
	if ev, ok := noProgress(jobs, r.job); ok {
		r.d = decision{class: failure.NoProgress, action: ActionStop, reason: ev, step: "continuation"}
		return
	}
	if next := r.job + 1; next > r.o.MaxJobs {
		r.d = decision{class: failure.BudgetExhausted, action: ActionStop, step: "continuation",
			reason: fmt.Sprintf("the item has run %d Jobs, the cap of Jobs per item (max jobs %d); %s would need Job %d",
				r.job, r.o.MaxJobs, r.ending(), next)}
	}
}

// settled is the reported Job's line and the item's spend as report leaves
// them in a record.
type settled struct {
	line      record.JobOutcome
	item      record.Spend
	recovered record.Spend
	// estimated is the part of recovered at booked estimates (its
	// ModelCalls count them); itemEstimated the item's
	// implement.spend_estimated with them.
	estimated     record.Spend
	itemEstimated int
	lost          bool
	// touched: the line or the spend changes.
	touched bool
	// setResult: the runner's final mark is missing; report writes the
	// typed result from the outputs.
	setResult bool
}

// settle computes the Job's line and the item's spend from cur. It depends
// only on cur and the Job's facts, so applying it to a record that already
// holds it changes nothing: a second report for the same Job adds no spend.
func (r *reporter) settle(cur *record.Record) settled {
	jobs, _ := cur.Jobs()
	item, _ := cur.Spend()
	line, ok := findLine(jobs, func(j record.JobOutcome) bool { return j.Job == r.job })
	if !ok {
		line = record.JobOutcome{Job: r.job, RunID: r.o.RunID}
		line.Group, _ = cur.Group()
	}
	if line.RunID == 0 {
		line.RunID = r.o.RunID
	}
	s := settled{line: line, item: item, itemEstimated: cur.SpendEstimated()}
	if r.facts != nil {
		r.recover(&s, ok)
		return s
	}
	if ok && line.Result == r.typed {
		return s
	}
	// The outputs carry a result the record lacks: the final mark was lost.
	s.touched, s.setResult = true, true
	s.line.Result, s.line.Failure = r.typed, r.class
	s.line.Group = max(s.line.Group, r.o.Group)
	if out, err := parseSpend(r.o.Spend); err == nil && out.ModelCalls > item.ModelCalls {
		diff := subSpend(out, item)
		s.line.Spend = s.line.Spend.Add(diff)
		s.item = out
	}
	return s
}

// recover adds to s what the log of a Job that wrote no result holds past
// its line's calls (hadLine: the record had a line for it): settled calls as
// they settled, calls booked and never settled at their booking, and says
// the spend is lost when the log is gone or its tail is.
func (r *reporter) recover(s *settled, hadLine bool) {
	line := s.line
	s.lost = r.facts.logGone || r.facts.tailLost
	want := string(r.jobClass)
	if s.lost {
		want = spendLost
	}
	s.touched = !hadLine || line.Failure != want || line.Result != ""
	s.line.Result, s.line.Failure = "", want
	if r.facts.logGone {
		return
	}
	add, est := unmarked(r.facts.spend, r.job, line.Spend.ModelCalls)
	if !add.Zero() {
		s.recovered, s.estimated, s.touched = add, est, true
		s.line.Spend = line.Spend.Add(add)
		s.item = s.item.Add(add)
		s.itemEstimated += est.ModelCalls
	}
}

// changes is the record write for cur: the settled line and spend, the
// typed result when the runner's is missing, and the keys of a stop.
func (r *reporter) changes(cur *record.Record) (record.Changes, settled) {
	s := r.settle(cur)
	if r.d.action == ActionContinue && s.line.Dispatching == 0 && s.touched {
		// The intent mark, before the dispatch, riding on a write report
		// makes anyway: a re-run of report looks for the run instead of
		// sending it again. With no write to ride on (a typed yield), no
		// write is made for it: a re-run is a later attempt of the workflow
		// run (RunAttempt > 1), and that looks too.
		s.line.Dispatching = r.o.Clock.Now().Unix()
	}
	var ch record.Changes
	if s.touched {
		s.line.At = r.o.Clock.Now().Unix()
		jobs, _ := cur.Jobs()
		ch.SetJobs(withLine(jobs, s.line))
		if old, _ := cur.Spend(); old != s.item {
			ch.SetSpend(s.item)
		}
		if s.itemEstimated != cur.SpendEstimated() {
			ch.SetSpendEstimated(s.itemEstimated)
		}
	}
	switch {
	case r.facts != nil:
		// The last Job wrote no result: the record says so by having none,
		// and implement.failure names how it ended.
		ch.Delete(record.KeyImplementResult)
		ch.SetFailure(string(r.jobClass))
	case s.setResult:
		ch.SetResult(r.typed)
		if r.class != "" {
			ch.SetFailure(r.class)
		} else {
			ch.Delete(record.KeyImplementFailure)
		}
		if n, _ := cur.Attempt(); r.job > n {
			ch.SetAttempt(r.job)
		}
	}
	if r.d.action == ActionStop {
		ch.SetResult(record.ResultStopped)
		ch.SetFailure(string(r.d.class))
		ch.SetStopped(r.stopStep(cur))
	}
	r.lessParallelism(cur, &ch)
	r.waitMark(&ch)
	return ch, s
}

// write makes the one record write, when there is something to write.
func (r *reporter) write(ctx context.Context) error {
	changes := r.changes
	if r.stage {
		changes = r.stageChanges
	}
	ch, s := changes(r.rec)
	r.note(s)
	if ch.Empty() || ch.Applied(r.rec) {
		return nil
	}
	err := r.o.GitHub.WriteRecord(ctx, r.o.Issue, &r.rc,
		func(cur *record.Record) (record.Changes, error) {
			ch, s := changes(cur)
			r.note(s)
			return ch, nil
		}, r.view)
	if err != nil {
		return fmt.Errorf("write issue %d record: %w", r.o.Issue, err)
	}
	r.rec = r.rc.Record
	return nil
}

// notDispatched is how the record comment says that report's dispatch of the
// next Job did not land; a re-run that dispatches it says what happens now.
const notDispatched = "was not dispatched ("

// view is what the record comment says after report's decision. It can hold
// text roadmap did not write (the agent's reason, a step label), so it is
// masked and neutralised.
func (r *reporter) view(cur *record.Record) record.View {
	v := record.View{RunURL: r.o.RunURL}
	switch {
	case r.heldBy != "":
		v.Doing = fmt.Sprintf("stopped by %s; a comment `/roadmap retry` restarts it from its last mark", r.heldBy)
	case r.dispatchErr != "":
		job, resume := "Job", fmt.Sprintf("issue=%d and attempt=%d", r.o.Issue, r.job+1)
		if r.stage {
			job, resume = "stage Job", fmt.Sprintf("issue=%d and phase=stage", r.o.Issue)
		}
		v.Doing = fmt.Sprintf("%s %d ended %s; %s %d %s%s): re-run the report job, or dispatch the workflow with %s",
			job, r.job, r.ending(), job, r.job+1, notDispatched, r.dispatchErr, resume)
	case r.stage && r.d.action == ActionContinue:
		v.Doing = fmt.Sprintf("stage Job %d ended %s; stage Job %d continues after the last recorded round", r.job, r.ending(), r.job+1)
	case r.stage && r.d.action == ActionStop:
		v.Doing = fmt.Sprintf("stopped (%s) in stage: %s", r.d.class, r.d.reason)
	case r.d.action == ActionYield:
		v.Doing = "waiting for the next day's budget: " + r.d.reason
	case r.stage:
	case r.d.action == ActionContinue:
		v.Doing = fmt.Sprintf("Job %d ended %s; Job %d continues from the last mark", r.job, r.ending(), r.job+1)
	case r.d.action == ActionResume:
		v.Doing = fmt.Sprintf("answered (%s); Job %d continues", r.d.reason, r.job+1)
	case r.d.action == ActionStop:
		v.Doing = fmt.Sprintf("stopped (%s) in %s: %s", r.d.class, r.stopStep(r.rec), r.d.reason)
	case r.d.action == ActionReturnToStage:
		v.Doing = "returned to stage: " + r.d.reason
	}
	if v.Doing == "" {
		v.Doing = cur.State()
	}
	v.Doing = redact.NeutraliseIn(r.o.Mask(v.Doing), r.o.GitHub.ServerHost(), r.o.GitHub.FullName())
	return v
}

// note copies the settled spend into the outcome.
func (r *reporter) note(s settled) {
	r.out.SpendRecovered, r.out.SpendLost, r.out.SpendEstimated = s.recovered, s.lost, s.estimated
	r.out.Spend, r.out.JobSpend = s.item, s.line.Spend
}

// stopStep is implement.stopped for a stop: the runner's own label, the
// gate's, or the workflow step a killed Job failed in.
func (r *reporter) stopStep(cur *record.Record) string {
	if r.d.step != "" {
		return r.d.step
	}
	if r.typed == record.ResultStopped {
		if s, ok := cur.Stopped(); ok && s != "" {
			return s
		}
	}
	if r.facts != nil {
		for _, st := range r.facts.job.Steps {
			if st.Conclusion == "failure" || st.Conclusion == "cancelled" {
				return fmt.Sprintf("job %s: %s", r.facts.job.Name, st.Name)
			}
		}
		return "job " + r.facts.job.Name
	}
	return fmt.Sprintf("job %d", r.job)
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

// subSpend is a - b, never below zero, USD rounded as Spend.Add rounds it.
func subSpend(a, b record.Spend) record.Spend {
	return record.Spend{
		TokensIn:   max(a.TokensIn-b.TokensIn, 0),
		TokensOut:  max(a.TokensOut-b.TokensOut, 0),
		USD:        max(math.Round((a.USD-b.USD)*1e9)/1e9, 0),
		ModelCalls: max(a.ModelCalls-b.ModelCalls, 0),
	}
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
