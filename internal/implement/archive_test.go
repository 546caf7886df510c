package implement_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/record"
)

// TestArchiveAtReady: the item's PR ends with the OpenSpec archive as its
// last commit (the change moved to openspec/changes/archive/YYYY-MM-DD-<id>,
// trailer Roadmap-Archive), pushed before the watch; a continuation after the
// archive reads the plan where OpenSpec moved it and goes ready.
func TestArchiveAtReady(t *testing.T) {
	w := newWorld(t, 2, "")
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
