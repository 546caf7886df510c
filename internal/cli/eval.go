package cli

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/eval"
	"github.com/roadmap-dev/roadmap/internal/llm"
)

// runEvalGates is `roadmap eval gates [--golden DIR] [--skip-gate NAME]…
// [--floor X] [--json]`: the stage golden set's hand-written plans judged by
// plan.Validate and the plan gates, scored by F1 and OpenSpec validity
// (docs/eval.md). Exit 0 at or above the floor, 1 below it, 2 for a bad
// command line or a case that does not parse.
func runEvalGates(ctx context.Context, env *Env, args []string) int {
	return runEval(ctx, env, args, evalVerb{name: "eval gates", dirFlag: "golden", dirDefault: filepath.Join("testdata", "golden", "stage"),
		skipGates: true,
		floorOf:   func(c *config.Config) float64 { return c.Eval.Gates.Floor },
		score: func(ctx context.Context, o eval.Options) (any, float64, bool, error) {
			rep, err := eval.Gates(ctx, o)
			if err != nil {
				return nil, 0, false, err
			}
			return rep, rep.Score, rep.Passed, nil
		}})
}

// runEvalStage is `roadmap eval stage [--golden DIR] [--provider P --model M
// [--base-url URL]] [--floor X] [--json]`: the planner writes a plan for each
// case's issue in a real stage Job, scored by its failing findings, OpenSpec
// validity and the case's facts (docs/eval.md).
func runEvalStage(ctx context.Context, env *Env, args []string) int {
	return runEval(ctx, env, args, evalVerb{name: "eval stage", dirFlag: "golden", dirDefault: filepath.Join("testdata", "golden", "stage"), models: true,
		floorOf: func(c *config.Config) float64 { return c.Eval.Stage.Floor },
		score: func(ctx context.Context, o eval.Options) (any, float64, bool, error) {
			rep, err := eval.Stage(ctx, o)
			if err != nil {
				return nil, 0, false, err
			}
			return rep, rep.Score, rep.Passed, nil
		}})
}

// runEvalImplement is `roadmap eval implement [--golden DIR] [--provider P
// --model M [--base-url URL]] [--floor X] [--json]`: the implement golden
// set run through the real implement Job and scored FULL, PARTIAL or NO
// (docs/eval.md).
func runEvalImplement(ctx context.Context, env *Env, args []string) int {
	return runEval(ctx, env, args, evalVerb{name: "eval implement", dirFlag: "golden", dirDefault: filepath.Join("testdata", "golden", "implement"), models: true,
		floorOf: func(c *config.Config) float64 { return c.Eval.Implement.Floor },
		score: func(ctx context.Context, o eval.Options) (any, float64, bool, error) {
			rep, err := eval.Implement(ctx, o)
			if err != nil {
				return nil, 0, false, err
			}
			return rep, rep.Score, rep.Passed, nil
		}})
}

// evalVerb is what the eval verbs differ in.
type evalVerb struct {
	name, dirFlag, dirDefault string
	// models: the verb runs Jobs, so it takes --provider, --model and
	// --base-url, and the configuration's models.
	models bool
	// skipGates: the verb takes --skip-gate (the gates' eval).
	skipGates bool
	floorOf   func(*config.Config) float64
	score     func(context.Context, eval.Options) (any, float64, bool, error)
}

// evalOptions are an eval verb's flags, parsed.
type evalOptions struct {
	Dir, FloorText       string
	Provider, Model, URL string
	SkipGates            []string
	JSON                 bool
}

func runEval(ctx context.Context, env *Env, args []string, v evalVerb) int {
	return evalCmd(ctx, env.factory(), args, v, evalRun)
}

// evalCmd parses eval verb v's flags into its options, then calls runF.
func evalCmd(ctx context.Context, f *Factory, args []string, v evalVerb, runF func(context.Context, *Factory, evalVerb, *evalOptions) int) int {
	env, o := f.env, &evalOptions{}
	fs := newFlags(env, v.name)
	fs.StringVar(&o.Dir, v.dirFlag, v.dirDefault, "the golden set: a directory per case")
	fs.StringVar(&o.FloorText, "floor", "", "the overall score (0 to 1) to reach; default the configuration's eval floor, else 0")
	fs.StringVar(&f.ConfigPath, "config", "", "the configuration file (default "+config.DefaultPath+" when it exists): the floor, and its models: and prices: when it sets models:")
	fs.BoolVar(&o.JSON, "json", false, "print every case's score and the overall score as JSON")
	usage := fmt.Sprintf("usage: roadmap %s [--%s DIR] [--floor X] [--config FILE] [--json]", v.name, v.dirFlag)
	if v.models {
		fs.StringVar(&o.Provider, "provider", "", "the model's provider: replay (default: each case's recorded exchanges), github-models, openai, openai-compatible, anthropic")
		fs.StringVar(&o.Model, "model", "", "the model's name (with --provider)")
		fs.StringVar(&o.URL, "base-url", "", "the provider's endpoint (openai-compatible needs it)")
		usage = fmt.Sprintf("usage: roadmap %s [--%s DIR] [--provider P --model M [--base-url URL]] [--floor X] [--config FILE] [--json]", v.name, v.dirFlag)
	}
	if v.skipGates {
		fs.StringArrayVar(&o.SkipGates, "skip-gate", nil, "leave this plan gate out (repeatable): see that each gate matters to the score")
	}
	fs.Usage = func() { env.Errorf("%s", usage) }
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 0 {
		fs.Usage()
		return ExitUsage
	}
	// The configuration is the working directory's, not the workspace's.
	f.Workdir = "."
	return runF(ctx, f, v, o)
}

// evalRun scores the golden set and says whether it reached the floor.
func evalRun(ctx context.Context, f *Factory, v evalVerb, o *evalOptions) int {
	env, name := f.env, v.name
	eo, code := f.evalSetup(v, o)
	if code != ExitOK {
		return code
	}
	started := f.Now()
	rep, got, passed, err := v.score(ctx, eo)
	if err != nil {
		env.Errorf("%s: %v", name, err)
		return ExitUsage
	}
	if s, ok := rep.(stamper); ok {
		provider, model := llm.ProviderReplay, ""
		if len(eo.Models) > 0 {
			provider, model = eo.Models[0].Provider, eo.Models[0].Name
		} else if !v.models {
			provider = ""
		}
		s.Stamp(strings.TrimPrefix(name, "eval "), provider, model, started)
	}
	if o.JSON {
		if code := env.JSON(rep); code != ExitOK {
			return code
		}
	} else {
		fmt.Fprintf(env.Stdout, "score %.4f, floor %.4f\n", got, eo.Floor)
	}
	if !passed {
		env.Errorf("%s: the score %.4f is below the floor %.4f", name, got, eo.Floor)
		return ExitFindings
	}
	return ExitOK
}

// evalSetup is what the suite runs with: the floor, and for a verb that
// runs Jobs the models, their prices and the isolation they run behind.
func (f *Factory) evalSetup(v evalVerb, o *evalOptions) (eval.Options, int) {
	env, name := f.env, v.name
	cfg, err := f.Config()
	if err != nil {
		env.Errorf("%s: %v", name, err)
		return eval.Options{}, ExitUsage
	}
	floor := v.floorOf(cfg)
	if o.FloorText != "" {
		fl, err := strconv.ParseFloat(o.FloorText, 64)
		if err != nil || math.IsNaN(fl) || fl < 0 || fl > 1 {
			env.Errorf("%s: --floor %q is not a number from 0 to 1", name, o.FloorText)
			return eval.Options{}, ExitUsage
		}
		floor = fl
	}
	eo := eval.Options{Dir: o.Dir, Floor: floor, SkipGates: o.SkipGates, TempDir: env.Getenv("RUNNER_TEMP"),
		Progress: func(format string, a ...any) { env.Errorf(format, a...) }}
	if !v.models {
		return eo, ExitOK
	}
	models, prices, err := evalModels(f.ConfigPath, cfg, o.Provider, o.Model, o.URL)
	if err != nil {
		env.Errorf("%s: %v", name, err)
		return eval.Options{}, ExitUsage
	}
	eo.Models, eo.Prices, eo.Getenv = models, prices, env.Getenv
	if len(models) > 0 {
		// A model of one's own is an attacker's, and this process
		// holds its key: its code runs behind the configuration's
		// boundary (default auto), as in a real Job.
		eo.Isolation = cfg.Isolation
		if eo.Isolation == "" {
			eo.Isolation = config.IsolationAuto
		}
		env.Errorf("%s: model %s (%s), isolation %s", name, models[0].Name, models[0].Provider, eo.Isolation)
	}
	return eo, ExitOK
}

// stamper is a report that takes its suite, model and start (eval.Report).
type stamper interface {
	Stamp(suite, provider, model string, started time.Time)
}

// evalModels is the model an eval's Jobs use: --provider and --model (with
// --base-url), else the configuration's models: when the file sets them,
// else none (the replay provider over each case's recorded exchanges, CI's
// default). Prices come from the configuration's prices:.
func evalModels(path string, cfg *config.Config, provider, model, baseURL string) ([]config.Model, map[string]config.Price, error) {
	switch {
	case provider == "" && (model != "" || baseURL != ""):
		return nil, nil, fmt.Errorf("--model and --base-url need --provider")
	case provider == llm.ProviderReplay:
		if model != "" || baseURL != "" {
			return nil, nil, fmt.Errorf("--provider replay plays each case's recorded exchanges: it takes no --model or --base-url")
		}
		return nil, nil, nil
	case provider != "":
		m := config.Model{Provider: provider, Name: model, BaseURL: baseURL}
		// The configuration's own tier of that name keeps its key variable
		// and windows.
		for _, c := range cfg.Models {
			if c.Provider == provider && c.Name == model {
				m.APIKeyEnv, m.InputWindow, m.MaxOutput = c.APIKeyEnv, c.InputWindow, c.MaxOutput
				if baseURL == "" {
					m.BaseURL = c.BaseURL
				}
			}
		}
		switch {
		case model == "":
			return nil, nil, fmt.Errorf("--provider %s needs --model", provider)
		case provider == llm.ProviderOpenAICompatible && m.BaseURL == "":
			return nil, nil, fmt.Errorf("--provider %s needs --base-url", provider)
		case provider != llm.ProviderGitHubModels && provider != llm.ProviderOpenAI && provider != llm.ProviderOpenAICompatible && provider != llm.ProviderAnthropic:
			return nil, nil, fmt.Errorf("unknown --provider %q (replay, github-models, openai, openai-compatible, anthropic)", provider)
		}
		return []config.Model{m}, cfg.Prices, nil
	}
	if !setsModels(path) {
		return nil, nil, nil
	}
	return cfg.Models, cfg.Prices, nil
}

// setsModels reports whether the configuration file at path sets models:
// itself (the defaults' ladder is not a choice to run the eval on).
func setsModels(path string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var top map[string]yaml.Node
	if yaml.Unmarshal(data, &top) != nil {
		return false
	}
	_, ok := top["models"]
	return ok
}
