// Package sandboxtest opens isolation boundaries for tests whose subject is
// not the boundary itself (the policy table, the agent loop, the runner's
// phases): `isolation: none`, closed when the test ends. The boundary's own
// behaviour is tested in internal/sandbox and by TestIsolation.
package sandboxtest

import (
	"context"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/sandbox"
)

// None opens the `isolation: none` boundary on ws with the runner
// environment environ.
func None(t testing.TB, ws string, environ []string) *sandbox.Boundary {
	t.Helper()
	b, err := sandbox.Open(context.Background(), sandbox.Options{Mode: sandbox.ModeNone, Workspace: ws, Environ: environ})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Error(err)
		}
	})
	return b
}
