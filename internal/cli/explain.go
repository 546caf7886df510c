package cli

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/explain"
)

// runExplain says what ran for an issue, what it cost and what waits:
// `roadmap explain ISSUE [-R OWNER/REPO] [--trace] [--trace-file F]
// [--state DIR] [--json]`. The reading and the rendering are
// internal/explain's; this file picks where to read from.
//
// Offline: --state reads a saved fake GitHub (a kept demo's directory), and
// --trace-file with no repository named reads the state saved beside the
// trace file when there is one, else the trace alone. Neither needs
// GITHUB_REPOSITORY or a token.
func runExplain(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "explain")
	withTrace := fs.Bool("trace", false, "also print the last run's events in order (from the record's implement.trace)")
	traceFile := fs.String("trace-file", "", "read the events from the JSONL trace artifact `FILE` instead (the newest Job in it); implies --trace")
	state := fs.String("state", "", "read the issue from a saved fake GitHub state: a `DIR` kept by 'roadmap demo --keep DIR', or its "+explain.StateFile)
	asJSON := fs.Bool("json", false, "print one JSON object")
	repoFlag(fs, env)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	pos := fs.Args()
	if len(pos) != 1 {
		env.Errorf("usage: roadmap explain ISSUE [-R OWNER/REPO] [--trace] [--trace-file FILE] [--state DIR] [--json]")
		return ExitUsage
	}
	issue, err := strconv.Atoi(strings.TrimPrefix(pos[0], "#"))
	if err != nil || issue <= 0 {
		env.Errorf("%q is not an issue number", pos[0])
		return ExitUsage
	}
	o := explain.Options{Issue: issue, Trace: *withTrace, TraceFile: *traceFile, Repository: env.Getenv("GITHUB_REPOSITORY")}

	if *state == "" && *traceFile != "" && o.Repository == "" {
		beside := filepath.Join(filepath.Dir(*traceFile), explain.StateFile)
		if _, err := os.Stat(beside); err == nil {
			*state = beside
		}
	}
	switch {
	case *state != "":
		if !strings.Contains(o.Repository, "/") {
			o.Repository = "the saved state " + *state
		}
		o.State = *state
	case *traceFile != "" && o.Repository == "":
		// The trace file alone.
	default:
		if o.GitHub, err = env.factory().GitHub(); err != nil {
			env.Errorf("%v", err)
			return ExitUsage
		}
		o.Repository = env.Getenv("GITHUB_REPOSITORY") // perhaps from the origin remote
	}

	out, note, err := explain.Explain(ctx, o)
	if err != nil {
		return explainFailed(env, err)
	}
	if note != "" {
		env.Errorf("%s", note)
	}
	if *asJSON {
		return env.JSON(out)
	}
	if err := explain.Print(env.Stdout, out); err != nil {
		env.Errorf("write: %v", err)
		return ExitInternal
	}
	return ExitOK
}

func explainFailed(env *Env, err error) int {
	env.Errorf("%v", err)
	return exitFor(err)
}
