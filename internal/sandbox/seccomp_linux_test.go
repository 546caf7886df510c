//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// probeMain is the test binary run as a probe inside the boundary (see
// TestMain and helper): mode says what to try; it prints what happened.
func probeMain(mode string) int {
	name, arg, _ := strings.Cut(mode, "=")
	switch name {
	case "unixdial":
		c, err := net.Dial("unix", arg)
		if err != nil {
			fmt.Println("dial:", err)
			return 1
		}
		b, _ := io.ReadAll(c)
		fmt.Println("reached:", string(b))
	case "socketpair":
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			fmt.Println("socketpair:", err)
			return 1
		}
		buf := make([]byte, 4)
		if _, err := unix.Write(fds[0], []byte("ping")); err != nil {
			fmt.Println("socketpair:", err)
			return 1
		}
		if n, err := unix.Read(fds[1], buf); err != nil || string(buf[:n]) != "ping" {
			fmt.Println("socketpair:", n, err)
			return 1
		}
		fmt.Println("socketpair: ok")
	case "userns":
		// Go starts a child in a new user namespace with clone(2).
		cmd := exec.Command("/bin/true")
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER}
		fmt.Println("clone(CLONE_NEWUSER):", errText(cmd.Run()))
		// clone3 with no arguments: EINVAL from the kernel, ENOSYS from
		// the filter; no process is made either way.
		_, _, e := unix.Syscall(unix.SYS_CLONE3, 0, 0, 0)
		fmt.Println("clone3:", errnoText(e))
	case "keys":
		serial, _ := strconv.Atoi(arg)
		procKeys, err := os.ReadFile("/proc/keys")
		fmt.Printf("/proc/keys: %v\n%s\n", err, procKeys)
		_, err = unix.KeyctlInt(unix.KEYCTL_GET_KEYRING_ID, unix.KEY_SPEC_SESSION_KEYRING, 0, 0, 0)
		fmt.Println("keyctl(GET_KEYRING_ID):", errText(err))
		buf := make([]byte, 256)
		n, err := unix.KeyctlBuffer(unix.KEYCTL_READ, serial, buf, 0)
		if err == nil {
			fmt.Printf("keyctl(READ): %s\n", buf[:min(n, len(buf))])
		} else {
			fmt.Println("keyctl(READ):", err)
		}
	case "fds":
		// Write "extra" to descriptor 3 (the command's own ExtraFiles),
		// "planted" to the descriptor arg names, and list what is open.
		leaked, _ := strconv.Atoi(arg)
		_, err := unix.Write(3, []byte("extra\n"))
		fmt.Println("fd 3:", errText(err))
		_, err = unix.Write(leaked, []byte("planted\n"))
		fmt.Printf("fd %d: %s\n", leaked, errText(err))
		entries, _ := os.ReadDir("/proc/self/fd")
		for _, e := range entries {
			fmt.Println("open:", e.Name())
		}
	case "syscalls":
		for _, c := range probedCalls() {
			fmt.Printf("%s=%s\n", c.name, errnoText(c.call()))
		}
	case "probe-without-seccomp":
		// An outer filter refuses seccomp() itself, as a kernel or a
		// container without it would: the probe must say so.
		p := seccomp.Policy{DefaultAction: seccomp.ActionAllow, Syscalls: []seccomp.SyscallGroup{
			{Names: []string{"seccomp"}, Action: seccomp.ActionErrno | seccomp.Action(unix.EINVAL)},
		}}
		if err := seccomp.LoadFilter(seccomp.Filter{NoNewPrivs: true, Flag: seccomp.FilterFlagTSync, Policy: p}); err != nil {
			fmt.Println("outer filter:", err)
			return 1
		}
		fmt.Println("probe:", probeKernel().err)
	default:
		fmt.Println("unknown probe", mode)
		return 2
	}
	return 0
}

func errText(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

func errnoText(e unix.Errno) string {
	if e == 0 {
		return "ok"
	}
	return unix.ErrnoName(e)
}

// probedCall is a system call made with arguments that the kernel answers
// with something other than the filter's errno, so the answer tells
// whether the filter saw it.
type probedCall struct {
	name string
	call func() unix.Errno
}

func probedCalls() []probedCall {
	raw := func(nr uintptr, args ...uintptr) func() unix.Errno {
		return func() unix.Errno {
			var a [6]uintptr
			copy(a[:], args)
			r, _, e := unix.Syscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5])
			if e == 0 && (nr == unix.SYS_SOCKET || nr == unix.SYS_USERFAULTFD) {
				unix.Close(int(r))
			}
			return e
		}
	}
	null, _ := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	pid := uintptr(os.Getpid())
	const high = 1 << 32 // the kernel reads an int argument's low half only
	return []probedCall{
		{"keyctl", raw(unix.SYS_KEYCTL, unix.KEYCTL_GET_KEYRING_ID, uintptr(0xfffffffd) /* session */)},
		{"add_key", raw(unix.SYS_ADD_KEY)},
		{"request_key", raw(unix.SYS_REQUEST_KEY)},
		{"ptrace", raw(unix.SYS_PTRACE, unix.PTRACE_PEEKUSR, pid)},
		{"process_vm_readv", raw(unix.SYS_PROCESS_VM_READV, pid)},
		{"pidfd_getfd", raw(unix.SYS_PIDFD_GETFD, ^uintptr(0))},
		{"perf_event_open", raw(unix.SYS_PERF_EVENT_OPEN)},
		{"userfaultfd", raw(unix.SYS_USERFAULTFD, 1 /* UFFD_USER_MODE_ONLY */)},
		{"io_uring_setup", raw(unix.SYS_IO_URING_SETUP)},
		{"setns", raw(unix.SYS_SETNS, ^uintptr(0))},
		{"clone3", raw(unix.SYS_CLONE3)},
		{"ioctl_tiocsti", raw(unix.SYS_IOCTL, uintptr(null), unix.TIOCSTI, 0)},
		{"ioctl_tiocsti_high", raw(unix.SYS_IOCTL, uintptr(null), high|unix.TIOCSTI, 0)},
		{"ioctl_tioclinux", raw(unix.SYS_IOCTL, uintptr(null), unix.TIOCLINUX, 0)},
		{"socket_unix_high", raw(unix.SYS_SOCKET, high|unix.AF_UNIX, unix.SOCK_STREAM)},
		{"socket_inet", raw(unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_STREAM)},
		{"socketpair", func() unix.Errno {
			fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
			if err != nil {
				return err.(unix.Errno)
			}
			unix.Close(fds[0])
			unix.Close(fds[1])
			return 0
		}},
	}
}

// A host service's UNIX socket outside every allowed folder (a 0777 folder
// under /tmp, the socket itself 0777) is out of reach with either network
// setting: socket(AF_UNIX) is refused. socketpair still works, and a
// boundary whose options name a socket may make one.
func TestUnixSocketRefused(t *testing.T) {
	needRoot(t)
	dir, err := os.MkdirTemp("", "roadmap-unix-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "host.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := os.Chmod(path, 0o777); err != nil {
		t.Fatal(err)
	}
	var served atomic.Int32
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			served.Add(1)
			_, _ = c.Write([]byte("host service"))
			c.Close()
		}
	}()
	environ := []string{"PATH=" + os.Getenv("PATH")}
	for _, network := range []Network{NetworkLoopback, NetworkNone} {
		t.Run(string(network), func(t *testing.T) {
			b := open(t, Options{Workspace: workTree(t), Environ: environ, Network: network})
			out, err := helper(t, b, "unixdial="+path).CombinedOutput()
			if err == nil || strings.Contains(string(out), "host service") {
				t.Errorf("the sandbox reached the host's UNIX socket %s:\n%s", path, out)
			}
			if !strings.Contains(string(out), "operation not permitted") {
				t.Errorf("the dial failed, but not because socket(AF_UNIX) was refused: %v\n%s", err, out)
			}
			if out, err := helper(t, b, "socketpair").CombinedOutput(); err != nil || !strings.Contains(string(out), "socketpair: ok") {
				t.Errorf("socketpair(AF_UNIX) does not work inside: %v\n%s", err, out)
			}
		})
	}
	if n := served.Load(); n != 0 {
		t.Errorf("the host's UNIX socket served %d connections from inside the sandbox", n)
	}
	b := open(t, Options{Workspace: workTree(t), Environ: environ, UnixSockets: []string{path}})
	if out, err := helper(t, b, "unixdial="+path).CombinedOutput(); err != nil || !strings.Contains(string(out), "reached: host service") {
		t.Errorf("with the socket allowed, the sandbox cannot use it: %v\n%s", err, out)
	}
	if _, err := Open(context.Background(), Options{Workspace: workTree(t), UnixSockets: []string{"run/x.sock"}}); err == nil {
		t.Error("a relative UnixSockets path was accepted")
	}
}

// No command makes a user namespace: not with unshare(1), not with clone,
// and clone3 (whose flags the filter cannot read) is not there at all.
func TestNoNewUserNamespace(t *testing.T) {
	needRoot(t)
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("no unshare(1) on this machine")
	}
	b := open(t, Options{Workspace: workTree(t), Environ: []string{"PATH=" + os.Getenv("PATH")}})
	// Outside the boundary its uid may make one: the refusal below is the
	// filter's, not the kernel's policy for unprivileged users.
	control := exec.Command(unshare, "-Ur", "true")
	control.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(b.UID()), Gid: uint32(b.UID()), Groups: []uint32{}}}
	if out, err := control.CombinedOutput(); err != nil {
		t.Skipf("this kernel refuses user namespaces to uid %d anyway: %v\n%s", b.UID(), err, out)
	}
	out, err := sh(t, b, unshare+" -Ur true && echo made-a-user-namespace")
	if err == nil || strings.Contains(out, "made-a-user-namespace") || !strings.Contains(out, "Operation not permitted") {
		t.Errorf("unshare -Ur inside the boundary: %v\n%s", err, out)
	}
	out2, err := helper(t, b, "userns").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out2)
	}
	for _, want := range []string{"clone(CLONE_NEWUSER): fork/exec /bin/true: operation not permitted", "clone3: ENOSYS"} {
		if !strings.Contains(string(out2), want) {
			t.Errorf("inside the boundary, want %q:\n%s", want, out2)
		}
	}
}

// A key in roadmap's session keyring is not the command's: the init joins
// a fresh one, so the command possesses nothing (/proc/keys, which needs
// no system call the filter refuses, does not list the key) and keyctl is
// refused.
func TestFreshKeyring(t *testing.T) {
	needRoot(t)
	const canary = "canary-key-payload-0123456789"
	b := open(t, Options{Workspace: workTree(t), Environ: []string{"PATH=" + os.Getenv("PATH")}})
	inside := helper(t, b, "keys") // the key's serial is added below
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var outside, confined []byte
	var failed error
	done := make(chan struct{})
	go func() {
		defer close(done)
		// A session keyring is a thread's: this one joins its own, adds
		// the key and starts both commands, and is never given back (it
		// ends with the goroutine).
		runtime.LockOSThread()
		if _, err := unix.KeyctlJoinSessionKeyring("roadmap-test"); err != nil {
			failed = fmt.Errorf("join a session keyring: %w", err)
			return
		}
		serial, err := unix.AddKey("user", "roadmap-canary", []byte(canary), unix.KEY_SPEC_SESSION_KEYRING)
		if err != nil {
			failed = fmt.Errorf("add the key: %w", err)
			return
		}
		mode := helperEnv + "=keys=" + strconv.Itoa(serial)
		control := exec.Command(self)
		control.Env = []string{mode}
		outside, _ = control.CombinedOutput()
		inside.Env = append(inside.Env, mode)
		confined, _ = inside.CombinedOutput()
	}()
	<-done
	if failed != nil {
		t.Fatal(failed)
	}
	if !strings.Contains(string(outside), "roadmap-canary") || !strings.Contains(string(outside), canary) {
		t.Fatalf("the probe does not find the key outside the boundary, so it proves nothing inside:\n%s", outside)
	}
	if strings.Contains(string(confined), canary) || strings.Contains(string(confined), "roadmap-canary") {
		t.Errorf("the confined command reached roadmap's key:\n%s", confined)
	}
	if !strings.Contains(string(confined), "keyctl(GET_KEYRING_ID): operation not permitted") {
		t.Errorf("keyctl is not refused inside:\n%s", confined)
	}
}

// A descriptor roadmap holds without close-on-exec (inherited from the
// runner, opened by a C library) does not reach a confined command, while
// the command's own ExtraFiles still do.
func TestInheritedFdsClosed(t *testing.T) {
	needRoot(t)
	private := filepath.Join(t.TempDir(), "root-only")
	if err := os.WriteFile(private, []byte("root's\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(private, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	// fd 100, without close-on-exec: every child of this process gets it.
	const leaked = 100
	if err := unix.Dup3(int(f.Fd()), leaked, 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	defer unix.Close(leaked)
	probe := fmt.Sprintf("fds=%d", leaked)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	control := exec.Command(self)
	control.Env = []string{helperEnv + "=" + probe}
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	control.ExtraFiles = []*os.File{devNull}
	if out, _ := control.CombinedOutput(); !strings.Contains(string(out), fmt.Sprintf("fd %d: ok", leaked)) {
		t.Fatalf("the descriptor does not reach an unconfined child, so the test proves nothing:\n%s", out)
	}
	if err := os.WriteFile(private, []byte("root's\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b := open(t, Options{Workspace: workTree(t), Environ: []string{"PATH=" + os.Getenv("PATH")}})
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// ExtraFiles before Confine: it tells the init how many to pass on.
	_ = helper(t, b, probe) // puts the probe in the tree
	cmd := exec.Command(filepath.Join(b.Workspace(), "nettool"))
	cmd.Dir = b.Workspace()
	cmd.Env = append(b.Env(), helperEnv+"="+probe)
	cmd.ExtraFiles = []*os.File{w}
	b.Confine(cmd)
	out, _ := cmd.CombinedOutput()
	w.Close()
	extra, _ := io.ReadAll(r)
	if string(extra) != "extra\n" {
		t.Errorf("the command's own descriptor 3 did not reach it: %q\n%s", extra, out)
	}
	if !strings.Contains(string(out), fmt.Sprintf("fd %d: bad file descriptor", leaked)) {
		t.Errorf("the confined command could use inherited descriptor %d:\n%s", leaked, out)
	}
	if strings.Contains(string(out), fmt.Sprintf("open: %d\n", leaked)) {
		t.Errorf("descriptor %d is open in the confined command:\n%s", leaked, out)
	}
	if data, _ := os.ReadFile(private); strings.Contains(string(data), "planted") {
		t.Errorf("the root-only file was written from inside: %q", data)
	}
}

// The calls the filter refuses answer its errno inside the boundary, with
// arguments the kernel itself would answer otherwise (see probedCalls),
// including an int argument whose high half is set; what it leaves alone
// still works.
func TestFilterRefuses(t *testing.T) {
	needRoot(t)
	b := open(t, Options{Workspace: workTree(t), Environ: []string{"PATH=" + os.Getenv("PATH")}})
	out, err := helper(t, b, "syscalls").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got := map[string]string{}
	for _, line := range strings.Fields(string(out)) {
		if k, v, ok := strings.Cut(line, "="); ok {
			got[k] = v
		}
	}
	want := map[string]string{
		"keyctl": "EPERM", "add_key": "EPERM", "request_key": "EPERM", "ptrace": "EPERM",
		"process_vm_readv": "EPERM", "pidfd_getfd": "EPERM", "perf_event_open": "EPERM",
		"userfaultfd": "EPERM", "io_uring_setup": "ENOSYS", "setns": "EPERM", "clone3": "ENOSYS",
		"ioctl_tiocsti": "EPERM", "ioctl_tiocsti_high": "EPERM", "ioctl_tioclinux": "EPERM",
		"socket_unix_high": "EPERM", "socket_inet": "ok", "socketpair": "ok",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s inside the boundary: %q, want %q", k, got[k], v)
		}
	}
}

// A system call through another architecture's entry (int 0x80, the i386
// ABI, on amd64) kills the process: the library's policy would let it
// through, and the i386 socket(AF_UNIX) would pass where the native one
// is refused.
func TestFilterKillsForeignArch(t *testing.T) {
	needRoot(t)
	if runtime.GOARCH != "amd64" {
		t.Skip("the program is amd64 code")
	}
	prog := filepath.Join(t.TempDir(), "i386-socket")
	if err := os.WriteFile(prog, i386SocketProgram(), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(prog).CombinedOutput(); err != nil {
		t.Skipf("this kernel runs no i386 system calls (IA32 emulation off): %v\n%s", err, out)
	}
	b := open(t, Options{Workspace: workTree(t), Environ: []string{"PATH=" + os.Getenv("PATH")}})
	inside := filepath.Join(b.Workspace(), "i386-socket")
	if err := os.WriteFile(inside, i386SocketProgram(), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(inside)
	cmd.Dir = b.Workspace()
	b.Confine(cmd)
	err := cmd.Run()
	var ee *exec.ExitError
	// The init reports a command killed by signal n as 128+n.
	if !errors.As(err, &ee) || ee.ExitCode() != 128+int(syscall.SIGSYS) {
		t.Errorf("an i386 socket(AF_UNIX) inside the boundary: %v, want the process killed by SIGSYS (exit %d)", err, 128+int(syscall.SIGSYS))
	}
}

// i386SocketProgram is a static amd64 ELF program that calls socket(AF_UNIX,
// SOCK_STREAM, 0) through the i386 entry (int 0x80) and exits 0 when it got
// a socket, 1 when it got an error.
func i386SocketProgram() []byte {
	code := []byte{
		0xb8, 0x67, 0x01, 0x00, 0x00, // mov eax, 359 (i386 socket)
		0xbb, 0x01, 0x00, 0x00, 0x00, // mov ebx, 1 (AF_UNIX)
		0xb9, 0x01, 0x00, 0x00, 0x00, // mov ecx, 1 (SOCK_STREAM)
		0x31, 0xd2, // xor edx, edx
		0xcd, 0x80, // int 0x80
		0x31, 0xff, // xor edi, edi
		0x85, 0xc0, // test eax, eax
		0x79, 0x05, // jns +5
		0xbf, 0x01, 0x00, 0x00, 0x00, // mov edi, 1
		0xb8, 0x3c, 0x00, 0x00, 0x00, // mov eax, 60 (exit)
		0x0f, 0x05, // syscall
	}
	const base, ehsize, phsize = 0x400000, 64, 56
	var b bytes.Buffer
	le := binary.LittleEndian
	w := func(v any) { _ = binary.Write(&b, le, v) }
	b.Write([]byte{0x7f, 'E', 'L', 'F', 2 /* 64-bit */, 1 /* little-endian */, 1 /* version */, 0})
	b.Write(make([]byte, 8))
	w(uint16(2))                      // ET_EXEC
	w(uint16(0x3e))                   // EM_X86_64
	w(uint32(1))                      // EV_CURRENT
	w(uint64(base + ehsize + phsize)) // entry: the code after the headers
	w(uint64(ehsize))                 // program headers
	w(uint64(0))                      // no section headers
	w(uint32(0))                      // flags
	w(uint16(ehsize))
	w(uint16(phsize))
	w(uint16(1)) // one program header
	w(uint16(0))
	w(uint16(0))
	w(uint16(0))
	size := uint64(ehsize + phsize + len(code))
	w(uint32(1))      // PT_LOAD
	w(uint32(5))      // read, execute
	w(uint64(0))      // from the file's start
	w(uint64(base))   // virtual address
	w(uint64(base))   // physical address
	w(size)           // in the file
	w(size)           // in memory
	w(uint64(0x1000)) // alignment
	b.Write(code)
	return b.Bytes()
}

// An outer filter that refuses seccomp() makes the probe fail, naming the
// filter: a kernel without seccomp leaves the boundary unavailable rather
// than confining commands without their filter.
func TestProbeFailsClosedWithoutSeccomp(t *testing.T) {
	needRoot(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = []string{helperEnv + "=probe-without-seccomp"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(string(out), "seccomp: invalid argument") {
		t.Errorf("the probe under a kernel that refuses seccomp: want the boundary unavailable with the kernel's error, got:\n%s", out)
	}
}

// Every call the filter names exists on amd64 and arm64, but for the few
// that only amd64 has; none is silently left out.
func TestFilterPerArch(t *testing.T) {
	for _, info := range []*arch.Info{arch.X86_64, arch.AARCH64} {
		_, missing := filterPolicy(info, false)
		for _, m := range missing {
			if !archOnly[m] {
				t.Errorf("%s has no %s: the filter would not refuse it there", info.Name, m)
			}
		}
		if info == arch.X86_64 && len(missing) > 0 {
			t.Errorf("amd64 lacks %v", missing)
		}
	}
	for _, r := range refusals {
		if r.why == "" {
			t.Errorf("%s is refused without a reason", r.call)
		}
	}
}

// The assembled program, run in a BPF interpreter on the native
// architecture's system-call numbers: each row's answer, the high half of
// an int argument ignored as the kernel ignores it, and the foreign-arch
// guard.
func TestFilterProgram(t *testing.T) {
	if !nativeLittleEndian() {
		t.Skip("the simulation lays seccomp_data out little-endian")
	}
	info, err := arch.GetInfo("")
	if err != nil {
		t.Skip(err)
	}
	nr := func(name string) uint32 { return uint32(info.SyscallNames[name]) }
	const (
		allow  = uint32(seccomp.ActionAllow)
		eperm  = uint32(seccomp.ActionErrno) | uint32(unix.EPERM)
		enosys = uint32(seccomp.ActionErrno) | uint32(unix.ENOSYS)
		kill   = uint32(seccomp.ActionKillProcess)
		high   = uint64(1) << 32
	)
	cases := []struct {
		name      string
		allowUnix bool
		arch      uint32
		nr        uint32
		args      []uint64
		want      uint32
	}{
		{"socket(AF_UNIX)", false, 0, nr("socket"), []uint64{unix.AF_UNIX, unix.SOCK_STREAM}, eperm},
		{"socket(AF_UNIX) with the high half set", false, 0, nr("socket"), []uint64{high | unix.AF_UNIX}, eperm},
		{"socket(AF_UNIX) allowed", true, 0, nr("socket"), []uint64{unix.AF_UNIX}, allow},
		{"socket(AF_INET)", false, 0, nr("socket"), []uint64{unix.AF_INET}, allow},
		{"socket(AF_INET6)", false, 0, nr("socket"), []uint64{unix.AF_INET6}, allow},
		{"socketpair(AF_UNIX)", false, 0, nr("socketpair"), []uint64{unix.AF_UNIX}, allow},
		{"clone(CLONE_NEWUSER)", false, 0, nr("clone"), []uint64{unix.CLONE_NEWUSER | uint64(unix.SIGCHLD)}, eperm},
		{"clone(thread)", false, 0, nr("clone"), []uint64{unix.CLONE_VM | unix.CLONE_FS | unix.CLONE_FILES | unix.CLONE_SIGHAND | unix.CLONE_THREAD}, allow},
		{"clone(fork)", false, 0, nr("clone"), []uint64{uint64(unix.SIGCHLD)}, allow},
		{"unshare(CLONE_NEWUSER|CLONE_NEWNS)", false, 0, nr("unshare"), []uint64{unix.CLONE_NEWUSER | unix.CLONE_NEWNS}, eperm},
		{"unshare(CLONE_FILES)", false, 0, nr("unshare"), []uint64{unix.CLONE_FILES}, allow},
		{"clone3", false, 0, nr("clone3"), nil, enosys},
		{"keyctl", false, 0, nr("keyctl"), nil, eperm},
		{"io_uring_setup", false, 0, nr("io_uring_setup"), nil, enosys},
		{"ioctl(TIOCSTI)", false, 0, nr("ioctl"), []uint64{0, unix.TIOCSTI}, eperm},
		{"ioctl(TIOCSTI) with the high half set", false, 0, nr("ioctl"), []uint64{0, high | unix.TIOCSTI}, eperm},
		{"ioctl(TIOCGWINSZ)", false, 0, nr("ioctl"), []uint64{0, unix.TIOCGWINSZ}, allow},
		{"ioctl(TCGETS)", false, 0, nr("ioctl"), []uint64{0, unix.TCGETS}, allow},
		{"ioctl(TIOCLINUX)", false, 0, nr("ioctl"), []uint64{0, unix.TIOCLINUX}, eperm},
		{"read", false, 0, nr("read"), nil, allow},
		{"a foreign architecture's call", false, uint32(arch.I386.ID), nr("read"), nil, kill},
		{"a foreign architecture's call", false, uint32(arch.ARM.ID), nr("read"), nil, kill},
	}
	if info == arch.X86_64 {
		cases = append(cases, struct {
			name      string
			allowUnix bool
			arch      uint32
			nr        uint32
			args      []uint64
			want      uint32
		}{"an x32 call", false, 0, 0x40000000 | nr("read"), nil, enosys})
	}
	for _, tc := range cases {
		prog, err := filterProgram(tc.allowUnix)
		if err != nil {
			t.Fatal(err)
		}
		vm, err := bpf.NewVM(prog)
		if err != nil {
			t.Fatal(err)
		}
		a := tc.arch
		if a == 0 {
			a = uint32(info.ID)
		}
		got, err := vm.Run(seccompData(tc.nr, a, tc.args))
		if err != nil {
			t.Fatal(err)
		}
		if uint32(got) != tc.want {
			t.Errorf("%s: the filter answers %#x, want %#x", tc.name, got, tc.want)
		}
	}
}

// seccompData lays a struct seccomp_data out for x/net/bpf's interpreter,
// which loads words big-endian: each 32-bit word is written big-endian at
// the offset the kernel's little-endian layout gives it.
func seccompData(nr, archID uint32, args []uint64) []byte {
	buf := make([]byte, 64)
	be := binary.BigEndian
	be.PutUint32(buf[0:], nr)
	be.PutUint32(buf[4:], archID)
	for i, a := range args {
		be.PutUint32(buf[16+8*i:], uint32(a))       // low half first
		be.PutUint32(buf[16+8*i+4:], uint32(a>>32)) // then the high half
	}
	return buf
}

func nativeLittleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}
