package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/actionsio"
	"github.com/roadmap-dev/roadmap/internal/checks"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/policy"
	"github.com/roadmap-dev/roadmap/internal/sandbox"
	"github.com/roadmap-dev/roadmap/internal/strength"
)

// testFlags is a repeatable --test whose type is "string", the type --test
// has on every verb (TestFlagNamesConsistent): each use adds a command.
type testFlags []string

func (f *testFlags) String() string     { return strings.Join(*f, "; ") }
func (f *testFlags) Set(v string) error { *f = append(*f, v); return nil }
func (f *testFlags) Type() string       { return "string" }

// strengthOptions are `roadmap ci test-strength`'s flags, parsed.
type strengthOptions struct {
	Base, FloorText, Dir, ConfigPath string
	Tests                            testFlags
	Floor                            float64
	MaxMutants                       int
	Timeout                          time.Duration
	JSON                             bool
}

// runCITestStrength is `roadmap ci test-strength`: mutants of the lines the
// change since --base adds, each run against the tests inside the isolation
// boundary (internal/strength). It exits 1 when the tests did not reach
// the floor or nothing was measured.
func runCITestStrength(ctx context.Context, env *Env, args []string) int {
	return strengthCmd(ctx, env.factory(), args, strengthRun)
}

// strengthCmd parses ci test-strength's flags into its options, then calls runF.
func strengthCmd(ctx context.Context, f *Factory, args []string, runF func(context.Context, *Factory, *strengthOptions) int) int {
	env, o := f.env, &strengthOptions{}
	fs := newFlags(env, "ci test-strength")
	fs.StringVar(&o.Base, "base", "", "the commit the change starts from (required), e.g. origin/main or HEAD~1")
	fs.Var(&o.Tests, "test", "a test command each mutant runs, without a shell; repeat for more (default: go test of the changed packages)")
	fs.StringVar(&o.FloorText, "floor", "", "the score (0 to 1) the tests must reach (default implement.test_strength_floor of the base's configuration)")
	fs.IntVar(&o.MaxMutants, "max-mutants", strength.DefaultMaxMutants, "how many mutants run at most; the rest are counted as skipped")
	fs.DurationVar(&o.Timeout, "mutant-timeout", 0, "the time budget of one mutant (default six times the unmutated run, 10s to 2m)")
	fs.StringVarP(&o.Dir, "workdir", "C", "", "the repository checkout (default $GITHUB_WORKSPACE or .)")
	fs.StringVar(&o.ConfigPath, "config", "", "configuration file, for isolation and the shell policy (default DIR/"+config.DefaultPath+")")
	fs.BoolVar(&o.JSON, "json", false, "print the result as JSON on stdout")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		env.Errorf("ci test-strength: unexpected argument %q", fs.Arg(0))
		return ExitUsage
	}
	if o.Base == "" {
		env.Errorf("ci test-strength: --base is required")
		return ExitUsage
	}
	var err error
	if o.Floor, err = parseFloor(o.FloorText); err != nil {
		env.Errorf("ci test-strength: %v", err)
		return ExitUsage
	}
	if o.MaxMutants <= 0 || o.Timeout < 0 {
		env.Errorf("ci test-strength: --max-mutants must be above 0 and --mutant-timeout not negative")
		return ExitUsage
	}
	return runF(ctx, f, o)
}

// strengthRun runs the mutants inside the boundary and prints the score.
func strengthRun(ctx context.Context, f *Factory, o *strengthOptions) int {
	env := f.env
	tr, code := f.ciTrusted(ctx, "ci test-strength", o.Dir, o.Base, o.ConfigPath)
	if code != ExitOK {
		return code
	}
	if o.FloorText == "" {
		// The floor implement holds each group to, from the trusted configuration.
		o.Floor = tr.cfg.Implement.TestStrengthFloor
	}
	if code := strengthTests(env, tr.pol, o.Tests); code != ExitOK {
		return code
	}
	b, err := f.Boundary(ctx, tr.cfg, tr.repo.Dir)
	if why, ok := unavailable(err); ok {
		// Fail closed: the tests are code the model may have written.
		env.Errorf("ci test-strength: %s", why)
		return ExitFindings
	}
	if err != nil {
		env.Errorf("ci test-strength: %v", err)
		return ExitUsage
	}
	defer func() {
		if err := b.Close(); err != nil {
			env.Errorf("ci test-strength: close the isolation boundary: %v", err)
		}
	}()
	env.Errorf("ci test-strength: %s", b.Describe())
	masker := f.Masker()
	so := strength.Options{Dir: tr.repo.Dir, Base: tr.baseSHA, Tests: o.Tests, Split: policy.Split,
		Runner:  checks.SandboxRunner(policy.NewSandbox(b, tr.pol, env.environ())),
		Timeout: o.Timeout, MaxMutants: o.MaxMutants, Mask: masker.Mask, GitEnv: env.environ(),
		Progress: func(s string) { env.Errorf("ci test-strength: %s", s) }}
	rep, err := strength.Run(ctx, so, o.Floor)
	var red *strength.BaselineError
	switch {
	case errors.As(err, &red):
		env.Errorf("ci test-strength: %s", masker.Mask(err.Error()))
		return ExitFindings
	case err != nil:
		env.Errorf("ci test-strength: %s", masker.Mask(err.Error()))
		return ExitInternal
	}
	return strengthOutput(env, rep, o.JSON, b.Isolated())
}

// strengthTests checks each --test against the trusted policy.
func strengthTests(env *Env, pol *policy.Policy, tests []string) int {
	for _, t := range tests {
		argv, err := policy.Split(t)
		if err == nil && len(argv) == 0 {
			err = errors.New("no program")
		}
		if err == nil {
			err = pol.Check(argv)
		}
		if err != nil {
			env.Errorf("ci test-strength: --test %q: %v", t, err)
			return ExitUsage
		}
	}
	return ExitOK
}

// strengthOutput prints the report and names the exit.
func strengthOutput(env *Env, rep strength.Report, asJSON, isolated bool) int {
	if asJSON {
		if code := env.JSON(rep); code != ExitOK {
			return code
		}
	} else {
		printStrength(env, rep)
		if !isolated {
			fmt.Fprintln(env.Stdout, "\n"+sandbox.NotIsolatedWarning)
		}
	}
	if !rep.Passed {
		return ExitFindings
	}
	return ExitOK
}

// parseFloor reads --floor: a number from 0 to 1, DefaultFloor when empty
// (the caller then takes the configuration's implement.test_strength_floor).
func parseFloor(s string) (float64, error) {
	if s == "" {
		return strength.DefaultFloor, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f > 1 {
		return 0, fmt.Errorf("--floor %q: want a number from 0 to 1", s)
	}
	return f, nil
}

// printStrength is the human output: the summary, then each survivor's
// diff, its lines made plain (none can be a workflow command).
func printStrength(env *Env, rep strength.Report) {
	w := env.Stdout
	for _, l := range strings.Split(strings.TrimRight(rep.Summary(), "\n"), "\n") {
		fmt.Fprintln(w, actionsio.PlainLine(l))
	}
	for _, m := range rep.Mutants {
		if m.Status != strength.Survived {
			continue
		}
		fmt.Fprintf(w, "\nSURVIVED  %s:%d  %s\n", actionsio.PlainLine(m.File), m.Line, m.Operator)
		for _, l := range strings.Split(strings.TrimRight(m.Diff, "\n"), "\n") {
			fmt.Fprintf(w, "  %s\n", actionsio.PlainLine(l))
		}
	}
}
