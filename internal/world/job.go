package world

import (
	"context"
	"io"
	"net/http"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/job"
	"github.com/roadmap-dev/roadmap/internal/kernel"
	"github.com/roadmap-dev/roadmap/internal/llm"
)

// ModelName is the replay model's name in a Job's tiers and prices.
const ModelName = "replay-model"

// Setup is what a Job on this world is built from with job.Open, as the
// binary builds one on a runner: the workspace, the environment a workflow
// step gives (the repository, the fake's API URL, the world's git
// environment), the fake's token, the world's clock, and the shipped
// configuration (config.Default) with the replay model as its one tier,
// under `isolation: none` (the world's models are recorded, not hostile).
// The model is the world's model server when it has one, else the
// in-process replay over the conversations in fixtures. Callers change what
// their Job differs in (the configuration, a part to replace) before Open.
func (w *World) Setup(phase kernel.Phase, workspace, fixtures string) job.Setup {
	env := map[string]string{"GITHUB_REPOSITORY": w.o.Owner + "/" + w.o.Repo, "GITHUB_API_URL": w.githubURL + "/", "RUNNER_TEMP": w.Dir}
	for _, kv := range w.env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	cfg := config.Default()
	cfg.Models = []config.Model{{Provider: llm.ProviderReplay, Name: ModelName, Fixtures: fixtures}}
	if w.modelURL != "" && fixtures == "" {
		cfg.Models = []config.Model{{Provider: llm.ProviderOpenAICompatible, Name: ModelName, BaseURL: w.ModelURL()}}
	}
	cfg.Prices = map[string]config.Price{ModelName: {Input: w.o.ModelPrice.Input, Output: w.o.ModelPrice.Output}}
	cfg.Isolation = config.IsolationNone
	s := job.Setup{
		Phase: phase, Issue: w.Issue, Dir: workspace,
		Config: cfg, ConfigPath: "the world's configuration", Env: env, Token: w.o.Token, PushToken: w.o.PushToken,
		TraceOut: io.Discard, Transport: &http.Transport{DisableKeepAlives: true},
	}
	if w.Clock != nil {
		s.Clock = w.Clock
	}
	return s
}

// OpenJob clones the remote into Dir/name, as a new runner would, and opens
// a Job there with job.Open from Setup, its model wrapped in a Spy and its
// trace written to traceOut (nil: discarded). The runner harnesses build
// their runner's options from the Kit's parts, so they test the parts the
// binary ships. The caller closes the Kit.
func (w *World) OpenJob(ctx context.Context, phase kernel.Phase, name, fixtures string, traceOut io.Writer) (*job.Kit, *Spy, error) {
	ws, err := w.Workspace(name)
	if err != nil {
		return nil, nil, err
	}
	s := w.Setup(phase, ws, fixtures)
	if traceOut != nil {
		s.TraceOut = traceOut
	}
	var spy *Spy
	s.WrapModel = func(m agent.Model) agent.Model { spy = &Spy{Model: m}; return spy }
	k, err := job.Open(ctx, s)
	if err != nil {
		return nil, nil, err
	}
	return k, spy, nil
}
