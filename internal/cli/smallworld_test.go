package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/demo"
)

// demoPlan is the demo's approved plan, as the world's main holds it.
const demoPlan = "openspec/changes/add-greetings/tasks.md"

// oneGroupPlan cuts the demo world's approved plan on main to its group 1
// (Hello: a test that fails first, then the code), committed in ws (a clone
// of the world's remote, at main) and pushed before any Job starts. It is the
// smallest world in which a Job runs a group's agent, verify commands and
// fail-to-pass, then the whole ready path (the archive, the checks, the
// review, CI, the PR): for the tests about a whole Job that show nothing of
// how many groups it has. Groups 2 and 3 repeat group 1's kind of work.
func oneGroupPlan(t *testing.T, w *demo.World, ws string) {
	t.Helper()
	path := filepath.Join(ws, filepath.FromSlash(demoPlan))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	one, _, found := strings.Cut(string(data), "\n## 2.")
	if !found {
		t.Fatalf("%s has no group 2 to cut:\n%s", demoPlan, data)
	}
	if err := os.WriteFile(path, []byte(one), 0o644); err != nil {
		t.Fatal(err)
	}
	env := w.GitEnv()
	gitOrFatal(t, env, ws, "commit", "-qam", "plan: group 1 alone")
	gitOrFatal(t, env, ws, "push", "-q", "origin", "HEAD:main")
}

// oneGroupWorld is oneGroupPlan made in a clone of its own.
func oneGroupWorld(t *testing.T, w *demo.World) {
	t.Helper()
	ws, err := w.Workspace("one-group-plan")
	if err != nil {
		t.Fatal(err)
	}
	oneGroupPlan(t, w, ws)
}

// withoutTestStrength writes a copy of the configuration at path with test
// strength off: it mutates the group's code and runs its tests once per
// mutant (most of a demo Job's time), and the tests that use it show
// nothing of it (ci test-strength's own tests and eval's weak-test do).
func withoutTestStrength(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const on = "  test_strength: true\n"
	if !strings.Contains(string(data), on) {
		t.Fatalf("%s does not turn test strength on:\n%s", path, data)
	}
	out := filepath.Join(t.TempDir(), "roadmap.yml")
	if err := os.WriteFile(out, []byte(strings.Replace(string(data), on, "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}
