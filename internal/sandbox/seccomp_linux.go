//go:build linux

package sandbox

import (
	"fmt"
	"runtime"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// The system-call filter. The namespace init installs it last, after
// Landlock, on all its threads (TSYNC), so the command and everything it
// starts inherit it and cannot remove it. It is a deny-list: the calls below
// are refused and every other call is left to Landlock, the namespaces and
// the uid. Each refusal says why, for docs/isolation.md to cite.
//
// The policy is assembled by github.com/elastic/go-seccomp-bpf, which knows
// each architecture's system-call numbers (amd64, arm64, and more) and
// refuses the x32 ABI on amd64. The program runs under an extra guard of
// ours: a call made through another architecture's entry (int 0x80 on
// amd64, AArch32 on arm64) kills the process. The library sends such a
// call to the policy's default action, which for a deny-list is "allow":
// the i386 socket() would pass where the native one is refused.

// refusal is one row of the filter: a system call, refused (with errno)
// when its arguments match args, or always when args is nil.
type refusal struct {
	call  string
	args  seccomp.ArgumentConditions
	errno unix.Errno
	why   string
}

// unixSocketCall is the row Options.UnixSockets turns off.
const unixSocketCall = "socket"

// refusals is the filter. Errors are EPERM (the kernel's own answer to a
// call that is not allowed), except where a program is expected to fall
// back to another call: ENOSYS tells it the kernel has none.
var refusals = []refusal{
	{unixSocketCall, low32(0, unix.AF_UNIX), unix.EPERM,
		"a UNIX socket reaches a named socket by its path, and neither Landlock (ABI 7 and older has no right for connect() to one) nor the network namespace covers path sockets: without this, a command connects to any host service listening on a socket it can name (a container engine, a local model server) outside every allowed folder; socketpair() stays allowed (no path, and many runtimes use it), and Options.UnixSockets lifts this row"},
	{"clone", bitsSet(0, unix.CLONE_NEWUSER), unix.EPERM,
		"a new user namespace makes the command root in it: mount, network and other capabilities that reach far more of the kernel than its uid may"},
	{"unshare", bitsSet(0, unix.CLONE_NEWUSER), unix.EPERM,
		"the same user namespace as clone's, for the calling process"},
	{"clone3", nil, unix.ENOSYS,
		"its flags are in a struct the filter cannot read, so a user namespace could pass: ENOSYS makes libc (and Go) fall back to clone, which the filter reads"},
	{"setns", nil, unix.EPERM,
		"joining another namespace (the host's, through a descriptor) would undo the boundary's"},
	{"keyctl", nil, unix.EPERM,
		"the kernel keyring holds credentials (Kerberos tickets, keys a runner added); the init gives the command a fresh empty session keyring and the command has no use for one"},
	{"add_key", nil, unix.EPERM, "as keyctl"},
	{"request_key", nil, unix.EPERM, "as keyctl: it can also start a helper on the host (/sbin/request-key) as root"},
	{"ptrace", nil, unix.EPERM,
		"reading and changing another process's memory and registers; also a way around a seccomp filter on kernels before 4.8"},
	{"process_vm_readv", nil, unix.EPERM, "as ptrace: another process's memory"},
	{"process_vm_writev", nil, unix.EPERM, "as ptrace: another process's memory"},
	{"pidfd_getfd", nil, unix.EPERM, "as ptrace: takes a copy of another process's descriptor"},
	{"bpf", nil, unix.EPERM,
		"BPF programs run in the kernel: a large attack surface with a long record of privilege escalations"},
	{"perf_event_open", nil, unix.EPERM,
		"performance counters: kernel attack surface and side channels on other processes"},
	{"userfaultfd", nil, unix.EPERM,
		"lets a process stall the kernel on a page fault, the usual way to win a race in a kernel exploit"},
	{"io_uring_setup", nil, unix.ENOSYS,
		"io_uring's operations (socket, connect, open) are not system calls and pass every filter; runtimes that use it fall back to plain calls on ENOSYS"},
	{"io_uring_enter", nil, unix.ENOSYS, "as io_uring_setup"},
	{"io_uring_register", nil, unix.ENOSYS, "as io_uring_setup"},
	{"mount", nil, unix.EPERM, "the mount table is root's; with the user namespace refused the command can never hold the capability, and this keeps it so"},
	{"umount2", nil, unix.EPERM, "as mount"},
	{"pivot_root", nil, unix.EPERM, "as mount"},
	{"move_mount", nil, unix.EPERM, "as mount (the new mount API)"},
	{"open_tree", nil, unix.EPERM, "as mount (the new mount API)"},
	{"fsopen", nil, unix.EPERM, "as mount (the new mount API)"},
	{"fsconfig", nil, unix.EPERM, "as mount (the new mount API)"},
	{"fsmount", nil, unix.EPERM, "as mount (the new mount API)"},
	{"fspick", nil, unix.EPERM, "as mount (the new mount API)"},
	{"mount_setattr", nil, unix.EPERM, "as mount (the new mount API)"},
	{"open_by_handle_at", nil, unix.EPERM, "opens a file by its handle, past every folder's permissions and Landlock's paths"},
	{"kexec_load", nil, unix.EPERM, "loads a new kernel"},
	{"kexec_file_load", nil, unix.EPERM, "loads a new kernel"},
	{"init_module", nil, unix.EPERM, "loads code into the kernel"},
	{"finit_module", nil, unix.EPERM, "loads code into the kernel"},
	{"delete_module", nil, unix.EPERM, "unloads kernel code"},
	{"reboot", nil, unix.EPERM, "the machine is not the command's"},
	{"swapon", nil, unix.EPERM, "the machine is not the command's"},
	{"swapoff", nil, unix.EPERM, "the machine is not the command's"},
	{"acct", nil, unix.EPERM, "the machine is not the command's"},
	{"syslog", nil, unix.EPERM, "the kernel log holds kernel addresses that help an exploit"},
	{"iopl", nil, unix.EPERM, "raw I/O ports (amd64 only)"},
	{"ioperm", nil, unix.EPERM, "raw I/O ports (amd64 only)"},
	{"uselib", nil, unix.EPERM, "an obsolete loader no program needs (amd64 only)"},
	{"ioctl", low32(1, unix.TIOCSTI), unix.EPERM,
		"TIOCSTI pushes characters into a terminal's input: through /dev/tty a command would type into the shell of the person who ran roadmap, after roadmap ends"},
	{"ioctl", low32(1, unix.TIOCLINUX), unix.EPERM, "TIOCLINUX pastes a virtual console's selection into its input, as TIOCSTI"},
}

// archOnly are the calls refusals names that an architecture has no number
// for; every other call must be in its table (TestFilterPerArch).
var archOnly = map[string]bool{"iopl": true, "ioperm": true, "uselib": true}

// low32 matches argument n whose low 32 bits are v, whatever the high ones:
// the kernel reads an int argument (socket's family, ioctl's request) from
// the low half of its register, so a comparison of all 64 bits would let a
// caller that sets the high half through. The library compares 64 bits, so
// the match is spelled out bit by bit: no bit outside v, every bit of v.
func low32(n uint32, v uint32) seccomp.ArgumentConditions {
	c := seccomp.ArgumentConditions{{Argument: n, Operation: seccomp.BitsNotSet, Value: uint64(^v)}}
	for bit := uint32(1); bit != 0; bit <<= 1 {
		if v&bit != 0 {
			c = append(c, seccomp.Condition{Argument: n, Operation: seccomp.BitsSet, Value: uint64(bit)})
		}
	}
	return c
}

// bitsSet matches argument n with any bit of v set.
func bitsSet(n uint32, v uint64) seccomp.ArgumentConditions {
	return seccomp.ArgumentConditions{{Argument: n, Operation: seccomp.BitsSet, Value: v}}
}

// filterPolicy is the deny-list for the architecture info, with the UNIX
// socket row left out when allowUnix. Calls info has no number for are
// returned in missing (and left out).
func filterPolicy(info *arch.Info, allowUnix bool) (p seccomp.Policy, missing []string) {
	groups := map[unix.Errno]*seccomp.SyscallGroup{}
	var order []unix.Errno
	for _, r := range refusals {
		if allowUnix && r.call == unixSocketCall {
			continue
		}
		if _, ok := info.SyscallNames[r.call]; !ok {
			missing = append(missing, r.call)
			continue
		}
		g := groups[r.errno]
		if g == nil {
			g = &seccomp.SyscallGroup{Action: seccomp.ActionErrno | seccomp.Action(r.errno)}
			groups[r.errno] = g
			order = append(order, r.errno)
		}
		if r.args == nil {
			g.Names = append(g.Names, r.call)
		} else {
			g.NamesWithCondtions = append(g.NamesWithCondtions, seccomp.NameWithConditions{Name: r.call, Conditions: r.args})
		}
	}
	p.DefaultAction = seccomp.ActionAllow
	for _, e := range order {
		p.Syscalls = append(p.Syscalls, *groups[e])
	}
	return p, missing
}

// filterProgram is the BPF program the init installs: the guard that kills
// a call from a foreign architecture, then the policy for this one.
func filterProgram(allowUnix bool) ([]bpf.Instruction, error) {
	info, err := arch.GetInfo("")
	if err != nil {
		return nil, err // an architecture the library has no table for: no boundary
	}
	p, _ := filterPolicy(info, allowUnix)
	insts, err := p.Assemble()
	if err != nil {
		return nil, err
	}
	const archOffset = 4 // seccomp_data.arch
	guard := []bpf.Instruction{
		bpf.LoadAbsolute{Off: archOffset, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(info.ID), SkipTrue: 1},
		bpf.RetConstant{Val: uint32(seccomp.ActionKillProcess)},
	}
	return append(guard, insts...), nil
}

// installFilter loads the filter on every thread of the calling process
// (TSYNC: the Go runtime's threads too, whichever of them forks the
// command), with no_new_privs set (Landlock has set it already).
func installFilter(allowUnix bool) error {
	insts, err := filterProgram(allowUnix)
	if err != nil {
		return err
	}
	raw, err := bpf.Assemble(insts)
	if err != nil {
		return err
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		filter[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if err := seccomp.SetNoNewPrivs(); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	r, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&prog)))
	runtime.KeepAlive(filter)
	switch {
	case errno != 0:
		return errno
	case r != 0:
		// TSYNC names the first thread it could not move to the filter.
		return fmt.Errorf("thread %d could not take the filter", r)
	}
	return nil
}
