package agent_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/agent"
)

// fullDiskSandbox is a machine whose disk is full: every command fails to
// write its output (ENOSPC), as a sandbox's run does then.
type fullDiskSandbox struct{ policySandbox }

func (s fullDiskSandbox) Run(context.Context, []string) (agent.RunResult, error) {
	return agent.RunResult{}, &os.PathError{Op: "write", Path: "/tmp/roadmap-run/out", Err: syscall.ENOSPC}
}

// TestToolDiskFullEndsStep: a tool that meets a full disk ends the step
// with an error that is ENOSPC (the Job ends as disk_full, and a fresh
// runner continues it); the model is not told, so no call is spent on a
// disk it cannot empty.
func TestToolDiskFullEndsStep(t *testing.T) {
	dir := gitRepo(t, map[string]string{"a.txt": "a\n"})
	model := &scriptedModel{name: "m", turns: []turn{
		{ToolCalls: []scriptCall{call("run", map[string]string{"command": "go test ./..."})}, Usage: agent.Usage{TokensIn: 10, TokensOut: 1}},
		{ToolCalls: []scriptCall{call("finish", map[string]string{"summary": "done"})}},
	}}
	obs := &recorder{}
	out, err := agent.Run(context.Background(), agent.Config{
		Models:   []agent.Tier{{Name: "m", Model: model}},
		Sandbox:  fullDiskSandbox{newSandbox(t, dir, os.Environ())},
		Observer: obs,
	}, agent.Step{Task: "t"})
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("err = %v, want one that is ENOSPC; replies %q", err, toolReplies(model))
	}
	if !strings.Contains(out.Reason, "no space left on device") {
		t.Errorf("reason %q, want the disk's error", out.Reason)
	}
	if n := model.calls(); n != 1 {
		t.Errorf("%d model calls, want 1: the model is not told of the machine's full disk", n)
	}
	if out.Usage.ModelCalls != 1 || out.Usage.TokensIn != 10 {
		t.Errorf("usage %+v, want the one call's", out.Usage)
	}
}
