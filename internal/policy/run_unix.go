//go:build unix

package policy

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts the process in a group of its own so that a timeout
// or a cancel kills everything it started (go test's test binaries, make's
// recipes), not only the leader.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		killProcessGroup(cmd)
		return nil
	}
}

func killProcessGroup(cmd *exec.Cmd) {
	if cmd.Process != nil && cmd.Process.Pid > 0 {
		// ESRCH (the group is gone) is the usual answer after a clean exit.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
