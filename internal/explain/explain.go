package explain

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/roadmap-dev/roadmap/internal/actionsio"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/text"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// Output is what `roadmap explain --json` prints. Field names are
// stable; scripts read them.
type Output struct {
	Issue int    `json:"issue"`
	Title string `json:"title"`
	// Result, Failure, Stopped and Group are implement.result,
	// implement.failure, implement.stopped and implement.group ("" and 0
	// when unset).
	Result  string `json:"result"`
	Failure string `json:"failure"`
	Stopped string `json:"stopped"`
	Group   int    `json:"group"`
	// PR is stage.pr, the pull request the item works on (0: none yet).
	PR int `json:"pr"`
	// BlockedBy is item.blocked_by: the open blockers the item waits for
	// ("#12, acme/lib#4"; "" when none).
	BlockedBy string `json:"blocked_by"`
	// Models is item.models: the model each role (planner, verifier,
	// implementer, reviewer) last ran on, for the roles that ran.
	Models map[string]string `json:"models,omitempty"`
	// Spend is implement.spend, the item's sum over every Job.
	Spend record.Spend `json:"spend"`
	// Requests sums the counted GitHub requests (304s free) of every Job,
	// stage's and implement's, as their record lines count them: the number
	// the dashboard and metrics show too. A killed Job's are not in its line.
	Requests int   `json:"requests"`
	Jobs     []Job `json:"jobs"`
	// Stage is where the plan stands: stage.state, stage.plan, stage.round
	// and the stage Jobs (stage.jobs).
	Stage Stage   `json:"stage"`
	Waits Waits   `json:"waits"`
	Trace *Traced `json:"trace"`
}

// Job is one line of implement.jobs, flattened for scripts.
type Job struct {
	Job        int     `json:"job"`
	RunID      int64   `json:"run_id"`
	Result     string  `json:"result"`
	Failure    string  `json:"failure"`
	Group      int     `json:"group"`
	TokensIn   int64   `json:"tokens_in"`
	TokensOut  int64   `json:"tokens_out"`
	USD        float64 `json:"usd"`
	ModelCalls int     `json:"model_calls"`
	Requests   int     `json:"requests"`
}

// Stage is the stage part of the record.
type Stage struct {
	State string `json:"state"`
	Plan  string `json:"plan"`
	Round int    `json:"round"`
	Jobs  []Job  `json:"jobs"`
}

// Who waits, as Waits.Who names it.
const (
	WaitsPerson       = "person"       // a stop, or a question only a person can answer
	WaitsContinuation = "continuation" // a yield: report dispatches the next Job
	WaitsStage        = "stage"        // plan_wrong: the plan goes back for an amendment
	WaitsReviewer     = "reviewer"     // ready: the PR waits for review
	WaitsReport       = "report"       // the last Job wrote no result: report classifies it
	WaitsBlockers     = "blockers"     // blocked: the item waits for its open blockers
)

// Waits says who or what the item waits for, and on what.
type Waits struct {
	Who  string `json:"who"`
	What string `json:"what"`
	// CheckLog is the tail of implement.check_log, for a stop.
	CheckLog string `json:"check_log,omitempty"`
	// Question is implement.question, for needs_input.
	Question string `json:"question,omitempty"`
}

// Traced is the last run's trace: the record's bounded copy, or a
// JSONL artifact.
type Traced struct {
	// Source is "record" (implement.trace or stage.trace) or the artifact's path.
	Source string `json:"source"`
	// Key is the record key the copy was read from (implement.trace for
	// an implement Job, stage.trace for a stage Job); empty for an artifact.
	Key string `json:"key,omitempty"`
	Job int    `json:"job"`
	// Dropped counts the older events of the run the record copy left out.
	Dropped int           `json:"dropped"`
	Events  []trace.Event `json:"events"`
}

// CheckLogLines is how much of implement.check_log explain shows.
const CheckLogLines = 20

// FromRecord reads what the record says about the item.
func FromRecord(issue int, title string, rec *record.Record) Output {
	out := Output{Issue: issue, Title: title, Jobs: []Job{}}
	if r, ok := rec.Result(); ok {
		out.Result = string(r)
	}
	out.Failure, _ = rec.Failure()
	out.Stopped, _ = rec.Stopped()
	out.Group, _ = rec.Group()
	out.PR, _ = rec.StagePR()
	out.Spend, _ = rec.Spend()
	out.Models = rec.Models()
	jobs, _ := rec.Jobs()
	out.Jobs = flatJobs(jobs)
	out.Stage.State, _ = rec.StageState()
	out.Stage.Plan, _ = rec.StagePlan()
	out.Stage.Round, _ = rec.StageRound()
	stageJobs, _ := rec.StageJobs()
	out.Stage.Jobs = flatJobs(stageJobs)
	for _, j := range append(append([]record.JobOutcome{}, stageJobs...), jobs...) {
		out.Requests += j.Requests
	}
	out.Waits = whatWaits(rec, jobs)
	if len(jobs) == 0 {
		if w, ok := stageWaits(rec, stageJobs); ok {
			out.Waits = w
		}
	}
	if b, ok := rec.BlockedBy(); ok && b != "" {
		// The last Job to start found them open: nothing runs until they
		// are met, whatever the Job before it left.
		out.BlockedBy = b
		out.Waits = Waits{Who: WaitsBlockers, What: fmt.Sprintf(
			"waiting for %s: stage and implement start once every blocker is closed as completed", b)}
	}
	return out
}

func flatJobs(jobs []record.JobOutcome) []Job {
	out := []Job{}
	for _, j := range jobs {
		out = append(out, Job{
			Job: j.Job, RunID: j.RunID, Result: string(j.Result), Failure: j.Failure, Group: j.Group,
			TokensIn: j.Spend.TokensIn, TokensOut: j.Spend.TokensOut, USD: j.Spend.USD, ModelCalls: j.Spend.ModelCalls,
			Requests: j.Requests,
		})
	}
	return out
}

// stageWaits names who an item no implement Job has run for waits for,
// from where stage left the plan; ok is false when stage has not run.
func stageWaits(rec *record.Record, lines []record.JobOutcome) (Waits, bool) {
	state, _ := rec.StageState()
	pr, _ := rec.StagePR()
	round, _ := rec.StageRound()
	if n := len(lines); n > 0 && lines[n-1].Result == "" && state != "stopped" {
		j := lines[n-1]
		if j.Failure != "" {
			// Report classified it (the class is its failure) and continued.
			return Waits{Who: WaitsContinuation, What: fmt.Sprintf(
				"stage Job %d (run %d) ended %s without a result; report kept its spend and dispatched a stage continuation, which resumes after round %d",
				j.Job, j.RunID, j.Failure, round)}, true
		}
		return Waits{Who: WaitsReport, What: fmt.Sprintf(
			"stage Job %d (run %d) wrote no result: it is still running, or it was killed; report classifies a killed stage Job from its log, keeps the spend its log holds, and dispatches a stage continuation, which resumes after round %d",
			j.Job, j.RunID, round)}, true
	}
	class := ""
	if n := len(lines); n > 0 {
		class = lines[n-1].Failure
	}
	switch state {
	case "staged":
		what := "the plan is staged: approve its draft PR, or label the issue roadmap:implement, to start implement"
		if pr > 0 {
			what = fmt.Sprintf("the plan is in draft PR #%d: approve it, or label the issue roadmap:implement, to start implement", pr)
		}
		return Waits{Who: WaitsPerson, What: what}, true
	case "returned":
		if q, _ := rec.Question(); q != "" {
			return Waits{Who: WaitsPerson, What: "the planner asks a question only a person can answer: answer it on the issue, and stage resumes", Question: q}, true
		}
		return Waits{Who: WaitsPerson, What: fmt.Sprintf(
			"the plan still has findings after %d round(s) (stage.findings): change the issue, or label it roadmap:stage again for new rounds", round)}, true
	case "stopped":
		return Waits{Who: WaitsPerson, What: fmt.Sprintf("stage stopped on %s: fix the cause and label the issue roadmap:stage again", orUnknown(class))}, true
	}
	if n := len(lines); n > 0 && lines[n-1].Result == record.ResultYielded {
		return Waits{Who: WaitsContinuation, What: fmt.Sprintf("a stage continuation resumes after round %d", round)}, true
	}
	return Waits{}, false
}

// whatWaits names who the item waits for, from how the last Job ended.
func whatWaits(rec *record.Record, jobs []record.JobOutcome) Waits {
	result, _ := rec.Result()
	class, _ := rec.Failure()
	group, _ := rec.Group()
	pr, _ := rec.StagePR()
	// A Job writes its line of implement.jobs with every mark and its result
	// only in the last: a line without one is a Job still running or killed,
	// and implement.result is still the Job before it.
	if n := len(jobs); n > 0 && jobs[n-1].Result == "" {
		j := jobs[n-1]
		return Waits{Who: WaitsReport, What: fmt.Sprintf(
			"Job %d (run %d) wrote no result: it is still running, or it was killed; report classifies a killed Job from its log and dispatches a continuation, which resumes %s",
			j.Job, j.RunID, resumeFrom(j.Group))}
	}
	switch result {
	case record.ResultStopped:
		step, _ := rec.Stopped()
		log, _ := rec.CheckLog()
		what := fmt.Sprintf("the item stopped on %s at %s", orUnknown(class), orUnknown(step))
		if log != "" {
			what += "; the check log below goes to the next Job's first step"
		}
		return Waits{Who: WaitsPerson, What: what, CheckLog: lastLines(log, CheckLogLines)}
	case record.ResultYielded:
		what := "a continuation Job resumes " + resumeFrom(group)
		if class != "" {
			what += fmt.Sprintf(" (the Job yielded on %s)", class)
		}
		return Waits{Who: WaitsContinuation, What: what}
	case record.ResultReturned:
		if class == "plan_wrong" {
			return Waits{Who: WaitsStage, What: "the plan cannot work as written: stage amends it, then implement resumes " + resumeFrom(group)}
		}
		q, _ := rec.Question()
		what := "a decision only a person can make: answer the question on the issue"
		if class != "needs_input" {
			what = fmt.Sprintf("the item was returned on %s", orUnknown(class))
		}
		return Waits{Who: WaitsPerson, What: what, Question: q}
	case record.ResultReady:
		if pr > 0 {
			return Waits{Who: WaitsReviewer, What: fmt.Sprintf("review PR #%d: every group passed and its checks are green", pr)}
		}
		return Waits{Who: WaitsReviewer, What: "review the PR: every group passed and its checks are green"}
	}
	what := "no implement Job has recorded an outcome yet"
	if s, ok := rec.StageState(); ok {
		what += fmt.Sprintf(" (stage.state: %s)", s)
	}
	return Waits{What: what}
}

func resumeFrom(group int) string {
	if group <= 0 {
		return "from the first group"
	}
	return fmt.Sprintf("after group %d, the last that passed", group)
}

func orUnknown(s string) string {
	if s == "" {
		return "(not recorded)"
	}
	return s
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// RecordTrace reads the record's bounded trace copy (implement.trace, or
// stage.trace when a stage Job wrote the last mark): the newest events of
// the last Job that wrote its last mark. The copy comes from an issue body
// anyone with write access can edit, so it is parsed, not trusted. It
// returns nil when the record has none.
func RecordTrace(rec *record.Record) (*Traced, error) {
	raw, key, ok := rec.LastTrace()
	if !ok {
		return nil, nil
	}
	rc, err := trace.ParseRecordCopy(string(raw))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	t := &Traced{Source: "record", Key: string(key), Dropped: rc.Dropped, Events: rc.Events}
	if t.Events == nil {
		t.Events = []trace.Event{}
	}
	if n := len(t.Events); n > 0 {
		t.Job = t.Events[n-1].Job
	}
	return t, nil
}

// ReadTraceFile reads a JSONL trace artifact and keeps the events of its
// newest run: a file a runner reused can hold several Jobs one after the
// other, and a new run starts where the Job changes or Seq starts again.
func ReadTraceFile(path string) (*Traced, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("trace file: %w", err)
	}
	defer f.Close()
	events, err := trace.ReadJSONL(f)
	if err != nil {
		return nil, fmt.Errorf("trace file %s: %w", path, err)
	}
	start := 0
	for i := 1; i < len(events); i++ {
		if events[i].Job != events[i-1].Job || events[i].Seq <= events[i-1].Seq {
			start = i
		}
	}
	t := &Traced{Source: path, Events: append([]trace.Event{}, events[start:]...)}
	if n := len(t.Events); n > 0 {
		t.Job = t.Events[n-1].Job
	}
	return t, nil
}

// printJobs writes a table of Jobs; groups only for implement's.
func printJobs(w io.Writer, head string, jobs []Job, groups bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	group := "\tLAST GROUP"
	if !groups {
		group = ""
	}
	fmt.Fprintf(tw, "  %s\tRUN\tRESULT\tFAILURE%s\tTOKENS IN\tTOKENS OUT\tUSD\tMODEL CALLS\tGITHUB REQUESTS\n", head, group)
	for _, j := range jobs {
		result := j.Result
		if result == "" {
			result = "(none: running or killed)"
		}
		g := ""
		if groups {
			g = fmt.Sprintf("\t%d", j.Group)
		}
		fmt.Fprintf(tw, "  %d\t%d\t%s\t%s%s\t%s\t%s\t%s\t%d\t%d\n", j.Job, j.RunID, termText(result),
			termText(orDash(j.Failure)), g, trace.Thousands(j.TokensIn), trace.Thousands(j.TokensOut), costText(j.USD), j.ModelCalls, j.Requests)
	}
	tw.Flush()
}

// Print writes the explanation for a person at a terminal. Every
// text that comes from the issue passes termText: the record is editable by
// anyone with write access, and a terminal must not run what it holds.
func Print(w io.Writer, o Output) error {
	ew := &stickyWriter{w: w}
	fmt.Fprintf(ew, "issue #%d: %s\n", o.Issue, termText(o.Title))
	var head []string
	head = append(head, "result: "+termText(orDash(o.Result)))
	if o.Failure != "" {
		head = append(head, "failure: "+termText(o.Failure))
	}
	if o.Stopped != "" {
		head = append(head, "stopped at: "+termText(o.Stopped))
	}
	head = append(head, fmt.Sprintf("last group passed: %d", o.Group))
	if o.PR > 0 {
		head = append(head, fmt.Sprintf("PR #%d", o.PR))
	}
	fmt.Fprintln(ew, strings.Join(head, " · "))

	if o.Stage.State != "" || len(o.Stage.Jobs) > 0 {
		fmt.Fprintln(ew, "\nThe plan")
		fmt.Fprintf(ew, "  stage: %s · plan %s · round %d\n", termText(orDash(o.Stage.State)), termText(orDash(o.Stage.Plan)), o.Stage.Round)
		if len(o.Stage.Jobs) > 0 {
			printJobs(ew, "STAGE JOB", o.Stage.Jobs, false)
		}
	}

	fmt.Fprintln(ew, "\nWhat ran")
	if len(o.Jobs) == 0 {
		fmt.Fprintln(ew, "  no implement Job has recorded its outcome (implement.jobs is empty)")
	} else {
		printJobs(ew, "JOB", o.Jobs, true)
	}

	if line := ModelsLine(o.Models); line != "" {
		fmt.Fprintf(ew, "  models: %s (item.models)\n", termText(line))
	}

	fmt.Fprintln(ew, "\nWhat it cost")
	fmt.Fprintf(ew, "  item spend: %s tokens in, %s out, %s, %d model calls (implement.spend)\n",
		trace.Thousands(o.Spend.TokensIn), trace.Thousands(o.Spend.TokensOut), costText(o.Spend.USD), o.Spend.ModelCalls)
	fmt.Fprintf(ew, "  GitHub requests by the Jobs: %d over %d Job(s), stage's included, as their record lines count them\n",
		o.Requests, len(o.Stage.Jobs)+len(o.Jobs))
	fmt.Fprintln(ew, "  (a 304 is free; report's requests and a killed Job's are not in them)")

	fmt.Fprintln(ew, "\nWhat waits")
	if o.Waits.Who != "" {
		fmt.Fprintf(ew, "  %s: %s\n", o.Waits.Who, termText(o.Waits.What))
	} else {
		fmt.Fprintf(ew, "  %s\n", termText(o.Waits.What))
	}
	if o.Waits.Question != "" {
		fmt.Fprintf(ew, "  question: %s\n", termText(o.Waits.Question))
	}
	if o.Waits.CheckLog != "" {
		fmt.Fprintf(ew, "  check log (implement.check_log, last %d lines):\n", CheckLogLines)
		for _, l := range strings.Split(o.Waits.CheckLog, "\n") {
			fmt.Fprintf(ew, "    %s\n", termText(l))
		}
	}

	if o.Trace != nil {
		printTrace(ew, o.Trace)
	}
	return ew.err
}

// printTrace writes the events as a table: seq, time, type, group,
// step or phase, detail, duration.
func printTrace(w io.Writer, t *Traced) {
	source := "the record's " + string(record.KeyImplementTrace)
	if t.Key != "" {
		source = "the record's " + termText(t.Key)
	}
	if t.Source != "record" {
		source = termText(t.Source)
	}
	fmt.Fprintf(w, "\nTrace of Job %d (%s): %d events; %d older events dropped\n", t.Job, source, len(t.Events), t.Dropped)
	if len(t.Events) == 0 {
		return
	}
	layout, day := "15:04:05", t.Events[0].Time.UTC().Format(time.DateOnly)
	for _, e := range t.Events {
		if e.Time.UTC().Format(time.DateOnly) != day {
			layout, day = "2006-01-02 15:04:05", ""
			break
		}
	}
	for _, e := range t.Events {
		if e.Time.Nanosecond() != 0 {
			layout += ".000"
			break
		}
	}
	if day != "" {
		fmt.Fprintf(w, "times in UTC, %s\n", day)
	} else {
		fmt.Fprintln(w, "times in UTC")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SEQ\tTIME\tTYPE\tGROUP\tSTEP/PHASE\tDETAIL\tDURATION")
	for _, e := range t.Events {
		when := "-"
		if !e.Time.IsZero() {
			when = e.Time.UTC().Format(layout)
		}
		group := "-"
		if e.Group > 0 {
			group = strconv.Itoa(e.Group)
		}
		dur := "-"
		if e.Duration > 0 {
			dur = e.Duration.String()
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Seq, when, termText(string(e.Type)), group,
			termText(orDash(stepOrPhase(e))), termText(orDash(eventDetail(e))), dur)
	}
	tw.Flush()
}

func stepOrPhase(e trace.Event) string {
	if e.Type == trace.TypePhase {
		return string(e.Phase)
	}
	return e.Step
}

// eventDetail is Event.Detail without what the table's other columns show.
func eventDetail(e trace.Event) string {
	d := e
	d.Group, d.Duration = 0, 0
	switch e.Type {
	case trace.TypePhase:
		d.Phase = ""
	case trace.TypeCheckRun:
		d.Step = ""
	}
	s := d.Detail()
	if e.Type == trace.TypePhase {
		// Detail leaves these out for phases; a span's round count and an
		// end's reason are what a person looks for.
		var extra []string
		if e.Attempt > 0 {
			extra = append(extra, fmt.Sprintf("attempt %d", e.Attempt))
		}
		if e.Reason != "" {
			extra = append(extra, e.Reason)
		}
		if len(extra) > 0 {
			if s != "" {
				s += " · "
			}
			s += strings.Join(extra, " · ")
		}
	}
	return s
}

// termText makes text from the issue safe to print on a terminal: control
// characters (escape sequences, tabs and line breaks that would break the
// table) and bidirectional overrides are written as escapes, and the line
// is made plain (actionsio.PlainLine): explain may run as an Actions step.
func termText(s string) string {
	unsafe := func(r rune) bool {
		return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
	}
	if utf8.ValidString(s) && strings.IndexFunc(s, unsafe) < 0 {
		return actionsio.PlainLine(s)
	}
	var b strings.Builder
	for _, r := range s { // an invalid byte reads as U+FFFD, written as such
		switch {
		case r < 0x80 && unsafe(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafe(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return actionsio.PlainLine(b.String())
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func costText(u float64) string { return text.USD(u) }

// stickyWriter keeps the first write error so a long print checks it once.
type stickyWriter struct {
	w   io.Writer
	err error
}

func (e *stickyWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// ModelsLine names the model of each role that ran ("planner m1 · verifier
// m2"), in the order of record.Roles; "" when none is known.
func ModelsLine(models map[string]string) string {
	var parts []string
	for _, role := range record.Roles {
		if m := models[role]; m != "" {
			parts = append(parts, role+" "+m)
		}
	}
	return strings.Join(parts, " · ")
}
