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
	only := fs.String("only", "", "run only the histories whose name or fault kind contains this")
	keep := fs.String("keep", "", "leave the histories' worlds in this directory")
	asJSON := fs.Bool("json", false, "print the summary as one JSON object")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *seeds < 1 {
		env.Errorf("faults run: --seeds must be at least 1")
		return ExitUsage
	}
	progress := env.Stderr
	sum, err := faults.Run(ctx, faults.Options{Seeds: *seeds, Only: *only, Dir: *keep, Progress: progress})
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
