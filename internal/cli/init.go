package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/adopt"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/dashboard"
	"github.com/roadmap-dev/roadmap/internal/llm"
)

// initOptions are `roadmap init`'s flags, parsed.
type initOptions struct {
	Dir, Ref, EvalModel string
	Provider            string
	// Pin is what the workflows pin roadmap to: --ref as given, else the
	// commit this roadmap was built from (adopt.PinFor).
	Pin                        adopt.Pin
	DryRun, JSON, EvalWorkflow bool
	AgentsMD                   bool
}

// runInit sets a repository up for roadmap: `roadmap init [-R OWNER/REPO]
// [--workdir DIR] [--provider PROVIDER] [--dry-run] [--json]`. The work is internal/adopt's. With
// --json, stdout is the one object adopt.Result (docs/cli.md) and the
// progress lines go to stderr.
func runInit(ctx context.Context, env *Env, args []string) int {
	return initCmd(ctx, env.factory(), args, initRun)
}

// initCmd parses init's flags into its options, then calls runF.
func initCmd(ctx context.Context, f *Factory, args []string, runF func(context.Context, *Factory, *initOptions) int) int {
	env, o := f.env, &initOptions{}
	fs := newFlags(env, "init")
	fs.StringVarP(&o.Dir, "workdir", "C", "", "the repository checkout (default $GITHUB_WORKSPACE or .)")
	fs.BoolVar(&o.DryRun, "dry-run", false, "print the files, labels and issue init would write and create, and make none of them")
	fs.BoolVar(&o.JSON, "json", false, "print what init did as one JSON object on stdout (docs/cli.md)")
	fs.StringVar(&o.Ref, "ref", "", "the `REF` the workflows pin roadmap to: a release's tag or a commit SHA (default: the commit this roadmap was built from, commented with its version)")
	fs.BoolVar(&o.EvalWorkflow, "eval-workflow", false, "also write "+adopt.EvalPath+": the golden suites weekly on GitHub Models, their scores posted to the dashboard (docs/eval.md)")
	fs.StringVar(&o.EvalModel, "eval-model", "", "the GitHub Models `MODEL` the eval workflow runs (default: the configuration's first github-models model)")
	fs.StringVar(&o.Provider, "provider", adopt.DefaultProvider, "the model `PROVIDER` whose two-tier ladder the configuration holds: github-models, openai or anthropic (docs/models.md)")
	fs.BoolVar(&o.AgentsMD, "agents-md", false, "also write a short "+adopt.AgentsPath+" to fill in when the repository has no instructions file (docs/agent.md)")
	repoFlag(fs, env)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		env.Errorf("usage: roadmap init [-R OWNER/REPO] [--workdir DIR] [--provider PROVIDER] [--eval-workflow [--eval-model MODEL]] [--agents-md] [--dry-run] [--json]")
		return ExitUsage
	}
	if _, err := adopt.FindProvider(o.Provider); err != nil {
		env.Errorf("--provider: %v", err)
		return ExitUsage
	}
	if o.EvalModel != "" && !o.EvalWorkflow {
		env.Errorf("--eval-model needs --eval-workflow")
		return ExitUsage
	}
	// --ref as given; else this build's commit, never a tag that may not exist.
	o.Pin = adopt.Pin{Ref: o.Ref}
	if o.Ref == "" {
		b := f.Build()
		o.Pin = adopt.PinFor(b.Version, b.Commit, b.Modified)
	}
	return runF(ctx, f, o)
}

// initRun sets the repository up as o says.
func initRun(ctx context.Context, f *Factory, o *initOptions) int {
	env := f.env
	wd := env.workdir(o.Dir)
	env.repoDir = wd
	model, code := initEvalModel(env, wd, o.EvalWorkflow, o.EvalModel)
	if code != ExitOK {
		return code
	}
	gh, err := f.GitHub()
	if err != nil {
		env.Errorf("%v", err)
		return ExitUsage
	}
	out := env.Stdout
	if o.JSON {
		out = env.Stderr
	}
	ao := adopt.Options{Dir: wd, GitHub: gh, Repository: env.Getenv("GITHUB_REPOSITORY"),
		Server: firstSet(env.Getenv("GITHUB_SERVER_URL"), "https://github.com"), Pin: o.Pin, DryRun: o.DryRun, Out: out, Now: f.Now(), EvalModel: model, AgentsStub: o.AgentsMD, Provider: o.Provider}
	if !o.DryRun {
		if err := initForewarn(ctx, ao); err != nil {
			env.Errorf("%v", err)
			return ExitInternal
		}
	}
	res, err := adopt.Run(ctx, ao)
	if err != nil {
		env.Errorf("%v", err)
		return ExitInternal
	}
	if o.JSON {
		return env.JSON(res)
	}
	return ExitOK
}

// configEvalModel is the model the eval workflow runs when --eval-model
// names none: the repository configuration's first github-models model,
// else the defaults' (the configuration init writes sets no models).
func configEvalModel(dir string) (string, error) {
	cfg, path, err := loadConfig("", dir)
	if err != nil {
		return "", err
	}
	for _, m := range append(cfg.Models, config.Default().Models...) {
		if m.Provider == llm.ProviderGitHubModels && m.Name != "" {
			return m.Name, nil
		}
	}
	return "", fmt.Errorf("%s names no github-models model: name one with --eval-model", path)
}

// initEvalModel is the model the eval workflow runs: --eval-model, else
// the configuration's (configEvalModel); "" without --eval-workflow.
func initEvalModel(env *Env, wd string, evalWorkflow bool, evalModel string) (string, int) {
	if !evalWorkflow {
		return "", ExitOK
	}
	model := evalModel
	if model == "" {
		m, err := configEvalModel(wd)
		if err != nil {
			env.Errorf("%v", err)
			return "", ExitUsage
		}
		model = m
	}
	if !dashboard.ValidModelName(model) {
		env.Errorf("--eval-model %q is not a model's name (such as openai/gpt-4o-mini)", model)
		return "", ExitUsage
	}
	return model, ExitOK
}

// initForewarn says, before init makes anything, what it will create on
// GitHub: the labels the repository lacks and the dashboard issue when none
// is open. These land on GitHub at once, before the person has committed
// the files, so they are named first. It learns them from a dry run
// (reads only) and says nothing when there is nothing to create.
func initForewarn(ctx context.Context, o adopt.Options) error {
	out := o.Out
	o.DryRun, o.Out = true, io.Discard
	plan, err := adopt.Run(ctx, o)
	if err != nil {
		return err
	}
	var labels []string
	for _, l := range plan.Labels {
		if l.Status == adopt.Created {
			labels = append(labels, l.Name)
		}
	}
	var what []string
	if len(labels) > 0 {
		what = append(what, fmt.Sprintf("%d label(s) (%s)", len(labels), strings.Join(labels, ", ")))
	}
	if plan.Dashboard.Status == adopt.Created {
		what = append(what, fmt.Sprintf("the dashboard issue %q", dashboard.Title))
	}
	if len(what) == 0 {
		return nil
	}
	fmt.Fprintf(out, "roadmap init: on GitHub, in %s, this makes now: %s; the files follow in the work tree, for you to commit (roadmap init --dry-run shows it all and makes nothing)\n",
		o.Repository, strings.Join(what, " and "))
	return nil
}
