package job_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/implement"
	"github.com/roadmap-dev/roadmap/internal/job"
)

// TestOpenLeavesProcessEnvironment: Open reads a model key configured under
// a neutral name from the Setup's environment and leaves the process's as it
// found it (the fault suite opens about a hundred Jobs in one process); the
// key is in both, and still a tool command the Job runs never sees it: its
// environment is the boundary's, built from the Setup's allow-listed part,
// not inherited from the process.
func TestOpenLeavesProcessEnvironment(t *testing.T) {
	const keyVar, key = "LLM", "k3y-canary-process-env-5e6f708192a3b4c5"
	t.Setenv(keyVar, key)
	w, fixtures := sampleWorld(t, "ghs_environcanary000000000000000000000")
	ws, err := w.Workspace("job")
	if err != nil {
		t.Fatal(err)
	}
	s := w.Setup(implement.Phase(), ws, fixtures)
	s.Env[keyVar] = key
	s.Config.Models[0].APIKeyEnv = keyVar
	ctx := context.Background()
	k, err := job.Open(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	if got, ok := os.LookupEnv(keyVar); !ok || got != key {
		t.Errorf("after Open the process's %s = %q (set %v), want it as it was: Open must change nothing process-wide", keyVar, got, ok)
	}
	if got := k.Masker.Mask("the key is " + key); strings.Contains(got, key) {
		t.Errorf("the model key named by api_key_env is not masked: %q", got)
	}
	res, err := k.Sandbox.Run(ctx, []string{"env"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Output, "PATH=") {
		t.Fatalf("env printed no PATH (exit %d), so the check below sees nothing", res.ExitCode)
	}
	for _, line := range strings.Split(res.Output, "\n") {
		if strings.Contains(line, key) || strings.HasPrefix(line, keyVar+"=") {
			t.Errorf("the model key reached a tool process's environment: %s", line)
		}
	}
}
