//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// The kernel half of the boundary. Every confined command starts as this
// same binary under the name initName, in fresh PID, mount and network
// namespaces (clone flags the runner's root may set). That first process,
// the namespace's init:
//
//   - mounts a /proc of its own PID namespace (the runner's processes are not
//     there to look at);
//   - brings up loopback, or leaves the network namespace without any
//     interface (`sandbox.network: none`);
//   - restricts itself with Landlock: write only the work tree, the
//     sandbox's HOME (its TMPDIR is there) and a few device files, read the
//     system folders, the toolchain and the Go module cache, nothing else
//     (on ABI 4 and later, with `network: none`, no TCP bind or connect
//     either; on ABI 6 and later, no signal or abstract socket out of the
//     domain);
//   - joins a fresh, empty session keyring (a key roadmap's process holds
//     is not the command's), marks every inherited descriptor above the
//     ones it passes on close-on-exec (one roadmap inherited without it
//     never reaches the command), and installs the system-call filter
//     (seccomp_linux.go) on all its threads;
//   - starts the command as the Job's own uid and waits for it.
//
// When the command ends, init exits with its status, and the kernel kills
// every process left in the PID namespace: whatever a command started
// (setsid, a double fork, a renamed daemon), nothing outlives the call.

// initName is argv[0] of the namespace's init.
const initName = "roadmap-sandbox-init"

// initEnv carries the init's spec; init removes it before the command runs.
const initEnv = "ROADMAP_SANDBOX_INIT"

// initFailed is the exit code of an init that could not set the boundary
// up; its stderr says why.
const initFailed = 125

// spec is what init needs to confine one command.
type spec struct {
	UID, GID int
	Network  Network
	RW       []string // folders the command may write
	RO       []string // folders it may read and execute from
	RWFiles  []string // single files it may write (device files)
	ROFiles  []string
	Path     string // the program; empty for a probe
	Extra    int    // file descriptors 3.. passed on
	// UnixSockets lifts the filter's refusal of socket(AF_UNIX):
	// Options.UnixSockets names a socket the command may use.
	UnixSockets bool
}

func init() {
	if filepath.Base(os.Args[0]) != initName {
		return
	}
	os.Exit(runInit())
}

// runInit is the namespace's init. It never returns to the program's main.
func runInit() int {
	// The session keyring is the calling thread's: the thread that joins a
	// fresh one must be the one that starts the command.
	runtime.LockOSThread()
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "%s: %v\n", initName, err)
		return initFailed
	}
	var s spec
	if err := json.Unmarshal([]byte(os.Getenv(initEnv)), &s); err != nil {
		return fail(fmt.Errorf("read the spec: %w", err))
	}
	if err := os.Unsetenv(initEnv); err != nil {
		return fail(err)
	}
	if err := mountProc(); err != nil {
		return fail(err)
	}
	if s.Network != NetworkNone {
		if err := loopbackUp(); err != nil {
			return fail(err)
		}
	}
	if err := restrict(s); err != nil {
		return fail(fmt.Errorf("landlock: %w", err))
	}
	if err := freshKeyring(); err != nil {
		return fail(fmt.Errorf("session keyring: %w", err))
	}
	if err := closeInherited(3 + s.Extra); err != nil {
		return fail(fmt.Errorf("inherited descriptors: %w", err))
	}
	// Last: the filter refuses keyctl, which freshKeyring needs.
	if err := installFilter(s.UnixSockets); err != nil {
		return fail(fmt.Errorf("seccomp: %w", err))
	}
	if s.Path == "" {
		return 0 // a probe: everything above worked
	}
	cmd := exec.Command(s.Path)
	cmd.Args = os.Args[1:]
	cmd.Env = os.Environ()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	for i := 0; i < s.Extra; i++ {
		cmd.ExtraFiles = append(cmd.ExtraFiles, os.NewFile(uintptr(3+i), fmt.Sprintf("fd%d", 3+i)))
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Credential: &syscall.Credential{Uid: uint32(s.UID), Gid: uint32(s.GID), Groups: []uint32{}},
		Pdeathsig:  syscall.SIGKILL,
	}
	// The first process of a namespace ignores signals it has no handler
	// for: pass the polite ones on to the command.
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	if err := cmd.Start(); err != nil {
		return fail(err)
	}
	go func() {
		for v := range sig {
			_ = cmd.Process.Signal(v)
		}
	}()
	err := cmd.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()) // as a shell reports it
		}
		return ee.ExitCode()
	default:
		return fail(err)
	}
}

// mountProc makes the mount namespace's changes its own and mounts a /proc
// that shows the new PID namespace only.
func mountProc() error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make the mounts private: %w", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	return nil
}

// loopbackUp brings the new network namespace's loopback up: tests that
// listen on 127.0.0.1 work, and no other interface exists.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback: read flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP | unix.IFF_RUNNING)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback: bring up: %w", err)
	}
	return nil
}

// freshKeyring makes the calling thread's session keyring a new anonymous
// one (keyctl(KEYCTL_JOIN_SESSION_KEYRING, NULL)). Without it the command
// would possess roadmap's session keyring, and every key in it, whatever
// its uid: possession, not ownership, is what the keyring checks.
func freshKeyring() error {
	_, err := unix.KeyctlInt(unix.KEYCTL_JOIN_SESSION_KEYRING, 0, 0, 0, 0)
	if errors.Is(err, unix.ENOSYS) {
		return nil // a kernel without keyrings has none to leak
	}
	return err
}

// closeInherited marks every descriptor from first up close-on-exec: the
// init passes 0, 1, 2 and the command's ExtraFiles (3 to first-1) on,
// nothing else. Go opens its own descriptors close-on-exec, but one that
// roadmap inherited without the flag (from the runner, a C library) would
// otherwise reach the command. The init's own descriptors (the runtime's
// poller) are close-on-exec already and keep working.
func closeInherited(first int) error {
	err := unix.CloseRange(uint(first), ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	if err == nil {
		return nil
	}
	// Before Linux 5.11 (Landlock needs 5.13, so hardly ever): one by one.
	entries, rerr := os.ReadDir("/proc/self/fd")
	if rerr != nil {
		return errors.Join(err, rerr)
	}
	for _, e := range entries {
		fd, aerr := strconv.Atoi(e.Name())
		if aerr != nil || fd < first {
			continue
		}
		if _, ferr := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); ferr != nil && ferr != unix.EBADF {
			return ferr
		}
	}
	return nil
}

// landlockConfig is the newest ABI the boundary asks for; BestEffort takes
// what the kernel has of it, and Open has already refused a kernel without
// Landlock.
var landlockConfig = landlock.V7

func restrict(s spec) error {
	cfg := landlockConfig
	if s.Network != NetworkNone {
		// Landlock's network rules are by port, not address: loopback is
		// the network namespace's to allow (it has nothing else).
		cfg.HandledAccessNet = 0
	}
	rules := []landlock.Rule{
		landlock.RODirs(s.RO...).IgnoreIfMissing(),
		landlock.RWDirs(s.RW...),
		landlock.RWFiles(s.RWFiles...).IgnoreIfMissing(),
		landlock.ROFiles(s.ROFiles...).IgnoreIfMissing(),
	}
	return cfg.BestEffort().Restrict(rules...)
}

// kernelFeatures is what this kernel offers the boundary, probed once per
// process: the Landlock ABI and whether an init starts in new namespaces.
type kernelFeatures struct {
	abi int
	err error
}

var (
	probeOnce sync.Once
	probed    kernelFeatures
)

// probeKernel starts one init that sets everything up and exits: a missing
// namespace, mount or Landlock shows up here, with the kernel's own error,
// before any model-written command would run unconfined.
func probeKernel() kernelFeatures {
	probeOnce.Do(func() {
		abi, err := ll.LandlockGetABIVersion()
		if err != nil || abi < 1 {
			probed.err = fmt.Errorf("the kernel has no Landlock (%v): it is needed to keep model-written commands to the work tree", err)
			return
		}
		probed.abi = abi
		home, err := os.MkdirTemp("", "roadmap-sandbox-probe-")
		if err != nil {
			probed.err = err
			return
		}
		defer os.RemoveAll(home)
		cmd := exec.Command("/proc/self/exe")
		cmd.Args = []string{initName}
		s := spec{RW: []string{home}, RO: []string{"/usr"}}
		data, _ := json.Marshal(s)
		cmd.Env = []string{initEnv + "=" + string(data)}
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: cloneFlags, Pdeathsig: syscall.SIGKILL}
		if out, err := cmd.CombinedOutput(); err != nil {
			probed.err = fmt.Errorf("the kernel refused the sandbox's namespaces (PID, mount, network), Landlock or system-call filter (seccomp): %v: %s", err, strings.TrimSpace(string(out)))
		}
	})
	return probed
}

// cloneFlags are the namespaces each confined command gets.
const cloneFlags = syscall.CLONE_NEWPID | syscall.CLONE_NEWNS | syscall.CLONE_NEWNET

// kernelSpec is the spec of a command inside b.
func (b *Boundary) kernelSpec(path string, extra int) spec {
	return spec{UID: b.uid, GID: b.gid, Network: b.network, RW: b.rw, RO: b.ro,
		RWFiles: []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx"},
		ROFiles: []string{"/dev/random", "/dev/urandom"},
		Path:    path, Extra: extra, UnixSockets: len(b.unixSockets) > 0}
}

// confineKernel turns cmd into the same command started by an init in new
// namespaces.
func (b *Boundary) confineKernel(cmd *exec.Cmd) {
	path := cmd.Path
	args := cmd.Args
	if len(args) == 0 {
		args = []string{path}
	}
	data, err := json.Marshal(b.kernelSpec(path, len(cmd.ExtraFiles)))
	if err != nil && cmd.Err == nil {
		cmd.Err = err
	}
	if cmd.Env == nil {
		cmd.Env = b.Env()
	}
	cmd.Env = append(cmd.Env, initEnv+"="+string(data))
	cmd.Path = "/proc/self/exe"
	cmd.Args = append([]string{initName}, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Cloneflags: cloneFlags}
	if cmd.Cancel == nil {
		return // not made with CommandContext: nothing cancels it
	}
	cmd.Cancel = func() error {
		if cmd.Process != nil && cmd.Process.Pid > 0 {
			// The init's death ends its namespace, and everything in it.
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Process.Kill()
		}
		return nil
	}
}
