package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/roadmap-dev/roadmap/internal/demo"
	"github.com/roadmap-dev/roadmap/internal/record"
)

func runDemo(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "demo")
	keep := fs.String("keep", "", "leave the demo's state (fake GitHub, repositories, traces) in this directory")
	asJSON := fs.Bool("json", false, "print the final state as one JSON object")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	self, err := os.Executable()
	if err != nil {
		env.Errorf("demo: find the roadmap binary: %v", err)
		return ExitInternal
	}
	progress := env.Stdout
	if *asJSON {
		progress = env.Stderr
	}
	fmt.Fprintln(progress, "roadmap demo: the life of an item, locally, against the fakes")
	start := time.Now()
	sum, err := demo.Run(ctx, demo.Options{
		Dir:      *keep,
		Progress: progress,
		Command: func(ctx context.Context, args []string) *exec.Cmd {
			return exec.CommandContext(ctx, self, args...)
		},
	})
	if err != nil {
		env.Errorf("demo: %v", err)
		return ExitInternal
	}
	if *keep == "" {
		sum.Dir = ""
	}
	if *asJSON {
		if code := env.JSON(sum); code != ExitOK {
			return code
		}
	} else {
		sum.Print(env.Stdout)
		fmt.Fprintf(env.Stdout, "\ndone in %.1fs\n", time.Since(start).Seconds())
	}
	if sum.Result != record.ResultReady || !sum.SpendMatches() {
		env.Errorf("demo: the item ended %s (spend matches: %v)", sum.Result, sum.SpendMatches())
		return ExitFindings
	}
	return ExitOK
}
