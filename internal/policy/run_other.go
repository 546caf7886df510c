//go:build !unix

package policy

import "os/exec"

// Without process groups only the process itself is killed (exec's default
// Cancel); its children may outlive a timeout. docs/policy.md says so.
func setProcessGroup(cmd *exec.Cmd) {}

func killProcessGroup(cmd *exec.Cmd) {}
