package scripts_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// prepareWorkspace lays out what a job of the reusable workflows has before
// scripts/prepare-run.sh: the caller's checkout (a git repository, with the
// setup action committed) and roadmap's checkout in .roadmap-run/roadmap
// (with its own .git). It returns the workspace and the commit.
func prepareWorkspace(t *testing.T) (string, string) {
	t.Helper()
	ws := t.TempDir()
	write(t, filepath.Join(ws, ".github/actions/roadmap-setup/action.yml"), "name: setup\nruns: {using: composite, steps: [{shell: bash, run: echo base}]}\n")
	write(t, filepath.Join(ws, "main.py"), "print(1)\n")
	gitIn(t, ws, "init", "--quiet", "--initial-branch=main")
	gitIn(t, ws, "add", "--all")
	gitIn(t, ws, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "--quiet", "--message", "base")
	sha := strings.TrimSpace(gitIn(t, ws, "rev-parse", "HEAD"))
	rm := filepath.Join(ws, ".roadmap-run", "roadmap")
	write(t, filepath.Join(rm, "actions/stage/action.yml"), "name: stage\n")
	gitIn(t, rm, "init", "--quiet")
	return ws, sha
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// prepareRun runs scripts/prepare-run.sh in ws with env.
func prepareRun(t *testing.T, ws string, env ...string) (string, error) {
	t.Helper()
	script, err := filepath.Abs("prepare-run.sh")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", script)
	cmd.Dir = ws
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestPrepareRun: roadmap's pinned checkout is kept out of the item (no
// .git of its own, excluded in the caller's checkout, once however often it
// runs), and the project's setup action is copied where `uses:` can name
// it — from the base commit when one is given, never through a symlink or
// out of the repository.
func TestPrepareRun(t *testing.T) {
	t.Run("keeps roadmap out of the item", func(t *testing.T) {
		ws, _ := prepareWorkspace(t)
		for range 2 {
			if out, err := prepareRun(t, ws); err != nil {
				t.Fatalf("prepare-run: %v\n%s", err, out)
			}
		}
		if _, err := os.Stat(filepath.Join(ws, ".roadmap-run/roadmap/.git")); !os.IsNotExist(err) {
			t.Errorf("roadmap's checkout still has its .git (%v): a nested repository in the item", err)
		}
		exclude, err := os.ReadFile(filepath.Join(ws, ".git/info/exclude"))
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(exclude), "/.roadmap-run/\n"); n != 1 {
			t.Errorf(".git/info/exclude lists /.roadmap-run/ %d times, want once:\n%s", n, exclude)
		}
		if st := gitIn(t, ws, "status", "--porcelain", "--untracked-files=all"); st != "" {
			t.Errorf("git status shows roadmap's checkout:\n%s", st)
		}
		if _, err := os.Stat(filepath.Join(ws, ".roadmap-run/setup")); !os.IsNotExist(err) {
			t.Errorf("no setup given, but .roadmap-run/setup exists (%v)", err)
		}
	})
	t.Run("no pinned checkout", func(t *testing.T) {
		ws, _ := prepareWorkspace(t)
		if err := os.RemoveAll(filepath.Join(ws, ".roadmap-run")); err != nil {
			t.Fatal(err)
		}
		out, err := prepareRun(t, ws)
		if err == nil || !strings.Contains(out, "pinned checkout did not run") {
			t.Errorf("prepare-run without .roadmap-run/roadmap: %v\n%s", err, out)
		}
	})
	t.Run("setup from the checkout", func(t *testing.T) {
		ws, _ := prepareWorkspace(t)
		if out, err := prepareRun(t, ws, "SETUP=./.github/actions/roadmap-setup/"); err != nil {
			t.Fatalf("prepare-run: %v\n%s", err, out)
		}
		if b, err := os.ReadFile(filepath.Join(ws, ".roadmap-run/setup/action.yml")); err != nil || !strings.Contains(string(b), "echo base") {
			t.Errorf("the setup action was not copied: %v %q", err, b)
		}
	})
	t.Run("setup from the base, not the head", func(t *testing.T) {
		ws, base := prepareWorkspace(t)
		// The head (a PR's) rewrites the setup action; the base's is run.
		write(t, filepath.Join(ws, ".github/actions/roadmap-setup/action.yml"), "name: setup\nruns: {using: composite, steps: [{shell: bash, run: echo head}]}\n")
		gitIn(t, ws, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "--quiet", "--all", "--message", "head")
		if out, err := prepareRun(t, ws, "SETUP=.github/actions/roadmap-setup", "SETUP_FROM="+base); err != nil {
			t.Fatalf("prepare-run: %v\n%s", err, out)
		}
		b, err := os.ReadFile(filepath.Join(ws, ".roadmap-run/setup/action.yml"))
		if err != nil || !strings.Contains(string(b), "echo base") {
			t.Errorf("the setup action is not the base's: %v %q", err, b)
		}
		if _, err := os.Stat(filepath.Join(ws, ".roadmap-run/setup-src")); !os.IsNotExist(err) {
			t.Errorf("the base's extract is left behind (%v)", err)
		}
	})
	for _, tt := range []struct {
		name, setup, want string
		layout            func(t *testing.T, ws string)
	}{
		{name: "parent directory", setup: "../outside", want: "no '..'"},
		{name: "dot-dot inside", setup: ".github/../../x", want: "no '..'"},
		{name: "absolute", setup: "/etc", want: "not a relative path"},
		{name: "shell characters", setup: ".github/actions/$(id)", want: "not a relative path"},
		{name: "no action.yml", setup: ".github", want: "holds no action.yml"},
		{name: "roadmap's own", setup: ".roadmap-run/roadmap/actions/stage", want: "roadmap's own"},
		{name: "empty component", setup: ".github//actions", want: "not a relative path"},
		{name: "missing", setup: ".github/actions/none", want: "holds no action.yml"},
		{name: "symlinked directory", setup: ".github/actions/linked", want: "is a symlink", layout: func(t *testing.T, ws string) {
			if err := os.Symlink("/etc", filepath.Join(ws, ".github/actions/linked")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "symlink inside", setup: ".github/actions/roadmap-setup", want: "holds a symlink", layout: func(t *testing.T, ws string) {
			if err := os.Symlink("/etc/passwd", filepath.Join(ws, ".github/actions/roadmap-setup/passwd")); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ws, _ := prepareWorkspace(t)
			if tt.layout != nil {
				tt.layout(t, ws)
			}
			out, err := prepareRun(t, ws, "SETUP="+tt.setup)
			if err == nil || !strings.Contains(out, tt.want) {
				t.Errorf("SETUP=%q: %v, want a refusal saying %q:\n%s", tt.setup, err, tt.want, out)
			}
			if _, err := os.Stat(filepath.Join(ws, ".roadmap-run/setup")); !os.IsNotExist(err) {
				t.Errorf("SETUP=%q was refused but .roadmap-run/setup exists (%v)", tt.setup, err)
			}
		})
	}
}
