package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
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
		explore(env.Stdout, *keep, sum.Issue)
	}
	if sum.Result != record.ResultReady || !sum.SpendMatches() {
		env.Errorf("demo: the item ended %s (spend matches: %v)", sum.Result, sum.SpendMatches())
		return ExitFindings
	}
	return ExitOK
}

// explore says how to look at what the demo left with roadmap's own tools.
func explore(w io.Writer, keep string, issue int) {
	if keep == "" {
		fmt.Fprintln(w, "\nto explore what it leaves, run it again with --keep DIR")
		return
	}
	fmt.Fprintf(w, "\nexplore what it left (no token needed):\n")
	fmt.Fprintf(w, "  roadmap explain %d --state %s                         what ran, what it cost, what waits\n", issue, keep)
	fmt.Fprintf(w, "  roadmap explain %d --trace-file %s  the events of the continuation Job\n", issue, filepath.Join(keep, "trace-job-2.jsonl"))
	fmt.Fprintf(w, "  roadmap explain %d --trace-file %s  the Job that was killed\n", issue, filepath.Join(keep, "trace-job-1.jsonl"))
	fmt.Fprintf(w, "  git -C %s log --oneline --all                the branches and commits\n", filepath.Join(keep, "remote.git"))
}
