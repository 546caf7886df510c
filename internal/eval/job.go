package eval

import (
	"context"
	"fmt"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/job"
	"github.com/roadmap-dev/roadmap/internal/job/kernel"
)

// evalJob is one Job of a case, built the way the binary builds it.
type evalJob struct {
	ws  string
	kit *job.Kit
}

// jobSetup says how a case's Job differs from the shipped defaults.
type jobSetup struct {
	phase    kernel.Phase
	fixtures string
	clock    kernel.Clock
	wrap     func(agent.Model) agent.Model
	// configure changes the configuration (repair rounds, rounds).
	configure func(*config.Config)
}

// openJob clones the remote into a fresh workspace and opens a Job on it
// through job.Open, as the binary does (the world's Setup: the shipped
// configuration with the replay model over the case's recorded exchanges as
// the one tier, and the `isolation: none` boundary: a golden case's
// commands are the case's own, not a hostile model's).
func (w *world) openJob(ctx context.Context, js jobSetup) (*evalJob, error) {
	w.jobs++
	ws, err := w.Workspace(fmt.Sprintf("job-%d", w.jobs))
	if err != nil {
		return nil, err
	}
	s := w.Setup(js.phase, ws, js.fixtures)
	s.RunID, s.WrapModel = int64(100+w.jobs), js.wrap
	if js.clock != nil {
		s.Clock = js.clock
	}
	if js.configure != nil {
		js.configure(s.Config)
	}
	kit, err := job.Open(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("the recorded exchanges in %s: %w", js.fixtures, err)
	}
	return &evalJob{ws: ws, kit: kit}, nil
}
