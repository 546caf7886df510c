package eval

import (
	"context"
	"os"
	"runtime"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/sandbox/sandboxtest"
)

// TestJudgeBoundaryIsolation: the judge runs the head's tests, code the
// model wrote, in the isolation the Jobs ran in: none for the replay alone
// (its exchanges are the case's own), the user boundary for a model of
// one's own, whose key this process holds.
func TestJudgeBoundaryIsolation(t *testing.T) {
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skip("the user boundary needs root on Linux; the test machines and CI run as root")
	}
	// The runner's Go build cache is a hosted runner's (sandboxtest.RunnerGoCache):
	// each user boundary links every entry of it.
	t.Setenv("GOCACHE", sandboxtest.RunnerGoCache(t))
	ctx := context.Background()
	for _, tc := range []struct {
		iso      config.Isolation
		isolated bool
	}{{"", false}, {config.IsolationNone, false}, {config.IsolationUser, true}, {config.IsolationAuto, true}} {
		b, err := judgeBoundary(ctx, tc.iso, t.TempDir())
		if err != nil {
			t.Fatalf("isolation %q: %v", tc.iso, err)
		}
		if b.Isolated() != tc.isolated {
			t.Errorf("isolation %q: the judge's boundary isolated %v, want %v", tc.iso, b.Isolated(), tc.isolated)
		}
		if err := b.Close(); err != nil {
			t.Errorf("isolation %q: close: %v", tc.iso, err)
		}
	}
	if _, err := judgeBoundary(ctx, "sideways", t.TempDir()); err == nil {
		t.Error("an unknown isolation opened a boundary")
	}
}
