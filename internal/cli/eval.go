package cli

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strconv"

	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/eval"
)

// runEvalStage is `roadmap eval stage [--golden DIR] [--floor X] [--json]`:
// the stage golden set scored (docs/eval.md). Exit 0 at or above the floor,
// 1 below it, 2 for a bad command line or a case that does not parse.
func runEvalStage(ctx context.Context, env *Env, args []string) int {
	return runEval(ctx, env, args, "eval stage", "golden", filepath.Join("testdata", "golden", "stage"),
		func(c *config.Config) float64 { return c.Eval.Stage.Floor },
		func(ctx context.Context, o eval.Options) (any, float64, bool, error) {
			rep, err := eval.Stage(ctx, o)
			if err != nil {
				return nil, 0, false, err
			}
			return rep, rep.Score, rep.Passed, nil
		})
}

// runEvalImplement is `roadmap eval implement [--fixtures DIR] [--floor X]
// [--json]`: the implement golden set replayed through the real implement
// Job and scored FULL, PARTIAL or NO (docs/eval.md).
func runEvalImplement(ctx context.Context, env *Env, args []string) int {
	return runEval(ctx, env, args, "eval implement", "golden", filepath.Join("testdata", "golden", "implement"),
		func(c *config.Config) float64 { return c.Eval.Implement.Floor },
		func(ctx context.Context, o eval.Options) (any, float64, bool, error) {
			rep, err := eval.Implement(ctx, o)
			if err != nil {
				return nil, 0, false, err
			}
			return rep, rep.Score, rep.Passed, nil
		})
}

func runEval(ctx context.Context, env *Env, args []string, name, dirFlag, dirDefault string,
	floorOf func(*config.Config) float64, score func(context.Context, eval.Options) (any, float64, bool, error)) int {
	fs := newFlags(env, name)
	dir := fs.String(dirFlag, dirDefault, "the golden set: a directory per case")
	floorText := fs.String("floor", "", "the overall score (0 to 1) to reach; default the configuration's eval floor, else 0")
	cfgPath := fs.String("config", "", "the configuration file (default "+config.DefaultPath+" when it exists)")
	asJSON := fs.Bool("json", false, "print every case's score and the overall score as JSON")
	fs.Usage = func() {
		env.Errorf("usage: roadmap %s [--%s DIR] [--floor X] [--config FILE] [--json]", name, dirFlag)
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 0 {
		fs.Usage()
		return ExitUsage
	}
	var floor float64
	if *floorText != "" {
		f, err := strconv.ParseFloat(*floorText, 64)
		if err != nil || math.IsNaN(f) || f < 0 || f > 1 {
			env.Errorf("%s: --floor %q is not a number from 0 to 1", name, *floorText)
			return ExitUsage
		}
		floor = f
	} else {
		load := config.LoadExplicit
		if *cfgPath == "" {
			*cfgPath, load = config.DefaultPath, config.Load
		}
		cfg, err := load(*cfgPath)
		if err != nil {
			env.Errorf("%s: %v", name, err)
			return ExitUsage
		}
		floor = floorOf(cfg)
	}
	o := eval.Options{Dir: *dir, Floor: floor, TempDir: env.Getenv("RUNNER_TEMP"),
		Progress: func(format string, a ...any) { env.Errorf(format, a...) }}
	rep, got, passed, err := score(ctx, o)
	if err != nil {
		env.Errorf("%s: %v", name, err)
		return ExitUsage
	}
	if *asJSON {
		if code := env.JSON(rep); code != ExitOK {
			return code
		}
	} else {
		fmt.Fprintf(env.Stdout, "score %.4f, floor %.4f\n", got, floor)
	}
	if !passed {
		env.Errorf("%s: the score %.4f is below the floor %.4f", name, got, floor)
		return ExitFindings
	}
	return ExitOK
}
