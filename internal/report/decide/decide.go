package decide

import (
	"fmt"

	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// Decision is the class and action of a Job's ending.
type Decision struct {
	Class  failure.Class
	Action Action
	Reason string
	// Step is implement.stopped for a stop report decides itself ("" for
	// the runner's own, or the step a killed Job failed in).
	Step string
}

// Ending is how a Job ended, as report names it in its log, its comments
// and its reasons.
type Ending struct {
	// Result is the typed result the Job wrote ("" when it wrote none), and
	// Class the class the runner wrote with it.
	Result record.Result
	Class  string
	// Killed is how a Job that wrote no result ended, from its log, and
	// KillReason the classifier's refinement of it (timeout, log_gone …).
	Killed     failure.Class
	KillReason string
}

func (e Ending) String() string {
	switch {
	case e.Result != "" && e.Class != "":
		return fmt.Sprintf("%s (%s)", e.Result, e.Class)
	case e.Result != "":
		return string(e.Result)
	case e.KillReason != "":
		return fmt.Sprintf("no result, %s (%s)", e.Killed, e.KillReason)
	}
	return fmt.Sprintf("no result, %s", e.Killed)
}

// Typed maps a typed result and the class the runner wrote to one action.
// "stopped" keeps the runner's class; the class's action decides, so a stop
// the runner wrote on a class with an automatic action is continued
// (bounded by the Jobs cap and no_progress), never left stopped.
func Typed(result record.Result, class string) Decision {
	c := failure.Class(class)
	switch result {
	case record.ResultReady:
		return Decision{Action: Ready}
	case record.ResultYielded:
		if c == "" {
			// A yield on purpose (deadline near, PR checks still running).
			return Decision{Action: Continue}
		}
	case record.ResultReturned, record.ResultStopped:
		if c == "" {
			return Decision{Class: failure.Unknown, Action: Stop,
				Reason: fmt.Sprintf("the Job ended %s without a failure class", result)}
		}
	}
	if !c.Valid() {
		return Decision{Class: failure.Unknown, Action: Stop,
			Reason: fmt.Sprintf("the Job ended %s with class %q, which the taxonomy does not have", result, class)}
	}
	return Decision{Class: c, Action: ActionFor(c)}
}

// KilledJob is what the run tells about a Job that wrote no result: its
// job's name and conclusion, the verdict its log gave, and how much of the
// log there was.
type KilledJob struct {
	Name       string
	Conclusion string
	Verdict    failure.Verdict
	// LogGone: GitHub no longer has the log (LogErr says what it
	// answered); the verdict rests on the conclusion alone.
	LogGone bool
	LogErr  error
	// TailLost: the runner lost communication, so the log stops where its
	// upload stopped.
	TailLost bool
}

// Killed decides by the class the log of a Job that wrote no result gives,
// with its evidence in the reason.
func Killed(k KilledJob) Decision {
	return Decision{Class: k.Verdict.Class, Action: ActionFor(k.Verdict.Class), Reason: k.reason()}
}

func (k KilledJob) reason() string {
	concl := k.Conclusion
	if concl == "" {
		concl = "unknown"
	}
	v := k.Verdict
	if k.LogGone {
		return fmt.Sprintf("the Job wrote no result and its log is gone (%v); classified %s from the job's conclusion (%s) alone, and the spend of its model calls after its last mark is lost",
			k.LogErr, v.Class, concl)
	}
	where := ""
	if v.Line > 0 {
		where = fmt.Sprintf(" at log line %d", v.Line)
	}
	kind := string(v.Class)
	if v.Reason != "" {
		kind += " (" + v.Reason + ")"
	}
	out := fmt.Sprintf("the Job wrote no result; job %q concluded %s and its log shows %s%s", k.Name, concl, kind, where)
	if k.TailLost {
		out += "; the runner lost communication, so the log stops where its upload stopped: the spend lines it holds are counted, and any call after them is lost"
	}
	return out
}

// RunnerClass is the class the runner wrote with its result when the
// failure output is empty: Job job's line in implement.jobs, else
// implement.failure when implement.result and implement.attempt show that
// the last mark is this Job's.
func RunnerClass(rec *record.Record, job int, result record.Result) string {
	jobs, _ := rec.Jobs()
	for _, l := range jobs {
		if l.Job == job && l.Result == result {
			return l.Failure
		}
	}
	res, _ := rec.Result()
	n, _ := rec.Attempt()
	if res == result && n == job {
		f, _ := rec.Failure()
		return f
	}
	return ""
}

// Held leaves an item a person stopped (who) where it is: an ending that
// would start something next (a continuation, a wait, a return, a
// question) starts nothing. ok is false when d starts nothing anyway.
func Held(d Decision, who string, e Ending) (Decision, bool) {
	switch d.Action {
	case Continue, Yield, ReturnToStage, Ask:
	default:
		return d, false
	}
	return Decision{Class: d.Class, Action: None,
		Reason: fmt.Sprintf("%s stopped the item: the Job ended %s, and it is not continued (%s)", who, e, d.Action)}, true
}

// DaySpent turns a continuation into a wait for the next day: the day's
// budget is spent on day (spent says how far).
func DaySpent(day, spent string, e Ending) Decision {
	return Decision{Class: failure.DayBudgetExhausted, Action: Yield,
		Reason: fmt.Sprintf("the day's budget is spent on %s (%s); %s would need a Job today", day, spent, e)}
}

// NoQuestion stops a Job that returned needs_input with nothing to ask.
func NoQuestion() Decision {
	return Decision{Class: failure.Unknown, Action: Stop, Step: "ask",
		Reason: "the Job returned needs_input but recorded no question (an invariant violation)"}
}

// Answered is the decision on a writer's answer to Job job's question:
// the item resumes, unless it has run the cap of Jobs per item.
func Answered(who, role string, job, maxJobs int) Decision {
	if job+1 > maxJobs {
		return Decision{Class: failure.BudgetExhausted, Action: Stop, Step: "continuation",
			Reason: fmt.Sprintf("%s answered, but the item has run %d Jobs, the cap of Jobs per item (max jobs %d)", who, job, maxJobs)}
	}
	return Decision{Class: failure.NeedsInput, Action: Resume,
		Reason: fmt.Sprintf("%s (%s access) answered the question", who, role)}
}
