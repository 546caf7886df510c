package implement

import (
	"github.com/roadmap-dev/roadmap/internal/kernel"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// Phase is implement as the kernel knows it: its Jobs' lines are
// implement.jobs, and every mark carries the Job's number in
// implement.attempt, where the next Job finds it.
func Phase() kernel.Phase {
	return kernel.Phase{
		Name:      "implement",
		Marker:    "<!-- roadmap:implement -->",
		TraceName: "roadmap-trace",
		Jobs:      jobLines,
		SetJobs:   (*record.Changes).SetJobs,
		Last:      lastAttempt,
		Marked:    (*record.Changes).SetAttempt,
	}
}

// jobLines is implement.jobs.
func jobLines(r *record.Record) []record.JobOutcome {
	lines, _ := r.Jobs()
	return lines
}

// lastAttempt is implement.attempt: the number of the last Job that marked.
func lastAttempt(r *record.Record) int {
	n, _ := r.Attempt()
	return n
}
