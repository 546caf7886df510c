package prcheck

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/actionsio"
	"github.com/roadmap-dev/roadmap/internal/adopt"
	"github.com/roadmap-dev/roadmap/internal/checks"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/event"
	"github.com/roadmap-dev/roadmap/internal/git"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/inputerr"
	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/policy"
	"github.com/roadmap-dev/roadmap/internal/recordstore"
	"github.com/roadmap-dev/roadmap/internal/redact"
	"github.com/roadmap-dev/roadmap/internal/sandbox"
)

// StatusContext is the commit status the job owns; a branch protection rule
// requires it by this name.
const StatusContext = "roadmap/checks"

// GitHub is what the job asks of GitHub: the status, and the record of
// Options.Issue (*github.Client has both).
type GitHub interface {
	CreateStatus(ctx context.Context, sha, context, state, description, targetURL string) error
	// The record is read through the record store (read-only here).
	recordstore.Client
}

// Options are one run of the job: the verb's flags and the environment it
// runs in.
type Options struct {
	Dir        string // the workspace (a repository checkout, or a directory in one)
	ConfigPath string // "" reads Dir/.github/roadmap.yml, which may be absent
	Plan       string // the change directory relative to Dir; "" finds it
	SHA        string // the commit the status goes on; "" takes the event's head, else HEAD
	Group      int    // check only this group; 0 checks every group
	Issue      int    // take the plan from this issue's record (stage.plan)
	Base       string // the base branch for fail-to-pass; "" takes the event's, else the configuration's
	NoStatus   bool   // set no commit status

	// GitHub sets the status and reads the record; it may be nil only with
	// NoStatus and no Issue.
	GitHub  GitHub
	Getenv  func(string) string
	Environ []string // the environment the checks' processes start from
	IO      *actionsio.IO
	Masker  *redact.Masker
	// Logf prints a message for a person (stderr); Stderr takes the lines
	// that describe the isolation boundary.
	Logf   func(format string, args ...any)
	Stderr io.Writer
	// Boundary opens the isolation boundary for the work tree dir as cfg says;
	// an *sandbox.Unavailable error fails the checks closed.
	Boundary func(ctx context.Context, cfg *config.Config, dir string) (*sandbox.Boundary, error)
	// PlanRules check the plan after plan.Validate, before any group runs:
	// the seam where the plan gates plug in.
	PlanRules []PlanRule
}

// InputError is a run refused because the command line or an input file
// (the configuration, the plan) is wrong: the caller's to fix.
type InputError = inputerr.Error

func inputErr(format string, args ...any) error {
	return &InputError{Err: fmt.Errorf(format, args...)}
}

// F2P states of a group (F2P.Status).
const (
	F2PNone       = "none"        // the group has no `fails` command
	F2PHeld       = "held"        // every `fails` command failed before the change and passes at the head
	F2PFailed     = "failed"      // one passed before the change: the group fails
	F2PNotChecked = "not checked" // the before tree could not be had, or the head already fails
)

// Result is the outcome, and the --json document. Field names are stable.
type Result struct {
	SHA string `json:"sha"`
	// Isolation is "isolated" or "not isolated (isolation: none)".
	Isolation string  `json:"isolation"`
	Passed    bool    `json:"passed"`
	Groups    []Group `json:"groups"`
	// Configured is the run of the configuration's checks.commands, once per
	// head (they do not depend on the group).
	Configured Configured `json:"configured"`
	Plan       string     `json:"plan"`
	// Findings are the plan's validation: `openspec validate --strict`,
	// roadmap's rules and Options.PlanRules. One that fails (ERROR or
	// WARNING) fails the checks.
	Findings      []plan.Finding `json:"findings"`
	Tree          string         `json:"tree"` // the commit the work tree held, when it is a git checkout
	FailedGroup   int            `json:"failed_group,omitempty"`
	FailedCommand string         `json:"failed_command,omitempty"`
	Description   string         `json:"description"` // the commit status's description
}

// Group is the checks of one task group.
type Group struct {
	Number     int       `json:"number"`
	Title      string    `json:"title"`
	Passed     bool      `json:"passed"`
	Commands   []Command `json:"commands"`
	Log        string    `json:"log"`
	FailToPass F2P       `json:"fail_to_pass"`

	failed string // the command that failed, "" when passed
	why    string // "exited 1", "timed out", …
}

// Configured is the run of the configuration's checks.commands.
type Configured struct {
	Passed   bool      `json:"passed"`
	Commands []Command `json:"commands"`
	Log      string    `json:"log"`

	failed, why string
}

// Command is how one command ended at the head.
type Command struct {
	Command    string `json:"command"`
	ExitCode   int    `json:"exit_code"`
	DurationMS int64  `json:"duration_ms"`
	Passed     bool   `json:"passed"`
	Ran        bool   `json:"ran"` // false after an earlier command of the group failed
	TimedOut   bool   `json:"timed_out,omitempty"`
	Error      string `json:"error,omitempty"` // refused by the policy, does not split, could not start
}

// F2P is a group's fail-to-pass check.
type F2P struct {
	Status   string     `json:"status"`
	Reason   string     `json:"reason,omitempty"`
	Before   string     `json:"before,omitempty"` // the commit the before tree was made from
	Overlay  []string   `json:"overlay,omitempty"`
	Commands []F2PEntry `json:"commands,omitempty"`
}

// F2PEntry is one `fails` command on the before tree.
type F2PEntry struct {
	Command        string `json:"command"`
	BeforeExitCode int    `json:"before_exit_code"`
	Held           bool   `json:"held"`
}

// job is one run.
type job struct {
	Options

	cfg *config.Config
	pol *policy.Policy
	// checkCommands are checks.commands, or those detected (adopt.RunTimeChecks).
	checkCommands []string
	ev            *event.Event
	repo          *git.Repo // nil when the workdir is not a git checkout
	repoErr       error     // why repo is nil
	repoTop       string    // the repository's top level (the workdir without git)
	tree          string    // the commit the work tree holds
	change        *plan.Change
	tasksRel      string // tasks.md relative to the repository top, for annotations
	opts          checks.Options

	// results caches each command's outcome at the head: the same command
	// in two groups, or a configured one a group also names, runs once.
	results map[string]headRun

	// readOnly says why the token cannot set the status (a fork's pull
	// request, a 403 on the write); "" while it can.
	readOnly string
}

// headRun is one command's run at the head; err says why it could not run.
type headRun struct {
	rep checks.Report
	err string
}

// Run runs the checks and sets the status. A Result that does not pass is
// the answer, not an error. The error is an *InputError for a run refused on
// its input, any other for a run that could not finish; with an error the
// Result is nil, except when only the final status write failed.
func Run(ctx context.Context, o Options) (*Result, error) {
	j := &job{Options: o}
	if j.Logf == nil {
		j.Logf = func(string, ...any) {}
	}
	if j.Stderr == nil {
		j.Stderr = io.Discard
	}
	if j.Masker == nil {
		j.Masker = redact.New(redact.Config{})
	}
	return j.run(ctx)
}

func (j *job) run(ctx context.Context) (*Result, error) {
	var err error
	if j.ev, err = event.FromEnv(j.Getenv); err != nil {
		return nil, &InputError{Err: err}
	}
	j.repoTop = j.Dir
	if repo, err := git.Open(ctx, j.Dir, j.Environ); err == nil {
		j.repo, j.repoTop = repo, repo.Dir
		if j.tree, err = repo.Head(ctx); err != nil {
			return nil, &InputError{Err: err}
		}
	} else {
		j.repoErr = err
	}
	// The trust settings come from the base branch, never the PR's tree.
	explicit := j.ConfigPath != ""
	if !explicit {
		j.ConfigPath = filepath.Join(j.repoTop, config.DefaultPath)
	}
	cfg, source, err := TrustedConfig(ctx, j.repo, j.repoTop, j.ConfigPath, explicit, BaseCommit(ctx, j.repo, j.baseBranch(config.Default())))
	if err != nil {
		j.IO.Error(j.relPath(j.ConfigPath), configLine(err), j.Masker.Mask(err.Error()))
		return nil, &InputError{Err: err}
	}
	j.cfg = cfg
	j.Logf("configuration: %s", source)
	// checks.commands, else (checks.detect) those init would write for the
	// tree, with the policy rows they need under the configuration's own.
	cmds, rows, by, err := adopt.RunTimeChecks(j.cfg, j.repoTop)
	if err != nil {
		j.Logf("checks.commands not detected: %v", err)
	}
	if by != "" {
		j.Logf("checks.commands detected from %s: %s (checks.detect: false turns this off)", by, strings.Join(cmds, "; "))
	}
	j.checkCommands = cmds
	if j.pol, err = policy.ParseNodeOver(&j.cfg.Policy, rows); err != nil {
		return nil, inputErr("%s: policy: %w", source, err)
	}
	if j.GitHub == nil && (!j.NoStatus || j.Issue > 0) {
		return nil, errors.New("no GitHub client to set the status or read the record with")
	}
	if j.SHA == "" && j.ev.PullRequest != nil {
		j.SHA = j.ev.PullRequest.HeadSHA
	}
	if j.SHA == "" {
		j.SHA = j.tree
	}
	if j.SHA == "" {
		return nil, inputErr("no commit to check (%v); pass --sha", j.repoErr)
	}
	if pr := j.ev.PullRequest; pr != nil && pr.BaseRepo != "" && !strings.EqualFold(pr.HeadRepo, pr.BaseRepo) {
		// A pull_request run for a fork's PR gets a read-only token: the
		// status write would fail the job for nothing the PR did.
		from := pr.HeadRepo
		if from == "" {
			from = "a deleted fork"
		}
		j.noStatus(fmt.Sprintf("the pull request comes from %s, and its run's token is read-only", from))
	}
	if j.tree != "" && j.tree != j.SHA {
		// The usual pull_request checkout: the merge of the head into the
		// base. Its checks are the head's as it would land.
		j.Logf("the work tree holds %s; the status goes on %s", short(j.tree), short(j.SHA))
	}

	dir, err := j.findPlan(ctx)
	if err != nil {
		return nil, err
	}
	if dir == "" {
		return j.noPlan(ctx)
	}
	if j.change, err = plan.LoadChange(dir); err != nil {
		file, line := j.relPath(filepath.Join(dir, "tasks.md")), 0
		var pe *plan.ParseError
		if errors.As(err, &pe) {
			line = pe.Line
		}
		msg := j.Masker.Mask(err.Error())
		j.IO.Error(file, line, msg)
		// The PR's plan is part of what is checked: a required status
		// must not stay missing because the plan does not parse.
		j.logStatus(ctx, "failure", "the plan does not load: "+msg)
		return nil, &InputError{Err: err}
	}
	j.tasksRel = j.relPath(filepath.Join(j.change.Dir, "tasks.md"))
	groups := j.change.Tasks.Groups
	if j.Group > 0 {
		g, ok := j.change.Tasks.Group(j.Group)
		if !ok {
			return nil, inputErr("the plan %s has no group %d", j.relPath(j.change.Dir), j.Group)
		}
		groups = []plan.Group{g}
	}
	findings, err := j.validatePlan(ctx)
	if err != nil {
		return nil, j.internal(ctx, err)
	}

	b, err := j.Boundary(ctx, j.cfg, j.Dir)
	var unavailable *sandbox.Unavailable
	if errors.As(err, &unavailable) {
		// Fail closed: the plan's commands are model-written code, and this
		// job holds a token.
		why := unavailable.Error()
		j.Logf("%s", why)
		j.IO.Error("", 0, why)
		res := &Result{SHA: j.SHA, Isolation: "unavailable: " + why, Plan: filepath.ToSlash(j.relPath(j.change.Dir)), Tree: j.tree,
			Findings: findings, Groups: []Group{}, Configured: Configured{Commands: []Command{}},
			Description: "not run: no isolation boundary for model-written commands (docs/isolation.md)"}
		j.logStatus(ctx, "failure", res.Description)
		return res, nil
	}
	if err != nil {
		return nil, &InputError{Err: err}
	}
	fmt.Fprintf(j.Stderr, "roadmap: checks: %s\n", b.Describe())
	if !b.Isolated() {
		fmt.Fprintf(j.Stderr, "::warning title=roadmap: not isolated::%s\n", sandbox.NotIsolatedWarning)
	}
	defer func() {
		if err := b.Close(); err != nil {
			j.Logf("close the isolation boundary: %v", err)
		}
	}()

	sb := policy.NewSandbox(b, j.pol, j.Environ)
	ws, err := sb.Workspace()
	if err != nil {
		return nil, err
	}
	j.opts = checks.Options{Mask: j.Masker.Mask, Timeout: j.cfg.Checks.Timeout}
	j.results = map[string]headRun{}

	if err := j.setStatus(ctx, "pending", fmt.Sprintf("checking %s", plural(len(groups), "group"))); err != nil {
		return nil, err
	}
	isoWord := "isolated"
	if !b.Isolated() {
		isoWord = "not isolated (isolation: none)"
	}
	res := &Result{SHA: j.SHA, Isolation: isoWord, Plan: filepath.ToSlash(j.relPath(j.change.Dir)), Tree: j.tree, Findings: findings, Groups: []Group{}}
	runner := checks.SandboxRunner(sb)
	for _, g := range groups {
		cg, err := j.runGroup(ctx, runner, ws, g)
		if err != nil {
			return nil, j.internal(ctx, fmt.Errorf("group %d: %w", g.Number, err))
		}
		res.Groups = append(res.Groups, cg)
	}
	cc, err := j.runConfigured(ctx, runner, ws)
	if err != nil {
		return nil, j.internal(ctx, fmt.Errorf("configured checks: %w", err))
	}
	res.Configured = cc
	if err := j.failToPass(ctx, res.Groups, groups); err != nil {
		return nil, j.internal(ctx, fmt.Errorf("fail-to-pass: %w", err))
	}
	return res, j.finish(ctx, res)
}

// configLine is the line a configuration error names, 0 when none.
func configLine(err error) int {
	var ce *config.Error
	if errors.As(err, &ce) {
		return ce.Line
	}
	return 0
}

// findPlan names the change directory: Plan, else the record's stage.plan
// of Issue, else the only change in the repository; "" when there is none.
func (j *job) findPlan(ctx context.Context) (string, error) {
	if j.Plan != "" {
		return j.inWorkdir(j.Plan), nil
	}
	if j.Issue > 0 {
		rc, err := recordstore.ReadOnly(j.GitHub).Read(ctx, j.Issue, 0)
		if err != nil {
			return "", err
		}
		p, ok := rc.Record.StagePlan()
		if !ok || strings.TrimSpace(p) == "" {
			return "", inputErr("issue %d has no stage.plan in its record; pass --plan", j.Issue)
		}
		return j.inWorkdir(p), nil
	}
	ids, err := plan.ListChanges(j.Dir)
	if err != nil {
		return "", &InputError{Err: err}
	}
	switch len(ids) {
	case 0:
		// A PR that carries no plan (an ordinary contributor's) passes the
		// plan part: there is nothing of roadmap's to check.
		return "", nil
	case 1:
		return plan.ChangeDir(j.Dir, ids[0]), nil
	}
	return "", inputErr("%d changes under %s (%s); pass --plan or --issue", len(ids), plan.ChangesDir, strings.Join(ids, ", "))
}

// noPlan ends the checks of a PR that carries no OpenSpec change: the status
// passes, saying there was no plan to check, and nothing is run.
func (j *job) noPlan(ctx context.Context) (*Result, error) {
	res := &Result{SHA: j.SHA, Passed: true, Findings: []plan.Finding{}, Groups: []Group{}, Configured: Configured{Commands: []Command{}}, Isolation: "not needed: nothing ran",
		Description: "no plan: this commit carries no OpenSpec change under " + plan.ChangesDir}
	if err := j.IO.SetOutput("passed", "true"); err != nil {
		j.Logf("set output passed: %v", err)
	}
	if err := j.IO.AddSummary(fmt.Sprintf("## roadmap checks · `%s` · no plan\n\n%s.\n", short(res.SHA), res.Description)); err != nil {
		j.Logf("step summary: %v", err)
	}
	err := j.setStatus(ctx, "success", res.Description)
	j.Logf("%s", res.Description)
	return res, err
}

// internal ends the run on a failure that is not the PR's: the status says
// so, so a required check does not stay pending.
func (j *job) internal(ctx context.Context, err error) error {
	msg := j.Masker.Mask(err.Error())
	j.IO.Error("", 0, "roadmap checks: "+msg)
	j.logStatus(ctx, "error", "roadmap checks could not finish: "+msg)
	return errors.New(msg)
}

// setStatus sets roadmap/checks on the head unless NoStatus. The write
// outlives a cancelled run: a status left pending would block the PR.
// A token that may not write statuses (403) ends the writes: the job's
// summary says so, and the job's own result stands for the status.
func (j *job) setStatus(ctx context.Context, state, description string) error {
	if j.NoStatus || j.GitHub == nil || j.readOnly != "" {
		return nil
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	err := j.GitHub.CreateStatus(wctx, j.SHA, StatusContext, state, description, j.runURL())
	var auth *github.AuthError
	if errors.As(err, &auth) && auth.Status == http.StatusForbidden {
		j.noStatus("the token may not set commit statuses (" + j.Masker.Mask(auth.Message) + ")")
		return nil
	}
	return err
}

// noStatus stops the status writes for why, and says so in the log and in
// the job's summary, once.
func (j *job) noStatus(why string) {
	if j.readOnly != "" {
		return
	}
	j.readOnly = why
	j.Logf("no %s status: %s; the checks still run and this job's result is theirs", StatusContext, why)
	if err := j.IO.AddSummary(fmt.Sprintf("> **No `%s` status**: %s. The checks still run; this job's result is theirs.\n\n", StatusContext, why)); err != nil {
		j.Logf("step summary: %v", err)
	}
}

// logStatus sets the status on a path that already ends with another
// error: a failed write is only said.
func (j *job) logStatus(ctx context.Context, state, description string) {
	if err := j.setStatus(ctx, state, description); err != nil {
		j.Logf("%s", j.Masker.Mask(err.Error()))
	}
}

// runURL is the workflow run's page, the status's link, when in Actions.
func (j *job) runURL() string {
	server, repo, run := j.Getenv("GITHUB_SERVER_URL"), j.Getenv("GITHUB_REPOSITORY"), j.Getenv("GITHUB_RUN_ID")
	if server == "" || repo == "" || run == "" {
		return ""
	}
	return strings.TrimSuffix(server, "/") + "/" + repo + "/actions/runs/" + run
}
