package stage

import (
	"github.com/roadmap-dev/roadmap/internal/kernel"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// Phase is stage as the kernel knows it: its Jobs' lines are stage.jobs and
// a Job's number is the one after the last line's (no key of its own).
func Phase() kernel.Phase {
	return kernel.Phase{
		Name:      "stage",
		Marker:    "<!-- roadmap:stage -->",
		TraceName: "roadmap-stage-trace",
		Jobs:      jobLines,
		SetJobs:   (*record.Changes).SetStageJobs,
		Last:      lastJob,
		Marked:    func(*record.Changes, int) {},
	}
}

// jobLines is stage.jobs.
func jobLines(r *record.Record) []record.JobOutcome {
	lines, _ := r.StageJobs()
	return lines
}

// lastJob is the highest number of stage.jobs' lines.
func lastJob(r *record.Record) int {
	n := 0
	for _, l := range jobLines(r) {
		n = max(n, l.Job)
	}
	return n
}
