package kernel

import "github.com/roadmap-dev/roadmap/internal/record"

// Phase describes a phase to the kernel: what the Jobs of the peer it runs
// for (stage, implement) are called, where the record keeps their lines of
// outcomes and how their numbers are found. Each phase supplies its own
// (stage.Phase, implement.Phase) through Options, so the kernel reads and
// writes a phase's keys without knowing which phase it runs: a new phase
// brings a descriptor, not a branch.
type Phase struct {
	// Name names the phase in the lease's note, errors and log lines.
	Name string
	// Marker is the marker line of the phase's PR comment.
	Marker string
	// TraceName starts the name of a Job's default trace file
	// (TraceName-ISSUE-run-RUNID.jsonl).
	TraceName string
	// Jobs reads the phase's jobs key: one line of outcome per Job.
	Jobs func(*record.Record) []record.JobOutcome
	// SetJobs sets the phase's jobs key in a change.
	SetJobs func(*record.Changes, []record.JobOutcome)
	// Last is the number of the phase's last Job the record knows (0: none);
	// a Job that is not told its number takes the next.
	Last func(*record.Record) int
	// Marked adds to a mark what every mark of the phase carries besides its
	// line of the jobs key (implement's: the Job's number).
	Marked func(c *record.Changes, number int)
}

func (p Phase) String() string { return p.Name }

// phaseSet indexes the phases whose Jobs may hold an item's lease by the
// name a lease's note gives.
func phaseSet(own Phase, peers []Phase) map[string]Phase {
	set := make(map[string]Phase, len(peers)+1)
	for _, p := range peers {
		set[p.Name] = p
	}
	set[own.Name] = own
	return set
}
