package eval

import (
	"context"
	"fmt"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/job"
	"github.com/roadmap-dev/roadmap/internal/kernel"
	"github.com/roadmap-dev/roadmap/internal/llm"
	theworld "github.com/roadmap-dev/roadmap/internal/world"
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
	// o holds the model the Job uses (nil: the replay over fixtures).
	o *Options
}

// ReplayPrice is what the replay model costs in the eval, USD per million
// tokens: a small hosted model's price, so a case's spend is a figure a
// reader can compare across runs.
var ReplayPrice = config.Price{Input: 0.15, Output: 0.60}

// ladder is the model ladder and prices a Job uses: o's models, or the
// replay provider over fixtures (the recorded exchanges) at ReplayPrice.
func (o *Options) ladder(fixtures string) ([]config.Model, map[string]config.Price) {
	if o == nil || len(o.Models) == 0 {
		return []config.Model{{Provider: llm.ProviderReplay, Name: theworld.ModelName, Fixtures: fixtures}},
			map[string]config.Price{theworld.ModelName: ReplayPrice}
	}
	prices := map[string]config.Price{}
	for k, v := range o.Prices {
		prices[k] = v
	}
	return append([]config.Model(nil), o.Models...), prices
}

// keys are the API keys o's models name, read through o.Getenv, with each
// provider's default variable when a model names none (GITHUB_TOKEN,
// OPENAI_API_KEY, ANTHROPIC_API_KEY).
func (o *Options) keys() map[string]string {
	out := map[string]string{}
	if o == nil || o.Getenv == nil {
		return out
	}
	for _, m := range o.Models {
		name := m.APIKeyEnv
		if name == "" {
			name = map[string]string{llm.ProviderGitHubModels: "GITHUB_TOKEN", llm.ProviderOpenAI: "OPENAI_API_KEY", llm.ProviderAnthropic: "ANTHROPIC_API_KEY"}[m.Provider]
		}
		if name != "" {
			if v := o.Getenv(name); v != "" {
				out[name] = v
			}
		}
	}
	return out
}

// openJob clones the remote into a fresh workspace and opens a Job on it
// through job.Open, as the binary does (the world's Setup: the shipped
// configuration with the eval's model, by default the replay model over the
// case's recorded exchanges as the one tier, and the `isolation: none` boundary: a golden case's
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
	s.Config.Models, s.Config.Prices = js.o.ladder(js.fixtures)
	if js.o != nil && js.o.Isolation != "" {
		s.Config.Isolation = js.o.Isolation
	}
	for k, v := range js.o.keys() {
		s.Env[k] = v
	}
	if js.configure != nil {
		js.configure(s.Config)
	}
	kit, err := job.Open(ctx, s)
	if err != nil {
		if js.o == nil || len(js.o.Models) == 0 {
			return nil, fmt.Errorf("the recorded exchanges in %s: %w", js.fixtures, err)
		}
		return nil, fmt.Errorf("open the Job (provider %s): %w", js.o.Models[0].Provider, err)
	}
	return &evalJob{ws: ws, kit: kit}, nil
}
