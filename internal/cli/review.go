package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/git"
	"github.com/roadmap-dev/roadmap/internal/job"
	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/policy"
	"github.com/roadmap-dev/roadmap/internal/review"
)

// reviewOptions are `roadmap review`'s flags, parsed.
type reviewOptions struct {
	PR, MaxFindings int
	Base, PlanDir   string
	JSON            bool
}

// runReview is `roadmap review --pr N`: the independent review of a pull
// request's change (internal/review) from a checkout at its head. It prints
// the findings, or the Result with --json. Exit 0 when no blocking finding
// stands, 1 when one does, 2 on bad input, 3 when the review could not run
// to its end (a budget, a model error).
func runReview(ctx context.Context, env *Env, args []string) int {
	return reviewCmd(ctx, env.factory(), args, reviewRun)
}

// reviewCmd parses review's flags into its options, then calls runF.
func reviewCmd(ctx context.Context, f *Factory, args []string, runF func(context.Context, *Factory, *reviewOptions) int) int {
	env, o := f.env, &reviewOptions{}
	fs := newFlags(env, "review")
	fs.IntVar(&o.PR, "pr", 0, "the pull request to review")
	fs.StringVarP(&f.Workdir, "workdir", "C", "", "the checkout at the PR's head (default $GITHUB_WORKSPACE or .)")
	fs.StringVar(&f.ConfigPath, "config", "", "configuration file (default WORKDIR/"+config.DefaultPath+")")
	fs.StringVar(&o.Base, "base", "", "the base to diff against (default: origin/ the PR's base branch, else the branch)")
	fs.StringVar(&o.PlanDir, "plan", "", "the OpenSpec change directory (default: the one the PR body names, if any)")
	fs.IntVar(&o.MaxFindings, "max-findings", 0, "blocking findings kept; the rest are made advisory (default review.max_findings)")
	fs.BoolVar(&o.JSON, "json", false, "print the result as JSON on stdout")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		env.Errorf("review: unexpected argument %q", fs.Arg(0))
		return ExitUsage
	}
	if o.PR <= 0 || o.MaxFindings < 0 || fs.Changed("max-findings") && o.MaxFindings == 0 {
		env.Errorf("review: --pr N (N > 0) is required, and --max-findings must be above 0")
		return ExitUsage
	}
	return runF(ctx, f, o)
}

// reviewRun reviews the PR o names from the checkout.
func reviewRun(ctx context.Context, f *Factory, o *reviewOptions) int {
	env := f.env
	rr, code := f.reviewSetup(ctx, o)
	if code != ExitOK {
		return code
	}
	defer rr.close()
	if o.MaxFindings > 0 {
		rr.opts.MaxFindings = o.MaxFindings
	}
	res, err := review.Run(ctx, rr.opts, rr.in)
	if err != nil {
		env.Errorf("review: %s", rr.mask(err.Error()))
		return ExitInternal
	}
	if code := env.reviewOutput(res, o.JSON, rr.mask); code != ExitOK {
		return code
	}
	switch {
	case res.Status != agent.StatusFinished:
		env.Errorf("review: the review ended %s: %s", res.Status, res.Reason)
		return ExitInternal
	case len(res.Blocking()) > 0:
		return ExitFindings
	}
	return ExitOK
}

// reviewKit is what the verb runs the review with.
type reviewKit struct {
	in    review.Input
	opts  review.Options
	close func()              // closes the sandbox's boundary
	mask  func(string) string // every secret of the environment, the model keys too
}

// reviewOutput prints the Result as JSON, or its table, masked: a finding
// quotes the work tree, which a model wrote.
func (e *Env) reviewOutput(res review.Result, asJSON bool, mask func(string) string) int {
	if !asJSON {
		fmt.Fprint(e.Stdout, mask(res.Table()))
		return ExitOK
	}
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		e.Errorf("review: write json: %v", err)
		return ExitInternal
	}
	fmt.Fprintf(e.Stdout, "%s\n", mask(string(data)))
	return ExitOK
}

// reviewSetup reads what the review needs: the PR, its issue's acceptance
// criteria, the diff from the checkout, the plan when the PR names one, and
// the reviewer's ladder and sandbox.
func (f *Factory) reviewSetup(ctx context.Context, o *reviewOptions) (reviewKit, int) {
	e := f.env
	cfg, err := f.Config()
	if err != nil {
		return reviewKit{}, f.configFailed(err)
	}
	masker := f.Masker()
	gh, err := f.GitHub()
	if err != nil {
		e.Errorf("review: %v", err)
		return reviewKit{}, ExitUsage
	}
	p, err := gh.PR(ctx, o.PR)
	if err != nil {
		e.Errorf("review: %s", masker.Mask(err.Error()))
		return reviewKit{}, ExitUsage
	}
	repo, err := git.Open(ctx, e.workdir(f.Workdir), e.environ())
	if err != nil {
		e.Errorf("review: %s", masker.Mask(err.Error()))
		return reviewKit{}, ExitUsage
	}
	in, code := e.reviewInput(ctx, repo, p.HeadSHA, p.BaseRef, o.Base)
	if code != ExitOK {
		return reviewKit{}, code
	}
	if issue := closesIssue(p.Body); issue > 0 {
		is, err := gh.Issue(ctx, issue)
		if err != nil {
			e.Errorf("review: %s", masker.Mask(err.Error()))
			return reviewKit{}, ExitInternal
		}
		in.Acceptance = acceptanceCriteria(is.Body)
	}
	if planDir := firstSet(o.PlanDir, prPlan(p.Body)); planDir != "" {
		in.Plan, in.Tests = e.reviewPlan(repo.Dir, planDir)
	}
	opts, closeAll, code := f.reviewOptions(ctx, cfg, repo.Dir)
	return reviewKit{in: in, opts: opts, close: closeAll, mask: masker.Mask}, code
}

// reviewInput is the diff of the checkout from the merge base with the base
// branch; the checkout must be at the PR's head.
func (e *Env) reviewInput(ctx context.Context, repo *git.Repo, headSHA, baseRef, base string) (review.Input, int) {
	head, err := repo.RevParse(ctx, "HEAD")
	if err != nil {
		e.Errorf("review: %v", err)
		return review.Input{}, ExitUsage
	}
	if headSHA != "" && head != headSHA {
		e.Errorf("review: the checkout is at %s, the PR's head is %s: check the head out first", head, headSHA)
		return review.Input{}, ExitUsage
	}
	if base == "" {
		base = baseRef
		if _, err := repo.RevParse(ctx, "refs/remotes/origin/"+baseRef); err == nil {
			base = "origin/" + baseRef
		}
	}
	mb, err := repo.MergeBase(ctx, base, "HEAD")
	if err != nil {
		e.Errorf("review: the base %q: %v", base, err)
		return review.Input{}, ExitUsage
	}
	diff, err := repo.Diff(ctx, mb)
	if err != nil {
		e.Errorf("review: %v", err)
		return review.Input{}, ExitInternal
	}
	return review.Input{Dir: repo.Dir, Diff: diff}, ExitOK
}

// reviewPlan is the plan's proposal and tasks and the groups' verify
// commands, read inside the work tree; a plan that does not load is said
// and left out (the plan is optional to the review).
func (e *Env) reviewPlan(dir, planDir string) (string, []string) {
	c, err := plan.LoadChangeIn(dir, planDir)
	if err != nil {
		e.Errorf("review: the plan is left out: %v", err)
		return "", nil
	}
	var text strings.Builder
	for _, name := range []string{"proposal.md", "tasks.md"} {
		if data, err := c.ReadFile(name); err == nil {
			fmt.Fprintf(&text, "### %s\n\n%s\n\n", name, data)
		}
	}
	var tests []string
	for _, g := range c.Tasks.Groups {
		tests = append(tests, g.VerifyCommands()...)
	}
	return text.String(), tests
}

// reviewOptions are the reviewer's ladder (f.Reviewer: by default the
// configuration's last tier, another tier than the one implement starts on)
// and a sandbox whose read-only tools read the work tree; commands run
// inside the isolation boundary, or not at all when it is unavailable.
func (f *Factory) reviewOptions(ctx context.Context, cfg *config.Config, dir string) (review.Options, func(), int) {
	e, none := f.env, func() {}
	tier, err := f.Reviewer()
	if err != nil {
		e.Errorf("review: %v", err)
		return review.Options{}, none, ExitUsage
	}
	pol, err := f.Policy()
	if err != nil {
		e.Errorf("review: policy: %v", err)
		return review.Options{}, none, ExitUsage
	}
	sb := agent.Sandbox(readOnlyTree{dir: dir, why: "no command runs: the isolation boundary is unavailable"})
	closeAll := none
	b, err := f.Boundary(ctx, cfg, dir)
	switch _, unavail := unavailable(err); {
	case err == nil:
		sb, closeAll = sandboxTools{policy.NewSandbox(b, pol, e.environ())}, func() { _ = b.Close() }
	case unavail:
		e.Errorf("review: %v (the reviewer reads files only)", err)
	default:
		e.Errorf("review: isolation: %v", err)
		return review.Options{}, none, ExitUsage
	}
	return review.Options{MaxFindings: cfg.Review.MaxFindings, Config: agent.Config{Models: []agent.Tier{tier}, Sandbox: sb,
		Budget: job.AgentBudget(cfg.Budgets.Step), MaxOutput: tier.MaxOutput, Window: tier.Window}}, closeAll, ExitOK
}

// sandboxTools gives the policy sandbox the agent's Run signature.
type sandboxTools struct{ *policy.Sandbox }

func (s sandboxTools) Run(ctx context.Context, argv []string) (agent.RunResult, error) {
	r, err := s.Sandbox.Run(ctx, argv)
	return agent.RunResult(r), err
}

// readOnlyTree is the reviewer's sandbox without a boundary: the file tools
// read the work tree, no command runs.
type readOnlyTree struct{ dir, why string }

func (s readOnlyTree) Workspace() (string, error)         { return s.dir, nil }
func (s readOnlyTree) Resolve(p string) (string, error)   { return policy.Resolve(s.dir, p) }
func (s readOnlyTree) Split(cmd string) ([]string, error) { return policy.Split(cmd) }
func (s readOnlyTree) Run(context.Context, []string) (agent.RunResult, error) {
	return agent.RunResult{}, refusal(s.why)
}

type refusal string

func (r refusal) Error() string { return string(r) }
func (refusal) Refused() bool   { return true }

var (
	closesRE = regexp.MustCompile(`(?im)^closes #([0-9]{1,9})\b`)
	planRE   = regexp.MustCompile("(?m)^\\*\\*Plan:\\*\\* `([^`\n]{1,200})`")
)

// closesIssue is the issue a roadmap PR body closes ("Closes #N."), 0 when
// none.
func closesIssue(body string) int {
	m := closesRE.FindStringSubmatch(body)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// prPlan is the plan directory a roadmap PR body names ("**Plan:** `dir`").
func prPlan(body string) string {
	if m := planRE.FindStringSubmatch(body); m != nil {
		return m[1]
	}
	return ""
}

// Bounds on the acceptance criteria read from an issue body.
const (
	maxCriteria      = 50
	maxCriterionSize = 500
)

var headingRE = regexp.MustCompile(`^#{1,6}\s+(.*)$`)

// acceptanceCriteria are the list items under an issue's "Acceptance"
// heading (up to the next heading), bounded. The issue is a person's text,
// and anyone may have written it: it is data for the prompt only.
func acceptanceCriteria(body string) []string {
	var out []string
	in := false
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimSpace(line)
		if m := headingRE.FindStringSubmatch(line); m != nil {
			in = strings.Contains(strings.ToLower(m[1]), "acceptance")
			continue
		}
		if !in || len(out) == maxCriteria {
			continue
		}
		item := strings.TrimSpace(strings.TrimLeft(line, "-*+"))
		if item == line || item == "" {
			continue
		}
		item = strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(item, "[ ]"), "[x]"), "[X]")
		if len(item) > maxCriterionSize {
			item = item[:maxCriterionSize]
		}
		item = strings.TrimSpace(strings.Map(func(r rune) rune {
			if unicode.IsControl(r) {
				return ' '
			}
			return r
		}, strings.ToValidUTF8(item, "")))
		if item != "" {
			out = append(out, item)
		}
	}
	return out
}
