package githubfake

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/rhysd/actionlint"
	"github.com/robfig/cron/v3"
)

// The methods here tell the fake of what happens outside its API (a push, the
// passing of time) and let a driver start the runs it decided, in order.

// SetWorkflowFile gives the repository a workflow file with content: on ref
// (a branch or tag name), or on every ref when ref is "". The fake reads a
// workflow's triggers from it to decide which runs an event starts; a git
// remote's own files at the event's commit take precedence. A file on ""
// or on the default branch can also be dispatched.
func (f *Fake) SetWorkflowFile(ref, file, content string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.st.WorkflowFiles == nil {
		f.st.WorkflowFiles = map[string]map[string]string{}
	}
	if f.st.WorkflowFiles[ref] == nil {
		f.st.WorkflowFiles[ref] = map[string]string{}
	}
	f.st.WorkflowFiles[ref][file] = content
}

// AddContributor marks logins as having contributed to the repository
// before, so GitHub's default approval policy ("first-time contributors")
// does not hold their fork pull requests' runs for approval.
func (f *Fake) AddContributor(logins ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.st.Contributors = append(f.st.Contributors, logins...)
}

// Events returns every recorded event, oldest first.
func (f *Fake) Events() []Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Event, 0, len(f.st.Events))
	for _, ev := range f.st.Events {
		out = append(out, copyEvent(ev))
	}
	return out
}

func copyEvent(ev *Event) Event {
	cp := *ev
	cp.Paths = slices.Clone(ev.Paths)
	cp.Runs = slices.Clone(ev.Runs)
	cp.Notes = slices.Clone(ev.Notes)
	cp.Inputs = maps.Clone(ev.Inputs)
	cp.Payload = maps.Clone(ev.Payload)
	return cp
}

// QueuedRuns returns the runs GitHub would now hand to a runner: queued,
// oldest first, which is the order their events happened in. A run waiting
// for approval is not among them until approved; a scripted CI's runs never
// are (the fake plays them).
func (f *Fake) QueuedRuns() []Run {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Run
	for _, r := range f.st.Runs {
		if r.Status == "queued" && f.st.CI[r.WorkflowFile] == nil {
			out = append(out, *r)
		}
	}
	return out
}

// NextRun takes the oldest queued run (QueuedRuns), marks it in_progress
// and returns it with the event that started it, for a driver that runs
// exactly the runs GitHub would start, in order. ok is false when no run
// is queued.
func (f *Fake) NextRun() (run Run, ev Event, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.st.Runs {
		if r.Status != "queued" || f.st.CI[r.WorkflowFile] != nil {
			continue
		}
		r.Status = "in_progress"
		for _, e := range f.st.Events {
			if e.ID == r.EventID {
				ev = copyEvent(e)
			}
		}
		return *r, ev, true
	}
	return Run{}, Event{}, false
}

// FinishRun completes run id with conclusion (success, failure, cancelled,
// timed_out, …), as its runner would.
func (f *Fake) FinishRun(id int64, conclusion string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.findRun(id)
	if r == nil {
		return fmt.Errorf("githubfake: no run %d", id)
	}
	if conclusion == "" {
		return fmt.Errorf("githubfake: finish run %d: no conclusion", id)
	}
	r.Status, r.Conclusion = "completed", conclusion
	return nil
}

// identity is who tok acts as, as a request with it would be. f.mu is held.
func (f *Fake) identity(tok string) (login string, kind Kind, ok bool) {
	if t, known := f.tokens[tok]; known {
		return t.login, t.kind, true
	}
	if f.opts.Token == "" {
		return f.opts.Login, kindOf(f.opts.Login), true
	}
	return "", "", false
}

// fullRef is ref as a full ref name: a bare name is a branch.
func fullRef(ref string) string {
	if strings.HasPrefix(ref, "refs/") {
		return ref
	}
	return "refs/heads/" + ref
}

// RecordPush tells a fake without a git remote that the holder of tok pushed
// sha to ref (a branch name, refs/heads/… or refs/tags/…), changing paths.
// The ref then points at sha, a pull request from the branch has it as its
// head and changes those files, and the push, and a pull_request
// synchronize for each open pull request from the branch, are recorded as
// events that start runs by GitHub's rules. It returns those events.
func (f *Fake) RecordPush(tok, ref, sha string, paths ...string) ([]Event, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.opts.GitRemote != "" {
		return nil, errors.New("githubfake: the fake has a git remote: push to it and call Pushed")
	}
	if !shaRE().MatchString(sha) {
		return nil, fmt.Errorf("githubfake: push %s: %q is not a commit SHA", ref, sha)
	}
	login, kind, ok := f.identity(tok)
	if !ok {
		return nil, errors.New("githubfake: push with a token the fake does not accept")
	}
	full, sha := fullRef(ref), strings.ToLower(sha)
	if f.st.Refs == nil {
		f.st.Refs = map[string]string{}
	}
	before := f.st.Refs[full]
	f.st.Refs[full] = sha
	f.st.Commits = append(f.st.Commits, sha)
	if branch, ok := strings.CutPrefix(full, "refs/heads/"); ok {
		if f.st.RefPaths == nil {
			f.st.RefPaths = map[string][]string{}
		}
		for _, p := range paths {
			if !slices.Contains(f.st.RefPaths[full], p) {
				f.st.RefPaths[full] = append(f.st.RefPaths[full], p)
			}
		}
		for _, is := range f.st.Issues {
			if is.Pull != nil && is.Pull.HeadRepo == "" && is.Pull.Head == branch {
				is.Pull.HeadSHA = sha
			}
		}
	}
	return f.pushEvents(login, kind, full, before, sha, slices.Clone(paths)), nil
}

// Pushed tells a fake with a git remote that the holder of tok has pushed to
// it: every branch or tag that moved or appeared since the fake last looked
// is a push event (the files it changed read with git diff), and a moved
// branch a pull_request synchronize for each open pull request from it. It
// returns the events, which start runs by GitHub's rules. A deleted ref is
// not an event here.
func (f *Fake) Pushed(tok string) ([]Event, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.opts.GitRemote == "" {
		return nil, errors.New("githubfake: the fake has no git remote: use RecordPush")
	}
	login, kind, ok := f.identity(tok)
	if !ok {
		return nil, errors.New("githubfake: push with a token the fake does not accept")
	}
	now := f.gitRefs()
	refs := slices.Sorted(maps.Keys(now))
	var out []Event
	for _, ref := range refs {
		before, after := f.st.Refs[ref], now[ref]
		if before == after {
			continue
		}
		out = append(out, f.pushEvents(login, kind, ref, before, after, f.gitChanged(ref, before, after))...)
	}
	f.st.Refs = now
	return out, nil
}

// pushEvents records a push and the synchronize events of the pull requests
// from the pushed branch. f.mu is held.
func (f *Fake) pushEvents(login string, kind Kind, ref, before, after string, paths []string) []Event {
	push := f.emit(nil, &Event{Name: "push", Ref: ref, SHA: after, Before: before, Paths: paths, Actor: login, Kind: kind})
	out := []Event{copyEvent(push)}
	branch, ok := strings.CutPrefix(ref, "refs/heads/")
	if !ok {
		return out
	}
	nums := slices.Sorted(maps.Keys(f.st.Issues))
	for _, n := range nums {
		is := f.st.Issues[n]
		if is.Pull == nil || is.State != "open" || is.Pull.HeadRepo != "" || is.Pull.Head != branch || f.lastPRSHA(n) == after {
			continue
		}
		ev := f.prEvent("pull_request", "synchronize", is)
		ev.Actor, ev.Kind = login, kind
		out = append(out, copyEvent(f.emit(nil, ev)))
	}
	return out
}

// lastPRSHA is the head SHA the last pull_request event of pull request n
// carried: a push that leaves it there is not a synchronize. f.mu is held.
func (f *Fake) lastPRSHA(n int) string {
	for i := len(f.st.Events) - 1; i >= 0; i-- {
		if ev := f.st.Events[i]; ev.Name == "pull_request" && ev.Number == n {
			return ev.SHA
		}
	}
	return ""
}

// gitRefs are the git remote's branches and tags (nil without one). f.mu is
// held or the fake is being made.
func (f *Fake) gitRefs() map[string]string {
	if f.opts.GitRemote == "" {
		return nil
	}
	// A test asks after every push, many times a second: while no ref file
	// changed (git replaces one by a rename: a new inode), the last list
	// stands, with no process.
	stamp, ok := refsStamp(f.opts.GitRemote)
	if ok && stamp == f.refsStamp && f.refsSeen != nil {
		return maps.Clone(f.refsSeen)
	}
	out, err := exec.Command("git", "--git-dir", f.opts.GitRemote, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads", "refs/tags").Output()
	if err != nil {
		return map[string]string{}
	}
	refs := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if ref, sha, ok := strings.Cut(line, " "); ok {
			refs[ref] = sha
		}
	}
	if ok {
		f.refsSeen, f.refsStamp = maps.Clone(refs), stamp
	}
	return refs
}

// refsStamp is a stamp of gitDir's branch and tag files and packed-refs:
// each one's path, inode, size and modification time. ok is false for a
// repository whose refs are not files (reftable): then git is asked.
func refsStamp(gitDir string) (string, bool) {
	if _, err := os.Stat(filepath.Join(gitDir, "reftable")); err == nil {
		return "", false
	}
	var b strings.Builder
	add := func(path string, fi fs.FileInfo) {
		var ino uint64
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			ino = st.Ino
		}
		fmt.Fprintf(&b, "%s %d %d %d\n", path, ino, fi.Size(), fi.ModTime().UnixNano())
	}
	if fi, err := os.Stat(filepath.Join(gitDir, "packed-refs")); err == nil {
		add("packed-refs", fi)
	}
	for _, dir := range []string{"refs/heads", "refs/tags"} {
		err := filepath.WalkDir(filepath.Join(gitDir, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			add(path, fi)
			return nil
		})
		if err != nil {
			return "", false
		}
	}
	return b.String(), true
}

// gitChanged are the files a push of ref from before to after changed, the
// way GitHub compares for path filters: a two-dot diff for a branch that
// existed, and for a new branch the diff from where it left the default
// branch. Tags have none (path filters are not evaluated for them). f.mu is
// held.
func (f *Fake) gitChanged(ref, before, after string) []string {
	if strings.HasPrefix(ref, "refs/tags/") {
		return nil
	}
	from := before
	if from == "" {
		out, err := exec.Command("git", "--git-dir", f.opts.GitRemote, "merge-base", f.branchSHA(f.opts.DefaultBranch), after).Output()
		if err != nil {
			out, err = exec.Command("git", "--git-dir", f.opts.GitRemote, "diff-tree", "--root", "-r", "-z", "--name-only", "--no-commit-id", after).Output()
			if err != nil {
				return nil
			}
			return splitZ(out)
		}
		from = strings.TrimSpace(string(out))
	}
	out, err := exec.Command("git", "--git-dir", f.opts.GitRemote, "diff", "--name-only", "-z", from, after).Output()
	if err != nil {
		return nil
	}
	return splitZ(out)
}

// maxTicks bounds how many times one schedule entry fires in one
// RunSchedules: a clock moved a year on a one-minute cron is not half a
// million runs.
const maxTicks = 1000

// RunSchedules fires, in time order, every schedule entry of the default
// branch's workflow files that came due on the fake's clock since the last
// call (or since the fake was made), and returns the runs they started.
// Crons are GitHub's five-field POSIX form, in UTC.
func (f *Fake) RunSchedules() []Run {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.clock.Now().UTC()
	from := f.st.ScheduledThrough
	if from.IsZero() {
		from = now
	}
	type due struct {
		at         time.Time
		file, spec string
	}
	var list []due
	def := f.opts.DefaultBranch
	for _, w := range f.workflowsAt(def, f.branchSHA(def)) {
		on, _ := w.on("schedule").(*actionlint.ScheduledEvent)
		if on == nil {
			continue
		}
		for _, spec := range strs(on.Cron) {
			if strings.HasPrefix(strings.TrimSpace(spec), "@") || strings.Contains(spec, "TZ=") {
				continue // GitHub supports neither descriptors nor TZ= prefixes
			}
			sched, err := cron.ParseStandard(spec)
			if err != nil {
				continue
			}
			t := from
			for range maxTicks {
				t = sched.Next(t)
				if t.IsZero() || t.After(now) {
					break
				}
				list = append(list, due{t.UTC(), w.file, spec})
			}
		}
	}
	sort.SliceStable(list, func(i, j int) bool {
		if !list[i].at.Equal(list[j].at) {
			return list[i].at.Before(list[j].at)
		}
		return list[i].file < list[j].file
	})
	var runs []Run
	for _, d := range list {
		// GitHub's actor for a schedule is who last changed its cron; the
		// fake has no history and names the repository's owner.
		ev := f.emit(nil, &Event{Name: "schedule", Workflow: d.file, Cron: d.spec, At: d.at, Actor: f.opts.Owner, Kind: PersonalToken})
		for _, id := range ev.Runs {
			runs = append(runs, *f.findRun(id))
		}
	}
	f.st.ScheduledThrough = now
	return runs
}

// approveRun answers POST /repos/{owner}/{repo}/actions/runs/{run_id}/approve:
// a run waiting for approval (conclusion action_required) is queued. Only a
// person with write access, or an app, may approve.
func (f *Fake) approveRun(c *call) reply {
	id, _ := strconv.ParseInt(c.params["run_id"], 10, 64)
	run := f.findRun(id)
	if run == nil {
		return notFound()
	}
	switch {
	case c.kind == WorkflowToken:
		return reply{status: http.StatusForbidden, body: map[string]any{"message": "Resource not accessible by integration", "documentation_url": docsApprove}}
	case c.kind == PersonalToken && f.firstTimer(c.login):
		return reply{status: http.StatusForbidden, body: map[string]any{"message": "Must have write access to the repository to approve workflow runs.", "documentation_url": docsApprove}}
	case run.Status != "completed" || run.Conclusion != "action_required":
		return reply{status: http.StatusForbidden, body: map[string]any{"message": "This workflow run is not waiting for approval.", "documentation_url": docsApprove}}
	}
	run.Status, run.Conclusion = "queued", ""
	if f.st.CI[run.WorkflowFile] != nil {
		f.startCIJobs(run, nil)
	}
	return reply{status: http.StatusCreated, body: map[string]any{}}
}

const docsRepoDispatch = "https://docs.github.com/rest/repos/repos#create-a-repository-dispatch-event"

var repoDispatchSchema = bodySchema{fields: map[string]field{
	"event_type": kinds("string"), "client_payload": kinds("object"),
}, required: []string{"event_type"}}

// repositoryDispatch answers POST /repos/{owner}/{repo}/dispatches: a
// repository_dispatch event (204), which starts runs even when a
// workflow's GITHUB_TOKEN sent it.
func (f *Fake) repositoryDispatch(c *call) reply {
	in, rep, ok := parseBody(c, repoDispatchSchema, docsRepoDispatch)
	if !ok {
		return rep
	}
	eventType, _ := str(in, "event_type")
	if eventType == "" || utf8.RuneCountInString(eventType) > 100 {
		return validation(docsRepoDispatch, map[string]any{"resource": "Repository", "code": "invalid", "field": "event_type"})
	}
	var payload map[string]any
	if raw, ok := in["client_payload"]; ok {
		if err := json.Unmarshal(raw, &payload); err != nil {
			return errorReply(http.StatusBadRequest, "Problems parsing JSON")
		}
		if len(payload) > 10 {
			return invalidRequest(docsRepoDispatch, fmt.Sprintf("For 'properties/client_payload', no more than 10 properties are allowed; %d were supplied.", len(payload)))
		}
	}
	f.emit(c, &Event{Name: "repository_dispatch", Action: eventType, Payload: payload})
	return reply{status: http.StatusNoContent}
}

// setWorkflowEnabled answers PUT …/actions/workflows/{workflow}/enable and
// …/disable (204). A disabled workflow starts no runs and cannot be
// dispatched.
func setWorkflowEnabled(enable bool) handlerFunc {
	return func(f *Fake, c *call) reply {
		file := c.params["workflow"]
		if !f.hasWorkflow(file) {
			return notFound()
		}
		f.st.Disabled = slices.DeleteFunc(f.st.Disabled, func(s string) bool { return s == file })
		if !enable {
			f.st.Disabled = append(f.st.Disabled, file)
		}
		return reply{status: http.StatusNoContent}
	}
}
