package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

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
	fs := newFlags(env, "dashboard eval")
	dash := fs.Int("dashboard", 0, "the dashboard issue `N` (default: the open issue labelled "+dashboard.Label+")")
	from := fs.StringArray("from", nil, "a suite's report, as `roadmap eval … --json` printed it (repeatable, in the order shown)")
	cfgPath := fs.String("config", "", "configuration file (default $GITHUB_WORKSPACE/"+config.DefaultPath+"): the day budget and alert rules the update keeps")
	asJSON := fs.Bool("json", false, "print what the post did as one JSON object")
	repoFlag(fs, env)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	switch {
	case fs.NArg() > 0:
		env.Errorf("dashboard eval takes no arguments: name each report with --from")
		return ExitUsage
	case len(*from) == 0 || len(*from) > dashboard.MaxEvalSuites:
		env.Errorf("dashboard eval needs from 1 to %d --from reports", dashboard.MaxEvalSuites)
		return ExitUsage
	case *dash < 0:
		env.Errorf("--dashboard must be an issue number")
		return ExitUsage
	}
	load := config.LoadExplicit
	if *cfgPath == "" {
		*cfgPath, load = filepath.Join(env.workdir(""), config.DefaultPath), config.Load
	}
	cfg, err := load(*cfgPath)
	if err != nil {
		env.Errorf("%v", err)
		return ExitUsage
	}
	masker := env.masker()
	gh, err := env.gitHubClient(masker, time.Time{})
	if err != nil {
		env.Errorf("%v", err)
		return ExitUsage
	}
	evals := &dashboard.Evals{Run: runLink(env)}
	passed := true
	for _, path := range *from {
		s := readEvalReport(path, masker, gh.ServerHost())
		if s.Problem != "" || !s.Passed {
			passed = false
		}
		if s.Problem != "" {
			env.Errorf("dashboard eval: %s: no report: %s", masker.Mask(path), s.Problem)
		}
		evals.Suites = append(evals.Suites, s)
	}
	if *dash == 0 {
		open, err := gh.LabelledIssues(ctx, dashboard.Label)
		if err != nil {
			env.Errorf("%s", masker.Mask(err.Error()))
			return ExitInternal
		}
		if len(open) == 0 {
			env.Errorf("no open issue is labelled %s: run roadmap init, or name one with --dashboard", dashboard.Label)
			return ExitUsage
		}
		*dash = open[0].Number
	}
	kept, err := dashboard.Keep(ctx, dashboard.KeepOptions{GitHub: gh, Issue: *dash, Evals: evals, Now: time.Now().UTC(),
		DayBudgetUSD: cfg.Budgets.Day.USD, Rules: alertRules(cfg.Alerts)})
	out := dashboardEvalOutput{Kept: kept, Dashboard: *dash, Suites: evals.Suites, Requests: gh.Requests().Counted()}
	if err != nil {
		env.Errorf("%s", masker.Mask(err.Error()))
		if *asJSON {
			env.JSON(out)
		}
		return ExitInternal
	}
	if *asJSON {
		if code := env.JSON(out); code != ExitOK {
			return code
		}
	} else {
		wrote := "unchanged, not written"
		if out.Wrote {
			wrote = "written"
		}
		fmt.Fprintf(env.Stdout, "roadmap dashboard eval: issue #%d, %d suite(s), %s (%d requests)\n", *dash, len(out.Suites), wrote, out.Requests)
		for _, s := range out.Suites {
			switch {
			case s.Problem != "":
				fmt.Fprintf(env.Stdout, "  %s: no report\n", s.Suite)
			default:
				fmt.Fprintf(env.Stdout, "  %s: score %.4f, floor %.4f, passed %v\n", s.Suite, s.Score, s.Floor, s.Passed)
			}
		}
	}
	if !passed {
		env.Errorf("dashboard eval: a suite is below its floor or has no report (posted)")
		return ExitFindings
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
