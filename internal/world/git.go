package world

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// GitEnv is the environment every git of a world runs with: the machine's
// environment without its git or GitHub variables, no global or system
// configuration, no terminal prompt, and a fixed identity. It keeps a test
// or a run apart from the host's settings and from a real runner's token.
func GitEnv() []string { return gitEnv() }

// GitEnvAt is GitEnv with every commit dated at: the same tree and message
// then give the same sha on every run (the fault suite compares two plays
// of one history).
func GitEnvAt(at time.Time) []string {
	d := at.UTC().Format(time.RFC3339)
	return gitEnv("GIT_AUTHOR_DATE="+d, "GIT_COMMITTER_DATE="+d)
}

func gitEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GIT_") || strings.HasPrefix(k, "GITHUB_") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=roadmap", "GIT_AUTHOR_EMAIL=roadmap@example.invalid",
		"GIT_COMMITTER_NAME=roadmap", "GIT_COMMITTER_EMAIL=roadmap@example.invalid")
	return append(env, extra...)
}

// Git runs git with args in dir under env and returns its output, trimmed.
// A failure names the command and carries git's own words.
func Git(env []string, dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}
