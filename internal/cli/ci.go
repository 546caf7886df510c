package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/actionsio"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/f2p"
	"github.com/roadmap-dev/roadmap/internal/git"
	"github.com/roadmap-dev/roadmap/internal/inputerr"
	"github.com/roadmap-dev/roadmap/internal/policy"
	"github.com/roadmap-dev/roadmap/internal/prcheck"
)

// f2pOptions are `roadmap ci fail-to-pass`'s flags, parsed.
type f2pOptions struct {
	Base, Test, JUnit, Dir, ConfigPath string
	JSON                               bool
}

// runCIFailToPass is `roadmap ci fail-to-pass`: the tests at --base and at
// HEAD, each in a worktree inside the isolation boundary, sorted into F2P,
// P2P and broken P2P (internal/f2p).
func runCIFailToPass(ctx context.Context, env *Env, args []string) int {
	return f2pCmd(ctx, env.factory(), args, f2pRun)
}

// f2pCmd parses ci fail-to-pass's flags into its options, then calls runF.
func f2pCmd(ctx context.Context, f *Factory, args []string, runF func(context.Context, *Factory, *f2pOptions) int) int {
	env, o := f.env, &f2pOptions{}
	fs := newFlags(env, "ci fail-to-pass")
	fs.StringVar(&o.Base, "base", "", "the commit the change starts from (required), e.g. origin/main or HEAD~1")
	fs.StringVar(&o.Test, "test", "", "the test command, without a shell (default for a Go module: go test -json ./...)")
	fs.StringVar(&o.JUnit, "junit", "", "a glob, relative to the repository's top, naming the JUnit XML files the test command writes")
	fs.StringVarP(&o.Dir, "workdir", "C", "", "the repository checkout (default $GITHUB_WORKSPACE or .)")
	fs.StringVar(&o.ConfigPath, "config", "", "configuration file, for isolation and the shell policy (default DIR/"+config.DefaultPath+")")
	fs.BoolVar(&o.JSON, "json", false, "print the result as JSON on stdout")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		env.Errorf("ci fail-to-pass: unexpected argument %q", fs.Arg(0))
		return ExitUsage
	}
	if o.Base == "" {
		env.Errorf("ci fail-to-pass: --base is required")
		return ExitUsage
	}
	return runF(ctx, f, o)
}

// f2pRun runs the tests at the base and the head and prints the report.
func f2pRun(ctx context.Context, f *Factory, o *f2pOptions) int {
	env := f.env
	t, code := f.ciTrusted(ctx, "ci fail-to-pass", o.Dir, o.Base, o.ConfigPath)
	if code != ExitOK {
		return code
	}
	head, err := t.repo.Head(ctx)
	if err != nil {
		env.Errorf("ci fail-to-pass: %v", err)
		return ExitUsage
	}
	argv, code := f2pCommand(env, t, o.Test)
	if code != ExitOK {
		return code
	}
	masker := f.Masker()
	open := func(ctx context.Context, dir string) (f2p.Tree, error) {
		b, err := f.Boundary(ctx, t.cfg, dir)
		if err != nil {
			return nil, err
		}
		return f2p.SandboxTree(policy.NewSandbox(b, t.pol, env.environ()), b.Close), nil
	}
	fo := f2p.Options{Repo: t.repo, Base: t.baseSHA, Head: head, Command: argv, JUnit: o.JUnit, Open: open,
		TempDir: firstSet(env.Getenv("RUNNER_TEMP"), os.TempDir()),
		Mask:    masker.Mask, Log: func(format string, a ...any) { env.Errorf("ci fail-to-pass: "+format, a...) }}
	rep, err := fo.Compare(ctx)
	if code := f2pFailed(env, masker.Mask, err); code != ExitOK {
		return code
	}
	for _, l := range []*[]string{&rep.F2P, &rep.P2P, &rep.Broken, &rep.Failing} {
		for i, s := range *l {
			(*l)[i] = masker.Mask(s)
		}
	}
	if o.JSON {
		if code := env.JSON(rep); code != ExitOK {
			return code
		}
	} else {
		printF2P(env, rep)
	}
	if !rep.Passed {
		return ExitFindings
	}
	return ExitOK
}

// f2pCommand is the test command: --test, split without a shell and
// checked against the trusted policy, else go test for a Go module.
func f2pCommand(env *Env, t ciTrust, test string) ([]string, int) {
	if test == "" {
		if _, err := os.Stat(filepath.Join(t.repo.Dir, "go.mod")); err != nil {
			env.Errorf("ci fail-to-pass: no go.mod at %s, so no default test command: pass --test", t.repo.Dir)
			return nil, ExitUsage
		}
		return []string{"go", "test", "-json", "./..."}, ExitOK
	}
	argv, err := policy.Split(test)
	if err == nil && len(argv) > 0 {
		err = t.pol.Check(argv)
	}
	if err != nil || len(argv) == 0 {
		env.Errorf("ci fail-to-pass: --test %q: %v", test, err)
		return nil, ExitUsage
	}
	return argv, ExitOK
}

// f2pFailed says why the comparison could not be made, and its exit code;
// ExitOK when err is nil. An unavailable boundary fails closed: the tests
// are code the model may have written.
func f2pFailed(env *Env, mask func(string) string, err error) int {
	var refusal *policy.Refusal
	if why, ok := unavailable(err); ok {
		env.Errorf("ci fail-to-pass: %s", why)
		return ExitFindings
	}
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &refusal) || inputerr.Is(err):
		env.Errorf("ci fail-to-pass: %s", mask(err.Error()))
		return ExitUsage
	}
	env.Errorf("ci fail-to-pass: %s", mask(err.Error()))
	return ExitInternal
}

// printF2P is the human table: one row per test that is F2P, broken or
// still failing, then the P2P count (the list is in --json).
func printF2P(env *Env, rep f2p.Report) {
	w := env.Stdout
	fmt.Fprintf(w, "fail-to-pass %s..%s: %s\n\n", short(rep.Base.Commit), short(rep.Head.Commit), passWord(rep.Passed))
	fmt.Fprintf(w, "%-10s  %s\n", "RESULT", "TEST")
	for _, s := range []struct {
		word  string
		names []string
	}{{"F2P", rep.F2P}, {"BROKEN", rep.Broken}, {"FAILING", rep.Failing}} {
		for _, n := range s.names {
			fmt.Fprintf(w, "%-10s  %s\n", s.word, actionsio.PlainLine(n))
		}
	}
	fmt.Fprintf(w, "\n%d F2P, %d P2P, %d broken P2P, %d failing at both or new and failing\n", len(rep.F2P), len(rep.P2P), len(rep.Broken), len(rep.Failing))
	for _, r := range []struct {
		side string
		run  f2p.Run
	}{{"base", rep.Base}, {"head", rep.Head}} {
		if r.run.Note != "" {
			fmt.Fprintf(w, "the %s run: %s\n", r.side, actionsio.PlainLine(r.run.Note))
		}
		if r.run.Tests == 0 && r.run.Stderr != "" {
			fmt.Fprintf(w, "the %s run reported no test and exited %d:\n", r.side, r.run.ExitCode)
			for _, l := range strings.Split(strings.TrimRight(r.run.Stderr, "\n"), "\n") {
				fmt.Fprintf(w, "  %s\n", actionsio.PlainLine(l))
			}
		}
	}
	if len(rep.F2P) == 0 {
		fmt.Fprintln(w, "no test fails at the base and passes at the head: nothing shows the change does what it says")
	}
}

// short is a commit's first twelve hex digits, as checks prints them.
func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// passWord is "passed" or "failed".
func passWord(ok bool) string {
	if ok {
		return "passed"
	}
	return "failed"
}

// ciTrust is what a ci verb reads before it runs anything: the checkout,
// --base as a commit, and the configuration and shell policy trusted from
// the base (never the change's own tree).
type ciTrust struct {
	repo    *git.Repo
	baseSHA string
	cfg     *config.Config
	pol     *policy.Policy
}

// ciTrusted opens the checkout at dir and reads --base and the trusted
// configuration, saying which one it read; a code other than ExitOK ends
// the verb (the error is already printed, prefixed with verb).
func (f *Factory) ciTrusted(ctx context.Context, verb, dir, base, cfgPath string) (ciTrust, int) {
	e := f.env
	repo, err := git.Open(ctx, e.workdir(dir), e.environ())
	if err != nil {
		e.Errorf("%s: %v", verb, err)
		return ciTrust{}, ExitUsage
	}
	baseSHA, err := repo.RevParse(ctx, base)
	if err != nil {
		e.Errorf("%s: --base %q is not a commit here: %v", verb, base, err)
		return ciTrust{}, ExitUsage
	}
	explicit := cfgPath != ""
	if !explicit {
		cfgPath = filepath.Join(repo.Dir, config.DefaultPath)
	}
	cfg, source, err := prcheck.TrustedConfig(ctx, repo, repo.Dir, cfgPath, explicit, baseSHA)
	if err != nil {
		e.Errorf("%s: %v", verb, err)
		return ciTrust{}, ExitUsage
	}
	e.Errorf("%s: configuration: %s", verb, source)
	// The Factory's configuration is the trusted one from here on: its
	// policy and its masker's model keys are the base's.
	f.ConfigPath = cfgPath
	f.Config, f.configLoaded = func() (*config.Config, error) { return cfg, nil }, true
	pol, err := f.Policy()
	if err != nil {
		e.Errorf("%s: %s: policy: %v", verb, source, err)
		return ciTrust{}, ExitUsage
	}
	return ciTrust{repo: repo, baseSHA: baseSHA, cfg: cfg, pol: pol}, ExitOK
}
