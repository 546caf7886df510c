package cli

import (
	"context"
	"fmt"
	"regexp"

	"github.com/roadmap-dev/roadmap/internal/adopt"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/dashboard"
	"github.com/roadmap-dev/roadmap/internal/llm"
)

// runInit sets a repository up for roadmap: `roadmap init [-R OWNER/REPO]
// [--workdir DIR] [--dry-run] [--json]`. The work is internal/adopt's. With
// --json, stdout is the one object adopt.Result (docs/cli.md) and the
// progress lines go to stderr.
func runInit(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "init")
	dir := fs.StringP("workdir", "C", "", "the repository checkout (default $GITHUB_WORKSPACE or .)")
	dryRun := fs.Bool("dry-run", false, "print the files and changes without making them")
	asJSON := fs.Bool("json", false, "print what init did as one JSON object on stdout (docs/cli.md)")
	ref := fs.String("ref", "", "the `REF` the workflows pin roadmap to (default: this release's tag, else v1)")
	evalWorkflow := fs.Bool("eval-workflow", false, "also write "+adopt.EvalPath+": the golden suites weekly on GitHub Models, their scores posted to the dashboard (docs/eval.md)")
	evalModel := fs.String("eval-model", "", "the GitHub Models `MODEL` the eval workflow runs (default: the configuration's first github-models model)")
	repoFlag(fs, env)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		env.Errorf("usage: roadmap init [-R OWNER/REPO] [--workdir DIR] [--eval-workflow [--eval-model MODEL]] [--dry-run] [--json]")
		return ExitUsage
	}
	wd := env.workdir(*dir)
	env.repoDir = wd
	model, code := initEvalModel(env, wd, *evalWorkflow, *evalModel)
	if code != ExitOK {
		return code
	}
	if *ref == "" {
		*ref = "v1"
		if releaseTag.MatchString(Version) {
			*ref = Version
		}
	}
	f := env.factory()
	gh, err := f.GitHub()
	if err != nil {
		env.Errorf("%v", err)
		return ExitUsage
	}
	server := env.Getenv("GITHUB_SERVER_URL")
	if server == "" {
		server = "https://github.com"
	}
	out := env.Stdout
	if *asJSON {
		out = env.Stderr
	}
	res, err := adopt.Run(ctx, adopt.Options{Dir: wd, GitHub: gh, Repository: env.Getenv("GITHUB_REPOSITORY"),
		Server: server, Ref: *ref, DryRun: *dryRun, Out: out, Now: f.Now(), EvalModel: model})
	if err != nil {
		env.Errorf("%v", err)
		return ExitInternal
	}
	if *asJSON {
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

var releaseTag = regexp.MustCompile(`^v\d+\.\d+\.\d+$`)

// initEvalModel is the model the eval workflow runs: --eval-model, else
// the configuration's (configEvalModel); "" without --eval-workflow.
func initEvalModel(env *Env, wd string, evalWorkflow bool, evalModel string) (string, int) {
	if !evalWorkflow && evalModel == "" {
		return "", ExitOK
	}
	if !evalWorkflow {
		env.Errorf("--eval-model needs --eval-workflow")
		return "", ExitUsage
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
