package report

import (
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// lessParallelism is oom's action, "retry with less parallelism": the
// continuation of a Job that ran out of memory runs its checks with
// implement.parallelism processes (GOMAXPROCS and go test -p; the runner
// applies it). The first oom sets it to 1, the least there is; report
// cannot know the runner's processors, and a retry that runs out of memory
// again stops (the no-progress rule's oom row). It rides on report's one
// record write.
func (r *reporter) lessParallelism(cur *record.Record, ch *record.Changes) {
	if r.d.Action != ActionContinue || r.d.Class != failure.OOM {
		return
	}
	if n := cur.Parallelism(); n == 1 {
		return
	}
	ch.SetParallelism(1)
	r.out.Parallelism = 1
}
