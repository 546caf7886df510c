package implement_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/checks"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// TestArchiveAtReady: the item's PR ends with the OpenSpec archive as its
// last commit (the change moved to openspec/changes/archive/YYYY-MM-DD-<id>,
// trailer Roadmap-Archive), pushed before the watch; a continuation after the
// archive reads the plan where OpenSpec moved it and goes ready.
func TestArchiveAtReady(t *testing.T) {
	w := newWorld(t, 1, "")
	lifeOf(t, w, "") // Job 1 yields at the watch after the archive; Job 2 goes ready
	branch := "roadmap/" + fmt.Sprint(w.issue) + "-add-greetings"
	msg := run(t, w.remote, "git", "log", "-1", "--format=%B", branch)
	if !strings.Contains(msg, "Roadmap-Archive: add-greetings") {
		t.Errorf("the PR's last commit is not the archive:\n%s", msg)
	}
	tree := run(t, w.remote, "git", "ls-tree", "-r", "--name-only", branch)
	date := w.clock.Now().Format("2006-01-02")
	if !strings.Contains(tree, "openspec/changes/archive/"+date+"-add-greetings/tasks.md") {
		t.Errorf("the archive directory is missing from the last commit:\n%s", tree)
	}
	if strings.Contains(tree, "openspec/changes/add-greetings/") {
		t.Errorf("the change is still under openspec/changes/:\n%s", tree)
	}
	if !w.prReady() {
		t.Error("the PR was not marked ready (or prReady cannot see it)")
	}
	archives := strings.Count(run(t, w.remote, "git", "log", "--format=%B", branch), "Roadmap-Archive:")
	if archives != 1 {
		t.Errorf("%d archive commits, want 1 (the continuation must not archive again)", archives)
	}
}

// TestArchiveRefusedReturnsThePlan: a change whose delta cannot apply (a
// MODIFIED requirement the main spec does not have) is not archived: the item
// goes back to stage with OpenSpec's finding and the PR stays a draft.
func TestArchiveRefusedReturnsThePlan(t *testing.T) {
	w := newWorld(t, 1, "")
	w.addToPlan(t, map[string]string{
		"specs/greet/spec.md": "## MODIFIED Requirements\n\n### Requirement: Greeting\nThe system SHALL greet.\n\n#### Scenario: Hello\n- **WHEN** asked\n- **THEN** it greets\n",
	})
	j := w.newJob(w.conversations())
	res := j.runWithGreenCI()
	if res.Result != record.ResultReturned || !strings.Contains(res.Reason, "cannot be archived") {
		t.Fatalf("Job ended %s (%s %s), want returned: the change cannot be archived\n%s", res.Result, res.Failure, res.Reason, j.log.String())
	}
	if w.prReady() {
		t.Error("the PR was marked ready with a change that cannot be archived")
	}
}

// addToPlan commits files (paths relative to the plan's directory) to the
// remote's main, as the stage phase would have written them.
func (w *world) addToPlan(t *testing.T, files map[string]string) {
	t.Helper()
	dir := filepath.Join(w.dir, "plan-edit")
	run(t, w.dir, "git", "clone", "-q", w.remote, dir)
	for name, body := range files {
		p := filepath.Join(dir, planDir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(t, dir, "git", "add", "-A")
	run(t, dir, "git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "plan: delta specs")
	run(t, dir, "git", "push", "-q", "origin", "main")
}

// prReady reports whether the PR was marked ready for review (the GraphQL
// mutation was sent).
func (w *world) prReady() bool {
	for _, r := range w.fake.Requests() {
		if r.Endpoint == "POST /graphql" && strings.Contains(r.Body, "markPullRequestReadyForReview") {
			return true
		}
	}
	return false
}

// TestArchiveRefusesSymlink: a symlink under openspec/ is not a fault of the
// plan, so it never goes back to stage as plan_wrong: one in the tree when
// the Job starts stops it before any group (the archive would refuse it
// after the work), and one planted during the groups (by a process left
// behind) stops it at the archive. Both stop with class unknown, nothing
// outside the work tree is written, and the PR is not marked ready.
func TestArchiveRefusesSymlink(t *testing.T) {
	for _, when := range []string{"at the start", "during the groups"} {
		t.Run(when, func(t *testing.T) {
			w := newWorld(t, 1, "")
			outside := t.TempDir()
			j := w.newJob(w.conversations())
			plant := func() {
				link := filepath.Join(j.ws, "openspec", "specs", "greet")
				if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(outside, link); err != nil {
					t.Fatal(err)
				}
			}
			step := "archive"
			if when == "at the start" {
				step = "plan"
				plant()
			} else {
				j.opts.CheckRunner = &plantingRunner{Runner: j.opts.CheckRunner, plant: plant}
			}
			res := j.runWithGreenCI()
			if res.Result != record.ResultStopped || res.Failure != "unknown" || !strings.Contains(res.Reason, "openspec/specs/greet is a symlink") {
				t.Fatalf("Job ended %s (%s %s), want stopped (unknown) for the symlink\n%s", res.Result, res.Failure, res.Reason, j.log.String())
			}
			if c, ok := w.recordComment(); !ok || !strings.Contains(c.Body, "stopped (unknown) in "+step) {
				t.Errorf("the record comment does not say it stopped in %s:\n%s", step, c.Body)
			}
			if entries, _ := os.ReadDir(outside); len(entries) > 0 {
				t.Errorf("the Job wrote outside the work tree: %v", entries)
			}
			if w.prReady() {
				t.Error("the PR was marked ready")
			}
		})
	}
}

// plantingRunner plants a symlink in the work tree when the first check
// runs, as a process a tool command left behind could.
type plantingRunner struct {
	checks.Runner
	plant func()
	done  bool
}

func (p *plantingRunner) Run(ctx context.Context, dir string, argv []string) (checks.Result, error) {
	if !p.done {
		p.done = true
		p.plant()
	}
	return p.Runner.Run(ctx, dir, argv)
}
