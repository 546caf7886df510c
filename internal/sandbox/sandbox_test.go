package sandbox

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// needRoot skips a test of the user boundary where it cannot be set up; the
// test machines and CI run as root on Linux.
func needRoot(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skip("the user boundary needs root on Linux")
	}
}

// workTree makes a git work tree with a .git holding a config and a hook
// folder, under a private parent (0700, like t.TempDir).
func workTree(t *testing.T) string {
	t.Helper()
	ws := filepath.Join(t.TempDir(), "repo")
	for _, d := range []string{".git/hooks", "src"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range map[string]string{".git/config": "[core]\n", "src/a.go": "package a\n"} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

func open(t *testing.T, o Options) *Boundary {
	t.Helper()
	b, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Error(err)
		}
	})
	return b
}

// sh runs a shell script inside the boundary and returns its combined output.
func sh(t *testing.T, b *Boundary, script string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(context.Background(), "/bin/sh", "-c", script)
	cmd.Dir = b.Workspace()
	b.Confine(cmd)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// A tool process must not find the token in an ancestor's environment:
// /proc/PID/environ of roadmap (here, the test process, which holds the
// canary in its initial environment block through a child that execs with
// it) is closed to the sandbox user.
func TestSandboxCannotReadRunnerEnviron(t *testing.T) {
	needRoot(t)
	const canary = "ghs_canaryTokenForTheEnvironRoute0123456789"
	b := open(t, Options{Workspace: workTree(t), Environ: []string{"PATH=" + os.Getenv("PATH"), "GITHUB_TOKEN=" + canary}})
	// A runner-side process holding the token in its initial environment.
	holder := exec.Command("sleep", "30")
	holder.Env = []string{"GITHUB_TOKEN=" + canary}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer holder.Process.Kill()
	out, _ := sh(t, b, "cat /proc/"+strconv.Itoa(holder.Process.Pid)+"/environ; cat /proc/*/environ; env")
	if strings.Contains(out, canary) {
		t.Fatalf("the sandbox read the token:\n%.500s", out)
	}
	// The command's /proc is its own PID namespace's: the holder is not
	// there to be read at all.
	if !strings.Contains(out, "No such file") {
		t.Errorf("the runner's process was visible in the sandbox's /proc:\n%.500s", out)
	}
}

// The work tree is the sandbox's to write; .git is not, and cannot be
// renamed, replaced or planted in (hooks, config), whatever route a command
// takes to it.
func TestSandboxCannotWriteGitDir(t *testing.T) {
	needRoot(t)
	ws := workTree(t)
	b := open(t, Options{Workspace: ws, Environ: []string{"PATH=" + os.Getenv("PATH")}})
	if out, err := sh(t, b, "echo ok > src/b.go && echo ok > top.txt && mkdir -p new/dir && echo x > new/dir/f"); err != nil {
		t.Fatalf("the sandbox cannot write its work tree: %v\n%s", err, out)
	}
	for _, attack := range []string{
		"echo x > .git/hooks/pre-commit",
		"echo '[core] fsmonitor=/tmp/x' >> .git/config",
		"sort -u -o .git/config src/a.go",
		"mv .git .git-moved",
		"rm -rf .git",
		"ln -sfn /tmp .git",
		"chmod 777 .git",
	} {
		out, err := sh(t, b, attack)
		if err == nil {
			t.Errorf("%q succeeded inside the boundary:\n%s", attack, out)
		}
	}
	cfg, _ := os.ReadFile(filepath.Join(ws, ".git", "config"))
	if string(cfg) != "[core]\n" {
		t.Errorf(".git/config changed: %q", cfg)
	}
	if fi, err := os.Lstat(filepath.Join(ws, ".git")); err != nil || !fi.IsDir() {
		t.Errorf(".git is no longer the runner's directory: %v", err)
	}
}

// The runner's temp folder, its workflow command files and its HOME are
// closed; a folder above the work tree only lets the sandbox through.
func TestSandboxCannotReadPrivatePaths(t *testing.T) {
	needRoot(t)
	root := t.TempDir()
	home := filepath.Join(root, "home")
	temp := filepath.Join(home, "work", "_temp")
	ws := filepath.Join(home, "work", "repo")
	for _, d := range []string{filepath.Join(ws, ".git"), temp, filepath.Join(home, ".config", "gh")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	const canary = "gho_canaryInTheRunnersFiles0123456789"
	files := map[string]string{
		filepath.Join(home, ".config", "gh", "hosts.yml"): canary,
		filepath.Join(temp, "set_env_1"):                  canary,
		filepath.Join(home, "github_output"):              canary,
	}
	for p, body := range files {
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	b := open(t, Options{Workspace: ws, Environ: []string{"PATH=" + os.Getenv("PATH")},
		Private: []string{home, temp, filepath.Join(home, "github_output")}})
	var script []string
	for p := range files {
		script = append(script, "cat "+p)
	}
	script = append(script, "ls "+home, "ls "+temp, "echo x > "+filepath.Join(temp, "planted"))
	out, _ := sh(t, b, strings.Join(script, "; "))
	if strings.Contains(out, canary) {
		t.Fatalf("the sandbox read a runner file:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(temp, "planted")); err == nil {
		t.Error("the sandbox wrote into RUNNER_TEMP")
	}
	// It still reaches its own work tree through the closed HOME.
	if out, err := sh(t, b, "echo ok > x && cat x"); err != nil || !strings.Contains(out, "ok") {
		t.Errorf("the sandbox cannot use its work tree under the runner's HOME: %v\n%s", err, out)
	}
}

// The environment is an allow-list: a model key under a neutral name, the
// token, the Actions runtime and the workflow command files never reach a
// process, whatever they are called.
func TestSandboxEnvIsAllowList(t *testing.T) {
	environ := []string{"PATH=/usr/bin:relative:/ws/bin:/ws", "LANG=C.UTF-8", "LLM=sk-canary-neutral-name-key",
		"GITHUB_TOKEN=ghs_x", "ACTIONS_RUNTIME_TOKEN=x", "GITHUB_ENV=/r/env", "HOME=/root", "GOFLAGS=-mod=mod",
		"GOPROXY=https://user:secret@proxy.invalid", "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=http.extraheader"}
	env := allowEnv(environ, "/sbx", "/ws", "roadmap-sandbox", "/sbx/.cache/go-build")
	got := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := got[k]; dup {
			t.Errorf("%s set twice", k)
		}
		got[k] = v
	}
	for _, gone := range []string{"LLM", "GITHUB_TOKEN", "ACTIONS_RUNTIME_TOKEN", "GITHUB_ENV", "GIT_CONFIG_KEY_1"} {
		if v, ok := got[gone]; ok {
			t.Errorf("%s=%s reached the sandbox", gone, v)
		}
	}
	for k, want := range map[string]string{"PATH": "/usr/bin", "LANG": "C.UTF-8", "HOME": "/sbx", "GOFLAGS": "-mod=mod",
		"GOPROXY": "off", "GOTOOLCHAIN": "local", "GIT_CONFIG_KEY_0": "safe.directory", "GIT_CONFIG_VALUE_0": "/ws",
		"GOCACHE": "/sbx/.cache/go-build", "USER": "roadmap-sandbox"} {
		if got[k] != want {
			t.Errorf("%s = %q, want %q", k, got[k], want)
		}
	}
	for _, kv := range env {
		if strings.Contains(kv, "secret") || strings.Contains(kv, "sk-canary") {
			t.Errorf("a credential reached the sandbox: %s", kv)
		}
	}
}

// Without root (or off Linux) and without `isolation: none`, Open refuses:
// the caller runs no model-written command.
func TestOpenFailsClosed(t *testing.T) {
	ws := workTree(t)
	for _, p := range []Probe{{OS: "linux", Euid: 1001}, {OS: "darwin", Euid: 0}} {
		_, err := Open(context.Background(), Options{Mode: ModeAuto, Workspace: ws, Probe: &p})
		var u *Unavailable
		if !errors.As(err, &u) {
			t.Errorf("Open on %+v: %v, want *Unavailable", p, err)
			continue
		}
		for _, want := range []string{"isolation: none", "docs/isolation.md"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("the refusal %q does not say %q", err, want)
			}
		}
	}
	b := open(t, Options{Mode: ModeNone, Workspace: ws, Probe: &Probe{OS: "linux", Euid: 1001}})
	if b.Isolated() {
		t.Error("isolation: none says it is isolated")
	}
}

// Close hands the work tree back: files the sandbox made are the runner's,
// and the top folder has its mode again.
func TestCloseHandsTheWorkTreeBack(t *testing.T) {
	needRoot(t)
	ws := workTree(t)
	before, _ := os.Stat(ws)
	b, err := Open(context.Background(), Options{Workspace: ws, Environ: []string{"PATH=" + os.Getenv("PATH")}})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := sh(t, b, "echo x > made-by-sandbox"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{ws, filepath.Join(ws, "made-by-sandbox"), filepath.Join(ws, "src", "a.go")} {
		uid, _ := owner(t, p)
		if uid != os.Geteuid() {
			t.Errorf("%s is owned by uid %d after Close, want %d", p, uid, os.Geteuid())
		}
	}
	after, _ := os.Stat(ws)
	if after.Mode() != before.Mode() {
		t.Errorf("the work tree's mode is %v after Close, was %v", after.Mode(), before.Mode())
	}
	if _, err := os.Stat(b.Home()); err == nil {
		t.Error("the sandbox's HOME is still there")
	}
}

// The sandbox's Go build cache is seeded with hard links to the runner's:
// the runner's files stay the runner's, so the sandbox can read them but can
// neither change nor replace what the runner's own builds use.
func TestSeededCacheStaysTheRunners(t *testing.T) {
	needRoot(t)
	cache := filepath.Join(t.TempDir(), "go-build")
	entry := filepath.Join(cache, "ab", "abcdef-d")
	if err := os.MkdirAll(filepath.Dir(entry), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(entry, []byte("compiled"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := open(t, Options{Workspace: workTree(t), Environ: []string{"PATH=" + os.Getenv("PATH")}, GoCache: cache})
	if uid, _ := owner(t, entry); uid != os.Geteuid() {
		t.Fatalf("the runner's cache entry is owned by uid %d after Open, want %d", uid, os.Geteuid())
	}
	linked := filepath.Join(b.Home(), ".cache", "go-build", "ab", "abcdef-d")
	out, err := sh(t, b, "cat "+linked+" && echo poisoned > "+linked)
	if !strings.Contains(out, "compiled") {
		t.Errorf("the sandbox cannot read the seeded entry: %v\n%s", err, out)
	}
	if err == nil {
		t.Error("the sandbox could write the runner's cache entry")
	}
	if out, err := sh(t, b, "echo new > "+filepath.Join(b.Home(), ".cache", "go-build", "ab", "new-d")); err != nil {
		t.Errorf("the sandbox cannot add to its own cache: %v\n%s", err, out)
	}
	if data, _ := os.ReadFile(entry); string(data) != "compiled" {
		t.Errorf("the runner's entry changed: %q", data)
	}
}

// With no runner cache to seed from, the sandbox's own cache is still its
// own to write (a cold cache, not a broken one).
func TestSandboxCacheWritableWithoutRunnerCache(t *testing.T) {
	needRoot(t)
	b := open(t, Options{Workspace: workTree(t), Environ: []string{"PATH=" + os.Getenv("PATH")},
		GoCache: filepath.Join(t.TempDir(), "no-such-cache")})
	if out, err := sh(t, b, `echo x > "$GOCACHE/entry" && mkdir "$GOCACHE/ab"`); err != nil {
		t.Errorf("the sandbox cannot write its own Go build cache: %v\n%s", err, out)
	}
}
