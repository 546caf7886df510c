package implement

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// What the watch learned about CI at the head, for the PR comment, the step
// summary and Result.CI. "Green" is said only of ciPassed.
const (
	ciPassed = "passed" // checks reported on the head and every one passed
	ciNone   = "none"   // no check reported on the head
)

const (
	// maxJobLog is the most of one job's log kept for reading: its tail,
	// where a failure is. maxLogRead bounds how much is read to get there.
	maxJobLog  = 4 << 20
	maxLogRead = 64 << 20
	// maxExcerpt bounds the failing part kept of one check; excerptBefore
	// and excerptAfter are the lines kept around the deciding line.
	maxExcerpt    = 6 << 10
	excerptBefore = 40
	excerptAfter  = 8
)

// checkFinding is one failed PR check, read and classified.
type checkFinding struct {
	check   github.Check
	verdict failure.Verdict
	excerpt string // the failing part, masked
	runID   int64  // the workflow run of an Actions job, else 0
	attempt int    // the run's attempt the job ran in
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

// triage reads every failed check at the head, classifies each and decides:
// re-run the failed jobs when the infrastructure broke them (bounded per
// head by the run's attempt), else hand the failing part of the logs on
// as checks_failed. again is true when the watch goes on polling.
func (r *runner) triage(ctx context.Context, sum github.CheckSummary) (end ending, again bool) {
	var findings []checkFinding
	for _, c := range sum.Checks {
		if c.State == "failure" {
			findings = append(findings, r.readCheck(ctx, c))
		}
	}
	var handOn []checkFinding
	reruns := map[int64]checkFinding{}
	var spent []checkFinding
	for _, f := range findings {
		switch {
		case !infrastructure(f.verdict.Class):
			handOn = append(handOn, f)
		case f.runID != 0 && f.attempt <= r.reran[f.runID]:
			// Re-run already asked for at this attempt: its check runs are
			// on their way.
		case f.runID != 0 && f.attempt-1 < r.o.CheckReruns:
			reruns[f.runID] = f
		default:
			spent = append(spent, f)
		}
	}
	if len(handOn) > 0 {
		var log strings.Builder
		for _, f := range handOn {
			r.decide(f, "handed_on", fmt.Sprintf("%s failed (%s): its log goes to the agent", f.check.Name, f.verdict.Class))
			fmt.Fprintf(&log, "PR check %q failed (%s) %s\n%s\n", f.check.Name, f.check.Detail, f.check.URL, f.excerpt)
		}
		first := handOn[0]
		return ending{result: record.ResultStopped, class: failure.ChecksFailed, step: "watch",
			reason:   fmt.Sprintf("PR check %s failed: %s", first.check.Name, r.evidence(first.verdict.Evidence)),
			checkLog: log.String()}, false
	}
	if len(spent) > 0 {
		f := spent[0]
		why := "it is not a workflow job roadmap can re-run"
		if f.runID != 0 {
			why = fmt.Sprintf("re-run %d times already (implement.check_reruns: %d)", f.attempt-1, r.o.CheckReruns)
		}
		r.decide(f, "not_rerun", fmt.Sprintf("%s failed (%s); not re-run: %s", f.check.Name, f.verdict.Class, why))
		end := r.classEnding(f.verdict.Class, "watch",
			fmt.Sprintf("PR check %s failed (%s: %s); %s", f.check.Name, f.verdict.Class, r.evidence(f.verdict.Evidence), why))
		return end, false
	}
	ids := make([]int64, 0, len(reruns))
	for id := range reruns {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(a, b int) bool { return ids[a] < ids[b] })
	for _, id := range ids {
		f := reruns[id]
		if err := r.o.GitHub.RerunFailedJobs(ctx, id); err != nil {
			if !strings.Contains(err.Error(), "already running") {
				return r.fail(ctx, "watch", err), false
			}
			// GitHub refuses a re-run of a run in progress (403): an
			// earlier Job's re-run is under way and its checks will show.
			r.j.Logf("roadmap: watch: run %d is already running again; watching it", id)
			r.reran[id] = f.attempt
			continue
		}
		r.reran[id] = f.attempt
		r.decide(f, "rerun", fmt.Sprintf("%s failed (%s: %s); re-ran the failed jobs of run %d (re-run %d of %d)",
			f.check.Name, f.verdict.Class, r.evidence(f.verdict.Evidence), id, f.attempt, r.o.CheckReruns))
		r.j.Event(trace.Event{Type: trace.TypeRetry, Step: "watch", Reason: fmt.Sprintf("PR check %s: %s", f.check.Name, f.verdict.Class),
			Attempt: f.attempt})
	}
	return ending{}, true
}

// evidence is a log line for the PR comment and the log: masked, one line,
// in a code span, so hostile text is shown and never rendered (no mention,
// no link, no markup).
func (r *runner) evidence(s string) string {
	s = strings.ReplaceAll(oneLine(r.o.Mask(s)), "`", "'")
	if s == "" {
		return "(no line decided)"
	}
	return "`" + s + "`"
}

// decide records one decision on a PR check: a trace event, a log line and
// a line of the PR comment.
func (r *runner) decide(f checkFinding, outcome, line string) {
	line = oneLine(r.o.Mask(line))
	r.ciNotes = append(r.ciNotes, line)
	r.j.Logf("roadmap: watch: %s", line)
	r.j.Event(trace.Event{Type: trace.TypeCheckRun, Step: "watch", Command: "PR check " + f.check.Name, ExitCode: 1,
		Outcome: outcome, Reason: string(f.verdict.Class)})
}

// readCheck reads what a failed check left: an Actions job's log and
// annotations, another app's output and annotations, a status's
// description; then classifies it and keeps the failing part. A read that
// fails leaves the check classified on what was read.
func (r *runner) readCheck(ctx context.Context, c github.Check) checkFinding {
	f := checkFinding{check: c}
	var log []byte
	var annotations []string
	switch {
	case c.Kind == "check_run" && c.App == github.ActionsApp && c.ID != 0:
		if job, err := r.o.GitHub.Job(ctx, c.ID); err == nil {
			f.runID, f.attempt = job.RunID, max(job.RunAttempt, 1)
		} else {
			r.j.Logf("roadmap: watch: read job %d of %s: %v", c.ID, c.Name, err)
		}
		if rc, err := r.o.GitHub.JobLog(ctx, c.ID); err == nil {
			log, err = tail(rc, maxJobLog, maxLogRead)
			rc.Close()
			if err != nil {
				r.j.Logf("roadmap: watch: read the log of %s: %v", c.Name, err)
			}
		} else {
			r.j.Logf("roadmap: watch: download the log of %s: %v", c.Name, err)
		}
		annotations, _ = r.o.GitHub.JobAnnotations(ctx, c.ID)
	case c.Kind == "check_run":
		log = []byte(c.Output)
		if c.ID != 0 {
			annotations, _ = r.o.GitHub.JobAnnotations(ctx, c.ID)
		}
	default:
		log = []byte(c.Description)
	}
	conclusion := c.Detail
	if i := strings.LastIndexByte(conclusion, '/'); i >= 0 {
		conclusion = conclusion[i+1:]
	}
	f.verdict = failure.Classify(failure.Input{Log: bytes.NewReader(log), Annotations: annotations, Conclusion: conclusion})
	if f.verdict.Class == failure.Unknown && conclusion == "failure" {
		// A check that ran and failed with nothing more decisive in its
		// log failed on the change: the agent reads it.
		f.verdict.Class = failure.ChecksFailed
	}
	part := failingPart(log, f.verdict.Line)
	if len(annotations) > 0 {
		part += "\nannotations:\n" + strings.Join(annotations, "\n")
	}
	f.excerpt = r.o.Mask(cut(part, maxExcerpt))
	return f
}

// tail reads rd to its end, or to limit bytes, and keeps the last keep
// bytes, so a huge log costs bounded memory and its end, where a job fails,
// is what is kept.
func tail(rd io.Reader, keep, limit int64) ([]byte, error) {
	lr := io.LimitReader(rd, limit)
	buf := make([]byte, 0, min(keep, 64<<10))
	chunk := make([]byte, 32<<10)
	for {
		n, err := lr.Read(chunk)
		buf = append(buf, chunk[:n]...)
		if over := int64(len(buf)) - keep; over > 0 {
			buf = append(buf[:0], buf[over:]...)
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// failingPart is the part of a log around line (1-based): the lines before
// it, where a test prints its failure, and a few after; the last lines when
// line is 0. Timestamps of the runner's log lines are dropped, and no line is
// longer than 1,000 bytes.
func failingPart(log []byte, line int) string {
	lines := strings.Split(strings.ToValidUTF8(string(log), "\uFFFD"), "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	lo, hi := len(lines)-excerptBefore, len(lines)
	if line > 0 && line <= len(lines) {
		lo, hi = line-1-excerptBefore, line+excerptAfter
	}
	lo, hi = max(lo, 0), min(hi, len(lines))
	var b strings.Builder
	for _, l := range lines[lo:hi] {
		l = strings.TrimRight(stripStamp(l), "\r")
		if len(l) > 1000 {
			l = strings.ToValidUTF8(l[:1000], "") + "…"
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// stripStamp drops the runner's "2024-01-02T03:04:05.1234567Z " prefix.
func stripStamp(l string) string {
	if len(l) > 20 && l[4] == '-' && l[7] == '-' && l[10] == 'T' {
		if i := strings.IndexByte(l, ' '); i > 0 && i < 40 && l[i-1] == 'Z' {
			if _, err := time.Parse(time.RFC3339Nano, l[:i]); err == nil {
				return l[i+1:]
			}
		}
	}
	return l
}

// cut keeps the last n bytes of s, on a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + strings.ToValidUTF8(s[len(s)-n:], "")
}

// dispatchCI starts the configured CI workflows on the work branch: pushes
// made with GITHUB_TOKEN start no workflow run, a workflow_dispatch does,
// and its check runs attach to the branch's head.
func (r *runner) dispatchCI(ctx context.Context) error {
	for _, wf := range r.o.CIWorkflows {
		d, err := r.o.GitHub.DispatchWorkflow(ctx, wf, r.branch, nil)
		if err != nil {
			return err
		}
		line := fmt.Sprintf("no check had reported on %s: dispatched %s on %s", short(r.head), wf, r.branch)
		if d.RunID != 0 {
			line += fmt.Sprintf(" (run %d)", d.RunID)
		}
		r.ciNotes = append(r.ciNotes, line)
		r.j.Logf("roadmap: watch: %s", line)
		r.j.Event(trace.Event{Type: trace.TypeCheckRun, Step: "watch", Command: "dispatch " + wf, Outcome: "dispatched"})
	}
	return nil
}

// noCI ends the watch when no check reported on the head: ready only when
// the configuration allows it (implement.ready_without_ci), else the item
// asks a person, and the PR stays a draft.
func (r *runner) noCI(ctx context.Context, waited time.Duration) ending {
	line := fmt.Sprintf("no check reported on %s in %s", short(r.head), waited)
	r.j.Event(trace.Event{Type: trace.TypeCheckRun, Step: "watch", Command: "PR checks", Outcome: "no_ci"})
	if r.o.ReadyWithoutCI {
		r.ci = ciNone
		r.ciNotes = append(r.ciNotes, line+"; ready without CI (implement.ready_without_ci: true)")
		r.j.Logf("roadmap: watch: %s; implement.ready_without_ci allows ready without CI", line)
		if end, ok := r.markReady(ctx, r.prBody(readyState(r.pr.Number,
			"No CI reported a check on the head; ready because implement.ready_without_ci is true."))); !ok {
			return end
		}
		return ending{result: record.ResultReady, step: "ready"}
	}
	r.ciNotes = append(r.ciNotes, line+"; not marked ready")
	r.j.Logf("roadmap: watch: %s; the PR is not marked ready without CI", line)
	if r.o.NoCIPath {
		q := fmt.Sprintf("No CI can run on PR #%d: roadmap pushes with the workflow's GITHUB_TOKEN, whose pushes start no workflow run (GitHub's rule), "+
			"and implement.ci_workflows names no workflow to dispatch, so nothing will ever report a check on %s. A person must do one of: "+
			"give roadmap a push token (a GitHub App installation token or a fine-grained PAT as the ROADMAP_PUSH_TOKEN secret), so your CI runs on its pushes; "+
			"or name a CI workflow with `on: workflow_dispatch` in implement.ci_workflows; "+
			"or set implement.ready_without_ci: true to allow ready without CI. Then reply here.",
			r.pr.Number, short(r.head))
		return ending{result: record.ResultReturned, class: failure.NeedsInput, step: "watch",
			reason: "no CI can run on roadmap's pushes (no push token, no CI workflow to dispatch), and implement.ready_without_ci is false", question: q}
	}
	q := fmt.Sprintf("No CI reported a check on %s (PR #%d) within %s, so roadmap cannot say the checks passed. "+
		"Pushes made with GITHUB_TOKEN start no workflow run: pass a push token (the ROADMAP_PUSH_TOKEN secret), "+
		"or name a CI workflow with `on: workflow_dispatch` in implement.ci_workflows, "+
		"or set implement.ready_without_ci: true to allow ready without CI; then reply here.",
		short(r.head), r.pr.Number, waited)
	return ending{result: record.ResultReturned, class: failure.NeedsInput, step: "watch",
		reason: line + ": no CI ran, and implement.ready_without_ci is false", question: q}
}
