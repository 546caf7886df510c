package adopt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/claims"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/dashboard"
	"github.com/roadmap-dev/roadmap/internal/github"
)

// GitHub is what init asks of the API.
type GitHub interface {
	Repository(ctx context.Context) (github.Repository, error)
	WorkflowPermissions(ctx context.Context) (github.WorkflowPermissions, error)
	LabelNames(ctx context.Context) ([]string, error)
	CreateLabel(ctx context.Context, name, color, description string) error
	LabelledIssues(ctx context.Context, label string) ([]github.Issue, error)
	CreateIssue(ctx context.Context, title, body string, labels []string) (github.Issue, error)
}

// Options is one run of init.
type Options struct {
	// Dir is the repository's work tree.
	Dir    string
	GitHub GitHub
	// Repository is "owner/repo"; Server is the web root (https://github.com).
	Repository, Server string
	// Pin is what the written workflows pin roadmap's reusable workflows
	// and actions to (PinFor: the commit of the build that runs init).
	Pin    Pin
	DryRun bool
	Out    io.Writer
	// Now is when init runs: the empty dashboard it opens shows that day.
	Now time.Time
	// AgentsStub writes a short AGENTS.md (AgentsPath) for a person to
	// fill in when the repository has no instructions file; without it, the
	// to-do offers one.
	AgentsStub bool
	// EvalModel, when not "", adds the scheduled eval workflow (EvalPath):
	// the golden suites on GitHub Models with this model, weekly, their
	// scores posted to the dashboard.
	EvalModel string
	// Provider is the model provider whose two-tier ladder the
	// configuration holds (Providers): "" is DefaultProvider.
	Provider string
}

// Result says what init did (or, dry, would do). It is also the object
// `roadmap init --json` prints (docs/cli.md): its field names are stable.
type Result struct {
	Repository string `json:"repository"`
	DryRun     bool   `json:"dry_run"`
	// Language is the toolchain the checks and the setup steps were written for.
	Language Toolchain     `json:"language"`
	CI       CI            `json:"ci"`
	Files    []FileResult  `json:"files"`
	Labels   []LabelResult `json:"labels"`
	// ToDo is what a person must still do, in order.
	ToDo []string `json:"todo"`
	// Changed is false when init found everything in place.
	Changed  bool     `json:"changed"`
	Settings Settings `json:"settings"`
	// Dashboard is the dashboard issue the workflows name.
	Dashboard DashboardResult `json:"dashboard"`
	// Provider is the model provider whose ladder the configuration init
	// writes holds; Secret the repository secret its key is kept in ("" for
	// github-models, whose key is the workflow's token).
	Provider string `json:"provider"`
	Secret   string `json:"secret"`
}

// DashboardResult is the dashboard issue (label roadmap:dashboard) and what
// init did about it: Created (Number 0 on a dry run: the issue does not
// exist yet) or Exists.
type DashboardResult struct {
	Number int    `json:"number"`
	Status string `json:"status"`
}

// The status of a file or a label in a Result. A dry run gives the status a
// real run would.
const (
	Written   = "written"   // the file was missing and init wrote it
	Unchanged = "unchanged" // the file holds what init writes
	Kept      = "kept"      // the file exists with other content, left as it is
	Created   = "created"   // the label (or the dashboard issue) was missing and init created it
	Exists    = "exists"    // the repository has the label (or the dashboard issue)
)

// FileResult is one file init writes and what it did with it.
type FileResult struct {
	Path   string `json:"path"`
	Status string `json:"status"`
}

// LabelResult is one label init creates and what it did with it.
type LabelResult struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Status      string `json:"status"`
}

func (r Result) files(status string) []string {
	var out []string
	for _, f := range r.Files {
		if f.Status == status {
			out = append(out, f.Path)
		}
	}
	return out
}

// Settings is what init read of the repository's settings.
type Settings struct {
	DefaultBranch string `json:"default_branch"`
	// WorkflowDefault and CanApprove are "" and false when they could not
	// be read (the token lacks administration read); PermissionsRead says
	// which.
	WorkflowDefault string `json:"workflow_default_permissions"`
	CanApprove      bool   `json:"can_approve_pull_requests"`
	PermissionsRead bool   `json:"permissions_read"`
	Private         bool   `json:"private"`
}

// label is a label init creates; its name comes from the configuration's
// defaults (config.Default().Labels), the one place label names live.
type label struct{ name, color, description string }

func labels() []label {
	l := config.Default().Labels
	return []label{
		{l.Stage, "1d76db", "roadmap: write a plan for this issue and open it as a draft PR (start here)"},
		{l.Implement, "0e8a16", "roadmap: carry out this issue's plan and open a PR for review"},
		{l.NeedsInput, "fbca04", "roadmap: a question waits for a person's answer"},
		{l.Stopped, "b60205", "roadmap: stopped; the stop comment says why"},
		{l.Stop, "5319e7", "roadmap: a person stops this item for good (/roadmap retry restarts it)"},
		{l.Waiting, "c5def5", "roadmap: waiting for the day's budget; roadmap wake dispatches it"},
		{l.Blocked, "f9d0c4", "roadmap: waiting for the issues it is blocked by; it starts when they are closed as completed"},
		{l.Tracker, "bfdadc", "roadmap: a tracker whose sub-issues roadmap starts as their blockers close (remove to stop)"},
		{dashboard.Label, "006b75", "roadmap: the dashboard issue roadmap keeps (one per repository)"},
		{claims.Label, "d4c5f9", "roadmap: waiting for another item's claim on the same files (docs/claims.md)"},
		{claims.WaitedLabel, "e4e669", "roadmap: another item waits for this one's claim; its end wakes it"},
	}
}

// Run sets the repository up.
func Run(ctx context.Context, o Options) (Result, error) {
	res := Result{Repository: o.Repository, DryRun: o.DryRun, Files: []FileResult{}, Labels: []LabelResult{}, ToDo: []string{}}
	if o.Provider == "" {
		o.Provider = DefaultProvider
	}
	provider, err := FindProvider(o.Provider)
	if err != nil {
		return res, err
	}
	res.Provider, res.Secret = provider.Name, provider.Secret()
	if res.Language, err = DetectToolchain(o.Dir); err != nil {
		return res, err
	}
	if res.CI, err = DetectCI(o.Dir); err != nil {
		return res, err
	}
	repo, err := o.GitHub.Repository(ctx)
	if err != nil {
		return res, err
	}
	res.Settings.DefaultBranch, res.Settings.Private = repo.DefaultBranch, repo.Private
	if wp, err := o.GitHub.WorkflowPermissions(ctx); err == nil {
		res.Settings.WorkflowDefault, res.Settings.CanApprove, res.Settings.PermissionsRead = wp.Default, wp.CanApprove, true
	} else {
		var auth *github.AuthError
		if !errors.As(err, &auth) && !errors.Is(err, github.ErrNotFound) {
			return res, err
		}
	}
	verb := func(s string) string {
		if o.DryRun {
			return "would " + s
		}
		return s
	}
	fmt.Fprintf(o.Out, "roadmap init: %s (default branch %s)\n", o.Repository, res.Settings.DefaultBranch)
	if res.Language.Language != "" {
		fmt.Fprintf(o.Out, "  language: %s (%s, from %s)\n", res.Language.Language, res.Language.Manager, res.Language.DetectedBy)
	} else {
		fmt.Fprintln(o.Out, "  language: none found (no go.mod, Cargo.toml, pyproject.toml, setup.cfg, setup.py, requirements.txt or package.json)")
	}
	fmt.Fprintf(o.Out, "  models: %s\n", ladderLine(provider))

	have, err := o.GitHub.LabelNames(ctx)
	if err != nil {
		return res, err
	}
	for _, l := range labels() {
		if slices.ContainsFunc(have, func(h string) bool { return strings.EqualFold(h, l.name) }) {
			res.Labels = append(res.Labels, LabelResult{l.name, l.description, Exists})
			continue
		}
		res.Labels = append(res.Labels, LabelResult{l.name, l.description, Created})
		res.Changed = true
		fmt.Fprintf(o.Out, "  %s label %s\n", verb("create"), l.name)
		if !o.DryRun {
			if err := o.GitHub.CreateLabel(ctx, l.name, l.color, l.description); err != nil {
				return res, err
			}
		}
	}
	// The dashboard issue before the files: the caller and the wake
	// workflow name it. Its label first, so GitHub does not make a bare one.
	if err := findDashboard(ctx, o, &res, verb); err != nil {
		return res, err
	}

	written := files(o.Pin, res.Settings.DefaultBranch, res.Language, res.CI, res.Dashboard.Number, o.EvalModel, provider)
	noInstructions, err := needsAgentsStub(o.Dir)
	if err != nil {
		return res, err
	}
	if noInstructions && o.AgentsStub {
		written = append(written, file{AgentsPath, agentsStub(res.Language)})
	}
	for _, f := range written {
		path := filepath.Join(o.Dir, filepath.FromSlash(f.path))
		old, err := os.ReadFile(path)
		switch {
		case err == nil && bytes.Equal(old, []byte(f.text)):
			res.Files = append(res.Files, FileResult{f.path, Unchanged})
			continue
		case err == nil:
			res.Files = append(res.Files, FileResult{f.path, Kept})
			fmt.Fprintf(o.Out, "  keep %s: it exists with other content; compare it with `roadmap init --dry-run`\n", f.path)
			continue
		case !errors.Is(err, os.ErrNotExist):
			return res, fmt.Errorf("read %s: %w", f.path, err)
		}
		res.Files = append(res.Files, FileResult{f.path, Written})
		res.Changed = true
		fmt.Fprintf(o.Out, "  %s %s\n", verb("write"), f.path)
		if o.DryRun {
			for _, l := range strings.SplitAfter(strings.TrimSuffix(f.text, "\n"), "\n") {
				fmt.Fprintf(o.Out, "    | %s", strings.TrimSuffix(l, "\n")+"\n")
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return res, err
		}
		if err := os.WriteFile(path, []byte(f.text), 0o644); err != nil {
			return res, fmt.Errorf("write %s: %w", f.path, err)
		}
	}

	if !res.Changed {
		fmt.Fprintln(o.Out, "  nothing to change: the files and labels are in place")
	}

	res.ToDo = toDo(o, res, provider, noInstructions)
	if len(res.ToDo) > 0 {
		fmt.Fprintln(o.Out, "\nWhat you must still do, in order:")
		for i, s := range res.ToDo {
			// A step's further lines (a list of choices) under its first.
			fmt.Fprintf(o.Out, "  %d. %s\n", i+1, strings.ReplaceAll(s, "\n", "\n     "))
		}
	}
	return res, nil
}

// findDashboard finds the repository's dashboard issue by its label (one
// list request), else opens it (one write; none on a dry run), so the day's
// budget and the dashboard work from the first Job. Run again, init finds
// the one it opened: never a second.
func findDashboard(ctx context.Context, o Options, res *Result, verb func(string) string) error {
	open, err := o.GitHub.LabelledIssues(ctx, dashboard.Label)
	if err != nil {
		return fmt.Errorf("find the dashboard issue: %w", err)
	}
	if len(open) > 0 {
		// The oldest: the list is by creation, and it is the one the
		// workflows were written with.
		res.Dashboard = DashboardResult{Number: open[0].Number, Status: Exists}
		fmt.Fprintf(o.Out, "  dashboard: issue #%d\n", open[0].Number)
		return nil
	}
	res.Dashboard = DashboardResult{Status: Created}
	res.Changed = true
	fmt.Fprintf(o.Out, "  %s the dashboard issue %q (label %s); the workflows name it\n", verb("open"), dashboard.Title, dashboard.Label)
	if o.DryRun {
		return nil
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	body := dashboard.Render(&dashboard.State{}, dashboard.View{Now: now})
	is, err := o.GitHub.CreateIssue(ctx, dashboard.Title, body, []string{dashboard.Label})
	if err != nil {
		return fmt.Errorf("open the dashboard issue: %w", err)
	}
	res.Dashboard.Number = is.Number
	fmt.Fprintf(o.Out, "  dashboard: issue #%d\n", is.Number)
	return nil
}

// agentsWhy says what the instructions file is for, in the to-do.
const agentsWhy = "roadmap's agents read it from the default branch as the project's conventions: how to build and test, what not to touch (docs/agent.md, \"The repository's instructions\")"

// needsAgentsStub: the work tree has none of the instructions files, so
// init offers a stub AGENTS.md.
func needsAgentsStub(dir string) (bool, error) {
	for _, p := range instructionFiles {
		_, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(p)))
		switch {
		case err == nil:
			return false, nil
		case !errors.Is(err, os.ErrNotExist):
			return false, fmt.Errorf("look for %s: %w", p, err)
		}
	}
	return true, nil
}

// ladderLine says which ladder the configuration holds and where its key
// comes from, for init's progress lines.
func ladderLine(p Provider) string {
	var names []string
	for _, m := range config.InitLadders[p.Name] {
		names = append(names, m.Name)
	}
	key := "the repository secret " + p.Secret()
	if p.Secret() == "" {
		key = "the workflow's GITHUB_TOKEN (models: read), no secret"
	}
	return p.Title + " (" + p.Name + "), " + strings.Join(names, " then ") + "; its key: " + key
}

// toDo lists, in order, what a person must still do.
func toDo(o Options, res Result, provider Provider, noInstructions bool) []string {
	settings := strings.TrimSuffix(o.Server, "/") + "/" + o.Repository + "/settings/actions"
	var out []string
	switch {
	case !res.Settings.PermissionsRead:
		out = append(out, "Check that \"Allow GitHub Actions to create and approve pull requests\" is on (the token could not read it): "+settings+" (Workflow permissions)")
	case !res.Settings.CanApprove:
		out = append(out, "Turn on \"Allow GitHub Actions to create and approve pull requests\", or roadmap cannot open its pull request: "+settings+" (Workflow permissions)")
	}
	if res.Settings.Private {
		out = append(out, "This repository is private: draft pull requests on private repositories need a paid plan (GitHub Pro, Team or Enterprise)")
	}
	// Before the commit: the pin is in the files it would push.
	if o.Pin.ToDo != "" {
		out = append(out, o.Pin.ToDo)
	}
	if written := res.files(Written); len(written) > 0 {
		paths := strings.Join(written, " ")
		if o.DryRun {
			out = append(out, "Run `roadmap init` without --dry-run, then commit and push "+paths+" to "+res.Settings.DefaultBranch)
		} else {
			out = append(out, "Commit and push the files to "+res.Settings.DefaultBranch+": git add "+paths+" && git commit -m 'Set up roadmap' && git push")
		}
	}
	if kept := res.files(Kept); len(kept) > 0 {
		out = append(out, "Compare the files init left as they are with what it would write (roadmap init --dry-run): "+strings.Join(kept, ", "))
	}
	switch {
	case slices.Contains(res.files(Written), AgentsPath):
		out = append(out, "Fill in "+AgentsPath+", the stub init wrote: "+agentsWhy)
	case noInstructions:
		out = append(out, "The repository has no AGENTS.md, CLAUDE.md or .github/copilot-instructions.md: `roadmap init --agents-md` writes a short "+AgentsPath+" to fill in. "+agentsWhy)
	}
	if res.Language.setup != "" {
		out = append(out, "Check that "+SetupPath+" installs what your "+res.Language.Language+" tests need: roadmap's stage and implement jobs run it "+
			"before roadmap (the caller's setup input), as "+ChecksPath+" runs the same steps before the checks (docs/install.md, \"The project's setup\")")
	}
	if s := secretToDo(o, res, provider); s != "" {
		out = append(out, s)
	}
	out = append(out, ciToDo(res))
	if o.EvalModel != "" {
		out = append(out, "Set the eval floors in "+ConfigPath+" (eval.gates.floor, eval.stage.floor, eval.implement.floor) from the first scores "+EvalPath+
			" posts to the dashboard: until then each floor is 0 and no suite fails the run (docs/eval.md, \"The scheduled eval workflow\")")
	}
	l := config.Default().Labels
	out = append(out, "Label an issue "+l.Stage+": stage reads it and the code, writes a plan (an OpenSpec change), checks it and opens a draft PR holding it. "+
		"Approve that PR, or label the issue "+l.Implement+", and implement carries the plan out in the same PR (docs/install.md, \"Your first item\")")
	return out
}

// secretToDo is the repository secret the provider's key must be kept in,
// before the first Job calls the model: "" for GitHub Models, whose key is
// the workflow's token. When init left the configuration as it was, the
// secret is needed only if its models are that provider's.
func secretToDo(o Options, res Result, p Provider) string {
	if p.Secret() == "" {
		return ""
	}
	secrets := strings.TrimSuffix(o.Server, "/") + "/" + o.Repository + "/settings/secrets/actions"
	add := "Add"
	if slices.Contains(res.files(Kept), ConfigPath) {
		add = "If the models: of " + ConfigPath + " (which init left as it is) are " + p.Name + "'s, add"
	}
	return add + " the repository secret " + p.Secret() + ", a " + p.Title + " API key (" + p.KeyPage + "), at " + secrets +
		": the caller passes it to roadmap's stage and implement jobs, where the " + p.Name + " models of " + ConfigPath + " read it (api_key_env; docs/models.md)"
}

// ciToDo is the choice of how CI runs on roadmap's pushes: GITHUB_TOKEN's
// pushes start no workflow run, and roadmap never calls a PR no CI ran on
// green. The one setting init can make is implement.ci_workflows, from the
// repository's own CI workflows that can be dispatched. It is a short head
// and the choices as a list, one a line ("\n- "), where to read more last.
func ciToDo(res Result) string {
	const head = "CI on roadmap's pushes: GITHUB_TOKEN's pushes start no workflow run,\nand roadmap marks no PR ready that no CI checked."
	token := []string{
		"a push token, so your own push and pull_request workflows run:",
		"  a fine-grained PAT (contents: write) kept as the repository secret ROADMAP_PUSH_TOKEN,",
		"  or a GitHub App's token (actions/create-github-app-token) as implement's push-token input",
	}
	const more = "More: docs/install.md, \"CI on roadmap's pushes\""
	wrote := false
	for _, f := range res.Files {
		if f.Path == ConfigPath && f.Status != Kept {
			wrote = true
		}
	}
	ci := res.CI
	var lines []string
	switch {
	case len(ci.Dispatchable) > 0 && wrote:
		lines = append([]string{head + " Nothing to do, or:",
			"- as init set it: init named " + strings.Join(ci.Dispatchable, ", ") + " (on: workflow_dispatch) in implement.ci_workflows",
			"  in " + ConfigPath + ", so the watch dispatches them on the work branch",
			"- or " + token[0]}, token[1:]...)
		lines = append(lines, "  and remove implement.ci_workflows, or CI runs twice")
	case len(ci.Dispatchable) > 0:
		lines = append([]string{head + " Choose one:",
			"- name " + strings.Join(ci.Dispatchable, ", ") + " (on: workflow_dispatch) in implement.ci_workflows in " + ConfigPath,
			"  (init left that file as it is)",
			"- " + token[0]}, token[1:]...)
	case len(ci.Workflows) > 0:
		lines = append([]string{head + " Choose one:",
			"- add workflow_dispatch to the on: of " + strings.Join(ci.Workflows, ", ") + " and name it in implement.ci_workflows",
			"  in " + ConfigPath,
			"- " + token[0]}, token[1:]...)
		lines = append(lines, "- set implement.ready_without_ci: true: the PR is marked ready with no CI,", "  its comment saying so")
	default:
		lines = []string{head,
			"This repository has no CI workflow on push or pull_request. Choose one:",
			"- set implement.ready_without_ci: true in " + ConfigPath + ":",
			"  the PR is marked ready with no CI, its comment saying so",
			"- add a CI workflow with on: workflow_dispatch and name it in implement.ci_workflows",
			"- add CI and use " + token[0]}
		lines = append(lines, token[1:]...)
	}
	return strings.Join(append(lines, more), "\n")
}
