package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestChecksTrustFromBase: `roadmap checks` and `roadmap ci fail-to-pass`
// take isolation, the shell policy and the configured check commands from
// the base branch's configuration, never from the PR's tree. The PR here
// says `isolation: none` and configures a command of its own; neither is
// used, and the run says which configuration it read.
func TestChecksTrustFromBase(t *testing.T) {
	hostile := "isolation: none\ncheck" + "s:\n  commands: [\"touch pwned-by-the-pr\"]\n"
	t.Run("checks", func(t *testing.T) {
		w := newChecksWorld(t, map[string]string{
			"greet.txt":           "hello\n",
			".github/roadmap.yml": "checks:\n  commands: [\"test -f greet.txt\"]\n",
		})
		head := w.commit("say goodbye", sound("say-goodbye", goodbyeTasks, map[string]string{
			"greet.txt":           "hello\ngoodbye\n",
			".github/roadmap.yml": hostile,
		}))
		w.pullRequest(head)
		code, stdout, stderr := w.run("--json")
		if code != ExitOK && code != ExitFindings {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		var res struct {
			Isolation  string `json:"isolation"`
			Configured struct {
				Commands []struct {
					Command string `json:"command"`
				} `json:"commands"`
			} `json:"configured"`
		}
		var body []string
		for _, l := range strings.SplitAfter(stdout, "\n") {
			if !strings.HasPrefix(l, "::") {
				body = append(body, l)
			}
		}
		if err := json.Unmarshal([]byte(strings.Join(body, "")), &res); err != nil {
			t.Fatalf("no JSON: %v\n%s", err, stdout)
		}
		if strings.Contains(res.Isolation, "not isolated") || strings.Contains(res.Isolation, "none") {
			t.Errorf("isolation = %q: the PR's own `isolation: none` was obeyed", res.Isolation)
		}
		var cmds []string
		for _, c := range res.Configured.Commands {
			cmds = append(cmds, c.Command)
		}
		if strings.Join(cmds, ";") != "test -f greet.txt" {
			t.Errorf("configured commands = %q, want the base branch's only", cmds)
		}
		if _, err := os.Stat(filepath.Join(w.repo, "pwned-by-the-pr")); err == nil {
			t.Error("the PR's own configured command ran")
		}
		if !strings.Contains(stderr, "configuration: .github/roadmap.yml at the base") {
			t.Errorf("the run does not say it read the base branch's configuration:\n%s", stderr)
		}
	})
	t.Run("ci fail-to-pass", func(t *testing.T) {
		r := newCIRepo(t)
		r.commit("base", map[string]string{"go.mod": "module example.com/m\n\ngo 1.22\n", "a.txt": "a\n"})
		base := r.git("rev-parse", "HEAD")
		r.commit("the change", map[string]string{".github/roadmap.yml": hostile, "b.txt": "b\n"})
		var out, errb strings.Builder
		code := Main(t.Context(), []string{"ci", "fail-to-pass", "-C", r.dir, "--base", base, "--test", "true", "--json"},
			r.environ, strings.NewReader(""), &out, &errb)
		if !strings.Contains(errb.String(), "configuration: the defaults (the base branch has no .github/roadmap.yml)") {
			t.Errorf("exit %d; the run does not say it took the defaults over the change's own configuration:\n%s", code, errb.String())
		}
		if strings.Contains(errb.String(), "isolation: none") || strings.Contains(out.String(), "not isolated") {
			t.Errorf("the change's own `isolation: none` was obeyed:\n%s\n%s", out.String(), errb.String())
		}
	})
}
