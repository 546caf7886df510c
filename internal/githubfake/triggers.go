package githubfake

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/rhysd/actionlint"
)

// Event is one event GitHub would deliver to the repository's workflows,
// caused by a write the fake served (or a push or schedule it was told of),
// with who caused it and the runs it started. docs/fake-github.md ("Which
// runs an event starts") lists the rules that decide those runs and where
// GitHub documents each.
type Event struct {
	ID int64 `json:"id"`
	// Name is the webhook event: issues, issue_comment, pull_request,
	// pull_request_review, pull_request_review_comment, push,
	// workflow_dispatch, repository_dispatch, schedule or
	// issue_dependencies (which starts no run).
	Name string `json:"name"`
	// Action is the activity type (labeled, created, opened, synchronize,
	// submitted, …); for repository_dispatch, the event_type.
	Action string `json:"action,omitempty"`
	// Actor is who caused the event, and Kind the kind of token it used.
	Actor string `json:"actor"`
	Kind  Kind   `json:"actor_kind"`
	// Ref and SHA are the pushed ref (refs/heads/…, refs/tags/…) and the
	// commit it now points at, or a dispatch's ref; Before is the commit a
	// push moved the ref from ("" for a new ref).
	Ref    string `json:"ref,omitempty"`
	SHA    string `json:"sha,omitempty"`
	Before string `json:"before,omitempty"`
	// Number is the issue or pull request; Label the label an issue or
	// pull request was labeled or unlabeled with.
	Number int    `json:"number,omitempty"`
	Label  string `json:"label,omitempty"`
	// Base, Head and HeadRepo are a pull request's base and head branches
	// and, for a pull request from a fork, the fork ("owner/repo").
	Base     string `json:"base,omitempty"`
	Head     string `json:"head,omitempty"`
	HeadRepo string `json:"head_repo,omitempty"`
	// Author is who opened the pull request; Merged says a pull_request
	// closed event closed it by merging it.
	Author string `json:"author,omitempty"`
	Merged bool   `json:"merged,omitempty"`
	// Blocking is the blocker of an issue_dependencies event (Number is
	// the issue it blocks).
	Blocking int `json:"blocking,omitempty"`
	// Review and Comment are the review of a pull_request_review event
	// and the review comment of a pull_request_review_comment event.
	Review  int64 `json:"review,omitempty"`
	Comment int64 `json:"comment,omitempty"`
	// Paths are the files a push or a pull request changes.
	Paths []string `json:"paths,omitempty"`
	// Workflow is the dispatched or scheduled workflow file; Inputs the
	// dispatch's inputs, Payload a repository_dispatch's client_payload.
	Workflow string         `json:"workflow,omitempty"`
	Inputs   map[string]any `json:"inputs,omitempty"`
	Payload  map[string]any `json:"client_payload,omitempty"`
	// Cron is the schedule entry that came due.
	Cron string    `json:"cron,omitempty"`
	At   time.Time `json:"at"`
	// Runs are the workflow runs the event started, in order.
	Runs []int64 `json:"runs,omitempty"`
	// Notes say why a workflow that might have run did not: its types or
	// filters, the token that caused the event, a disabled or invalid file.
	Notes []string `json:"notes,omitempty"`
}

// GitHub's documentation of the rules, cited in notes and in
// docs/fake-github.md.
const (
	docsTriggerFromWorkflow = "https://docs.github.com/actions/using-workflows/triggering-a-workflow#triggering-a-workflow-from-a-workflow"
	docsEvents              = "https://docs.github.com/actions/reference/workflows-and-actions/events-that-trigger-workflows"
	docsApprove             = "https://docs.github.com/rest/actions/workflow-runs#approve-a-workflow-run-for-a-fork-pull-request"
)

// workflow is one workflow file as the fake read it: parsed with
// actionlint's parser, or why it could not be.
type workflow struct {
	file string
	wf   *actionlint.Workflow
	err  string
}

// trigger is one workflow event an event is offered to, and the ref whose
// workflow files answer it: the pull_request webhook event is offered to
// pull_request workflows at the pull request's head and to
// pull_request_target workflows on the default branch.
type trigger struct {
	name   string // the workflow event: push, pull_request, pull_request_target, …
	ref    string // the branch or tag the workflow files are read from
	sha    string // its commit
	branch string // the run's head_branch
	head   string // the run's head_sha
	only   string // the one workflow file a dispatch or schedule is for
}

// maxWorkflowFile bounds a workflow file the fake parses: the files are the
// repository's, not the fake's, and a test may feed it anything.
const maxWorkflowFile = 512 << 10

// parseWorkflow parses a workflow file with actionlint. Any error makes the
// file invalid, as GitHub refuses a workflow file it cannot read; a panic in
// the parser is an error too, because the text is untrusted.
func parseWorkflow(file string, src []byte) (w workflow) {
	w.file = file
	if len(src) > maxWorkflowFile {
		w.err = fmt.Sprintf("the file has %d bytes, more than the fake reads (%d)", len(src), maxWorkflowFile)
		return w
	}
	defer func() {
		if r := recover(); r != nil {
			w.wf, w.err = nil, fmt.Sprintf("the workflow parser failed: %v", r)
		}
	}()
	wf, errs := actionlint.Parse(src)
	if len(errs) > 0 {
		w.err = fmt.Sprintf("line %d: %s", errs[0].Line, errs[0].Message)
		return w
	}
	if wf == nil {
		w.err = "no workflow"
		return w
	}
	w.wf = wf
	return w
}

// parsed returns file's parse, cached by content. f.mu is held.
func (f *Fake) parsed(file string, src []byte) workflow {
	key := sha256.Sum256(append([]byte(file+"\x00"), src...))
	if w, ok := f.parseCache[key]; ok {
		return w
	}
	w := parseWorkflow(file, src)
	if len(f.parseCache) > 1024 {
		clear(f.parseCache)
	}
	f.parseCache[key] = w
	return w
}

// workflowsAt returns the workflow files with content at ref (a branch or
// tag name) whose commit is sha, sorted by file name: those SetWorkflowFile
// put on every ref, then those it put on ref, then those of the git remote
// at sha. f.mu is held.
func (f *Fake) workflowsAt(ref, sha string) []workflow {
	files := map[string][]byte{}
	for name, text := range f.st.WorkflowFiles[""] {
		files[name] = []byte(text)
	}
	for name, text := range f.st.WorkflowFiles[ref] {
		files[name] = []byte(text)
	}
	for name, text := range f.gitWorkflows(sha) {
		files[name] = text
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	out := make([]workflow, 0, len(names))
	for _, name := range names {
		out = append(out, f.parsed(name, files[name]))
	}
	return out
}

// gitWorkflows reads .github/workflows/*.yml and *.yaml of the git remote's
// commit sha (nil without a remote or such a commit).
func (f *Fake) gitWorkflows(sha string) map[string][]byte {
	if f.opts.GitRemote == "" || !shaRE().MatchString(sha) {
		return nil
	}
	out, err := exec.Command("git", "--git-dir", f.opts.GitRemote, "ls-tree", "-z", sha, ".github/workflows/").Output()
	if err != nil {
		return nil
	}
	var ids, names []string
	for _, line := range strings.Split(string(out), "\x00") {
		meta, path, ok := strings.Cut(line, "\t")
		fields := strings.Fields(meta)
		if !ok || len(fields) != 3 || fields[1] != "blob" {
			continue
		}
		name := strings.TrimPrefix(path, ".github/workflows/")
		if strings.Contains(name, "/") || !(strings.HasSuffix(name, ".yml") || strings.HasSuffix(name, ".yaml")) {
			continue
		}
		ids, names = append(ids, fields[2]), append(names, name)
	}
	if len(ids) == 0 {
		return nil
	}
	cmd := exec.Command("git", "--git-dir", f.opts.GitRemote, "cat-file", "--batch")
	cmd.Stdin = strings.NewReader(strings.Join(ids, "\n") + "\n")
	data, err := cmd.Output()
	if err != nil {
		return nil
	}
	files := map[string][]byte{}
	for i := range ids {
		// Each answer is "<id> blob <size>\n<content>\n".
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 {
			break
		}
		var size int
		if _, err := fmt.Sscanf(string(data[:nl]), "%s blob %d", new(string), &size); err != nil || nl+1+size > len(data) {
			break
		}
		files[names[i]] = data[nl+1 : nl+1+size]
		data = data[min(nl+2+size, len(data)):]
	}
	return files
}

// workflowAt is file at ref, if the fake knows its content. f.mu is held.
func (f *Fake) workflowAt(ref, sha, file string) (workflow, bool) {
	for _, w := range f.workflowsAt(ref, sha) {
		if w.file == file {
			return w, true
		}
	}
	return workflow{}, false
}

// on returns the workflow's trigger for a workflow event.
func (w workflow) on(name string) actionlint.Event {
	if w.wf == nil {
		return nil
	}
	for _, e := range w.wf.On {
		if e != nil && e.EventName() == name {
			return e
		}
	}
	return nil
}

// emit records ev as caused by the token of c (or ev's own Actor when c is
// nil) and starts the workflow runs GitHub would start for it. f.mu is
// held.
func (f *Fake) emit(c *call, ev *Event) *Event {
	if c != nil {
		ev.Actor, ev.Kind = c.login, c.kind
	}
	ev.ID = f.st.id()
	if ev.At.IsZero() {
		ev.At = f.clock.Now().UTC()
	}
	f.st.Events = append(f.st.Events, ev)
	if ev.Name != "workflow_dispatch" { // the dispatch endpoint makes its one run
		f.startRuns(ev)
	}
	return ev
}

// prEvent fills in what a pull_request or pull_request_review event says of
// its pull request. f.mu is held.
func (f *Fake) prEvent(name, action string, is *Issue) *Event {
	p := is.Pull
	return &Event{Name: name, Action: action, Number: is.Number, Base: p.Base, Head: p.Head, HeadRepo: p.HeadRepo,
		SHA: f.headSHA(p), Author: is.Author}
}

// issueEvent is the event a change to issue is: an issues event, or a
// pull_request one when the issue is a pull request. f.mu is held.
func (f *Fake) issueEvent(c *call, is *Issue, action, label string) {
	var ev *Event
	if is.Pull != nil {
		ev = f.prEvent("pull_request", action, is)
	} else {
		ev = &Event{Name: "issues", Action: action, Number: is.Number}
	}
	ev.Label = label
	f.emit(c, ev)
}

// triggersOf are the workflow events ev is offered to, each with the ref its
// workflow files come from ("Events that trigger workflows": GITHUB_SHA and
// GITHUB_REF per event). f.mu is held.
func (f *Fake) triggersOf(ev *Event) []trigger {
	def := f.opts.DefaultBranch
	defSHA := f.branchSHA(def)
	onDefault := trigger{name: ev.Name, ref: def, sha: defSHA, branch: def, head: defSHA}
	switch ev.Name {
	case "issues", "issue_comment", "repository_dispatch":
		return []trigger{onDefault}
	case "schedule":
		onDefault.only = ev.Workflow
		return []trigger{onDefault}
	case "push":
		name := strings.TrimPrefix(strings.TrimPrefix(ev.Ref, "refs/heads/"), "refs/tags/")
		return []trigger{{name: "push", ref: name, sha: ev.SHA, branch: name, head: ev.SHA}}
	case "pull_request":
		// GitHub runs a pull_request workflow as it is in the pull
		// request's merge commit; the fake has no merge commits and reads
		// the head's. pull_request_target runs the default branch's.
		head := f.prTrigger("pull_request", ev)
		target := onDefault
		target.name = "pull_request_target"
		return []trigger{head, target}
	case "pull_request_review", "pull_request_review_comment":
		return []trigger{f.prTrigger(ev.Name, ev)}
	}
	return nil
}

// prTrigger offers ev to name workflows as they are at the pull request's
// head. The fake holds no fork: a fork's pull request reads the workflow
// files of its base branch, which is what its merge commit has unless the
// fork changed them. f.mu is held.
func (f *Fake) prTrigger(name string, ev *Event) trigger {
	tr := trigger{name: name, ref: ev.Head, sha: ev.SHA, branch: ev.Head, head: ev.SHA}
	if ev.HeadRepo != "" {
		tr.ref, tr.sha = ev.Base, f.branchSHA(ev.Base)
	}
	return tr
}

// approvalActions are the pull_request activity types that, caused by a
// workflow's GITHUB_TOKEN, create runs that wait for a person's approval
// ("Events that trigger workflows", pull_request).
var approvalActions = []string{"opened", "synchronize", "reopened"}

// defaultTypes are the activity types a workflow runs on when it names
// none: all of them, except for pull_request and pull_request_target.
var defaultTypes = map[string][]string{
	"pull_request":        {"opened", "synchronize", "reopened"},
	"pull_request_target": {"opened", "synchronize", "reopened"},
}

// startRuns creates the runs GitHub would start for ev. f.mu is held.
func (f *Fake) startRuns(ev *Event) {
	for _, tr := range f.triggersOf(ev) {
		byToken := ev.Kind == WorkflowToken && tr.name != "workflow_dispatch" && tr.name != "repository_dispatch"
		needsApproval := false
		if byToken {
			if tr.name != "pull_request" || !slices.Contains(approvalActions, ev.Action) {
				ev.Notes = append(ev.Notes, fmt.Sprintf("%s: caused by GITHUB_TOKEN, starts no workflow run (%s)", tr.name, docsTriggerFromWorkflow))
				continue
			}
			needsApproval = true
		}
		if (tr.name == "pull_request" || tr.name == "pull_request_target") && ev.Paths == nil {
			ev.Paths = f.prPaths(ev)
		}
		for _, w := range f.workflowsAt(tr.ref, tr.sha) {
			if tr.only != "" && w.file != tr.only {
				continue
			}
			why, ok := f.listens(ev, tr, w)
			if !ok {
				if why != "" {
					ev.Notes = append(ev.Notes, w.file+": "+why)
				}
				continue
			}
			run := &Run{ID: f.st.id(), WorkflowFile: w.file, HeadBranch: tr.branch, HeadSHA: tr.head, Event: tr.name,
				Status: "queued", CreatedAt: f.stamp(), Actor: ev.Actor, TriggeringActor: ev.Actor, EventID: ev.ID, RunAttempt: 1}
			if strings.HasPrefix(tr.name, "pull_request") {
				run.PullRequest = ev.Number
			}
			if ev.HeadRepo != "" && tr.name != "pull_request_target" {
				// A fork's pull request runs with a read-only token and no
				// secrets; pull_request_target runs in the base's context.
				run.ReadOnlyToken, run.NoSecrets = true, true
				if tr.name == "pull_request" && (f.firstTimer(ev.Author) || f.firstTimer(ev.Actor)) {
					needsApproval = true
				}
			}
			if needsApproval {
				run.Status, run.Conclusion = "completed", "action_required"
			}
			f.st.Runs = append(f.st.Runs, run)
			ev.Runs = append(ev.Runs, run.ID)
			if run.Status == "queued" && f.st.CI[run.WorkflowFile] != nil {
				f.startCIJobs(run, nil)
			}
		}
	}
}

// listens says whether workflow w runs for ev offered as tr, and when it
// does not but has a trigger for the event, why. f.mu is held.
func (f *Fake) listens(ev *Event, tr trigger, w workflow) (string, bool) {
	if w.err != "" {
		return "invalid workflow file: " + w.err, false
	}
	on := w.on(tr.name)
	if on == nil {
		return "", false
	}
	if slices.Contains(f.st.Disabled, w.file) {
		return "the workflow is disabled", false
	}
	switch e := on.(type) {
	case *actionlint.WebhookEvent:
		types := strs(e.Types)
		if len(types) == 0 {
			types = defaultTypes[tr.name]
		}
		if len(types) > 0 && !slices.Contains(types, ev.Action) {
			return fmt.Sprintf("%s types %v do not include %s", tr.name, types, ev.Action), false
		}
		switch tr.name {
		case "push":
			return pushFilters(e, ev)
		case "pull_request", "pull_request_target":
			return prFilters(e, ev)
		}
		return "", true
	case *actionlint.RepositoryDispatchEvent:
		if types := strs(e.Types); len(types) > 0 && !slices.Contains(types, ev.Action) {
			return fmt.Sprintf("repository_dispatch types %v do not include %s", types, ev.Action), false
		}
		return "", true
	case *actionlint.ScheduledEvent:
		if slices.Contains(strs(e.Cron), ev.Cron) {
			return "", true
		}
		return "", false
	case *actionlint.WorkflowDispatchEvent:
		return "", true
	}
	return "", false
}

func strs(list []*actionlint.String) []string {
	var out []string
	for _, s := range list {
		if s != nil {
			out = append(out, s.Value)
		}
	}
	return out
}

func filterValues(fl *actionlint.WebhookEventFilter) []string {
	if fl == nil {
		return nil
	}
	return strs(fl.Values)
}

// refFilter applies a branches (or tags) filter and its -ignore form to
// name. A filter that is given but empty matches nothing, as on GitHub.
func refFilter(kind string, inc, ign *actionlint.WebhookEventFilter, name string) (string, bool) {
	switch {
	case inc != nil:
		if !included(filterValues(inc), name, false) {
			return fmt.Sprintf("%s %s matches no pattern of %s", kind, name, kind+"es"), false
		}
	case ign != nil:
		if included(filterValues(ign), name, false) {
			return fmt.Sprintf("%s %s matches %s-ignore", kind, name, kind+"es"), false
		}
	}
	return "", true
}

// pathFilter applies paths or paths-ignore to the files an event changes:
// paths runs when one file is included, paths-ignore unless every file is
// ignored, and neither runs when nothing changed.
func pathFilter(e *actionlint.WebhookEvent, paths []string) (string, bool) {
	if e.Paths == nil && e.PathsIgnore == nil {
		return "", true
	}
	if len(paths) == 0 {
		return "no files changed, and the workflow has a paths filter", false
	}
	if e.Paths != nil {
		for _, p := range paths {
			if included(filterValues(e.Paths), p, true) {
				return "", true
			}
		}
		return "no changed file matches paths", false
	}
	for _, p := range paths {
		if !included(filterValues(e.PathsIgnore), p, true) {
			return "", true
		}
	}
	return "every changed file matches paths-ignore", false
}

// pushFilters applies a push trigger's branch, tag and path filters. Only
// a branch filter: a tag push does not run, and the other way round; path
// filters are not evaluated for tags.
func pushFilters(e *actionlint.WebhookEvent, ev *Event) (string, bool) {
	branchFilter := e.Branches != nil || e.BranchesIgnore != nil
	tagFilter := e.Tags != nil || e.TagsIgnore != nil
	if tag, ok := strings.CutPrefix(ev.Ref, "refs/tags/"); ok {
		if branchFilter && !tagFilter {
			return "a tag push, and the workflow filters branches only", false
		}
		if tagFilter {
			return refFilter("tag", e.Tags, e.TagsIgnore, tag)
		}
		return "", true
	}
	branch := strings.TrimPrefix(ev.Ref, "refs/heads/")
	if tagFilter && !branchFilter {
		return "a branch push, and the workflow filters tags only", false
	}
	if why, ok := refFilter("branch", e.Branches, e.BranchesIgnore, branch); !ok {
		return why, false
	}
	return pathFilter(e, ev.Paths)
}

// prFilters applies a pull_request trigger's branch filter to the base
// branch and its path filter to the files the pull request changes.
func prFilters(e *actionlint.WebhookEvent, ev *Event) (string, bool) {
	if why, ok := refFilter("branch", e.Branches, e.BranchesIgnore, ev.Base); !ok {
		return "base " + why, false
	}
	return pathFilter(e, ev.Paths)
}

// firstTimer says whether login's fork pull requests wait for approval
// under GitHub's default policy ("first-time contributors"): a login
// without write access that has not contributed before (AddContributor).
// f.mu is held.
func (f *Fake) firstTimer(login string) bool {
	if login == "" {
		return false
	}
	switch f.st.Permissions[login] {
	case "write", "maintain", "admin":
		return false
	}
	return !slices.Contains(f.st.Contributors, login)
}

// prPaths are the files ev's pull request changes: a three-dot diff of the
// git remote, as GitHub compares a pull request, or the files recorded
// pushes changed on its head branch. f.mu is held.
func (f *Fake) prPaths(ev *Event) []string {
	if ev.HeadRepo == "" && f.opts.GitRemote != "" && shaRE().MatchString(ev.SHA) {
		base := f.gitRevParse(ev.Base)
		if base != "" {
			if out, err := exec.Command("git", "--git-dir", f.opts.GitRemote, "diff", "--name-only", "-z", base+"..."+ev.SHA).Output(); err == nil {
				return splitZ(out)
			}
		}
	}
	if ev.HeadRepo != "" {
		return []string{} // the fake holds no fork's commits
	}
	return append([]string{}, f.st.RefPaths["refs/heads/"+ev.Head]...)
}

func splitZ(out []byte) []string {
	list := []string{}
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			list = append(list, p)
		}
	}
	return list
}
