package citriage

import (
	"fmt"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/verdict"
)

// Kind is what the watch decided at the head. "Green" is said only of
// Passed.
type Kind string

const (
	// Passed: checks reported on the head and every one passed.
	Passed Kind = "passed"
	// None: no check reported on the head, and ready without CI is allowed.
	None Kind = "none"
	// Rerun: the infrastructure broke the failed checks; their workflow
	// runs are re-run (or already are): the watch polls again.
	Rerun Kind = "rerun"
	// Failed: the Failure says the class, the evidence and the repair task.
	Failed Kind = "failed"
)

// Verdict is the watch's decision at one poll.
type Verdict struct {
	Kind Kind
	// Failure is set when Kind is Failed.
	verdict.Failure
	// Reruns are the failed Actions jobs whose workflow runs are to be
	// re-run (Rerun), one per run, in run order.
	Reruns []Finding
	// Decisions are the decisions on PR checks this verdict made, for the
	// log and the trace (the notes already hold their lines).
	Decisions []Decision
}

// Decision is one decision on a PR check.
type Decision struct {
	Check   string        // the check's name
	Class   failure.Class // the class its log was read as
	Outcome string        // handed_on, not_rerun, rerun
	Line    string        // the note: masked, one line
}

// Watch is the CI state of one Job, held by its loop.
type Watch struct {
	// CI is what the watch learned of CI at the head (Passed, None); ""
	// until it decided.
	CI Kind
	// Notes are the watch's decisions, and the loop's own lines on the PR
	// checks, as lines of the PR comment.
	Notes []string
	// reran holds, per workflow run, the attempt whose failed jobs this
	// Job re-ran.
	reran map[int64]int
	mask  func(string) string
}

// NewWatch is a watch with nothing learned; mask masks text read from CI
// before it is kept or shown (nil keeps it as it is).
func NewWatch(mask func(string) string) *Watch {
	if mask == nil {
		mask = func(s string) string { return s }
	}
	return &Watch{reran: map[int64]int{}, mask: mask}
}

// Note adds a line to the PR comment's notes.
func (w *Watch) Note(line string) { w.Notes = append(w.Notes, line) }

// Passed is the verdict on a head where total checks reported and all passed.
func (w *Watch) Passed(total int, head string) Verdict {
	w.CI = Passed
	w.Note(fmt.Sprintf("%d PR checks passed at %s", total, short(head)))
	return Verdict{Kind: Passed}
}

// NoCI is what the watch knows when no check reported on the head.
type NoCI struct {
	Head   string
	PR     int
	Waited time.Duration
	// ReadyWithoutCI: implement.ready_without_ci allows ready without CI.
	ReadyWithoutCI bool
	// NoCIPath: no workflow run can start on roadmap's pushes (no push
	// token, no CI workflow to dispatch); nothing will ever report.
	NoCIPath bool
}

// NoCI decides on a head no check reported on: never called green; ready
// (None) only when the configuration allows it, else a person is asked
// what to change and the PR stays a draft.
func (w *Watch) NoCI(in NoCI) Verdict {
	line := fmt.Sprintf("no check reported on %s in %s", short(in.Head), in.Waited)
	if in.ReadyWithoutCI {
		w.CI = None
		w.Note(line + "; ready without CI (implement.ready_without_ci: true)")
		return Verdict{Kind: None}
	}
	w.Note(line + "; not marked ready")
	if in.NoCIPath {
		q := fmt.Sprintf("No CI can run on PR #%d: roadmap pushes with the workflow's GITHUB_TOKEN, whose pushes start no workflow run (GitHub's rule), "+
			"and implement.ci_workflows names no workflow to dispatch, so nothing will ever report a check on %s. A person must do one of: "+
			"give roadmap a push token (a GitHub App installation token or a fine-grained PAT as the ROADMAP_PUSH_TOKEN secret), so your CI runs on its pushes; "+
			"or name a CI workflow with `on: workflow_dispatch` in implement.ci_workflows; "+
			"or set implement.ready_without_ci: true to allow ready without CI. Then reply here.",
			in.PR, short(in.Head))
		return Verdict{Kind: Failed, Failure: verdict.Failure{Class: failure.NeedsInput, Question: q,
			Reason: "no CI can run on roadmap's pushes (no push token, no CI workflow to dispatch), and implement.ready_without_ci is false"}}
	}
	q := fmt.Sprintf("No CI reported a check on %s (PR #%d) within %s, so roadmap cannot say the checks passed. "+
		"Pushes made with GITHUB_TOKEN start no workflow run: pass a push token (the ROADMAP_PUSH_TOKEN secret), "+
		"or name a CI workflow with `on: workflow_dispatch` in implement.ci_workflows, "+
		"or set implement.ready_without_ci: true to allow ready without CI; then reply here.",
		short(in.Head), in.PR, in.Waited)
	return Verdict{Kind: Failed, Failure: verdict.Failure{Class: failure.NeedsInput, Question: q,
		Reason: line + ": no CI ran, and implement.ready_without_ci is false"}}
}

// infrastructure reports whether class says the CI's machinery failed,
// not the change: such a check is re-run, never handed to the agent.
func infrastructure(c failure.Class) bool {
	switch c {
	case failure.Transient, failure.RateLimited, failure.Killed, failure.Indeterminate:
		return true
	}
	return false
}

// Triage decides on the failed checks read at the head (Read): a check the
// change failed is handed on to the agent as checks_failed with the failing
// part of its log; a check the infrastructure broke is re-run, at most
// maxReruns times per workflow run; one that cannot be re-run (not a
// workflow job, or re-run maxReruns times) ends the watch with its class.
func (w *Watch) Triage(findings []Finding, maxReruns int) Verdict {
	var handOn, spent []Finding
	reruns := map[int64]Finding{}
	for _, f := range findings {
		switch {
		case !infrastructure(f.Verdict.Class):
			handOn = append(handOn, f)
		case f.RunID != 0 && f.Attempt <= w.reran[f.RunID]:
			// Re-run already asked for at this attempt: its check runs are
			// on their way.
		case f.RunID != 0 && f.Attempt-1 < maxReruns:
			reruns[f.RunID] = f
		default:
			spent = append(spent, f)
		}
	}
	if len(handOn) > 0 {
		var v Verdict
		var log strings.Builder
		for _, f := range handOn {
			v.Decisions = append(v.Decisions, w.decide(f, "handed_on", fmt.Sprintf("%s failed (%s): its log goes to the agent", f.Check.Name, f.Verdict.Class)))
			fmt.Fprintf(&log, "PR check %q failed (%s) %s\n%s\n", f.Check.Name, f.Check.Detail, f.Check.URL, f.Excerpt)
		}
		first := handOn[0]
		v.Kind, v.Failure = Failed, verdict.Failure{Class: failure.ChecksFailed, Task: log.String(),
			Reason: fmt.Sprintf("PR check %s failed: %s", first.Check.Name, w.evidence(first.Verdict.Evidence))}
		return v
	}
	if len(spent) > 0 {
		f := spent[0]
		why := "it is not a workflow job roadmap can re-run"
		if f.RunID != 0 {
			why = fmt.Sprintf("re-run %d times already (implement.check_reruns: %d)", f.Attempt-1, maxReruns)
		}
		d := w.decide(f, "not_rerun", fmt.Sprintf("%s failed (%s); not re-run: %s", f.Check.Name, f.Verdict.Class, why))
		return Verdict{Kind: Failed, Decisions: []Decision{d}, Failure: verdict.Failure{Class: f.Verdict.Class,
			Reason: fmt.Sprintf("PR check %s failed (%s: %s); %s", f.Check.Name, f.Verdict.Class, w.evidence(f.Verdict.Evidence), why)}}
	}
	v := Verdict{Kind: Rerun}
	for _, f := range reruns {
		v.Reruns = append(v.Reruns, f)
	}
	sortByRun(v.Reruns)
	return v
}

// Reran notes that the failed jobs of f's workflow run were re-run at its
// attempt, so a later poll that still sees them failed waits for the
// re-run; started says this Job's request started it (not one already
// under way), which is a decision of its own.
func (w *Watch) Reran(f Finding, started bool, maxReruns int) (Decision, bool) {
	w.reran[f.RunID] = f.Attempt
	if !started {
		return Decision{}, false
	}
	return w.decide(f, "rerun", fmt.Sprintf("%s failed (%s: %s); re-ran the failed jobs of run %d (re-run %d of %d)",
		f.Check.Name, f.Verdict.Class, w.evidence(f.Verdict.Evidence), f.RunID, f.Attempt, maxReruns)), true
}

// decide records one decision on a PR check as a note.
func (w *Watch) decide(f Finding, outcome, line string) Decision {
	line = verdict.OneLine(w.mask(line))
	w.Note(line)
	return Decision{Check: f.Check.Name, Class: f.Verdict.Class, Outcome: outcome, Line: line}
}

// evidence is a log line for the PR comment and the log: masked, one line,
// in a code span, so hostile text is shown and never rendered (no mention,
// no link, no markup).
func (w *Watch) evidence(s string) string {
	s = strings.ReplaceAll(verdict.OneLine(w.mask(s)), "`", "'")
	if s == "" {
		return "(no line decided)"
	}
	return "`" + s + "`"
}

func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}
