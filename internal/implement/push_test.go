package implement_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/git"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/report"
	theworld "github.com/roadmap-dev/roadmap/internal/world"
)

// writer is another writer of the work branch: a clone of the remote that
// commits a new file and pushes with real git.
type writer struct {
	t      *testing.T
	dir    string
	branch string
	n      int
}

func newWriter(t *testing.T, w *world) *writer {
	t.Helper()
	dir := filepath.Join(w.dir, "other-writer")
	run(t, w.dir, "git", "clone", "-q", w.remote, dir)
	branch := fmt.Sprintf("roadmap/%d-add-greetings", w.issue)
	run(t, dir, "git", "checkout", "-q", "-b", branch)
	return &writer{t: t, dir: dir, branch: branch}
}

// commit commits NOTES-<n>.md on top of what the writer has of the branch
// (the remote's, once it exists there) and returns its name.
func (o *writer) commit() string {
	o.t.Helper()
	if out, err := gitOut(o.dir, "ls-remote", "--heads", "origin", o.branch); err == nil && out != "" {
		run(o.t, o.dir, "git", "fetch", "-q", "origin", o.branch)
		run(o.t, o.dir, "git", "reset", "-q", "--hard", "FETCH_HEAD")
	}
	o.n++
	name := fmt.Sprintf("NOTES-%d.md", o.n)
	if err := os.WriteFile(filepath.Join(o.dir, name), []byte("a note from another writer\n"), 0o644); err != nil {
		o.t.Fatal(err)
	}
	run(o.t, o.dir, "git", "add", "-A")
	run(o.t, o.dir, "git", "commit", "-q", "-m", "another writer's note "+name)
	return name
}

// push commits a note and pushes it to the branch.
func (o *writer) push() string {
	o.t.Helper()
	name := o.commit()
	run(o.t, o.dir, "git", "push", "-q", "origin", "HEAD:refs/heads/"+o.branch)
	return name
}

func gitOut(dir string, args ...string) (string, error) {
	out, err := theworld.Git(gitEnv(), dir, args...)
	return strings.TrimSpace(out), err
}

// beforePushes makes the other writer push before each of the Job's first
// n pushes of the work branch: every one of them finds the branch moved.
func beforePushes(j *job, o *writer, n int) *[]string {
	var notes []string
	pushes := 0
	j.opts.Repo.Hook = func(args []string, done bool, err error) {
		if done || len(args) == 0 || args[0] != "push" || git.NotePush(args) {
			return
		}
		if pushes++; pushes <= n {
			notes = append(notes, o.push())
		}
	}
	return &notes
}

// remoteFiles lists the files of the work branch on the remote.
func remoteFiles(t *testing.T, w *world, branch string) string {
	t.Helper()
	out, err := gitOut(w.remote, "ls-tree", "-r", "--name-only", "refs/heads/"+branch)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPushRejectedTwiceIsConflict: a push refused because the branch moved
// on the remote is conflict (DESIGN §4: fetch, rebase, push again), however
// often in a row within a bound and however it is refused: another writer
// pushing before ours (non-fast-forward), twice in a row, or the remote's
// ref moving while ours is in flight ("failed to update ref"). Past the
// bound the Job ends conflict, and report continues the item: it never
// stops as unknown.
func TestPushRejectedTwiceIsConflict(t *testing.T) {
	t.Run("another writer pushes twice before a group push", func(t *testing.T) {
		w := newWorld(t, 1, "")
		o := newWriter(t, w)
		j := w.newJob(w.conversations())
		notes := beforePushes(j, o, 2)
		res := j.runWithGreenCI()
		if res.Result != record.ResultReady {
			t.Fatalf("result = %s/%s (%s), want ready after rebasing twice\n%s", res.Result, res.Failure, res.Reason, j.log.String())
		}
		files := remoteFiles(t, w, o.branch)
		for _, f := range append(*notes, "greeting-1.txt") {
			if !strings.Contains(files, f) {
				t.Errorf("the branch lacks %s: both writers' work must be on it\n%s", f, files)
			}
		}
		if len(*notes) != 2 {
			t.Errorf("the other writer pushed %d times, want 2", len(*notes))
		}
	})

	t.Run("the remote's ref moves while the push is in flight", func(t *testing.T) {
		w := newWorld(t, 1, "")
		o := newWriter(t, w)
		note := o.commit()
		// A pre-receive hook on the remote lets another push land while
		// ours waits for it, once: the remote then cannot move the branch
		// from where our push found it.
		marker := filepath.Join(w.dir, "raced")
		hook := fmt.Sprintf(`#!/bin/sh
grep -q ' refs/heads/' || exit 0 # the item's lease is not the branch's push
if [ ! -e '%[1]s' ]; then
  touch '%[1]s'
  env -i PATH="$PATH" HOME='%[2]s' GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null git -C '%[3]s' push -q origin HEAD:refs/heads/%[4]s >&2 || exit 1
fi
exit 0
`, marker, w.dir, o.dir, o.branch)
		if err := os.WriteFile(filepath.Join(w.remote, "hooks", "pre-receive"), []byte(hook), 0o755); err != nil {
			t.Fatal(err)
		}
		var refused []string
		j := w.newJob(w.conversations())
		j.opts.Repo.Hook = func(args []string, done bool, err error) {
			if done && len(args) > 0 && args[0] == "push" && err != nil {
				refused = append(refused, err.Error())
			}
		}
		res := j.runWithGreenCI()
		if _, err := os.Stat(marker); err != nil {
			t.Fatal("the race never happened: the hook did not run")
		}
		if res.Result != record.ResultReady {
			t.Fatalf("result = %s/%s (%s), want ready after rebasing onto the push that raced ours\n%s", res.Result, res.Failure, res.Reason, j.log.String())
		}
		if files := remoteFiles(t, w, o.branch); !strings.Contains(files, note) || !strings.Contains(files, "greeting-1.txt") {
			t.Errorf("the branch holds\n%s\nwant both writers' files", files)
		}
		if !strings.Contains(j.log.String(), "failed to update ref") {
			t.Errorf("the log does not show the refused push (the remote's 'failed to update ref'); git said %q\n%s", refused, j.log.String())
		}
	})

	t.Run("past the bound the Job ends conflict and the item continues", func(t *testing.T) {
		w := newWorld(t, 1, "")
		o := newWriter(t, w)
		j := w.newJob(w.conversations())
		beforePushes(j, o, 100)
		res := j.run()
		if res.Failure != string(failure.Conflict) {
			t.Fatalf("result = %s/%s (%s), want the class conflict\n%s", res.Result, res.Failure, res.Reason, j.log.String())
		}
		w.fake.AddWorkflow("roadmap.yml")
		gh, err := w.base.GitHub(nil)
		if err != nil {
			t.Fatal(err)
		}
		out, err := report.Run(context.Background(), report.Options{Issue: w.issue, GitHub: gh, JobResult: "success",
			Result: string(res.Result), Failure: res.Failure, Attempt: res.Attempt, RunID: j.opts.RunID,
			Workflow: "roadmap.yml", Ref: "main", Clock: w.clock, Mask: w.base.Masker.Mask})
		if err != nil {
			t.Fatalf("report: %v", err)
		}
		if out.Class != failure.Conflict || out.Action != report.ActionContinue || out.Stopped {
			t.Errorf("report: %s → %s (stopped %v), want conflict → continue", out.Class, out.Action, out.Stopped)
		}
		if len(w.fake.Dispatches()) != 1 || slices.Contains(w.fake.Labels(w.issue), "roadmap:stopped") {
			t.Errorf("dispatches %+v, labels %v: want one continuation, no stop", w.fake.Dispatches(), w.fake.Labels(w.issue))
		}
	})
}
