package implement

import (
	"context"
	"slices"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/checks"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// parallelism applies implement.parallelism, which report sets when a Job
// ran out of memory (oom): the scoped checks and verify commands of this
// Job run with that many processes (GOMAXPROCS, go test -p). A second oom
// with it set and no new mark stops the item (report's no-progress rule).
func (r *runner) parallelism() {
	n := r.j.Rec.Parallelism()
	if n <= 0 {
		return
	}
	r.o.CheckRunner = checks.LessParallel(r.o.CheckRunner, n)
	r.j.Logf("roadmap: the checks run with less parallelism after an oom (implement.parallelism %d: %s)",
		n, strings.Join(checks.ParallelismEnv(n), " "))
}

// wake takes an item that waited for the day's budget out of the wait when
// a Job of it starts, whatever started it (a person's label, a dispatch,
// roadmap wake): the waiting label goes (one request, only when it is
// there) and item.wake_at rides on the Job's next record write.
func (r *runner) wake(ctx context.Context) {
	l := r.o.WaitingLabel
	if l == "" || !slices.Contains(r.j.Issue.Labels, l) {
		return
	}
	if err := r.o.GitHub.RemoveLabel(ctx, r.o.Issue, l); err != nil {
		r.j.Logf("roadmap: remove the %s label: %v", l, err)
		return
	}
	var ch record.Changes
	ch.Delete(record.KeyItemWakeAt)
	r.pending.Merge(ch)
	r.j.Logf("roadmap: issue #%d waited for the day's budget: this Job takes it out of the wait (%s removed)", r.o.Issue, l)
}
