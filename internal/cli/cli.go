package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/actionsio"
	"github.com/roadmap-dev/roadmap/internal/sandbox"
)

// Exit codes. Scripts depend on them; docs/cli.md documents them.
const (
	// ExitOK: the command did what was asked.
	ExitOK = 0
	// ExitFindings: the command ran and its answer is negative (findings,
	// a failed check, a score below the floor, a stop).
	ExitFindings = 1
	// ExitUsage: the command line or an input file is wrong.
	ExitUsage = 2
	// ExitInternal: something broke that is not the caller's fault.
	ExitInternal = 3
)

// Env is what a verb may touch. Nothing in a verb reads os.* directly.
type Env struct {
	Args   []string
	Vars   map[string]string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer

	// probe, when set, replaces the machine's answers to the isolation
	// boundary's checks (tests of the fail-closed path).
	probe *sandbox.Probe
}

// Getenv returns the value of an environment variable, "" when unset.
func (e *Env) Getenv(key string) string { return e.Vars[key] }

// Errorf prints a message for a person on stderr. Messages carry errors,
// plan text and check logs, so each of its lines is made plain: none can be
// a workflow command.
func (e *Env) Errorf(format string, args ...any) {
	msg := fmt.Sprintf("roadmap: "+format, args...)
	for _, line := range strings.Split(msg, "\n") {
		fmt.Fprintln(e.Stderr, actionsio.PlainLine(line))
	}
}

// JSON writes v to stdout as indented JSON followed by a newline.
func (e *Env) JSON(v any) int {
	enc := json.NewEncoder(e.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		e.Errorf("write json: %v", err)
		return ExitInternal
	}
	return ExitOK
}

// verb is one command of the table below. name may be two words ("record show").
type verb struct {
	name    string
	summary string
	run     func(ctx context.Context, env *Env, args []string) int
}

// verbs is the whole command line. Each entry's run function lives in a file of
// its own, named after the verb.
func verbs() []verb {
	return []verb{
		{"version", "print the version", runVersion},
		{"implement", "run one implement Job for an issue", runImplement},
		{"report", "read how an implement Job ended and take the one action its class has", runReport},
		{"checks", "run the plan's group checks on a PR head and set the roadmap/checks status", runChecks},
		{"demo", "the whole life of an item, locally, against the fakes", runDemo},
		{"mask", "mask secrets: stdin to stdout", runMask},
		{"explain", "what ran for an issue, what it cost, what waits", runExplain},
		{"record show", "parse the record of an issue body", runRecordShow},
		{"plan validate", "check an OpenSpec change: openspec validate --strict, then roadmap's plan rules", runPlanValidate},
		{"classify", "classify a failed Job from its log", runClassify},
		{"ci fail-to-pass", "run the tests at --base and at HEAD: F2P, P2P and broken P2P", runCIFailToPass},
		{"dev replay-model", "serve recorded model exchanges over the OpenAI API", runDevReplayModel},
		{"dev fake-github", "run the fake GitHub as a server", runDevFakeGitHub},
	}
}

// Main runs the roadmap command line and returns its exit code.
func Main(ctx context.Context, args, environ []string, stdin io.Reader, stdout, stderr io.Writer) int {
	env := &Env{Args: args, Vars: map[string]string{}, Stdin: stdin, Stdout: stdout, Stderr: stderr}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env.Vars[k] = v
		}
	}
	return run(ctx, env)
}

// run runs the command line env.Args.
func run(ctx context.Context, env *Env) int {
	args := env.Args
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(env.Stdout)
		if len(args) == 0 {
			return ExitUsage
		}
		return ExitOK
	}
	table := verbs()
	for _, n := range []int{2, 1} {
		if len(args) < n {
			continue
		}
		name := strings.Join(args[:n], " ")
		for _, v := range table {
			if v.name == name {
				return v.run(ctx, env, args[n:])
			}
		}
	}
	env.Errorf("unknown command %q; run 'roadmap help'", strings.Join(args, " "))
	return ExitUsage
}

func usage(w io.Writer) {
	table := verbs()
	sort.Slice(table, func(i, j int) bool { return table[i].name < table[j].name })
	fmt.Fprintln(w, "usage: roadmap COMMAND [flags]")
	fmt.Fprintln(w)
	for _, v := range table {
		fmt.Fprintf(w, "  %-22s %s\n", v.name, v.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "exit codes: 0 ok, 1 negative result, 2 usage or input error, 3 internal failure")
}

// newFlags returns a flag set that reports errors on env's stderr and does not exit.
func newFlags(env *Env, name string) *flag.FlagSet {
	fs := flag.NewFlagSet("roadmap "+name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	return fs
}

// parseFlags parses args and maps a parse failure to an exit code. ok is false
// when the verb should return code at once (-h prints usage and exits 0).
func parseFlags(fs *flag.FlagSet, args []string) (code int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK, false
		}
		return ExitUsage, false
	}
	return ExitOK, true
}
