package cli

import (
	"context"
	"fmt"

	"github.com/roadmap-dev/roadmap/internal/faults"
)

// runFaultsRun is `roadmap faults run`: the fault-injection suite
// (docs/reliability.md). Exit 1 on any violation.
func runFaultsRun(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "faults run")
	seeds := fs.Int("seeds", faults.DefaultSeeds, "how many seeds to run; each plays every history twice")
	firstSeed := fs.Int64("first-seed", 1, "the first seed played (the run plays --seeds seeds from it)")
	only := fs.String("only", "", "run only the histories whose name or fault kind contains this")
	keep := fs.String("keep", "", "leave the histories' worlds in this directory")
	asJSON := fs.Bool("json", false, "print the summary as one JSON object")
	sample := fs.Int("sample", 0, "with --cover: play this many more, chosen by --key")
	cover := fs.Bool("cover", false, "play the per-change cover: one history of every fault kind (in process, and of every recovery branch), chosen by --key")
	key := fs.String("key", "", "with --cover: what turns the choice (CI passes the commit); the same key plays the same histories")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *sample != 0 && !*cover {
		env.Errorf("faults run: --sample needs --cover")
		return ExitUsage
	}
	if *sample < 0 {
		env.Errorf("faults run: --sample must not be negative")
		return ExitUsage
	}
	if *seeds < 1 {
		env.Errorf("faults run: --seeds must be at least 1")
		return ExitUsage
	}
	if *firstSeed < 1 {
		env.Errorf("faults run: --first-seed must be at least 1")
		return ExitUsage
	}
	progress := env.Stderr
	sum, err := faults.Run(ctx, faults.Options{Seeds: *seeds, FirstSeed: *firstSeed, Only: *only, Dir: *keep, Progress: progress,
		Cover: *cover, Key: *key, Extra: *sample})
	if err != nil {
		env.Errorf("faults run: %v", err)
		return ExitInternal
	}
	if *asJSON {
		if code := env.JSON(sum); code != ExitOK {
			return code
		}
	} else {
		sum.Print(env.Stdout)
	}
	if len(sum.Violations) > 0 {
		env.Errorf("faults run: %d violation(s)", len(sum.Violations))
		return ExitFindings
	}
	fmt.Fprintf(env.Stderr, "faults run: %d histories, %d faults injected, %d recovered, no violation\n", sum.Histories, sum.Injected, sum.Recovered)
	return ExitOK
}
