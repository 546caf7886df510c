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
	"github.com/roadmap-dev/roadmap/internal/policy"
	"github.com/roadmap-dev/roadmap/internal/prcheck"
)

// runCIFailToPass is `roadmap ci fail-to-pass`: the tests at --base and at
// HEAD, each in a worktree inside the isolation boundary, sorted into F2P,
// P2P and broken P2P (internal/f2p).
func runCIFailToPass(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "ci fail-to-pass")
	base := fs.String("base", "", "the commit the change starts from (required), e.g. origin/main or HEAD~1")
	test := fs.String("test", "", "the test command, without a shell (default for a Go module: go test -json ./...)")
	junit := fs.String("junit", "", "a glob, relative to the repository's top, naming the JUnit XML files the test command writes")
	dir := fs.StringP("workdir", "C", "", "the repository checkout (default $GITHUB_WORKSPACE or .)")
	cfgPath := fs.String("config", "", "configuration file, for isolation and the shell policy (default DIR/"+config.DefaultPath+")")
	asJSON := fs.Bool("json", false, "print the result as JSON on stdout")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		env.Errorf("ci fail-to-pass: unexpected argument %q", fs.Arg(0))
		return ExitUsage
	}
	if *base == "" {
		env.Errorf("ci fail-to-pass: --base is required")
		return ExitUsage
	}
	t, code := env.ciTrusted(ctx, "ci fail-to-pass", *dir, *base, *cfgPath)
	if code != ExitOK {
		return code
	}
	repo, baseSHA, cfg, pol := t.repo, t.baseSHA, t.cfg, t.pol
	head, err := repo.Head(ctx)
	if err != nil {
		env.Errorf("ci fail-to-pass: %v", err)
		return ExitUsage
	}
	var argv []string
	switch {
	case *test != "":
		if argv, err = policy.Split(*test); err != nil || len(argv) == 0 {
			env.Errorf("ci fail-to-pass: --test %q: %v", *test, err)
			return ExitUsage
		}
		if err := pol.Check(argv); err != nil {
			env.Errorf("ci fail-to-pass: --test %q: %v", *test, err)
			return ExitUsage
		}
	default:
		if _, err := os.Stat(filepath.Join(repo.Dir, "go.mod")); err != nil {
			env.Errorf("ci fail-to-pass: no go.mod at %s, so no default test command: pass --test", repo.Dir)
			return ExitUsage
		}
		argv = []string{"go", "test", "-json", "./..."}
	}
	masker := env.masker()
	open := func(ctx context.Context, dir string) (f2p.Tree, error) {
		b, err := env.boundary(ctx, cfg, dir)
		if err != nil {
			return nil, err
		}
		return f2p.SandboxTree(policy.NewSandbox(b, pol, env.environ()), b.Close), nil
	}
	tmp := env.Getenv("RUNNER_TEMP")
	if tmp == "" {
		tmp = os.TempDir()
	}
	o := f2p.Options{Repo: repo, Base: baseSHA, Head: head, Command: argv, JUnit: *junit, Open: open, TempDir: tmp,
		Mask: masker.Mask, Log: func(format string, a ...any) { env.Errorf("ci fail-to-pass: "+format, a...) }}
	rep, err := o.Compare(ctx)
	if why, ok := unavailable(err); ok {
		// Fail closed: the tests are code the model may have written.
		env.Errorf("ci fail-to-pass: %s", why)
		return ExitFindings
	}
	var refusal *policy.Refusal
	var bad *f2p.InputError
	if errors.As(err, &refusal) || errors.As(err, &bad) {
		env.Errorf("ci fail-to-pass: %s", masker.Mask(err.Error()))
		return ExitUsage
	}
	if err != nil {
		env.Errorf("ci fail-to-pass: %s", masker.Mask(err.Error()))
		return ExitInternal
	}
	mask := func(l []string) []string {
		out := make([]string, len(l))
		for i, s := range l {
			out[i] = masker.Mask(s)
		}
		return out
	}
	rep.F2P, rep.P2P, rep.Broken, rep.Failing = mask(rep.F2P), mask(rep.P2P), mask(rep.Broken), mask(rep.Failing)
	if *asJSON {
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
func (e *Env) ciTrusted(ctx context.Context, verb, dir, base, cfgPath string) (ciTrust, int) {
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
	pol, err := policy.ParseNode(&cfg.Policy)
	if err != nil {
		e.Errorf("%s: %s: policy: %v", verb, source, err)
		return ciTrust{}, ExitUsage
	}
	return ciTrust{repo: repo, baseSHA: baseSHA, cfg: cfg, pol: pol}, ExitOK
}
