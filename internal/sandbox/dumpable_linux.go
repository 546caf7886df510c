//go:build linux

package sandbox

import "syscall"

// NonDumpable makes the calling process non-dumpable: /proc/PID/environ,
// /proc/PID/mem and ptrace are closed to every process without
// CAP_SYS_PTRACE, its own user's included, so a child that escapes the
// boundary still cannot read the token from roadmap's initial environment
// (os.Unsetenv does not erase that copy).
func NonDumpable() error {
	_, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_DUMPABLE, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}
