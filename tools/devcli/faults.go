package devcli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/roadmap-dev/roadmap/tools/faultproc"
)

// runFaultsProcess is `roadmap-dev faults process`: the roadmap binary
// (--binary, else the one beside roadmap-dev, as `make build` lays them
// out), run as a workflow's steps run it, faulted from outside
// (docs/reliability.md, "The process histories"). Exit 1 on any violation.
func runFaultsProcess(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "faults process")
	binary := fs.String("binary", "", "the roadmap binary every step runs (default: roadmap beside roadmap-dev)")
	sample := fs.Int("sample", 0, "play this many histories, spread over the sweep (0: the whole sweep); with --cover: this many more, chosen by --key")
	cover := fs.Bool("cover", false, "play one history of every kind not pending, chosen by --key")
	key := fs.String("key", "", "with --cover: what turns the choice (CI passes the commit); the same key plays the same histories")
	withPending := fs.Bool("pending", false, "also play the kinds that wait on a mend (listed, not counted)")
	only := fs.String("only", "", "run only the histories whose name or fault kind contains this")
	keep := fs.String("keep", "", "leave the histories' worlds in this directory")
	asJSON := fs.Bool("json", false, "print the summary as one JSON object")
	if code, ok := parseFlags(env, fs, args); !ok {
		return code
	}
	if fs.NArg() != 0 {
		env.Errorf("no arguments, only flags (see 'roadmap-dev faults process --help')")
		return ExitUsage
	}
	if *sample < 0 {
		env.Errorf("--sample must not be negative")
		return ExitUsage
	}
	bin := *binary
	if bin == "" {
		self, err := os.Executable()
		if err != nil {
			env.Errorf("the roadmap binary: %v", err)
			return ExitInternal
		}
		bin = filepath.Join(filepath.Dir(self), "roadmap")
	}
	if st, err := os.Stat(bin); err != nil || st.IsDir() {
		env.Errorf("the roadmap binary %s: not found (build it, or name it with --binary)", bin)
		return ExitUsage
	}
	o := faultproc.ProcessOptions{Binary: bin, Sample: *sample, Cover: *cover, Key: *key, Pending: *withPending, Only: *only, Dir: *keep, Progress: env.Stderr}
	sum, err := faultproc.RunProcess(ctx, o)
	if err != nil {
		env.Errorf("%v", err)
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
		env.Errorf("%d violation(s)", len(sum.Violations))
		return ExitFindings
	}
	fmt.Fprintf(env.Stderr, "faults process: %d histories, %d kill points, %d faults, %d recovered, no violation\n",
		sum.Histories, sum.KillPoints, sum.Faults, sum.Recovered)
	return ExitOK
}
