package report

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/report/decide"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// jobFacts is what the run tells about a Job that wrote no result.
type jobFacts struct {
	job     github.WorkflowJob
	verdict failure.Verdict
	spend   trace.SpendLog
	// logGone: the log could not be downloaded because GitHub no longer has
	// it (404, 410); the verdict then rests on the conclusion alone.
	logGone bool
	logErr  error
	// tailLost: the runner lost communication with GitHub, so the log
	// stops wherever its upload stopped: calls after its last line are
	// not known.
	tailLost bool
}

// ended is what decide reads of the Job's end.
func (f *jobFacts) ended() decide.KilledJob {
	return decide.KilledJob{Name: f.job.Name, Conclusion: f.job.Conclusion, Verdict: f.verdict,
		LogGone: f.logGone, LogErr: f.logErr, TailLost: f.tailLost}
}

// reasonLogGone is the kill reason of a Job that wrote no result and whose
// log is gone, when the conclusion and the annotations name no other: a
// Job with no typed result was killed (DESIGN §4), whatever took its log.
const reasonLogGone = "log_gone"

// lostCommunication is the runner's message when it stops talking to
// GitHub (a machine gone, a network cut): in an annotation or at the end of
// the log GitHub keeps. The runner uploads the log as it goes, so what it
// had not sent is gone with it.
const lostCommunication = "lost communication with the server"

// runnerLost reports whether the runner lost communication: the log's tail
// may be missing.
func runnerLost(annotations []string, v failure.Verdict) bool {
	lost := func(s string) bool { return strings.Contains(strings.ToLower(s), lostCommunication) }
	return slices.ContainsFunc(annotations, lost) || lost(v.Evidence)
}

// findJob picks the implement job among the run's jobs: the exact name, then
// the name a reusable workflow gives it ("<caller> / implement"), then a
// matrix name ("implement (1)"). The last match wins: a re-run lists the
// newest attempt.
func findJob(jobs []github.WorkflowJob, name string) (github.WorkflowJob, bool) {
	match := []func(string) bool{
		func(n string) bool { return n == name },
		func(n string) bool { return strings.HasSuffix(n, " / "+name) },
		func(n string) bool { return strings.HasPrefix(n, name+" (") },
	}
	for _, m := range match {
		var found *github.WorkflowJob
		for i := range jobs {
			if m(jobs[i].Name) {
				found = &jobs[i]
			}
		}
		if found != nil {
			return *found, true
		}
	}
	return github.WorkflowJob{}, false
}

// readKilledJob lists the run's jobs, downloads the implement job's log and
// reads it once, streaming: the classifier and the spend-line reader each see
// every line through a pipe, so memory stays bounded by the classifier's line
// limit and the spend entries, whatever the log's size.
func readKilledJob(ctx context.Context, gh *github.Client, runID int64, name string) (jobFacts, error) {
	jobs, err := gh.RunJobs(ctx, runID)
	if err != nil {
		return jobFacts{}, fmt.Errorf("read the jobs of run %d: %w", runID, err)
	}
	job, ok := findJob(jobs, name)
	if !ok {
		var names []string
		for _, j := range jobs {
			names = append(names, j.Name)
		}
		return jobFacts{}, fmt.Errorf("run %d has no job named %q (it has %s)", runID, name, strings.Join(names, ", "))
	}
	f := jobFacts{job: job}
	// The runner puts some of its own messages (a lost runner's) in the job's
	// annotations, not its log. They are evidence, not a must: a failure to
	// read them leaves the log to decide.
	annotations, aerr := gh.JobAnnotations(ctx, job.ID)
	if aerr != nil {
		annotations = nil
	}
	body, err := gh.JobLog(ctx, job.ID)
	if err != nil {
		if !logGone(err) {
			return jobFacts{}, fmt.Errorf("read the log of job %d (%s): %w", job.ID, job.Name, err)
		}
		f.logGone, f.logErr = true, err
		f.verdict = failure.Classify(failure.Input{Conclusion: job.Conclusion, Annotations: annotations})
		if f.verdict.Class == failure.Unknown {
			// Nothing says otherwise, and the Job wrote no result: it was
			// killed, and goes on from its last mark. Unknown would stop
			// the item for a log GitHub deleted.
			f.verdict = failure.Verdict{Class: failure.Killed, Reason: reasonLogGone, Source: failure.SourceNone}
		}
		return f, nil
	}
	defer body.Close()
	f.verdict, f.spend, err = scanLog(body, job.Conclusion, annotations)
	if err != nil {
		return jobFacts{}, fmt.Errorf("read the log of job %d (%s): %w", job.ID, job.Name, err)
	}
	f.tailLost = runnerLost(annotations, f.verdict)
	return f, nil
}

// logGone reports whether GitHub says the log no longer exists: 404 (the job
// or its log was deleted) or 410 (past the retention period).
func logGone(err error) bool {
	if errors.Is(err, github.ErrNotFound) {
		return true
	}
	var se *github.StatusError
	return errors.As(err, &se) && (se.Status == http.StatusNotFound || se.Status == http.StatusGone)
}

// scanLog classifies a log and reads its spend lines in one pass. The exit
// code is left to the classifier, which reads the runner's "Process completed
// with exit code N." lines: the API does not give a job's exit code.
func scanLog(log io.Reader, conclusion string, annotations []string) (failure.Verdict, trace.SpendLog, error) {
	pr, pw := io.Pipe()
	type spendResult struct {
		log trace.SpendLog
		err error
	}
	done := make(chan spendResult, 1)
	go func() {
		sl, err := trace.ParseSpendLines(pr)
		// Keep draining so the classifier side never blocks on the pipe.
		_, _ = io.Copy(io.Discard, pr)
		done <- spendResult{sl, err}
	}()
	tee := io.TeeReader(log, pw)
	v := failure.Classify(failure.Input{Log: tee, Conclusion: conclusion, Annotations: annotations})
	// The classifier may stop before the end; the spend reader needs it all.
	_, copyErr := io.Copy(io.Discard, tee)
	readErr := v.LogErr
	if readErr == nil {
		readErr = copyErr
	}
	pw.CloseWithError(readErr)
	res := <-done
	if readErr != nil {
		return v, res.log, readErr
	}
	return v, res.log, res.err
}
