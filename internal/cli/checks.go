package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/actionsio"
	"github.com/roadmap-dev/roadmap/internal/checks"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/event"
	"github.com/roadmap-dev/roadmap/internal/git"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/policy"
	"github.com/roadmap-dev/roadmap/internal/redact"
	"github.com/roadmap-dev/roadmap/internal/sandbox"
)

// statusContext is the commit status the verb owns; a branch protection rule
// requires it by this name.
const statusContext = "roadmap/checks"

// F2P states of a group (checksF2P.Status).
const (
	f2pNone       = "none"        // the group has no `fails` command
	f2pHeld       = "held"        // every `fails` command failed before the change and passes at the head
	f2pFailed     = "failed"      // one passed before the change: the group fails
	f2pNotChecked = "not checked" // the before tree could not be had, or the head already fails
)

// checksResult is the --json document. Field names are stable.
type checksResult struct {
	SHA string `json:"sha"`
	// Isolation is "isolated" or "not isolated (isolation: none)".
	Isolation string        `json:"isolation"`
	Passed    bool          `json:"passed"`
	Groups    []checksGroup `json:"groups"`
	// Configured is the run of the configuration's checks.commands, once per
	// head (they do not depend on the group).
	Configured    checksConfigured `json:"configured"`
	Plan          string           `json:"plan"`
	Tree          string           `json:"tree"` // the commit the work tree held, when it is a git checkout
	FailedGroup   int              `json:"failed_group,omitempty"`
	FailedCommand string           `json:"failed_command,omitempty"`
	Description   string           `json:"description"` // the commit status's description
}

type checksGroup struct {
	Number     int             `json:"number"`
	Title      string          `json:"title"`
	Passed     bool            `json:"passed"`
	Commands   []checksCommand `json:"commands"`
	Log        string          `json:"log"`
	FailToPass checksF2P       `json:"fail_to_pass"`

	failed string // the command that failed, "" when passed
	why    string // "exited 1", "timed out", …
}

type checksConfigured struct {
	Passed   bool            `json:"passed"`
	Commands []checksCommand `json:"commands"`
	Log      string          `json:"log"`

	failed, why string
}

type checksCommand struct {
	Command    string `json:"command"`
	ExitCode   int    `json:"exit_code"`
	DurationMS int64  `json:"duration_ms"`
	Passed     bool   `json:"passed"`
	Ran        bool   `json:"ran"` // false after an earlier command of the group failed
	TimedOut   bool   `json:"timed_out,omitempty"`
	Error      string `json:"error,omitempty"` // refused by the policy, does not split, could not start
}

type checksF2P struct {
	Status   string           `json:"status"`
	Reason   string           `json:"reason,omitempty"`
	Before   string           `json:"before,omitempty"` // the commit the before tree was made from
	Overlay  []string         `json:"overlay,omitempty"`
	Commands []checksF2PEntry `json:"commands,omitempty"`
}

type checksF2PEntry struct {
	Command        string `json:"command"`
	BeforeExitCode int    `json:"before_exit_code"`
	Held           bool   `json:"held"`
}

func runChecks(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "checks")
	planDir := fs.String("plan", "", "the OpenSpec change directory, relative to the workspace (default: --issue's stage.plan, else the only change under "+plan.ChangesDir+")")
	workdir := fs.String("workdir", "", "the repository checkout (default $GITHUB_WORKSPACE or .)")
	sha := fs.String("sha", "", "the commit the status goes on (default: the pull_request event's head, else git rev-parse HEAD)")
	group := fs.Int("group", 0, "check only group N (default: every group)")
	cfgPath := fs.String("config", "", "configuration file (default WORKDIR/"+config.DefaultPath+")")
	issue := fs.Int("issue", 0, "take the plan from this issue's record (stage.plan)")
	base := fs.String("base", "", "the base branch for fail-to-pass (default: the pull_request event's base, else the configuration's implement.base_branch)")
	noStatus := fs.Bool("no-status", false, "do not set the roadmap/checks commit status")
	asJSON := fs.Bool("json", false, "print the result as JSON on stdout")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		env.Errorf("checks: unexpected argument %q", fs.Arg(0))
		return ExitUsage
	}
	if *group < 0 {
		env.Errorf("checks: --group %d: group numbers start at 1", *group)
		return ExitUsage
	}
	j := &checksJob{env: env, io: actionsio.New(env.Getenv, env.Stdout), masker: env.masker(),
		planDir: *planDir, sha: *sha, group: *group, issue: *issue, base: *base, noStatus: *noStatus, asJSON: *asJSON}
	j.dir = env.workdir(*workdir)
	j.cfgPath = *cfgPath
	return j.run(ctx)
}

// checksJob is one run of the verb.
type checksJob struct {
	env    *Env
	io     *actionsio.IO
	masker *redact.Masker
	gh     *github.Client

	dir, cfgPath, planDir, sha, base string
	group, issue                     int
	noStatus, asJSON                 bool

	cfg      *config.Config
	pol      *policy.Policy
	ev       *event.Event
	repo     *git.Repo // nil when the workdir is not a git checkout
	repoErr  error     // why repo is nil
	repoTop  string    // the repository's top level (the workdir without git)
	tree     string    // the commit the work tree holds
	change   *plan.Change
	tasksRel string // tasks.md relative to the repository top, for annotations
	opts     checks.Options

	// results caches each command's outcome at the head: the same command
	// in two groups, or a configured one a group also names, runs once.
	results map[string]headRun
}

// headRun is one command's run at the head; err says why it could not run.
type headRun struct {
	rep checks.Report
	err string
}

func (j *checksJob) run(ctx context.Context) int {
	env := j.env
	var err error
	if j.ev, err = event.FromEnv(env.Getenv); err != nil {
		env.Errorf("checks: %v", err)
		return ExitUsage
	}
	load := config.LoadExplicit
	if j.cfgPath == "" {
		j.cfgPath, load = filepath.Join(j.dir, config.DefaultPath), config.Load
	}
	if j.cfg, err = load(j.cfgPath); err != nil {
		env.Errorf("checks: %v", err)
		j.io.Error(j.relPath(j.cfgPath), lineOf(err), j.masker.Mask(err.Error()))
		return ExitUsage
	}
	if j.pol, err = policy.ParseNode(&j.cfg.Policy); err != nil {
		env.Errorf("checks: %s: policy: %v", j.cfgPath, err)
		return ExitUsage
	}
	if !j.noStatus || j.issue > 0 {
		if j.gh, err = env.gitHubClient(j.masker, time.Time{}); err != nil {
			env.Errorf("checks: %v (pass --no-status to run without setting the status)", err)
			return ExitUsage
		}
	}
	j.repoTop = j.dir
	if repo, err := git.Open(ctx, j.dir, env.environ()); err == nil {
		j.repo, j.repoTop = repo, repo.Dir
		if j.tree, err = repo.Head(ctx); err != nil {
			env.Errorf("checks: %v", err)
			return ExitUsage
		}
	} else {
		j.repoErr = err
	}
	if j.sha == "" && j.ev.PullRequest != nil {
		j.sha = j.ev.PullRequest.HeadSHA
	}
	if j.sha == "" {
		j.sha = j.tree
	}
	if j.sha == "" {
		env.Errorf("checks: no commit to check (%v); pass --sha", j.repoErr)
		return ExitUsage
	}
	if j.tree != "" && j.tree != j.sha {
		// The usual pull_request checkout: the merge of the head into the
		// base. Its checks are the head's as it would land.
		env.Errorf("checks: the work tree holds %s; the status goes on %s", short(j.tree), short(j.sha))
	}

	dir, code := j.findPlan(ctx)
	if code != ExitOK {
		return code
	}
	if dir == "" {
		return j.noPlan(ctx)
	}
	if j.change, err = plan.LoadChange(dir); err != nil {
		env.Errorf("checks: %v", err)
		file, line := j.relPath(filepath.Join(dir, "tasks.md")), 0
		var pe *plan.ParseError
		if errors.As(err, &pe) {
			line = pe.Line
		}
		msg := j.masker.Mask(err.Error())
		j.io.Error(file, line, msg)
		// The PR's plan is part of what is checked: a required status
		// must not stay missing because the plan does not parse.
		j.setStatus(ctx, "failure", "the plan does not load: "+msg)
		return ExitUsage
	}
	j.tasksRel = j.relPath(filepath.Join(j.change.Dir, "tasks.md"))
	groups := j.change.Tasks.Groups
	if j.group > 0 {
		g, ok := j.change.Tasks.Group(j.group)
		if !ok {
			env.Errorf("checks: the plan %s has no group %d", j.relPath(j.change.Dir), j.group)
			return ExitUsage
		}
		groups = []plan.Group{g}
	}

	iso, why, code := env.openBoundary(ctx, "checks", string(j.cfg.Isolation), j.dir)
	if code != ExitOK {
		return code
	}
	defer iso.close(env, "checks")
	if why != "" {
		// Fail closed: the plan's commands are model-written code, and this
		// job holds a token.
		j.io.Error("", 0, why)
		j.setStatus(ctx, "failure", "not run: no isolation boundary for model-written commands (docs/isolation.md)")
		return ExitFindings
	}

	sb := policy.NewSandbox(iso.b, j.pol, env.environ())
	ws, err := sb.Workspace()
	if err != nil {
		env.Errorf("checks: %v", err)
		return ExitInternal
	}
	j.opts = checks.Options{Mask: j.masker.Mask, Timeout: j.cfg.Checks.Timeout}
	j.results = map[string]headRun{}

	if !j.setStatus(ctx, "pending", fmt.Sprintf("checking %s", plural(len(groups), "group"))) {
		return ExitInternal
	}
	isoWord := "isolated"
	if !iso.b.Isolated() {
		isoWord = "not isolated (isolation: none)"
	}
	res := checksResult{SHA: j.sha, Isolation: isoWord, Plan: filepath.ToSlash(j.relPath(j.change.Dir)), Tree: j.tree, Groups: []checksGroup{}}
	runner := checks.SandboxRunner(sb)
	for _, g := range groups {
		cg, err := j.runGroup(ctx, runner, ws, g)
		if err != nil {
			return j.internal(ctx, fmt.Errorf("group %d: %w", g.Number, err))
		}
		res.Groups = append(res.Groups, cg)
	}
	cc, err := j.runConfigured(ctx, runner, ws)
	if err != nil {
		return j.internal(ctx, fmt.Errorf("configured checks: %w", err))
	}
	res.Configured = cc
	if err := j.failToPass(ctx, res.Groups, groups); err != nil {
		return j.internal(ctx, fmt.Errorf("fail-to-pass: %w", err))
	}
	return j.finish(ctx, &res)
}

// findPlan names the change directory: --plan, else the record's stage.plan
// of --issue, else the only change in the repository.
func (j *checksJob) findPlan(ctx context.Context) (string, int) {
	env := j.env
	if j.planDir != "" {
		return j.inWorkdir(j.planDir), ExitOK
	}
	if j.issue > 0 {
		rc, err := j.gh.ReadRecord(ctx, j.issue, 0)
		if err != nil {
			env.Errorf("checks: %v", err)
			return "", ExitInternal
		}
		rec := rc.Record
		p, ok := rec.StagePlan()
		if !ok || strings.TrimSpace(p) == "" {
			env.Errorf("checks: issue %d has no stage.plan in its record; pass --plan", j.issue)
			return "", ExitUsage
		}
		return j.inWorkdir(p), ExitOK
	}
	ids, err := plan.ListChanges(j.dir)
	if err != nil {
		env.Errorf("checks: %v", err)
		return "", ExitUsage
	}
	switch len(ids) {
	case 0:
		// A PR that carries no plan (an ordinary contributor's) passes the
		// plan part: there is nothing of roadmap's to check.
		return "", ExitOK
	case 1:
		return plan.ChangeDir(j.dir, ids[0]), ExitOK
	}
	env.Errorf("checks: %d changes under %s (%s); pass --plan or --issue", len(ids), plan.ChangesDir, strings.Join(ids, ", "))
	return "", ExitUsage
}

// noPlan ends the checks of a PR that carries no OpenSpec change: the status
// passes, saying there was no plan to check, and nothing is run.
func (j *checksJob) noPlan(ctx context.Context) int {
	res := checksResult{SHA: j.sha, Passed: true, Groups: []checksGroup{}, Isolation: "not needed: nothing ran",
		Description: "no plan: this commit carries no OpenSpec change under " + plan.ChangesDir}
	if err := j.io.SetOutput("passed", "true"); err != nil {
		j.env.Errorf("checks: set output passed: %v", err)
	}
	if err := j.io.AddSummary(fmt.Sprintf("## roadmap checks · `%s` · no plan\n\n%s.\n", short(res.SHA), res.Description)); err != nil {
		j.env.Errorf("checks: step summary: %v", err)
	}
	statusOK := j.setStatus(ctx, "success", res.Description)
	j.env.Errorf("checks: %s", res.Description)
	if j.asJSON {
		if code := j.env.JSON(res); code != ExitOK {
			return code
		}
	}
	if !statusOK {
		return ExitInternal
	}
	return ExitOK
}

// runGroup runs the group's verify commands at the head, in task order,
// stopping at the first that does not pass.
func (j *checksJob) runGroup(ctx context.Context, r checks.Runner, ws string, g plan.Group) (checksGroup, error) {
	cg := checksGroup{Number: g.Number, Title: g.Title, Passed: true, Commands: []checksCommand{}, FailToPass: checksF2P{Status: f2pNone}}
	if len(g.FailToPass()) > 0 {
		cg.FailToPass.Status = f2pNotChecked
	}
	for _, cmd := range g.VerifyCommands() {
		if !cg.Passed {
			cg.Commands = append(cg.Commands, checksCommand{Command: cmd})
			continue
		}
		c, log, why, err := j.runOne(ctx, r, ws, cmd)
		if err != nil {
			return cg, err
		}
		cg.Commands = append(cg.Commands, c)
		if !c.Passed {
			cg.Passed, cg.Log, cg.failed, cg.why = false, log, cmd, why
		}
	}
	j.env.Errorf("checks: group %d: %s", g.Number, passWord(cg.Passed))
	return cg, nil
}

// runConfigured runs the configuration's checks.commands once.
func (j *checksJob) runConfigured(ctx context.Context, r checks.Runner, ws string) (checksConfigured, error) {
	cc := checksConfigured{Passed: true, Commands: []checksCommand{}}
	for _, cmd := range j.cfg.Checks.Commands {
		if !cc.Passed {
			cc.Commands = append(cc.Commands, checksCommand{Command: cmd})
			continue
		}
		c, log, why, err := j.runOne(ctx, r, ws, cmd)
		if err != nil {
			return cc, err
		}
		cc.Commands = append(cc.Commands, c)
		if !c.Passed {
			cc.Passed, cc.Log, cc.failed, cc.why = false, log, cmd, why
		}
	}
	if len(cc.Commands) > 0 {
		j.env.Errorf("checks: configured checks: %s", passWord(cc.Passed))
	}
	return cc, nil
}

// runOne runs one command at the head (or takes its earlier result). A
// command the policy refuses, that does not split or cannot start is a failed
// check, not an internal failure: the plan names a command that cannot pass.
// The error is for a run that could not finish (the context ended).
func (j *checksJob) runOne(ctx context.Context, r checks.Runner, ws, cmd string) (c checksCommand, log, why string, err error) {
	cmd = strings.TrimSpace(cmd)
	hr, seen := j.results[cmd]
	if !seen {
		hr.rep, err = checks.Run(ctx, r, policy.Split, ws, []string{cmd}, j.opts)
		if err != nil {
			if ctx.Err() != nil {
				return c, "", "", err
			}
			hr.err = j.masker.Mask(err.Error())
			hr.rep = checks.Report{FailedCommand: cmd, ExitCode: -1, Log: "$ " + j.masker.Mask(cmd) + "\n[" + hr.err + "]",
				Results: []checks.CommandResult{{Command: cmd, Expect: checks.ExpectPass, ExitCode: -1}}}
		}
		j.results[cmd] = hr
	}
	rep := hr.rep
	c.Error = hr.err
	c.Command, c.Ran, c.Passed = cmd, true, rep.Passed
	if len(rep.Results) > 0 {
		res := rep.Results[0]
		c.ExitCode, c.DurationMS, c.TimedOut = res.ExitCode, res.Duration.Milliseconds(), res.TimedOut
	}
	switch {
	case c.Passed:
	case c.Error != "":
		why = "could not run: " + c.Error
	case c.TimedOut:
		why = "timed out"
	default:
		why = fmt.Sprintf("exited %d", c.ExitCode)
	}
	if !c.Passed {
		j.env.Errorf("checks: %s\n%s", j.masker.Mask(cmd+" "+why), rep.Log)
	}
	return c, rep.Log, why, nil
}

// internal ends the run on a failure that is not the PR's: the status says
// so, so a required check does not stay pending.
func (j *checksJob) internal(ctx context.Context, err error) int {
	msg := j.masker.Mask(err.Error())
	j.env.Errorf("checks: %s", msg)
	j.io.Error("", 0, "roadmap checks: "+msg)
	j.setStatus(ctx, "error", "roadmap checks could not finish: "+msg)
	return ExitInternal
}

// setStatus sets roadmap/checks on the head unless --no-status. It reports
// whether the write succeeded (or was not asked for). The write outlives a
// cancelled run: a status left pending would block the PR.
func (j *checksJob) setStatus(ctx context.Context, state, description string) bool {
	if j.noStatus || j.gh == nil {
		return true
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := j.gh.CreateStatus(wctx, j.sha, statusContext, state, description, j.runURL()); err != nil {
		j.env.Errorf("checks: %v", err)
		return false
	}
	return true
}

// runURL is the workflow run's page, the status's link, when in Actions.
func (j *checksJob) runURL() string {
	server, repo, run := j.env.Getenv("GITHUB_SERVER_URL"), j.env.Getenv("GITHUB_REPOSITORY"), j.env.Getenv("GITHUB_RUN_ID")
	if server == "" || repo == "" || run == "" {
		return ""
	}
	return strings.TrimSuffix(server, "/") + "/" + repo + "/actions/runs/" + run
}

// finish writes the outputs, annotations, summary, status and JSON, and
// returns the exit code.
func (j *checksJob) finish(ctx context.Context, res *checksResult) int {
	passedGroups := 0
	res.Passed = res.Configured.Passed
	for _, g := range res.Groups {
		if g.Passed {
			passedGroups++
			continue
		}
		res.Passed = false
		if res.FailedGroup == 0 {
			res.FailedGroup, res.FailedCommand = g.Number, g.failed
			res.Description = fmt.Sprintf("group %d: %s %s", g.Number, g.failed, g.why)
		}
		file, line, msg := j.annotation(g)
		j.io.Error(file, line, j.masker.Mask(msg))
	}
	if !res.Configured.Passed {
		if res.FailedCommand == "" {
			res.FailedCommand = res.Configured.failed
			res.Description = fmt.Sprintf("checks.commands: %s %s", res.Configured.failed, res.Configured.why)
		}
		file, line := j.relPath(j.cfgPath), 0
		if _, err := os.Stat(j.cfgPath); err != nil {
			file = ""
		}
		j.io.Error(file, line, j.masker.Mask(fmt.Sprintf("checks.commands: %s %s", res.Configured.failed, res.Configured.why)))
	}
	if res.Passed {
		res.Description = fmt.Sprintf("%d of %d groups pass", passedGroups, len(res.Groups))
		for _, g := range res.Groups {
			if g.FailToPass.Status == f2pNotChecked {
				res.Description += " (fail-to-pass not checked)"
				break
			}
		}
	}
	res.Description = j.masker.Mask(res.Description)
	for _, o := range [][2]string{
		{"passed", strconv.FormatBool(res.Passed)},
		{"failed_group", groupOutput(res.FailedGroup)},
		{"failed_command", j.masker.Mask(res.FailedCommand)},
	} {
		if err := j.io.SetOutput(o[0], o[1]); err != nil {
			j.env.Errorf("checks: set output %s: %v", o[0], err)
		}
	}
	if err := j.io.AddSummary(j.summary(res)); err != nil {
		j.env.Errorf("checks: step summary: %v", err)
	}
	state := "success"
	if !res.Passed {
		state = "failure"
	}
	statusOK := j.setStatus(ctx, state, res.Description)
	j.env.Errorf("checks: %s: %s", passWord(res.Passed), res.Description)
	if j.asJSON {
		if code := j.env.JSON(res); code != ExitOK {
			return code
		}
	}
	if !statusOK {
		return ExitInternal
	}
	if !res.Passed {
		return ExitFindings
	}
	return ExitOK
}

// annotation places a failed group's finding on the task that names the
// failing command.
func (j *checksJob) annotation(g checksGroup) (file string, line int, msg string) {
	pg, _ := j.change.Tasks.Group(g.Number)
	line, where := pg.Line, fmt.Sprintf("group %d", g.Number)
	// The task the command must pass for; for a fail-to-pass failure, the
	// `fails` task that wrote it to fail.
	wantFails := g.FailToPass.Status == f2pFailed
	var first *plan.Task
	for i := range pg.Tasks {
		t := &pg.Tasks[i]
		if t.Verify == g.failed && (first == nil || t.Fails == wantFails && first.Fails != wantFails) {
			first = t
		}
	}
	if first != nil {
		line, where = first.Line, fmt.Sprintf("group %d task %s", g.Number, first.ID)
	}
	return j.tasksRel, line, fmt.Sprintf("%s: %s %s", where, g.failed, g.why)
}

func groupOutput(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// summary is the step summary: one row per command and fail-to-pass check,
// then the log of each failure.
func (j *checksJob) summary(res *checksResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## roadmap checks · `%s` · %s\n\n", short(res.SHA), passWord(res.Passed))
	fmt.Fprintf(&b, "Plan `%s`: %s.\n\n", res.Plan, mdCell(res.Description))
	if res.Isolation != "isolated" {
		fmt.Fprintf(&b, "> [!WARNING]\n> %s\n\n", sandbox.NotIsolatedWarning)
	}
	b.WriteString("| Group | Command | Result | Time |\n| --- | --- | --- | --- |\n")
	row := func(who string, c checksCommand, why string) {
		result := "✅ exit 0"
		switch {
		case !c.Ran:
			result = "not run"
		case !c.Passed:
			result = "❌ " + why
		}
		t := ""
		switch {
		case !c.Ran:
		case c.DurationMS < 1000:
			t = fmt.Sprintf("%d ms", c.DurationMS)
		default:
			t = fmt.Sprintf("%.1f s", float64(c.DurationMS)/1000)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", mdCell(who), mdCode(c.Command), mdCell(result), t)
	}
	for _, g := range res.Groups {
		who := fmt.Sprintf("%d. %s", g.Number, g.Title)
		for _, c := range g.Commands {
			why := ""
			if c.Command == g.failed {
				why = g.why
			}
			row(who, c, why)
		}
		f := g.FailToPass
		switch f.Status {
		case f2pHeld, f2pFailed:
			for _, e := range f.Commands {
				result := fmt.Sprintf("✅ failed before the change (exit %d)", e.BeforeExitCode)
				if !e.Held {
					result = "❌ passed before the change"
				}
				fmt.Fprintf(&b, "| %s | fail-to-pass %s | %s | |\n", mdCell(who), mdCode(e.Command), mdCell(result))
			}
		case f2pNotChecked:
			fmt.Fprintf(&b, "| %s | fail-to-pass | not checked: %s | |\n", mdCell(who), mdCell(f.Reason))
		}
	}
	for _, c := range res.Configured.Commands {
		why := ""
		if c.Command == res.Configured.failed {
			why = res.Configured.why
		}
		row("checks.commands", c, why)
	}
	b.WriteString("\n")
	for _, g := range res.Groups {
		if g.Log != "" {
			writeLog(&b, fmt.Sprintf("group %d: %s", g.Number, g.failed), g.Log)
		}
	}
	if res.Configured.Log != "" {
		writeLog(&b, "checks.commands: "+res.Configured.failed, res.Configured.Log)
	}
	return b.String()
}

func writeLog(b *strings.Builder, title, log string) {
	fence := "```"
	for strings.Contains(log, fence) {
		fence += "`"
	}
	fmt.Fprintf(b, "<details><summary>%s</summary>\n\n%stext\n%s\n%s\n\n</details>\n\n", mdCell(title), fence, log, fence)
}

// mdCell makes text safe inside a table cell.
func mdCell(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "<", "&lt;")
	return s
}

// mdCode is s as a code span in a table cell.
func mdCode(s string) string {
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	pad := ""
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		pad = " "
	}
	return fence + pad + strings.ReplaceAll(strings.ReplaceAll(s, "\n", " "), "|", `\|`) + pad + fence
}

func passWord(ok bool) string {
	if ok {
		return "passed"
	}
	return "failed"
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// inWorkdir resolves a path given relative to the workspace.
func (j *checksJob) inWorkdir(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	// At the PR's last commit the change may be archived already (implement
	// archives it before the watch): read it where OpenSpec moved it.
	if archived, ok := plan.Archived(j.dir, p); ok {
		p = archived
	}
	return filepath.Join(j.dir, filepath.FromSlash(p))
}

// relPath is p relative to the repository top, with forward slashes, as
// annotations want it; p itself when it is outside.
func (j *checksJob) relPath(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	top := j.repoTop
	if top == "" {
		top = j.dir
	}
	if real, err := filepath.EvalSymlinks(top); err == nil {
		top = real
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		abs = filepath.Join(dir, filepath.Base(abs))
	}
	rel, err := filepath.Rel(top, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return p
	}
	return filepath.ToSlash(rel)
}

// failToPass checks the before half of each passing group's `fails`
// commands in a git worktree: the merge base with the base branch (or, for
// a group implement committed, the commit before the group's), with the
// change's test files laid over it. Whatever stops it from being decided is
// recorded as "not checked" with the reason; it never fails a group.
func (j *checksJob) failToPass(ctx context.Context, res []checksGroup, groups []plan.Group) error {
	var todo []int
	for i, g := range groups {
		if len(g.FailToPass()) == 0 {
			continue
		}
		if !res[i].Passed {
			res[i].FailToPass.Reason = "the group's checks fail at the head"
			continue
		}
		todo = append(todo, i)
	}
	if len(todo) == 0 {
		return nil
	}
	fb, reason := j.f2pBase(ctx)
	for _, i := range todo {
		if reason != "" {
			res[i].FailToPass.Reason = reason
			continue
		}
		if err := j.f2pGroup(ctx, fb, &res[i], groups[i]); err != nil {
			if ctx.Err() != nil {
				return err
			}
			res[i].FailToPass.Reason = j.masker.Mask(err.Error())
		}
		if f := res[i].FailToPass; f.Status == f2pNotChecked {
			j.env.Errorf("checks: group %d: fail-to-pass not checked: %s", groups[i].Number, f.Reason)
		} else {
			j.env.Errorf("checks: group %d: fail-to-pass %s", groups[i].Number, f.Status)
		}
	}
	return nil
}

// f2pBasis is what every group's before tree starts from.
type f2pBasis struct {
	mergeBase string
	groupSHA  map[int]string // implement's group commits in mergeBase..tree
}

// f2pBase finds the merge base of the work tree with the base branch; the
// reason says why fail-to-pass cannot be decided when it cannot.
func (j *checksJob) f2pBase(ctx context.Context) (f2pBasis, string) {
	if j.repo == nil {
		return f2pBasis{}, "the workspace is not a git checkout: " + j.masker.Mask(j.repoErr.Error())
	}
	base := j.base
	if base == "" && j.ev.PullRequest != nil {
		base = j.ev.PullRequest.BaseRef
	}
	if base == "" {
		base = j.cfg.Implement.BaseBranch
	}
	var baseSHA string
	for _, ref := range []string{"refs/remotes/origin/" + base, base} {
		if sha, err := j.repo.RevParse(ctx, ref); err == nil {
			baseSHA = sha
			break
		}
	}
	if baseSHA == "" {
		return f2pBasis{}, fmt.Sprintf("the base branch %q is not in the checkout (check out with fetch-depth: 0)", base)
	}
	mb, err := j.repo.MergeBase(ctx, baseSHA, j.tree)
	if err != nil {
		return f2pBasis{}, fmt.Sprintf("no merge base of %s and %s (a shallow checkout? use fetch-depth: 0)", base, short(j.tree))
	}
	if mb == j.tree {
		return f2pBasis{}, fmt.Sprintf("the work tree is the merge base with %s: there is no change to check", base)
	}
	gs, err := j.repo.GroupCommits(ctx, mb)
	if err != nil {
		return f2pBasis{}, j.masker.Mask(err.Error())
	}
	return f2pBasis{mergeBase: mb, groupSHA: gs}, ""
}

// f2pGroup runs the group's `fails` commands on its before tree and joins
// them to the head's results.
func (j *checksJob) f2pGroup(ctx context.Context, fb f2pBasis, cg *checksGroup, g plan.Group) error {
	before, target := fb.mergeBase, j.tree
	if gc, ok := fb.groupSHA[g.Number]; ok {
		// implement's commit of this group: before it is the newest other
		// group commit among its ancestors, else the merge base.
		target = gc
		for n, sha := range fb.groupSHA {
			if n == g.Number || sha == gc {
				continue
			}
			if ok, err := j.repo.IsAncestor(ctx, sha, gc); err != nil || !ok {
				continue
			}
			if newer, err := j.repo.IsAncestor(ctx, before, sha); err == nil && newer {
				before = sha
			}
		}
	}
	wt, err := j.repo.AddWorktree(ctx, before, j.tempRoot())
	if err != nil {
		return fmt.Errorf("make the before tree: %w", err)
	}
	defer wt.Remove(ctx)
	overlay, err := wt.Overlay(ctx, before, target, isTestFile)
	if err != nil {
		return fmt.Errorf("the change's test files: %w", err)
	}
	sub := "."
	if abs, err := filepath.Abs(j.dir); err == nil {
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
		if rel, err := filepath.Rel(j.repoTop, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			sub = rel
		}
	}
	treeDir := filepath.Join(wt.Dir, sub)
	if _, err := os.Stat(treeDir); err != nil {
		return fmt.Errorf("the workspace %s does not exist at %s", sub, short(before))
	}
	bound, err := j.env.boundary(ctx, string(j.cfg.Isolation), treeDir)
	if err != nil {
		return fmt.Errorf("the before tree: %w", err)
	}
	defer bound.Close()
	sb := policy.NewSandbox(bound, j.pol, j.env.environ())
	ws, err := sb.Workspace()
	if err != nil {
		return err
	}
	rep, err := checks.RunFailing(ctx, checks.SandboxRunner(sb), policy.Split, ws, g.FailToPass(), j.opts)
	if err != nil {
		return fmt.Errorf("before the change: %w", err)
	}
	var results []checks.CommandResult
	for _, c := range cg.Commands {
		results = append(results, j.results[c.Command].rep.Results...)
	}
	joined := checks.Report{Passed: true, Results: results}.WithFailToPass(rep)
	f := checksF2P{Status: f2pHeld, Before: before, Overlay: overlay}
	for _, e := range joined.FailToPass {
		f.Commands = append(f.Commands, checksF2PEntry{Command: e.Command, BeforeExitCode: e.Before.ExitCode, Held: e.Held})
	}
	if !joined.Passed {
		f.Status = f2pFailed
		cg.Passed, cg.failed, cg.Log = false, joined.FailedCommand, joined.Log
		cg.why = "passed before the group's change (fail-to-pass)"
	}
	cg.FailToPass = f
	return nil
}

func (j *checksJob) tempRoot() string {
	if t := j.env.Getenv("RUNNER_TEMP"); t != "" {
		return t
	}
	return os.TempDir()
}

// isTestFile reports whether a repository path is a test by the common
// conventions (docs/implement.md lists them): a directory named test, tests,
// __tests__, testdata, spec or specs; a name ending _test.EXT or _spec.EXT,
// starting test_, holding .test. or .spec., or whose stem ends in Test or
// Tests.
func isTestFile(p string) bool {
	parts := strings.Split(p, "/")
	for _, d := range parts[:len(parts)-1] {
		switch d {
		case "test", "tests", "__tests__", "testdata", "spec", "specs":
			return true
		}
	}
	name := parts[len(parts)-1]
	stem := name
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		stem = name[:i]
	}
	return strings.HasSuffix(stem, "_test") || strings.HasSuffix(stem, "_spec") ||
		strings.HasPrefix(name, "test_") || strings.Contains(name, ".test.") || strings.Contains(name, ".spec.") ||
		(stem != name && (strings.HasSuffix(stem, "Test") || strings.HasSuffix(stem, "Tests")))
}
