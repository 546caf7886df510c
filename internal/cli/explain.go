package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/explain"
)

// explainOptions are `roadmap explain`'s flags, parsed.
type explainOptions struct {
	Issue            int
	Trace            bool
	TraceFile, State string
	JSON             bool
}

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
	return explainCmd(ctx, env.factory(), args, explainRun)
}

// explainCmd parses explain's flags into its options, then calls runF.
func explainCmd(ctx context.Context, f *Factory, args []string, runF func(context.Context, *Factory, *explainOptions) int) int {
	env, o := f.env, &explainOptions{}
	fs := newFlags(env, "explain")
	fs.BoolVar(&o.Trace, "trace", false, "also print the last run's events in order (from the record's implement.trace)")
	fs.StringVar(&o.TraceFile, "trace-file", "", "read the events from the JSONL trace artifact `FILE` instead (the newest Job in it); implies --trace")
	fs.StringVar(&o.State, "state", "", "read the issue from a saved fake GitHub state: a `DIR` kept by 'roadmap demo --keep DIR', or its "+explain.StateFile)
	fs.BoolVar(&o.JSON, "json", false, "print one JSON object")
	repoFlag(fs, env)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	var ok bool
	if o.Issue, ok = issueArg(env, fs.Args(), "usage: roadmap explain ISSUE [-R OWNER/REPO] [--trace] [--trace-file FILE] [--state DIR] [--json]"); !ok {
		return ExitUsage
	}
	return runF(ctx, f, o)
}

// explainRun reads the issue where o says and prints what it found.
func explainRun(ctx context.Context, f *Factory, o *explainOptions) int {
	env := f.env
	eo, code := explainSource(f, o)
	if code != ExitOK {
		return code
	}
	out, note, err := explain.Explain(ctx, eo)
	if err != nil {
		return explainFailed(env, err)
	}
	if note != "" {
		env.Errorf("%s", note)
	}
	if o.JSON {
		return env.JSON(out)
	}
	if err := explain.Print(env.Stdout, out); err != nil {
		env.Errorf("write: %v", err)
		return ExitInternal
	}
	return ExitOK
}

// explainSource is where explain reads: the saved state (--state, else
// the one beside --trace-file when no repository is named), the trace file
// alone, or GitHub.
func explainSource(f *Factory, o *explainOptions) (explain.Options, int) {
	env, state := f.env, o.State
	eo := explain.Options{Issue: o.Issue, Trace: o.Trace, TraceFile: o.TraceFile, Repository: env.Getenv("GITHUB_REPOSITORY")}
	if state == "" && o.TraceFile != "" && eo.Repository == "" {
		beside := filepath.Join(filepath.Dir(o.TraceFile), explain.StateFile)
		if _, err := os.Stat(beside); err == nil {
			state = beside
		}
	}
	switch {
	case state != "":
		if !strings.Contains(eo.Repository, "/") {
			eo.Repository = "the saved state " + state
		}
		eo.State = state
	case o.TraceFile != "" && eo.Repository == "":
		// The trace file alone.
	default:
		var err error
		if eo.GitHub, err = f.GitHub(); err != nil {
			env.Errorf("%v", err)
			return eo, ExitUsage
		}
		eo.Repository = env.Getenv("GITHUB_REPOSITORY") // perhaps from the origin remote
	}
	return eo, ExitOK
}

func explainFailed(env *Env, err error) int {
	env.Errorf("%v", err)
	return exitFor(err)
}
