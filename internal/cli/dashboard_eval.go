package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/dashboard"
	"github.com/roadmap-dev/roadmap/internal/redact"
)

// dashboardEvalOutput is `roadmap dashboard eval --json`: what the update
// did, the dashboard issue, the suites as posted and the counted GitHub
// requests of the whole command.
type dashboardEvalOutput struct {
	dashboard.Kept
	Dashboard int                   `json:"dashboard"`
	Suites    []dashboard.EvalSuite `json:"suites"`
	Requests  int                   `json:"requests"`
}

// dashboardEvalOptions are `roadmap dashboard eval`'s flags, parsed.
type dashboardEvalOptions struct {
	Dashboard int
	From      []string
	JSON      bool
}

// runDashboardEval is `roadmap dashboard eval --from FILE… [--dashboard N]
// [--config F] [--json] [-R OWNER/REPO]`, which the scheduled eval workflow
// runs after the suites (docs/eval.md): each FILE is one suite's report
// (`roadmap eval gates|stage|implement --json`), and the dashboard issue's
// Evals section is replaced by them in one update (a conditional read, and
// a write only when the body changed; the labels guard). A FILE that is
// missing or is not a report is shown as that suite (its base name) with
// no report. Exit 0 when every suite passed, 1 when one did not or had no
// report (after the post), 2 on bad input or no dashboard issue, 3 when
// GitHub fails it.
func runDashboardEval(ctx context.Context, env *Env, args []string) int {
	return dashboardEvalCmd(ctx, env.factory(), args, dashboardEvalRun)
}

// dashboardEvalCmd parses dashboard eval's flags into its options, then calls runF.
func dashboardEvalCmd(ctx context.Context, f *Factory, args []string, runF func(context.Context, *Factory, *dashboardEvalOptions) int) int {
	env, o := f.env, &dashboardEvalOptions{}
	fs := newFlags(env, "dashboard eval")
	fs.IntVar(&o.Dashboard, "dashboard", 0, "the dashboard issue `N` (default: the open issue labelled "+dashboard.Label+")")
	fs.StringArrayVar(&o.From, "from", nil, "a suite's report, as `roadmap eval … --json` printed it (repeatable, in the order shown)")
	fs.StringVar(&f.ConfigPath, "config", "", "configuration file (default $GITHUB_WORKSPACE/"+config.DefaultPath+"): the day budget and alert rules the update keeps")
	fs.BoolVar(&o.JSON, "json", false, "print what the post did as one JSON object")
	repoFlag(fs, env)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	switch {
	case fs.NArg() > 0:
		env.Errorf("dashboard eval takes no arguments: name each report with --from")
		return ExitUsage
	case len(o.From) == 0 || len(o.From) > dashboard.MaxEvalSuites:
		env.Errorf("dashboard eval needs from 1 to %d --from reports", dashboard.MaxEvalSuites)
		return ExitUsage
	case o.Dashboard < 0:
		env.Errorf("--dashboard must be an issue number")
		return ExitUsage
	}
	return runF(ctx, f, o)
}

// dashboardEvalRun posts the suites' reports to the dashboard's Evals.
func dashboardEvalRun(ctx context.Context, f *Factory, o *dashboardEvalOptions) int {
	env := f.env
	cfg, gh, code := f.configAndGitHub()
	if code != ExitOK {
		return code
	}
	masker := f.Masker()
	evals := &dashboard.Evals{Run: runLink(env)}
	passed := true
	for _, path := range o.From {
		s := readEvalReport(path, masker, gh.ServerHost())
		if s.Problem != "" || !s.Passed {
			passed = false
		}
		if s.Problem != "" {
			env.Errorf("dashboard eval: %s: no report: %s", masker.Mask(path), s.Problem)
		}
		evals.Suites = append(evals.Suites, s)
	}
	n, err := dashboardIssue(ctx, f, gh, o.Dashboard)
	if err != nil {
		return exitFor(err)
	}
	o.Dashboard = n
	kept, err := dashboard.Keep(ctx, dashboard.KeepOptions{GitHub: gh, Issue: o.Dashboard, Evals: evals, Now: f.Now().UTC(),
		DayBudgetUSD: cfg.Budgets.Day.USD, Rules: alertRules(cfg.Alerts)})
	out := dashboardEvalOutput{Kept: kept, Dashboard: o.Dashboard, Suites: evals.Suites, Requests: gh.Requests().Counted()}
	if err != nil {
		env.Errorf("%s", masker.Mask(err.Error()))
		if o.JSON {
			env.JSON(out)
		}
		return ExitInternal
	}
	if code := printDashboardEval(env, out, o.JSON); code != ExitOK {
		return code
	}
	if !passed {
		env.Errorf("dashboard eval: a suite is below its floor or has no report (posted)")
		return ExitFindings
	}
	return ExitOK
}

// printDashboardEval is what the post did: JSON, or lines for a person.
func printDashboardEval(env *Env, out dashboardEvalOutput, asJSON bool) int {
	if asJSON {
		return env.JSON(out)
	}
	wrote := "unchanged, not written"
	if out.Wrote {
		wrote = "written"
	}
	fmt.Fprintf(env.Stdout, "roadmap dashboard eval: issue #%d, %d suite(s), %s (%d requests)\n", out.Dashboard, len(out.Suites), wrote, out.Requests)
	for _, s := range out.Suites {
		switch {
		case s.Problem != "":
			fmt.Fprintf(env.Stdout, "  %s: no report\n", s.Suite)
		default:
			fmt.Fprintf(env.Stdout, "  %s: score %.4f, floor %.4f, passed %v\n", s.Suite, s.Score, s.Floor, s.Passed)
		}
	}
	return ExitOK
}

// readEvalReport is one --from file as the dashboard shows it: the
// report's suite, or its base name with the problem when it cannot be read.
// Every text taken from the file is masked; a suite, model or provider
// name that masking changes is shown as "masked".
func readEvalReport(path string, masker *redact.Masker, server string) dashboard.EvalSuite {
	name := dashboard.SuiteName(path)
	if masker.Mask(name) != name {
		name = "masked"
	}
	problem := func(err error) dashboard.EvalSuite {
		return dashboard.EvalSuite{Suite: name, Problem: dashboard.ProblemText(redact.Neutralise(masker.Mask(err.Error()), server))}
	}
	f, err := os.Open(path)
	if err != nil {
		return problem(err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, dashboard.MaxEvalReport+1))
	if err != nil {
		return problem(err)
	}
	s, err := dashboard.ParseEvalReport(name, data)
	if err != nil {
		return problem(err)
	}
	if masker.Mask(s.Suite) != s.Suite {
		s.Suite = "masked"
	}
	if masker.Mask(s.Model) != s.Model {
		s.Model = "masked"
	}
	if masker.Mask(s.Provider) != s.Provider {
		s.Provider = "masked"
	}
	return s
}

// runLink is the page of the workflow run this command runs in, from the
// runner's variables, or "".
func runLink(env *Env) string {
	server, repo, id := env.Getenv("GITHUB_SERVER_URL"), env.Getenv("GITHUB_REPOSITORY"), env.Getenv("GITHUB_RUN_ID")
	if server == "" || repo == "" || id == "" {
		return ""
	}
	u := strings.TrimSuffix(server, "/") + "/" + repo + "/actions/runs/" + id
	if !dashboard.ValidRunURL(u) {
		return ""
	}
	return u
}
