package cli

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/clock"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/console"
)

// runConsole shows one item's timeline across its Jobs, and with --follow
// what lands as the running Job goes on: `roadmap console ISSUE
// [-R OWNER/REPO] [--follow] [--interval D] [--json] [--state DIR]`. The
// reading is internal/console's; this file picks where to read from and
// how to print.
func runConsole(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "console")
	follow := fs.Bool("follow", false, "keep polling until the item's last Job has ended for good (or Ctrl-C)")
	interval := fs.Duration("interval", console.DefaultInterval, "how long --follow waits between polls")
	asJSON := fs.Bool("json", false, "print NDJSON: one event object a line")
	state := fs.String("state", "", "read the item from a saved fake GitHub state: a `DIR` kept by 'roadmap demo --keep DIR', or its "+console.StateFile)
	budget := fs.Float64("budget", config.Default().Budgets.Item.USD, "the item budget in USD the status line holds the spend against")
	jobTimeout := fs.Duration("job-timeout", 6*time.Hour, "how long a Job may run (its workflow's timeout-minutes); the status line shows the time left")
	repoFlag(fs, env)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	pos := fs.Args()
	if len(pos) != 1 {
		env.Errorf("usage: roadmap console ISSUE [-R OWNER/REPO] [--follow] [--interval D] [--json] [--state DIR]")
		return ExitUsage
	}
	issue, err := strconv.Atoi(strings.TrimPrefix(pos[0], "#"))
	if err != nil || issue <= 0 {
		env.Errorf("%q is not an issue number", pos[0])
		return ExitUsage
	}
	if *interval <= 0 {
		env.Errorf("--interval %s: must be positive", *interval)
		return ExitUsage
	}
	f := env.factory()
	m := f.Masker()
	o := console.Options{Issue: issue, Mask: m, Clock: clock.Real{}, Budget: *budget, JobTimeout: *jobTimeout, Interval: *interval}
	if *state != "" {
		st, err := console.ReadState(*state)
		if err != nil {
			env.Errorf("%v", err)
			return ExitUsage
		}
		o.Source = st
	} else {
		gh, err := f.GitHub()
		if err != nil {
			env.Errorf("%v", err)
			return ExitUsage
		}
		o.Source = gh
	}
	return consoleWatch(ctx, env, console.New(o), *follow, *asJSON)
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
