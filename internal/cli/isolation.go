package cli

import (
	"errors"
	"os"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/policy"

	"github.com/roadmap-dev/roadmap/internal/sandbox"
)

// unavailable returns the reason of an *sandbox.Unavailable error.
func unavailable(err error) (string, bool) {
	var u *sandbox.Unavailable
	if errors.As(err, &u) {
		return u.Error(), true
	}
	return "", false
}

// forgetEnv removes a credential's variable from roadmap's own process
// environment once it has been read, so no process of the same user can find
// it there (with the process made non-dumpable, /proc/PID/environ is closed
// too). Tests run Main in-process with an environment of their own; the
// process's is left as it is there, minus a name it never had.
func forgetEnv(name string) { _ = os.Unsetenv(name) }

// Protect is what the roadmap binary does with its own environment before a
// verb runs: every credential-looking variable leaves the process's
// environment (the verb reads its copy, environ) and the process becomes
// non-dumpable, so no process of the same user finds a token in
// /proc/PID/environ. Model keys under neutral names stay, but no process a
// Job starts inherits the process's environment (job.Setup's modelKeys).
func Protect(environ []string) {
	keep := map[string]bool{}
	for _, kv := range policy.ScrubEnv(environ) {
		k, _, _ := strings.Cut(kv, "=")
		keep[k] = true
	}
	for _, kv := range environ {
		if k, _, ok := strings.Cut(kv, "="); ok && !keep[k] {
			forgetEnv(k)
		}
	}
	_ = sandbox.NonDumpable()
}
