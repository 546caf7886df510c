package scripts_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestAfterAgent: after roadmap's step, the work tree holds only .git and
// roadmap's own folder; every repository below the top (one with an
// fsmonitor hook in an uninitialised submodule's folder, one in a deep
// folder) is named, quoted, and removed; a file name the model chose cannot
// become a workflow command in the log; a symlink out of the tree is removed,
// not followed.
func TestAfterAgent(t *testing.T) {
	ws, _ := prepareWorkspace(t)
	if out, err := prepareRun(t, ws); err != nil {
		t.Fatalf("prepare-run: %v\n%s", err, out)
	}
	outside := t.TempDir()
	write(t, filepath.Join(outside, "keep"), "the runner's\n")
	mark := filepath.Join(t.TempDir(), "ran")
	write(t, filepath.Join(ws, "vendor/lib/f"), "x\n")
	gitIn(t, filepath.Join(ws, "vendor/lib"), "init", "--quiet")
	gitIn(t, filepath.Join(ws, "vendor/lib"), "config", "core.fsmonitor", "sh -c 'echo ran > "+mark+"'")
	write(t, filepath.Join(ws, "a/b/c/.git/config"), "[core]\n")
	write(t, filepath.Join(ws, "node_modules/.bin/tool"), "#!/bin/sh\n")
	write(t, filepath.Join(ws, "evil\n::error::injected"), "x\n")
	if err := os.Symlink(outside, filepath.Join(ws, "out")); err != nil {
		t.Fatal(err)
	}

	script, err := filepath.Abs("after-agent.sh")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", script)
	cmd.Dir = ws
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("after-agent: %v\n%s", err, out)
	}
	log := string(out)
	for _, line := range strings.Split(log, "\n") {
		if strings.HasPrefix(line, "::") && !strings.HasPrefix(line, "::warning title=roadmap: planted repository removed::2 repositories") {
			t.Errorf("a line of the log is a workflow command roadmap did not mean: %q", line)
		}
	}
	for _, named := range []string{"./vendor/lib/.git", "./a/b/c/.git"} {
		if !strings.Contains(log, named) {
			t.Errorf("the log does not name %s:\n%s", named, log)
		}
	}
	entries, err := os.ReadDir(ws)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if want := []string{".git", ".roadmap-run"}; !slices.Equal(left, want) {
		t.Errorf("the work tree holds %q after the agent, want %q", left, want)
	}
	if _, err := os.Stat(filepath.Join(outside, "keep")); err != nil {
		t.Errorf("the script followed a symlink out of the tree: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws, ".roadmap-run", "roadmap", "actions", "stage", "action.yml")); err != nil {
		t.Errorf("roadmap's own folder was touched: %v", err)
	}
	// The checkout's cleanup in the workspace now visits no submodule folder.
	if out, err := exec.Command("git", "-C", ws, "submodule", "foreach", "--recursive", "true").CombinedOutput(); err != nil {
		t.Fatalf("git submodule foreach: %v\n%s", err, out)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Error("the planted fsmonitor hook ran")
	}
}
