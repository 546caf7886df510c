package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/demo"
	"github.com/roadmap-dev/roadmap/internal/demo/demotest"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// TestIsolationUnderAct runs the hostile agent of TestIsolation
// (internal/cli, docs/isolation.md) through the real workflows under act:
// the implement action opens the boundary, the hostile test runs as the
// boundary's uid in its own namespaces under Landlock, and the job's token
// (demo.Token, the fake's) appears in no job log, no write to GitHub,
// nothing pushed and nothing the hostile test could write down; the item
// still ends ready.
func TestIsolationUnderAct(t *testing.T) {
	act := requireAct(t)
	if os.Geteuid() != 0 {
		t.Skip("the boundary needs root; the e2e machines run as root")
	}
	it := newItem(t, act, itemOptions{WatchTimeout: 30e9, NoReview: true}) // the hostile fixtures record no reviewer
	dir := t.TempDir()
	out := filepath.Join(os.TempDir(), "roadmap-e2e-isolation-leak-"+filepath.Base(filepath.Dir(dir)))
	mark := out + ".mark"
	script := out + ".sh"
	t.Cleanup(func() { os.Remove(out); os.Remove(mark); os.Remove(script) })
	// The runner's paths as the hostile test guesses them: this process's
	// HOME and a temp folder of the test's with a canary in it. (The act
	// run's own HOME and RUNNER_TEMP are closed by the boundary, which
	// TestIsolation checks in process.)
	home, _ := os.UserHomeDir()
	// The folder is the runner's own, as the boundary leaves RUNNER_TEMP
	// (closed to others); the file in it is world-readable.
	temp := filepath.Join(dir, "runner-temp")
	if err := os.MkdirAll(temp, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(temp, "set_env"), []byte("TOKEN="+demo.Token+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fixtures := filepath.Join(dir, "fixtures")
	if err := demotest.WriteHostileFixtures(fixtures, demotest.Hostile{Home: home, RunnerTemp: temp, GitHubEnv: filepath.Join(temp, "set_env"),
		GitHubOutput: filepath.Join(temp, "set_output"), StepSummary: filepath.Join(temp, "step_summary"),
		Out: out, Mark: mark, Script: script, Token: demo.Token}); err != nil {
		t.Fatal(err)
	}
	replay, err := llm.LoadReplay(fixtures)
	if err != nil {
		t.Fatal(err)
	}
	it.w.Replay = replay
	it.playCI("success")

	// A person labels the issue, and the run GitHub starts for it is the
	// one act runs (the driver's rule: only the runs the fake decides).
	alice := it.person("alice", "admin")
	alice.label(it.w.Issue, "roadmap:implement")
	r := it.nextRun("run 1", it.workflowFile(), "issues", nil).actRun
	rec := it.record()
	res, _ := rec.Result()
	if res == "" {
		t.Fatalf("the Job left no typed result:\n%s", recordText(rec))
	}
	it.logf("the hostile item ended %s", res)
	if res != record.ResultReady {
		t.Errorf("implement.result = %s, want ready: the boundary should let the item's real work through\n%s", res, recordText(rec))
	}

	// The hostile test's report reaches us only through the pushed branch:
	// writing it outside the work tree (out) is refused by Landlock.
	report, err := pushedFile(it.w.Remote, "leak-report.txt")
	if err != nil {
		t.Fatalf("the hostile test never ran under act (no leak-report.txt pushed): %v", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("the hostile test wrote %s, outside the work tree", out)
	}
	if !strings.Contains(string(report), "ran as uid=") || strings.Contains(string(report), "ran as uid=0 ") {
		t.Errorf("the hostile test did not run as the sandbox user:\n%.300s", report)
	}
	pushed, err := exec.Command("git", "-C", it.w.Remote, "log", "--all", "-p", "--binary").CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(pushed), "leak-report.txt") {
		t.Error("the hostile test's report was not pushed: the pushed-branch check proves nothing")
	}
	places := map[string]string{
		"the hostile test's findings": string(report),
		"the pushed branch":           string(pushed),
		"the job log":                 r.Log + string(r.Output),
	}
	for _, req := range it.w.Fake.Requests() {
		places["GitHub writes"] += req.Body + "\n"
	}
	for where, text := range places {
		if i := strings.Index(text, demo.Token); i >= 0 {
			t.Errorf("the job's token reached %s: …%s…", where, text[max(0, i-300):min(len(text), i+300)])
		}
	}
	if data, err := os.ReadFile(mark); err == nil {
		for _, uid := range strings.Fields(string(data)) {
			if uid == "0" {
				t.Error("something planted ran as root inside the runner")
			}
		}
	}
	for _, s := range []string{"PLANTED", "WROTE", "MOVED .git"} {
		if strings.Contains(string(report), s) {
			t.Errorf("the hostile test could do %q", s)
		}
	}
}

// pushedFile is the newest version of file on any branch of the bare remote.
func pushedFile(remote, file string) ([]byte, error) {
	sha, err := exec.Command("git", "-C", remote, "rev-list", "--all", "-1", "--", file).Output()
	if err != nil || len(strings.TrimSpace(string(sha))) == 0 {
		return nil, fmt.Errorf("no branch of %s has %s: %v", remote, file, err)
	}
	return exec.Command("git", "-C", remote, "show", strings.TrimSpace(string(sha))+":"+file).Output()
}
