package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

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

// runCITestStrength is `roadmap ci test-strength`: mutants of the lines the
// change since --base adds, each run against the tests inside the isolation
// boundary (internal/strength). It exits 1 when the tests did not reach
// the floor or nothing was measured.
func runCITestStrength(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "ci test-strength")
	base := fs.String("base", "", "the commit the change starts from (required), e.g. origin/main or HEAD~1")
	var tests testFlags
	fs.Var(&tests, "test", "a test command each mutant runs, without a shell; repeat for more (default: go test of the changed packages)")
	floorText := fs.String("floor", "", "the score (0 to 1) the tests must reach (default implement.test_strength_floor of the base's configuration)")
	maxMutants := fs.Int("max-mutants", strength.DefaultMaxMutants, "how many mutants run at most; the rest are counted as skipped")
	timeout := fs.Duration("mutant-timeout", 0, "the time budget of one mutant (default six times the unmutated run, 10s to 2m)")
	dir := fs.StringP("workdir", "C", "", "the repository checkout (default $GITHUB_WORKSPACE or .)")
	cfgPath := fs.String("config", "", "configuration file, for isolation and the shell policy (default DIR/"+config.DefaultPath+")")
	asJSON := fs.Bool("json", false, "print the result as JSON on stdout")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		env.Errorf("ci test-strength: unexpected argument %q", fs.Arg(0))
		return ExitUsage
	}
	if *base == "" {
		env.Errorf("ci test-strength: --base is required")
		return ExitUsage
	}
	floor, err := parseFloor(*floorText)
	if err != nil {
		env.Errorf("ci test-strength: %v", err)
		return ExitUsage
	}
	if *maxMutants <= 0 || *timeout < 0 {
		env.Errorf("ci test-strength: --max-mutants must be above 0 and --mutant-timeout not negative")
		return ExitUsage
	}
	tr, code := env.ciTrusted(ctx, "ci test-strength", *dir, *base, *cfgPath)
	if code != ExitOK {
		return code
	}
	repo, baseSHA, cfg, pol := tr.repo, tr.baseSHA, tr.cfg, tr.pol
	if *floorText == "" {
		// The floor implement holds each group to, from the trusted configuration.
		floor = cfg.Implement.TestStrengthFloor
	}
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
	b, err := env.boundary(ctx, cfg, repo.Dir)
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
	masker := env.masker()
	o := strength.Options{Dir: repo.Dir, Base: baseSHA, Tests: tests, Split: policy.Split,
		Runner:  checks.SandboxRunner(policy.NewSandbox(b, pol, env.environ())),
		Timeout: *timeout, MaxMutants: *maxMutants, Mask: masker.Mask, GitEnv: env.environ(),
		Progress: func(s string) { env.Errorf("ci test-strength: %s", s) }}
	rep, err := strength.Run(ctx, o, floor)
	var red *strength.BaselineError
	if errors.As(err, &red) {
		env.Errorf("ci test-strength: %s", masker.Mask(err.Error()))
		return ExitFindings
	}
	if err != nil {
		env.Errorf("ci test-strength: %s", masker.Mask(err.Error()))
		return ExitInternal
	}
	if *asJSON {
		if code := env.JSON(rep); code != ExitOK {
			return code
		}
	} else {
		printStrength(env, rep)
		if !b.Isolated() {
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
