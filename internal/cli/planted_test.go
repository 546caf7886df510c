package cli

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/demo"
	"github.com/roadmap-dev/roadmap/internal/implement"
	"github.com/roadmap-dev/roadmap/internal/world"
)

// The route of the last audit that went around the boundary instead of
// through it: a confined command plants a repository where a step after
// roadmap's own runs git as the job's user, with the job's token in its
// environment — roadmap's pinned checkout (.roadmap-run/roadmap, whose
// actions/checkout post step runs `git submodule foreach --recursive` in it)
// or an uninitialised submodule's folder (the workspace checkout's post step
// walks it). Its core.fsmonitor then runs on the first read of that index.
//
// One Job plays the route (a row of TestHostileAgent, shared with the three
// tests below): the workspace is laid out as the reusable workflow leaves it
// (roadmap's checkout kept by scripts/prepare-run.sh, a submodule in the
// repository's history, its folder empty), and the hostile test plants both.

// plantedEvidence is what the planted row's Job left, read once.
type plantedEvidence struct {
	res      implement.Result
	jobLog   string
	attempt  string   // what the hostile command reported of its tries
	gits     []string // .git entries below the work tree's top after the Job
	runDir   string   // why roadmap's own folder is not as it was ("" when it is)
	cleanups []checkoutCleanup
	mark     string // what planted programs wrote (only the runner can write it)
	after    string // scripts/after-agent.sh's log
}

// checkoutCleanup is one run of actions/checkout's post step in a path.
type checkoutCleanup struct {
	when, path string
	ran        bool // the repository existed there, so the commands ran
	out        string
}

var planted struct {
	once sync.Once
	ev   *plantedEvidence
}

// plantedJob plays the planted row once per test process.
func plantedJob(t *testing.T) *plantedEvidence {
	t.Helper()
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skip("the boundary needs root on Linux; the test machines and CI run as root")
	}
	if testing.Short() {
		t.Skip("runs a whole implement Job")
	}
	planted.once.Do(func() {
		for i, row := range hostileRows {
			if row.name == plantedRowName {
				runHostileRow(t, buildRoadmap(t), i, row)
			}
		}
	})
	if planted.ev == nil {
		t.Fatal("the planted row's Job left no evidence (see the first test that ran it)")
	}
	return planted.ev
}

const plantedRowName = "repositories planted for later steps"

// plantedScript is the hostile command: it tries roadmap's own folder, then
// plants a repository with an fsmonitor hook in the submodule's folder.
func plantedScript(mark string) string {
	hook := "sh -c 'id -u >> " + mark + "; env >> " + mark + "'"
	return `{
for p in .roadmap-run/roadmap/.git .roadmap-run/.git .roadmap-run/setup; do
  mkdir "$p" 2>/dev/null && echo "made $p" || echo "refused $p"
done
echo x >> .roadmap-run/roadmap/scripts/after-agent.sh 2>/dev/null && echo "changed after-agent.sh" || echo "refused after-agent.sh"
mv .roadmap-run .roadmap-gone 2>/dev/null && echo "moved .roadmap-run" || echo "refused moving .roadmap-run"
if [ -d vendor/lib ]; then
  (cd vendor/lib && git init -q && echo x > f && git add f && git config core.fsmonitor "` + strings.ReplaceAll(hook, `"`, `\"`) + `") && echo "planted vendor/lib"
fi
} >> planted-attempt.log 2>&1`
}

var plantedRow = hostileRow{
	name:     plantedRowName,
	groupOne: true,
	agent:    func(x *rowEnv) []map[string]any { return plantAndRun(plantedScript(x.mark)) },
	setup: func(t *testing.T, x *rowEnv) {
		ws, env := x.h.ws, x.h.w.GitEnv()
		// roadmap's checkout at the pinned commit, as actions/checkout leaves
		// it (a repository), then kept out of the item by prepare-run.sh.
		rm := filepath.Join(ws, ".roadmap-run", "roadmap")
		for _, f := range []string{"scripts/after-agent.sh", "scripts/prepare-run.sh", "actions/implement/action.yml"} {
			data, err := os.ReadFile(filepath.Join("..", "..", f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Dir(filepath.Join(rm, f)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(rm, f), data, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		gitOrFatal(t, env, rm, "init", "-q")
		prep := exec.Command("bash", ".roadmap-run/roadmap/scripts/prepare-run.sh")
		prep.Dir, prep.Env = ws, env
		if out, err := prep.CombinedOutput(); err != nil {
			t.Fatalf("prepare-run.sh: %v\n%s", err, out)
		}
		// A submodule in the repository's history; the checkout leaves its
		// folder empty (no `submodules:` input).
		head := strings.TrimSpace(gitOrFatal(t, env, ws, "rev-parse", "HEAD"))
		gitOrFatal(t, env, ws, "update-index", "--add", "--cacheinfo", "160000,"+head+",vendor/lib")
		if err := os.WriteFile(filepath.Join(ws, ".gitmodules"), []byte("[submodule \"lib\"]\n\tpath = vendor/lib\n\turl = ./lib\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		gitOrFatal(t, env, ws, "add", ".gitmodules")
		gitOrFatal(t, env, ws, "commit", "-q", "-m", "vendor/lib as a submodule")
		gitOrFatal(t, env, ws, "push", "-q", "origin", "HEAD:main")
		if err := os.MkdirAll(filepath.Join(ws, "vendor", "lib"), 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(filepath.Join(ws, ".git", "info", "exclude"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString("/planted-attempt.log\n"); err != nil {
			t.Fatal(err)
		}
	},
	check: func(t *testing.T, x *rowEnv, res implement.Result, jobLog string) {
		planted.ev = readPlanted(t, x, res, jobLog)
	},
}

func init() { hostileRows = append(hostileRows, plantedRow) }

// readPlanted gathers the row's evidence after the Job, then plays what the
// job's later steps do: actions/checkout's cleanup in both checkouts, then
// scripts/after-agent.sh (the reusable workflows' always() step), then the
// cleanup again.
func readPlanted(t *testing.T, x *rowEnv, res implement.Result, jobLog string) *plantedEvidence {
	ws := x.h.ws
	ev := &plantedEvidence{res: res, jobLog: jobLog}
	data, _ := os.ReadFile(filepath.Join(ws, "planted-attempt.log"))
	ev.attempt = string(data)
	ev.gits = gitsBelowTop(t, ws)
	ev.runDir = runDirChanged(ws)
	token := demo.Token
	for _, p := range []string{ws, filepath.Join(ws, ".roadmap-run", "roadmap")} {
		ev.cleanups = append(ev.cleanups, runCheckoutCleanup(t, "before the after-agent step", p, token))
	}
	cmd := exec.Command("bash", ".roadmap-run/roadmap/scripts/after-agent.sh")
	cmd.Dir, cmd.Env = ws, []string{"PATH=" + os.Getenv("PATH"), "HOME=" + x.h.home}
	out, err := cmd.CombinedOutput()
	ev.after = string(out)
	if err != nil {
		t.Errorf("after-agent.sh: %v\n%s", err, out)
	}
	for _, p := range []string{ws, filepath.Join(ws, ".roadmap-run", "roadmap")} {
		ev.cleanups = append(ev.cleanups, runCheckoutCleanup(t, "after it", p, token))
	}
	mark, _ := os.ReadFile(x.mark)
	ev.mark = string(mark)
	return ev
}

// runCheckoutCleanup runs the post step of actions/checkout v7.0.1 (the
// version the reusable workflows pin) in path, as its source does it
// (src/git-source-provider.ts cleanup, src/git-auth-helper.ts removeAuth:
// removeSsh then removeToken, through src/git-command-manager.ts): nothing
// unless path/.git/config exists; then each key's `git config --local
// --name-only --get-regexp`, and `git submodule foreach --recursive` of the
// same in every submodule; then the includeIf keys and each submodule's
// remote.origin.url origin. It runs as the job's user with the token in the
// step's environment (INPUT_TOKEN, as the runner gives an action's inputs).
func runCheckoutCleanup(t *testing.T, when, path, token string) checkoutCleanup {
	t.Helper()
	c := checkoutCleanup{when: when, path: path}
	if _, err := os.Stat(filepath.Join(path, ".git", "config")); err != nil {
		return c
	}
	c.ran = true
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "INPUT_TOKEN=" + token, "GITHUB_TOKEN=" + token,
		"GIT_TERMINAL_PROMPT=0", "GCM_INTERACTIVE=Never"}
	foreach := func(key, pattern string) []string {
		return []string{"submodule", "foreach", "--recursive",
			`sh -c "git config --local --name-only --get-regexp '` + pattern + `' && git config --local --unset-all '` + key + `' || :"`}
	}
	var out bytes.Buffer
	for _, args := range [][]string{
		{"config", "--local", "--name-only", "--get-regexp", `core\.sshCommand`},
		foreach("core.sshCommand", `core\.sshCommand`),
		{"config", "--local", "--name-only", "--get-regexp", `http\.https\:\/\/github\.com\/\.extraheader`},
		foreach("http.https://github.com/.extraheader", `http\.https\:\/\/github\.com\/\.extraheader`),
		{"config", "--local", "--name-only", "--get-regexp", `^includeIf\.gitdir:`},
		{"submodule", "foreach", "--recursive", "git config --local --show-origin --name-only --get-regexp remote.origin.url"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = path, env
		b, _ := cmd.CombinedOutput() // exit 1 is "no such key", as the action takes it
		out.Write(b)
	}
	c.out = out.String()
	return c
}

// gitsBelowTop lists every .git below ws's top, by path relative to ws.
func gitsBelowTop(t *testing.T, ws string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(ws, p)
		if rel == ".git" {
			return fs.SkipDir
		}
		if d.Name() == ".git" {
			found = append(found, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// runDirChanged says how roadmap's own folder differs from what prepare-run
// left: a file or folder more, one changed, or an entry not the runner's.
func runDirChanged(ws string) string {
	dir := filepath.Join(ws, ".roadmap-run")
	var why []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			why = append(why, err.Error())
			return nil
		}
		rel, _ := filepath.Rel(ws, p)
		if fi, err := os.Lstat(p); err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid != 0 {
				why = append(why, rel+" belongs to uid "+strconv.Itoa(int(st.Uid)))
			}
		}
		switch rel {
		case ".roadmap-run", ".roadmap-run/roadmap", ".roadmap-run/roadmap/scripts", ".roadmap-run/roadmap/actions",
			".roadmap-run/roadmap/actions/implement", ".roadmap-run/roadmap/actions/implement/action.yml",
			".roadmap-run/roadmap/scripts/prepare-run.sh":
		case ".roadmap-run/roadmap/scripts/after-agent.sh":
			mine, _ := os.ReadFile(filepath.Join("..", "..", "scripts", "after-agent.sh"))
			if got, _ := os.ReadFile(p); !bytes.Equal(got, mine) {
				why = append(why, rel+" changed")
			}
		default:
			why = append(why, rel+" appeared")
		}
		return nil
	})
	return strings.Join(why, "; ")
}

func gitOrFatal(t *testing.T, env []string, dir string, args ...string) string {
	t.Helper()
	out, err := world.Git(env, dir, args...)
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return out
}

// TestPinnedCheckoutOutOfReach: roadmap's pinned checkout, whose actions and
// scripts the job's later steps run, is never the boundary's: a confined
// command cannot make a repository in it, change a script of it, or move it
// away; it is the runner's, untouched, when the Job ends.
func TestPinnedCheckoutOutOfReach(t *testing.T) {
	ev := plantedJob(t)
	if !strings.Contains(ev.attempt, "planted vendor/lib") {
		t.Fatalf("the hostile command did not run as planned, so this shows nothing:\n%s", ev.attempt)
	}
	for _, bad := range []string{"made ", "changed after-agent.sh", "moved .roadmap-run"} {
		if strings.Contains(ev.attempt, bad) {
			t.Errorf("a confined command reached roadmap's own folder (%q):\n%s", bad, ev.attempt)
		}
	}
	if ev.runDir != "" {
		t.Errorf("roadmap's own folder is not as prepare-run left it: %s", ev.runDir)
	}
}

// TestNoGitPlantedSurvivesJob: the repository the command planted in the
// submodule's folder is gone when roadmap exits, and the job log says so as
// a warning naming it; the after-agent step finds nothing left.
func TestNoGitPlantedSurvivesJob(t *testing.T) {
	ev := plantedJob(t)
	if !strings.Contains(ev.attempt, "planted vendor/lib") {
		t.Fatalf("the hostile command did not plant, so this shows nothing:\n%s", ev.attempt)
	}
	if len(ev.gits) > 0 {
		t.Errorf("repositories below the work tree's top survived the Job: %q", ev.gits)
	}
	if !strings.Contains(ev.jobLog, `::warning title=roadmap: planted repository removed::`) || !strings.Contains(ev.jobLog, `"vendor/lib/.git"`) {
		t.Errorf("the job log does not warn of the planted vendor/lib/.git:\n%s", tail(ev.jobLog, 3000))
	}
	if strings.Contains(ev.after, "a repository below") {
		t.Errorf("the after-agent step still found a repository roadmap should have removed:\n%s", ev.after)
	}
}

// TestPostStepRunsNoPlantedProgram: actions/checkout's post step, run as the
// job's user with the token in its environment in both checkouts, before and
// after the after-agent step, runs nothing the model planted.
func TestPostStepRunsNoPlantedProgram(t *testing.T) {
	ev := plantedJob(t)
	if !strings.Contains(ev.attempt, "planted vendor/lib") {
		t.Fatalf("the hostile command did not plant, so this shows nothing:\n%s", ev.attempt)
	}
	ranInWorkspace := false
	for _, c := range ev.cleanups {
		if c.ran && !strings.Contains(c.path, ".roadmap-run") {
			ranInWorkspace = true
		}
		if c.ran && strings.Contains(c.path, ".roadmap-run") {
			t.Errorf("checkout's cleanup found a repository in roadmap's own checkout (%s, %s):\n%s", c.path, c.when, c.out)
		}
	}
	if !ranInWorkspace {
		t.Fatal("checkout's cleanup never ran in the workspace, so this shows nothing")
	}
	if ev.mark != "" {
		t.Errorf("a planted program ran after roadmap exited:\n%s", ev.mark)
	}
}
