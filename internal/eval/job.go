package eval

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/job"
	"github.com/roadmap-dev/roadmap/internal/job/kernel"
	"github.com/roadmap-dev/roadmap/internal/llm"
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
// through job.Open, as the binary does: the configuration's defaults with
// the replay model over the case's recorded exchanges as the one tier, and
// the `isolation: none` boundary (a golden case's commands are the case's
// own, not a hostile model's).
func (w *world) openJob(ctx context.Context, js jobSetup) (*evalJob, error) {
	w.jobs++
	ws := filepath.Join(w.dir, fmt.Sprintf("job-%d", w.jobs))
	if _, err := runGit(w.dir, "clone", "-q", w.remote, ws); err != nil {
		return nil, err
	}
	cfg := config.Default()
	cfg.Models = []config.Model{{Provider: llm.ProviderReplay, Name: modelName, Fixtures: js.fixtures}}
	cfg.Prices = map[string]config.Price{modelName: {Input: 0.15, Output: 0.60}}
	cfg.Isolation = config.IsolationNone
	if js.configure != nil {
		js.configure(cfg)
	}
	env := map[string]string{"GITHUB_REPOSITORY": owner + "/" + repo, "GITHUB_API_URL": w.url, "RUNNER_TEMP": w.dir}
	for _, kv := range gitEnv() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	clock := js.clock
	if clock == nil {
		clock = w.clock
	}
	kit, err := job.Open(ctx, job.Setup{
		Phase: js.phase, Issue: w.issue, RunID: int64(100 + w.jobs), Dir: ws,
		Config: cfg, ConfigPath: "the eval's configuration", Env: env, Token: token,
		TraceOut: discard{}, Transport: &http.Transport{DisableKeepAlives: true},
		Clock: clock, WrapModel: js.wrap,
	})
	if err != nil {
		return nil, fmt.Errorf("the recorded exchanges in %s: %w", js.fixtures, err)
	}
	return &evalJob{ws: ws, kit: kit}, nil
}
