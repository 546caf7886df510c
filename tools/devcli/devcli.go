// Package devcli is the command line of roadmap-dev, the proving floor's
// binary (cmd/roadmap-dev): the verbs that drive roadmap from outside or
// download sources, which the roadmap binary users run does not hold
// (internal/deptest's TestProvingFloorOutOfBinary). `faults process` plays
// the fault suite against real roadmap processes (tools/faultproc); `eval
// fetch` gives the real-world eval cases their code (tools/realset).
package devcli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/job"
	"github.com/roadmap-dev/roadmap/internal/sandbox"
)

// The exit codes, as roadmap's (internal/cli).
const (
	ExitOK       = 0
	ExitFindings = 1
	ExitUsage    = 2
	ExitInternal = 3
)

// Env is one command line's surroundings.
type Env struct {
	Vars           map[string]string
	Stdout, Stderr io.Writer
	verb           string
	// probe, when set, replaces the machine's answers to the isolation
	// boundary's questions (tests).
	probe *sandbox.Probe
}

// Getenv is the command line's environment variable key.
func (e *Env) Getenv(key string) string { return e.Vars[key] }

// Errorf prints a message for a person on stderr, prefixed with the verb.
func (e *Env) Errorf(format string, args ...any) {
	fmt.Fprintf(e.Stderr, "roadmap-dev %s: %s\n", e.verb, strings.TrimPrefix(fmt.Sprintf(format, args...), e.verb+": "))
}

// JSON prints v on stdout, indented.
func (e *Env) JSON(v any) int {
	enc := json.NewEncoder(e.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		e.Errorf("write json: %v", err)
		return ExitInternal
	}
	return ExitOK
}

// boundary opens the isolation boundary on dir as cfg says, as roadmap's
// verbs do (job.OpenBoundary).
func (e *Env) boundary(ctx context.Context, cfg *config.Config, dir string) (*sandbox.Boundary, error) {
	return job.OpenBoundary(ctx, cfg, dir, e.Vars, e.probe)
}

// unavailable returns the reason of an *sandbox.Unavailable error.
func unavailable(err error) (string, bool) {
	var u *sandbox.Unavailable
	if errors.As(err, &u) {
		return u.Error(), true
	}
	return "", false
}

// newFlags is the flag set of the verb name.
func newFlags(env *Env, name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet("roadmap-dev "+name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// parseFlags parses args: -h prints the verb's flags and stops with 0, a
// bad flag says so and stops with 2.
func parseFlags(env *Env, fs *pflag.FlagSet, args []string) (int, bool) {
	err := fs.Parse(args)
	switch {
	case err == nil:
		return ExitOK, true
	case errors.Is(err, pflag.ErrHelp):
		fmt.Fprintf(env.Stdout, "usage: %s [flags]\n%s", fs.Name(), fs.FlagUsages())
		return ExitOK, false
	}
	env.Errorf("%v (see '%s --help')", err, fs.Name())
	return ExitUsage, false
}

type verb struct {
	name, summary string
	run           func(ctx context.Context, env *Env, args []string) int
}

func verbs() []verb {
	return []verb{
		{"faults process", "the fault suite against real roadmap processes, faulted from outside (SIGKILL, the fake's and the model server's faults)", runFaultsProcess},
		{"eval fetch", "give the real-world sets' cases their code from the module proxy or Debian's archive (repo/ at the base release, hidden/ at the fix); --check: F2P fail at base, pass at fix", runEvalFetch},
	}
}

// Main runs the roadmap-dev command line and returns its exit code;
// environ is KEY=VALUE lines.
func Main(ctx context.Context, args, environ []string, stdout, stderr io.Writer) int {
	env := &Env{Vars: map[string]string{}, Stdout: stdout, Stderr: stderr}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env.Vars[k] = v
		}
	}
	return run(ctx, env, args)
}

func run(ctx context.Context, env *Env, args []string) int {
	for _, v := range verbs() {
		words := strings.Fields(v.name)
		if len(args) >= len(words) && strings.Join(args[:len(words)], " ") == v.name {
			env.verb = v.name
			return v.run(ctx, env, args[len(words):])
		}
	}
	w := env.Stdout
	code := ExitOK
	if len(args) > 0 && args[0] != "help" && args[0] != "-h" && args[0] != "--help" {
		fmt.Fprintf(env.Stderr, "roadmap-dev: unknown command %q\n", strings.Join(args, " "))
		w, code = env.Stderr, ExitUsage
	}
	fmt.Fprintln(w, "usage: roadmap-dev <command> [flags] (the proving floor's tools; roadmap itself is the product)")
	for _, v := range verbs() {
		fmt.Fprintf(w, "  %-16s %s\n", v.name, v.summary)
	}
	return code
}
