package world

import (
	"context"
	"fmt"
	"net/http"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/git"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/policy"
	"github.com/roadmap-dev/roadmap/internal/sandbox"
)

// ModelName is the replay model's name in a Job's tiers and prices.
const ModelName = "replay-model"

// Job is what one Job finds on a new runner: a fresh clone of the remote,
// the repository opened on it, a GitHub client of the fake, the tool sandbox
// on the workspace and the replay model over its recorded exchanges. How
// the Job is wired from them is its caller's. Close ends the sandbox.
type Job struct {
	Workspace string
	Repo      *git.Repo
	GitHub    *github.Client
	// Sandbox is the `isolation: none` boundary under the default policy:
	// the commands are recorded ones, run by the caller's own user.
	Sandbox *policy.Sandbox
	// Model is the replay model in process, named ModelName.
	Model agent.Model

	boundary *sandbox.Boundary
}

// Close closes the Job's sandbox boundary.
func (j *Job) Close() error { return j.boundary.Close() }

// NewJob clones the remote into Dir/name and opens a Job's parts there,
// its model answering from the conversations in the directory fixtures.
func (w *World) NewJob(ctx context.Context, name, fixtures string) (*Job, error) {
	ws, err := w.Workspace(name)
	if err != nil {
		return nil, err
	}
	repo, err := git.Open(ctx, ws, w.env)
	if err != nil {
		return nil, err
	}
	gh, err := w.GitHub(&http.Transport{DisableKeepAlives: true})
	if err != nil {
		return nil, err
	}
	b, err := sandbox.Open(ctx, sandbox.Options{Mode: sandbox.ModeNone, Workspace: ws, Environ: w.env})
	if err != nil {
		return nil, err
	}
	model, err := llm.New(llm.Config{Provider: llm.ProviderReplay, Model: ModelName, Fixtures: fixtures,
		Prices: map[string]llm.Price{ModelName: w.o.ModelPrice}})
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("the recorded exchanges in %s: %w", fixtures, err)
	}
	return &Job{Workspace: ws, Repo: repo, GitHub: gh, Sandbox: policy.NewSandbox(b, policy.Default(), w.env), Model: model, boundary: b}, nil
}
