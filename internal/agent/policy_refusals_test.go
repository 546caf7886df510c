package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/roadmap-dev/roadmap/internal/agent"
)

// TestPolicyRefusals drives the real loop with a scripted model that tries
// what a model must not do: network tools, git push, gh, paths out of the
// workspace (.. and symlinks, read and write), .git, and printing the
// environment. Each is refused, and env shows no token or secret from the
// environment the tools were started from.
func TestPolicyRefusals(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("outside secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := gitRepo(t, map[string]string{"README.md": "# ws\n"})
	for link, target := range map[string]string{
		"out":      outside,                              // a directory link out
		"leak.txt": filepath.Join(outside, "secret.txt"), // a file link out
	} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}

	// Secrets the tools' parent environment holds. Built at run time so no
	// token-shaped literal sits in the source.
	secrets := map[string]string{
		"GITHUB_TOKEN":          "ghp_" + strings.Repeat("T0k3n", 8),
		"ACTIONS_RUNTIME_TOKEN": "rt." + strings.Repeat("runtime", 6),
		"MY_API_KEY":            "mak-" + strings.Repeat("k3y", 10),
		"BUILD_LABEL":           "ghp_" + strings.Repeat("Inn0c", 8), // innocent name, token value
	}
	environ := os.Environ()
	for k, v := range secrets {
		environ = append(environ, k+"="+v)
	}

	type try struct {
		call      scriptCall
		wantClass string
	}
	tries := []try{
		{call("run", map[string]string{"command": "curl -s https://example.com/x"}), agent.ResultRefused},
		{call("run", map[string]string{"command": "wget https://example.com/x"}), agent.ResultRefused},
		{call("run", map[string]string{"command": "git push origin HEAD"}), agent.ResultRefused},
		{call("run", map[string]string{"command": "gh auth token"}), agent.ResultRefused},
		{call("run", map[string]string{"command": "cat ../../etc/passwd"}), agent.ResultRefused},
		{call("run", map[string]string{"command": "cat leak.txt"}), agent.ResultRefused},
		{call("read_file", map[string]string{"path": "../../etc/passwd"}), agent.ResultRefused},
		{call("read_file", map[string]string{"path": "/etc/passwd"}), agent.ResultRefused},
		{call("read_file", map[string]string{"path": "out/secret.txt"}), agent.ResultRefused},
		{call("read_file", map[string]string{"path": "leak.txt"}), agent.ResultRefused},
		{call("write_file", map[string]string{"path": "out/planted.txt", "content": "x"}), agent.ResultRefused},
		{call("write_file", map[string]string{"path": "leak.txt", "content": "overwritten"}), agent.ResultRefused},
		{call("edit_file", map[string]string{"path": "leak.txt", "old": "outside", "new": "edited"}), agent.ResultRefused},
		{call("list_dir", map[string]string{"path": "out"}), agent.ResultRefused},
		{call("read_file", map[string]string{"path": ".git/config"}), agent.ResultRefused},
		{call("write_file", map[string]string{"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\n"}), agent.ResultRefused},
		{call("run", map[string]string{"command": "env"}), agent.ResultOK},
	}
	var turns []turn
	var wantClasses []string
	for _, tr := range tries {
		turns = append(turns, turn{ToolCalls: []scriptCall{tr.call}})
		wantClasses = append(wantClasses, tr.wantClass)
	}
	turns = append(turns, turn{ToolCalls: []scriptCall{call("finish", map[string]string{"summary": "tried"})}})
	wantClasses = append(wantClasses, agent.ResultOK)

	model := &scriptedModel{name: "scripted", turns: turns}
	obs := &recorder{}
	out, err := agent.Run(context.Background(), agent.Config{
		Models:   []agent.Tier{{Name: "scripted", Model: model}},
		Sandbox:  newSandbox(t, dir, environ),
		Observer: obs,
	}, agent.Step{Task: "Try things."})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != agent.StatusFinished {
		t.Fatalf("status = %q (%s), want finished: refusals must not end the step", out.Status, out.Reason)
	}
	if diff := cmp.Diff(wantClasses, obs.classes()); diff != "" {
		t.Errorf("tool result classes (-want +got):\n%s", diff)
	}

	replies := toolReplies(model)
	if len(replies) != len(tries) {
		t.Fatalf("model saw %d tool replies, want %d", len(replies), len(tries))
	}
	for i, tr := range tries {
		if tr.wantClass == agent.ResultRefused && !strings.HasPrefix(replies[i], "Refused: ") {
			t.Errorf("%s %s: reply %q, want a refusal", tr.call.Name, tr.call.raw(), replies[i])
		}
		if strings.Contains(replies[i], "outside secret") {
			t.Errorf("%s %s: reply shows the outside file: %q", tr.call.Name, tr.call.raw(), replies[i])
		}
	}
	env := replies[len(replies)-1]
	if !strings.Contains(env, "exit code 0") || !strings.Contains(env, "PATH=") {
		t.Fatalf("env did not run: %q", env)
	}
	for name, value := range secrets {
		if strings.Contains(env, value) {
			t.Errorf("env output shows the value of %s", name)
		}
	}
	for _, name := range []string{"GITHUB_TOKEN=", "ACTIONS_RUNTIME_TOKEN=", "MY_API_KEY=", "BUILD_LABEL="} {
		if strings.Contains(env, name) {
			t.Errorf("env output has %s", name)
		}
	}

	// Nothing was written through a link or into .git.
	if _, err := os.Stat(filepath.Join(outside, "planted.txt")); err == nil {
		t.Error("write_file through a symlink created a file outside the workspace")
	}
	if got, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(got) != "outside secret\n" {
		t.Errorf("the file outside the workspace changed: %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "hooks", "pre-commit")); err == nil {
		t.Error("write_file planted a git hook")
	}
	// The trace has a digest of each call's arguments, never the arguments.
	for _, e := range obs.tools {
		if len(e.ArgsDigest) != 16 || strings.Contains(e.ArgsDigest, "passwd") {
			t.Errorf("tool event digest %q is not a 16-hex-digit digest", e.ArgsDigest)
		}
	}
}
