package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// The gh CLI's habits that issue 50 (item 6) found missing: one error
// prefix, GH_REPO, --jq, EXAMPLES in every verb's help.

// commandPaths is every command a person can type a flag to: the root,
// each verb of the table, each parent of two-word verbs, and cobra's own
// help and completion.
func commandPaths() [][]string {
	paths := [][]string{nil, {"help"}, {"completion", "bash"}}
	parents := map[string]bool{}
	for _, v := range verbs() {
		words := strings.Fields(v.name)
		paths = append(paths, words)
		if len(words) == 2 && !parents[words[0]] {
			parents[words[0]] = true
			paths = append(paths, words[:1])
		}
	}
	return paths
}

// TestOneErrorPrefix: a bad flag, long or short, on any command prints
// lines that each start with one prefix naming the command ("roadmap dev:
// …", "roadmap: …" for the root), never "roadmap: roadmap dev: …", and
// exits 2.
func TestOneErrorPrefix(t *testing.T) {
	for _, path := range commandPaths() {
		for _, bad := range []string{"--no-such-flag", "-Z"} {
			args := append(append([]string{}, path...), bad)
			var out, errb bytes.Buffer
			env := newEnv(args, nil, strings.NewReader(""), &out, &errb)
			env.ghAuthToken = noGHLogin
			code := run(context.Background(), env)
			if code != ExitUsage {
				t.Errorf("roadmap %s: exit %d, want %d\nstderr: %s", strings.Join(args, " "), code, ExitUsage, errb.String())
			}
			prefix := "roadmap: "
			if len(path) > 0 {
				prefix = "roadmap " + strings.Join(path, " ") + ": "
			}
			stderr := strings.TrimSuffix(errb.String(), "\n")
			if stderr == "" {
				t.Errorf("roadmap %s: nothing on stderr", strings.Join(args, " "))
				continue
			}
			for _, line := range strings.Split(stderr, "\n") {
				rest, ok := strings.CutPrefix(line, prefix)
				if !ok || strings.HasPrefix(rest, "roadmap") || strings.Contains(line, "roadmap: roadmap") {
					t.Errorf("roadmap %s: stderr line %q does not start with one %q", strings.Join(args, " "), line, prefix)
				}
			}
		}
	}
}

// TestOneErrorPrefixErrorf: a message that already carries the prefix (an
// error that came back through a layer that added it) is printed with it
// once.
func TestOneErrorPrefixErrorf(t *testing.T) {
	for _, tt := range []struct{ verb, msg, want string }{
		{"", "roadmap: unknown flag: --x", "roadmap: unknown flag: --x\n"},
		{"explain", "roadmap explain: get issue 3: 404", "roadmap explain: get issue 3: 404\n"},
		{"explain", "roadmap: get issue 3: 404", "roadmap explain: get issue 3: 404\n"},
		{"explain", "explain: get issue 3: 404", "roadmap explain: get issue 3: 404\n"},
		{"explain", "get issue 3: 404", "roadmap explain: get issue 3: 404\n"},
	} {
		var errb bytes.Buffer
		env := &Env{Vars: map[string]string{}, Stderr: &errb, verb: tt.verb}
		env.Errorf("%s", tt.msg)
		if errb.String() != tt.want {
			t.Errorf("verb %q, Errorf(%q) printed %q, want %q", tt.verb, tt.msg, errb.String(), tt.want)
		}
	}
}
