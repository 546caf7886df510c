package implement

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/git"
	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// A conflict stop at push keeps the work: the group's commit the push could
// not publish goes to the item's WIP ref and implement.kept names it, and
// the next Job lays it over the branch as it is then instead of running the
// group's agent again (docs/implement.md, "A conflict stop keeps the work").

// kept is the commit an earlier conflict stop kept (implement.kept) and what
// this Job did with it.
type kept struct {
	sha string
	// group is the group whose first step started from the commit in this
	// Job (0: none yet); the ref is deleted once that group lands.
	group int
	// summary is the kept commit's body: the group's commit says it again.
	summary string
}

// wipRef is the item's WIP ref: roadmap's own, no branch.
func wipRef(issue int) string { return "refs/roadmap/wip/" + strconv.Itoa(issue) }

// keepOn keeps the group's commit a conflict at push left unpublished: it is
// pushed to the item's WIP ref and named in implement.kept. Any other ending
// passes through. A keep that fails is logged and the stop is as before: the
// next Job runs the group again.
func (r *runner) keepOn(ctx context.Context, g plan.Group, end ending) ending {
	if end.class != failure.Conflict || g.Number == 0 {
		return end
	}
	ref := wipRef(r.o.Issue)
	if err := r.o.Repo.PushCommit(ctx, r.o.Remote, r.head, ref); err != nil {
		r.j.Logf("roadmap: %s: keep the group's commit %s in %s: %v; the next Job runs the group again", groupStep(g), short(r.head), ref, err)
		return end
	}
	var ch record.Changes
	ch.SetKept(record.SHA(r.head))
	r.pending.Merge(ch)
	r.j.Logf("roadmap: %s: the group's commit %s is kept in %s (implement.kept); the next Job lays it over the branch instead of running the group again",
		groupStep(g), short(r.head), ref)
	end.reason += "; the group's commit " + short(r.head) + " is kept in " + ref
	return end
}

// resume starts group g's first step from the commit an earlier conflict
// stop kept: its change is laid over the branch as it is now, as if the
// agent had made it. When the group's checks pass on it, it returns true
// and no model is asked. When the change conflicts, or the checks fail,
// step gets the files or the log, and the agent starts from the kept work.
// A kept commit that is gone, is not the one the record names, or does not
// fit the branch is dropped with a log line, and the group runs as it would
// have without it.
func (r *runner) resume(ctx context.Context, change *plan.Change, g plan.Group, first bool, step *agent.Step,
	check func(context.Context) (bool, string, error)) (bool, error) {
	k := &r.handoff.kept
	if !first || k.sha == "" || k.group != 0 {
		return false, nil
	}
	rel, err := changeRel(r.workdir, change.Dir)
	if err != nil {
		return false, err
	}
	note, ours, why := r.fetchKept(ctx, g, rel)
	if why != "" {
		r.dropKept(ctx, ours, why+"; group "+strconv.Itoa(g.Number)+" runs again")
		return false, nil
	}
	files, err := r.applyKept(ctx, rel, note.SHA)
	if err != nil {
		if rerr := r.o.Repo.ResetHard(ctx, r.head); rerr != nil {
			return false, rerr
		}
		r.dropKept(ctx, ours, fmt.Sprintf("cannot be laid over %s (%v); group %d runs again", short(r.head), err, g.Number))
		return false, nil
	}
	k.group, k.summary = g.Number, keptSummary(note.Text)
	step.Task += "\n\nThe workspace already holds this group's work, kept by an earlier Job that could not publish it and laid over the branch as it is now: go on from it, do not start again."
	if len(files) > 0 {
		r.j.Logf("roadmap: %s: the kept commit %s conflicts with the branch at %s (%s); the agent resolves it, starting from the kept work",
			groupStep(g), short(note.SHA), short(r.head), strings.Join(capList(files, 10), ", "))
		step.Conflict = files
		return false, nil
	}
	passed, log, err := check(ctx)
	if err != nil {
		return false, err
	}
	if !passed {
		r.j.Logf("roadmap: %s: the kept commit %s applies at %s but the group's checks fail; the agent repairs it, starting from the kept work", groupStep(g), short(note.SHA), short(r.head))
		step.CheckLog = log
		return false, nil
	}
	r.j.Logf("roadmap: %s: the kept commit %s applies at %s and the group's checks pass: no model call", groupStep(g), short(note.SHA), short(r.head))
	return true, nil
}

// fetchKept reads the item's WIP ref and checks that it is the commit the
// record names and that it fits the branch: one commit of group g and no
// other on top of the head, made on the plan the head holds. why says what
// is wrong ("" when it fits); ours is the ref's commit when the record
// names it, for dropKept to delete.
func (r *runner) fetchKept(ctx context.Context, g plan.Group, rel string) (note git.RefNote, ours, why string) {
	o, want := r.o, r.handoff.kept.sha
	ref := wipRef(o.Issue)
	note, found, err := o.Repo.ReadRef(ctx, o.Remote, ref)
	switch {
	case err != nil:
		return note, "", fmt.Sprintf("cannot be read from %s: %v", ref, err)
	case !found:
		return note, "", "is gone from " + ref
	case note.SHA != want:
		return note, "", fmt.Sprintf("is not what %s holds (%s)", ref, short(note.SHA))
	}
	log, err := o.Repo.GroupLog(ctx, r.head, note.SHA)
	if err != nil {
		return note, note.SHA, fmt.Sprintf("cannot be read against %s: %v", short(r.head), err)
	}
	if len(log) != 1 || !slices.Equal(log[0].Groups, []int{g.Number}) {
		return note, note.SHA, fmt.Sprintf("is not one commit of group %d on top of the branch at %s (%d commits)", g.Number, short(r.head), len(log))
	}
	tasks := rel + "/tasks.md"
	then, _, err1 := o.Repo.ReadAt(ctx, note.SHA+"^", tasks)
	now, _, err2 := o.Repo.ReadAt(ctx, r.head, tasks)
	if err := errors.Join(err1, err2); err != nil || !bytes.Equal(then, now) {
		return note, note.SHA, "was made on another plan than the branch's " + tasks
	}
	return note, note.SHA, ""
}

// applyKept lays the kept commit's change over the work tree and returns the
// files in conflict, if any. Its tick of tasks.md is undone, as any change
// to the plan before a group's commit: the runner ticks the group again.
func (r *runner) applyKept(ctx context.Context, rel, sha string) ([]string, error) {
	var files []string
	err := r.o.Repo.ApplyCommit(ctx, sha)
	var c *git.Conflict
	if errors.As(err, &c) {
		files, err = c.Files, nil
	}
	if err != nil {
		return nil, err
	}
	if _, err := r.o.Repo.DiscardInside(ctx, rel); err != nil {
		return nil, err
	}
	return slices.DeleteFunc(files, func(f string) bool { return strings.HasPrefix(f, rel+"/") }), nil
}

// dropKept deletes implement.kept with the Job's next write, and the WIP ref
// when it holds ours (the commit the record names), saying why.
func (r *runner) dropKept(ctx context.Context, ours, why string) {
	k := &r.handoff.kept
	r.j.Logf("roadmap: the kept commit %s (implement.kept) %s", short(k.sha), why)
	if ours != "" {
		if err := r.o.Repo.DeleteRefIf(ctx, r.o.Remote, wipRef(r.o.Issue), ours); err != nil {
			r.j.Logf("roadmap: delete %s: %v", wipRef(r.o.Issue), err)
		}
	}
	var ch record.Changes
	ch.Delete(record.KeyImplementKept)
	r.pending.Merge(ch)
	*k = kept{}
}

// keptSummary is the body of a group's commit message: the lines between
// the subject and the trailers.
func keptSummary(msg string) string {
	lines := strings.Split(strings.TrimSpace(msg), "\n")
	var body []string
	for _, l := range lines[1:] {
		if strings.HasPrefix(l, git.TrailerGroup+":") || strings.HasPrefix(l, git.TrailerIssue+":") {
			continue
		}
		body = append(body, l)
	}
	return strings.TrimSpace(strings.Join(body, "\n"))
}
