//go:build linux

package sandbox

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
)

// helperEnv runs the test binary as a small network tool inside the
// boundary (see TestMain): the sandbox has no python or netcat to rely on.
const helperEnv = "ROADMAP_SANDBOX_TEST_HELPER"

func TestMain(m *testing.M) {
	switch v := os.Getenv(helperEnv); {
	case v == "":
		os.Exit(m.Run())
	case v == "loopback":
		// Listen on loopback and talk to oneself: what a test does.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Println("listen:", err)
			os.Exit(1)
		}
		go func() {
			c, err := l.Accept()
			if err == nil {
				_, _ = c.Write([]byte("pong"))
				c.Close()
			}
		}()
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			fmt.Println("dial:", err)
			os.Exit(1)
		}
		b, _ := io.ReadAll(c)
		fmt.Println("loopback:", string(b))
	case strings.HasPrefix(v, "dial="):
		c, err := net.Dial("tcp", strings.TrimPrefix(v, "dial="))
		if err != nil {
			fmt.Println("dial:", err)
			os.Exit(1)
		}
		b, _ := io.ReadAll(c)
		fmt.Println("reached:", string(b))
	default:
		os.Exit(probeMain(v)) // seccomp_linux_test.go
	}
	os.Exit(0)
}

// helper copies the test binary into the work tree, where the boundary may
// run it, and returns a command that runs it with mode.
func helper(t *testing.T, b *Boundary, mode string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	tool := filepath.Join(b.Workspace(), "nettool")
	if err := os.WriteFile(tool, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(tool)
	cmd.Dir = b.Workspace()
	cmd.Env = append(b.Env(), helperEnv+"="+mode)
	b.Confine(cmd)
	return cmd
}

// uidProcesses lists the host's processes running as uid.
func uidProcesses(t *testing.T, uid int) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		status, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(status), "\n") {
			if f := strings.Fields(line); len(f) > 1 && f[0] == "Uid:" && f[1] == strconv.Itoa(uid) {
				cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
				found = append(found, e.Name()+" "+strings.ReplaceAll(string(cmdline), "\x00", " "))
			}
		}
	}
	return found
}

// killUID kills every process of uid on the machine.
func killUID(uid int) {
	for _, p := range uidPIDs(uid) {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
}

func uidPIDs(uid int) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat(filepath.Join("/proc", e.Name()), &st) == nil && int(st.Uid) == uid {
			pids = append(pids, pid)
		}
	}
	return pids
}

// Whatever a command starts, and however it hides it (a new session, a
// double fork, ignored signals, no RUNNER_TRACKING_ID), nothing is left when
// the command returns: its PID namespace went with it.
func TestNoProcessOutlivesTool(t *testing.T) {
	needRoot(t)
	b := open(t, Options{Workspace: workTree(t), Environ: []string{"PATH=" + os.Getenv("PATH")}})
	// Should the boundary fail, what escaped must not outlive the test.
	t.Cleanup(func() { killUID(b.UID()) })
	out, err := sh(t, b, `setsid sleep 30 >/dev/null 2>&1 < /dev/null &
(trap '' HUP TERM INT; exec sleep 31) >/dev/null 2>&1 &
sh -c 'sh -c "nohup sleep 32 >/dev/null 2>&1 &" &' &
env -u RUNNER_TRACKING_ID setsid sh -c 'i=0; while [ $i -lt 600 ]; do echo x >> lingering.log; sleep 0.05; i=$((i+1)); done' >/dev/null 2>&1 &
sleep 0.2
echo started`)
	if err != nil || !strings.Contains(out, "started") {
		t.Fatalf("%v\n%s", err, out)
	}
	if left := uidProcesses(t, b.UID()); len(left) > 0 {
		t.Fatalf("processes outlived the command:\n%s", strings.Join(left, "\n"))
	}
	// And nothing keeps writing into the work tree after the call.
	log := filepath.Join(b.Workspace(), "lingering.log")
	before, _ := os.ReadFile(log)
	if out, err := sh(t, b, "sleep 0.3"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if after, _ := os.ReadFile(log); len(after) != len(before) {
		t.Errorf("a process of the earlier command still writes lingering.log (%d bytes, then %d)", len(before), len(after))
	}
}

// Loopback works inside the command's own network namespace; the host's
// loopback (where roadmap, the fake GitHub and the model server listen) and
// everything beyond it do not. With network: none there is no loopback
// either.
func TestSandboxNetwork(t *testing.T) {
	needRoot(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var served atomic.Int32
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			served.Add(1)
			_, _ = c.Write([]byte("README.md contents"))
			c.Close()
		}
	}()
	for _, tc := range []struct {
		network  Network
		loopback bool
	}{{NetworkLoopback, true}, {NetworkNone, false}} {
		t.Run(string(tc.network), func(t *testing.T) {
			b := open(t, Options{Workspace: workTree(t), Environ: []string{"PATH=" + os.Getenv("PATH")}, Network: tc.network})
			out, err := helper(t, b, "loopback").CombinedOutput()
			if got := err == nil && strings.Contains(string(out), "loopback: pong"); got != tc.loopback {
				t.Errorf("loopback inside the sandbox works = %v, want %v: %v\n%s", got, tc.loopback, err, out)
			}
			out, err = helper(t, b, "dial="+l.Addr().String()).CombinedOutput()
			if err == nil || strings.Contains(string(out), "README") {
				t.Errorf("the sandbox reached the host's listener:\n%s", out)
			}
			if out, err := sh(t, b, "curl -sS -m 2 http://"+l.Addr().String()+"/ 2>&1; curl -sS -m 2 http://192.0.2.1/ 2>&1"); err == nil {
				t.Errorf("curl reached out of the sandbox:\n%s", out)
			}
		})
	}
	if n := served.Load(); n != 0 {
		t.Errorf("the host listener served %d connections from inside the sandbox", n)
	}
}

// Landlock, not file modes, keeps commands to their tree: a folder every
// user may write (0777) and a file every user may read stay closed.
func TestLandlockRefusesWritesOutsideTree(t *testing.T) {
	needRoot(t)
	outside, err := os.MkdirTemp("", "roadmap-landlock-outside-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(outside)
	open := filepath.Join(outside, "open")
	if err := os.Mkdir(open, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	const secret = "world-readable but not the sandbox's"
	if err := os.WriteFile(filepath.Join(outside, "readable"), []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	b := openT(t, Options{Workspace: workTree(t), Environ: []string{"PATH=" + os.Getenv("PATH")}})
	for _, attack := range []string{
		"echo x > " + filepath.Join(open, "planted"),
		"mkdir " + filepath.Join(open, "dir"),
		"ln -s /etc/passwd " + filepath.Join(open, "link"),
		"echo x > /tmp/roadmap-landlock-planted",
		"echo x > /dev/shm/roadmap-landlock-planted",
	} {
		if out, err := sh(t, b, attack); err == nil {
			t.Errorf("%q succeeded outside the work tree:\n%s", attack, out)
		}
	}
	if entries, _ := os.ReadDir(open); len(entries) > 0 {
		t.Errorf("the sandbox wrote %d entries into a 0777 folder outside its tree", len(entries))
	}
	if out, _ := sh(t, b, "cat "+filepath.Join(outside, "readable")); strings.Contains(out, secret) {
		t.Errorf("the sandbox read a file outside what it may read:\n%s", out)
	}
	// Its own tree, HOME and TMPDIR, and the system, still work.
	if out, err := sh(t, b, `echo ok > in-tree && echo ok > "$TMPDIR/t" && echo ok > "$HOME/h" && cat /etc/hostname >/dev/null && echo done`); err != nil || !strings.Contains(out, "done") {
		t.Errorf("the sandbox cannot use what it is given: %v\n%s", err, out)
	}
}

func openT(t *testing.T, o Options) *Boundary { return open(t, o) }

// Two boundaries open at once have two uids, and neither's commands can
// write the other's tree; a second boundary in one Job leaves the first
// working (fail-to-pass's worktree used to close the folder above the Job's
// tree on the hosted runner's layout).
func TestBoundariesHaveTheirOwnUID(t *testing.T) {
	needRoot(t)
	root := t.TempDir()
	home := filepath.Join(root, "home", "runner")
	wsA := filepath.Join(home, "work", "repo", "repo")
	temp := filepath.Join(home, "work", "_temp")
	for _, d := range []string{filepath.Join(wsA, ".git"), temp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(home, 0o750); err != nil {
		t.Fatal(err)
	}
	environ := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
	a := open(t, Options{Workspace: wsA, Environ: environ, Private: []string{home, temp}})
	b := open(t, Options{Workspace: workTree(t), Environ: environ, Private: []string{home, temp}})
	if a.UID() == b.UID() || a.UID() == 0 || b.UID() == 0 {
		t.Fatalf("uids %d and %d: want two of their own", a.UID(), b.UID())
	}
	if out, err := sh(t, a, "echo a > mine && id -u"); err != nil || !strings.Contains(out, strconv.Itoa(a.UID())) {
		t.Fatalf("the first boundary stopped working once a second opened: %v\n%s", err, out)
	}
	if out, err := sh(t, b, "echo b > "+filepath.Join(wsA, "mine")+"; echo b > "+filepath.Join(wsA, "theirs")); err == nil {
		t.Errorf("one boundary's command wrote the other's tree:\n%s", out)
	}
	if data, _ := os.ReadFile(filepath.Join(wsA, "mine")); string(data) != "a\n" {
		t.Errorf("the first tree's file is %q", data)
	}
	if _, err := os.Stat(filepath.Join(wsA, "theirs")); err == nil {
		t.Error("the second boundary planted a file in the first's tree")
	}
	// A uid is free again once its boundary closes: this process no longer
	// holds its lease. (Which uid the next boundary gets is not asked: the
	// range is the machine's, and other processes' boundaries open and close
	// in it meanwhile, as other Jobs' do on a self-hosted runner.)
	uid := b.UID()
	lease := filepath.Join(leaseDir, strconv.Itoa(uid)+".lock")
	if !lockHeld(t, lease) {
		t.Fatalf("an open boundary's uid %d: this process holds no lock on %s", uid, lease)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if lockHeld(t, lease) {
		t.Errorf("a closed boundary's uid %d is still held by this process (%s)", uid, lease)
	}
	c := open(t, Options{Workspace: workTree(t), Environ: environ})
	if c.UID() == a.UID() {
		t.Errorf("a new boundary got uid %d, the open one's", c.UID())
	}
}

// lockHeld: /proc/locks lists a lock of this process on path's file.
func lockHeld(t *testing.T, path string) bool {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	ino := fi.Sys().(*syscall.Stat_t).Ino
	data, err := os.ReadFile("/proc/locks")
	if err != nil {
		t.Fatal(err)
	}
	// "1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF": the pid, then
	// major:minor:inode.
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || f[4] != strconv.Itoa(os.Getpid()) {
			continue
		}
		if dev := strings.Split(f[5], ":"); len(dev) == 3 && dev[2] == strconv.FormatUint(ino, 10) {
			return true
		}
	}
	return false
}

// A folder of the tree swapped for a symlink while the hand-over walks it
// does not lead the walk out of the tree: the file outside keeps its owner.
func TestHandOverWalkUnderSwap(t *testing.T) {
	needRoot(t)
	ws := t.TempDir()
	outside := t.TempDir()
	target := filepath.Join(outside, "f")
	if err := os.WriteFile(target, []byte("root's"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(ws, "d")
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		// The attacker's lingering process: d is a folder with an f, then a
		// symlink to a folder with an f outside, over and over.
		defer wg.Done()
		for !stop.Load() {
			_ = os.RemoveAll(dir)
			_ = os.Mkdir(dir, 0o755)
			_ = os.WriteFile(filepath.Join(dir, "f"), nil, 0o644)
			_ = os.RemoveAll(dir)
			_ = os.Symlink(outside, dir)
		}
	}()
	for i := 0; i < 3000; i++ {
		_ = chownTree(ws, 80999, 80999)
	}
	stop.Store(true)
	wg.Wait()
	var st syscall.Stat_t
	if err := syscall.Stat(target, &st); err != nil {
		t.Fatal(err)
	}
	if st.Uid != 0 {
		t.Fatalf("the walk followed a swapped symlink: %s outside the tree is now uid %d's", target, st.Uid)
	}
}

// A configuration file planted in the sandbox's HOME (a go env file with
// -toolexec, a global git config) does not apply to later commands.
func TestHomeConfigNotRead(t *testing.T) {
	needRoot(t)
	b := open(t, Options{Workspace: workTree(t), Environ: []string{"PATH=" + os.Getenv("PATH")}})
	if out, err := sh(t, b, `mkdir -p "$HOME/.config/go" && printf 'GOFLAGS=-toolexec=/bin/true\n' > "$HOME/.config/go/env" && printf '[alias]\n\tst = !echo planted\n' > "$HOME/.gitconfig"`); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	out, err := sh(t, b, `go env GOFLAGS; git config --global --get alias.st; echo end`)
	if err != nil && !strings.Contains(out, "end") {
		t.Fatalf("%v\n%s", err, out)
	}
	if strings.Contains(out, "toolexec") || strings.Contains(out, "planted") {
		t.Errorf("a planted HOME configuration applied to a later command:\n%s", out)
	}
}

// BenchmarkBoundary is the cost per command of the boundary: the same
// /bin/true started bare (isolation: none) and inside the namespaces with
// Landlock.
func BenchmarkBoundary(bb *testing.B) {
	if os.Geteuid() != 0 {
		bb.Skip("the boundary needs root")
	}
	for _, mode := range []Mode{ModeNone, ModeAuto} {
		bb.Run(string(mode), func(bb *testing.B) {
			b, err := Open(context.Background(), Options{Mode: mode, Workspace: bb.TempDir(), Environ: []string{"PATH=" + os.Getenv("PATH")}})
			if err != nil {
				bb.Fatal(err)
			}
			defer b.Close()
			bb.ResetTimer()
			for i := 0; i < bb.N; i++ {
				cmd := exec.Command("/bin/true")
				cmd.Dir = b.Workspace()
				b.Confine(cmd)
				if err := cmd.Run(); err != nil {
					bb.Fatal(err)
				}
			}
			bb.ReportMetric(float64(bb.Elapsed().Microseconds())/float64(bb.N)/1000, "ms/command")
		})
	}
}

// An older kernel's missing Landlock features are named for the summary;
// this one's (ABI 7) are not.
func TestMissingFeaturesNamed(t *testing.T) {
	b := &Boundary{isolated: true, abi: 3, network: NetworkNone}
	got := strings.Join(b.Missing(), "\n")
	for _, want := range []string{"network rules (ABI 4; this kernel has 3)", "scoping of signals"} {
		if !strings.Contains(got, want) {
			t.Errorf("Missing() = %q, want it to name %q", got, want)
		}
	}
	if m := (&Boundary{isolated: true, abi: 7, network: NetworkNone}).Missing(); len(m) != 0 {
		t.Errorf("ABI 7 lacks nothing, got %q", m)
	}
}
