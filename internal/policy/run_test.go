package policy

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
	"time"

	"github.com/roadmap-dev/roadmap/internal/sandbox"
)

// testPolicy allows a few programs the default refuses, so tests can drive
// timeouts and large outputs.
func testPolicy(t *testing.T) *Policy {
	t.Helper()
	p, err := Parse([]byte(`
programs:
  - {program: sh, allow: true, timeout: 500ms}
  - {program: seq, allow: true, output_head: 100, output_tail: 200}
  - {program: nosuchprogram-roadmap, allow: true}
`))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func workspace(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("alpha /api beta\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ws, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".git", "config"), []byte("[http]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return ws
}

func TestRunResults(t *testing.T) {
	p := testPolicy(t)
	ws := workspace(t)
	env := []string{"PATH=" + os.Getenv("PATH")}
	ctx := context.Background()

	t.Run("exit code is a result, not an error", func(t *testing.T) {
		res, err := p.Run(ctx, noJail(t, ws), ws, []string{"false"}, env)
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode != 1 || res.TimedOut {
			t.Errorf("false: exit %d timed out %v, want exit 1", res.ExitCode, res.TimedOut)
		}
	})
	t.Run("runs in the workspace", func(t *testing.T) {
		res, err := p.Run(ctx, noJail(t, ws), ws, []string{"cat", "a.txt"}, env)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := res.Output, "alpha /api beta\n"; got != want {
			t.Errorf("cat a.txt = %q, want %q", got, want)
		}
	})
	t.Run("pattern values are not paths", func(t *testing.T) {
		res, err := p.Run(ctx, noJail(t, ws), ws, []string{"grep", "-e", "/api", "a.txt"}, env)
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode != 0 {
			t.Errorf("grep -e /api: exit %d, output %q", res.ExitCode, res.Output)
		}
	})
	t.Run("output is capped with a note", func(t *testing.T) {
		res, err := p.Run(ctx, noJail(t, ws), ws, []string{"seq", "1", "100000"}, env)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(res.Output, "1\n2\n3\n") || !strings.HasSuffix(res.Output, "99999\n100000\n") {
			t.Errorf("capped output lost its head or tail: %q", res.Output)
		}
		if !strings.Contains(res.Output, "bytes of output cut") {
			t.Errorf("capped output has no note of the cut: %q", res.Output)
		}
		if len(res.Output) > 100+200+100 {
			t.Errorf("capped output is %d bytes, want about 300", len(res.Output))
		}
	})
	t.Run("stream: stdout whole to the writer, stderr in Output", func(t *testing.T) {
		var out strings.Builder
		res, err := p.RunStream(ctx, noJail(t, ws), ws, []string{"seq", "1", "100000"}, env, &out)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Count(out.String(), "\n"); got != 100000 || !strings.HasSuffix(out.String(), "\n99999\n100000\n") {
			t.Errorf("streamed %d lines, want all 100000 (no cap)", got)
		}
		if res.Output != "" || res.ExitCode != 0 {
			t.Errorf("Output %q exit %d, want no stderr and exit 0", res.Output, res.ExitCode)
		}
		res, err = p.RunStream(ctx, noJail(t, ws), ws, []string{"sh", "-c", "echo out; echo err >&2; exit 3"}, env, &out)
		if err != nil {
			t.Fatal(err)
		}
		if res.Output != "err\n" || res.ExitCode != 3 {
			t.Errorf("Output %q exit %d, want stderr only and exit 3", res.Output, res.ExitCode)
		}
		if _, err := p.RunStream(ctx, noJail(t, ws), ws, []string{"cat", "../x"}, env, &out); !errors.As(err, new(*Refusal)) {
			t.Errorf("RunStream(cat ../x) = %v, want the table's refusal", err)
		}
	})
	t.Run("program missing from PATH", func(t *testing.T) {
		_, err := p.Run(ctx, noJail(t, ws), ws, []string{"nosuchprogram-roadmap"}, env)
		if err == nil || !strings.Contains(err.Error(), "not found") {
			t.Errorf("err = %v, want not found", err)
		}
	})
	for _, argv := range [][]string{
		{"cat", "../x"},
		{"cat", "/etc/passwd"},
		{"cat", "sub/../../x"},
		{"cat", ".git/config"},
		{"ls", ".git"},
		{"git", "diff", "--output=/tmp/x"},
		{"curl", "http://127.0.0.1"},
		{"./a.txt"},
	} {
		t.Run("refuses "+strings.Join(argv, " "), func(t *testing.T) {
			_, err := p.Run(ctx, noJail(t, ws), ws, argv, env)
			var r *Refusal
			if !errors.As(err, &r) {
				t.Errorf("Run(%q) = %v, want a refusal", argv, err)
			}
		})
	}
}

func TestRunTimeoutKillsGroup(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("process groups are a unix feature")
	}
	p := testPolicy(t)
	ws := workspace(t)
	env := []string{"PATH=" + os.Getenv("PATH")}
	// The shell starts a grandchild and waits; the row's 500ms timeout must
	// kill both.
	res, err := p.Run(context.Background(), noJail(t, ws), ws, []string{"sh", "-c", "sleep 60 & echo $!; wait"}, env)
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut {
		t.Fatalf("TimedOut = false, want true (output %q)", res.Output)
	}
	if !strings.Contains(res.Output, "timeout") {
		t.Errorf("output %q does not say the timeout killed it", res.Output)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(res.Output, "\n", 2)[0]))
	if err != nil {
		t.Fatalf("no grandchild pid in %q", res.Output)
	}
	// SIGKILL is delivered asynchronously: give the kernel a moment (a
	// grandchild outside the group would still be alive after it).
	for i := 0; i < 40 && alive(pid); i++ {
		time.Sleep(50 * time.Millisecond)
	}
	if alive(pid) {
		t.Errorf("grandchild %d survived the timeout", pid)
	}
}

func TestRunCancel(t *testing.T) {
	p := testPolicy(t)
	ws := workspace(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, err := p.Run(ctx, noJail(t, ws), ws, []string{"sh", "-c", "sleep 60"}, []string{"PATH=" + os.Getenv("PATH")})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run after cancel = %v, want context.Canceled", err)
		}
	}()
	cancel()
	<-done
}

// alive reports whether pid is a running (not zombie) process.
func alive(pid int) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		// No /proc (not Linux): ask the OS directly.
		return exec.Command("kill", "-0", strconv.Itoa(pid)).Run() == nil
	}
	// Field 3 is the state; a zombie waits only for its reaper.
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}

func TestSandbox(t *testing.T) {
	ws := workspace(t)
	ghp := "ghp_" + strings.Repeat("Zx9", 12)
	runtimeToken := "rt-" + strings.Repeat("r", 30)
	apiKey := "key-" + strings.Repeat("k", 30)
	innocent := "ghp_" + strings.Repeat("Qq1", 12)
	environ := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"),
		"GITHUB_TOKEN=" + ghp,
		"ACTIONS_RUNTIME_TOKEN=" + runtimeToken,
		"MY_API_KEY=" + apiKey,
		"HARMLESS_LOOKING=" + innocent,
		"KEEP_ME=visible",
	}
	if err := os.WriteFile(filepath.Join(ws, "leaky.txt"), []byte("token="+ghp+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sb := NewSandbox(openNone(t, ws, environ), Default(), environ)
	res, err := sb.Run(context.Background(), []string{"env"})
	if err != nil {
		t.Fatal(err)
	}
	// The environment is an allow-list: a variable nobody named (KEEP_ME)
	// is dropped like a credential.
	for _, secret := range []string{ghp, runtimeToken, apiKey, innocent, "GITHUB_TOKEN", "ACTIONS_RUNTIME_TOKEN", "MY_API_KEY", "HARMLESS_LOOKING", "KEEP_ME"} {
		if strings.Contains(res.Output, secret) {
			t.Errorf("env output shows %q:\n%s", secret, res.Output)
		}
	}
	for _, want := range []string{"GOPROXY=off", "GOTOOLCHAIN=local", "GIT_TERMINAL_PROMPT=0",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_KEY_0=safe.directory"} {
		if !strings.Contains(res.Output, want) {
			t.Errorf("env output lacks %q:\n%s", want, res.Output)
		}
	}
	if strings.Contains(res.Output, "HOME="+os.Getenv("HOME")+"\n") {
		t.Errorf("tool HOME is the user's HOME")
	}

	res, err = sb.Run(context.Background(), []string{"cat", "leaky.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Output, ghp) || !strings.Contains(res.Output, "token=***") {
		t.Errorf("cat of a file holding a removed secret = %q, want it masked", res.Output)
	}

	for _, p := range []string{".git", ".git/config", "../x"} {
		if _, err := sb.Resolve(p); err == nil {
			t.Errorf("Sandbox.Resolve(%q) allowed", p)
		}
	}
	if _, err := sb.Resolve("a.txt"); err != nil {
		t.Errorf("Sandbox.Resolve(a.txt): %v", err)
	}
}

func TestCaptureSmall(t *testing.T) {
	c := &capture{headMax: 4, tailMax: 4}
	for _, s := range []string{"ab", "cd", "ef"} {
		c.Write([]byte(s))
	}
	if got, want := c.String(), "abcdef"; got != want {
		t.Errorf("capture = %q, want %q", got, want)
	}
	c.Write([]byte("ghijkl"))
	if got, want := c.String(), "abcd\n[... 4 bytes of output cut ...]\nijkl"; got != want {
		t.Errorf("capture = %q, want %q", got, want)
	}
}

// openNone opens the `isolation: none` boundary on ws: the table's tests are
// about the table; the boundary has its own tests (internal/sandbox,
// TestIsolation).
func openNone(t *testing.T, ws string, environ []string) *sandbox.Boundary {
	t.Helper()
	b, err := sandbox.Open(context.Background(), sandbox.Options{Mode: sandbox.ModeNone, Workspace: ws, Environ: environ})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func noJail(t *testing.T, ws string) Jail { return openNone(t, ws, nil) }
