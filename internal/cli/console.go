package cli

import (
	"context"
	"time"

	"github.com/roadmap-dev/roadmap/internal/clock"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/console"
)

// consoleOptions are `roadmap console`'s flags, parsed.
type consoleOptions struct {
	Issue                int
	Follow, JSON         bool
	Interval, JobTimeout time.Duration
	State                string
	Budget               float64
}

// runConsole shows one item's timeline across its Jobs, and with --follow
// what lands as the running Job goes on: `roadmap console ISSUE
// [-R OWNER/REPO] [--follow] [--interval D] [--json] [--state DIR]`. The
// reading is internal/console's; this file picks where to read from and
// how to print.
func runConsole(ctx context.Context, env *Env, args []string) int {
	return consoleCmd(ctx, env.factory(), args, consoleRun)
}

// consoleCmd parses console's flags into its options, then calls runF.
func consoleCmd(ctx context.Context, f *Factory, args []string, runF func(context.Context, *Factory, *consoleOptions) int) int {
	env, o := f.env, &consoleOptions{}
	fs := newFlags(env, "console")
	fs.BoolVar(&o.Follow, "follow", false, "keep polling until the item's last Job has ended for good (or Ctrl-C)")
	fs.DurationVar(&o.Interval, "interval", console.DefaultInterval, "how long --follow waits between polls")
	fs.BoolVar(&o.JSON, "json", false, "print NDJSON: one event object a line")
	fs.StringVar(&o.State, "state", "", "read the item from a saved fake GitHub state: a `DIR` kept by 'roadmap demo --keep DIR', or its "+console.StateFile)
	fs.Float64Var(&o.Budget, "budget", config.Default().Budgets.Item.USD, "the item budget in USD the status line holds the spend against")
	fs.DurationVar(&o.JobTimeout, "job-timeout", 6*time.Hour, "how long a Job may run (its workflow's timeout-minutes); the status line shows the time left")
	repoFlag(fs, env)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	var ok bool
	if o.Issue, ok = issueArg(env, fs.Args(), "usage: roadmap console ISSUE [-R OWNER/REPO] [--follow] [--interval D] [--json] [--state DIR]"); !ok {
		return ExitUsage
	}
	if o.Interval <= 0 {
		env.Errorf("--interval %s: must be positive", o.Interval)
		return ExitUsage
	}
	return runF(ctx, f, o)
}

// consoleRun reads the item from the saved state or GitHub and prints its
// timeline.
func consoleRun(ctx context.Context, f *Factory, o *consoleOptions) int {
	env := f.env
	co := console.Options{Issue: o.Issue, Mask: f.Masker(), Clock: clock.Real{}, Budget: o.Budget, JobTimeout: o.JobTimeout, Interval: o.Interval}
	if o.State != "" {
		st, err := console.ReadState(o.State)
		if err != nil {
			env.Errorf("%v", err)
			return ExitUsage
		}
		co.Source = st
	} else {
		gh, err := f.GitHub()
		if err != nil {
			env.Errorf("%v", err)
			return ExitUsage
		}
		co.Source = gh
	}
	return consoleWatch(ctx, env, console.New(co), o.Follow, o.JSON)
}

// consoleWatch prints the timeline once, or follows it until ctx ends.
func consoleWatch(ctx context.Context, env *Env, c *console.Console, follow, asJSON bool) int {
	write := console.WriteText
	if asJSON {
		write = console.WriteJSON
	}
	emit := func(evs []console.Event) error { return write(env.Stdout, evs) }
	var err error
	if follow {
		err = c.Follow(ctx, emit)
	} else {
		var evs []console.Event
		if evs, _, err = c.Poll(ctx); err == nil {
			err = emit(evs)
		}
	}
	if err != nil {
		env.Errorf("%v", err)
		return exitFor(err)
	}
	return ExitOK
}
