//go:build !linux

package sandbox

import (
	"context"
	"os"
	"os/exec"
	"runtime"
)

func platform() Probe { return Probe{OS: runtime.GOOS, Euid: os.Geteuid()} }

// confine leaves cmd to the caller's own process-group handling: there is
// no user boundary here, only `isolation: none`.
func confine(cmd *exec.Cmd, b *Boundary) {}

func (b *Boundary) openUser(ctx context.Context, o Options) error {
	return &Unavailable{Reason: "the user boundary needs Linux, and this is " + runtime.GOOS}
}
