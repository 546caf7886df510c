package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strconv"
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

// TestGHRepoEnv: GH_REPO, the gh CLI's variable, names the repository when
// neither -R nor GITHUB_REPOSITORY does, and comes before the origin
// remote; it may carry the host roadmap talks to; one it cannot read is a
// usage error naming it, unless -R or GITHUB_REPOSITORY make it moot.
func TestGHRepoEnv(t *testing.T) {
	w := newExplainWorld(t) // the fake serves acme/widgets
	n := strconv.Itoa(w.item(blockComment("implement.result: ready")))
	clone := t.TempDir() // its origin names another repository
	for _, args := range [][]string{{"init", "--quiet", clone}, {"-C", clone, "remote", "add", "origin", "git@github.com:someone/else.git"}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %q: %v\n%s", args, err, out)
		}
	}
	base := []string{w.environ[0], w.environ[1], "PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "GITHUB_WORKSPACE=" + clone} // token, API; no GITHUB_REPOSITORY
	tests := []struct {
		name    string
		args    []string
		environ []string
		code    int
		stdout  string
		stderr  string
	}{
		{"GH_REPO names it", []string{"explain", n}, []string{"GH_REPO=acme/widgets"}, ExitOK, "result: ready", ""},
		{"GH_REPO comes before the origin remote", []string{"wake", "--dry-run", "--json"}, []string{"GH_REPO=acme/widgets"}, ExitOK, `"dispatched": 0`, ""},
		{"the origin remote without GH_REPO", []string{"explain", n}, nil, ExitUsage, "", "someone/else"},
		{"GH_REPO with the host", []string{"explain", n}, []string{"GH_REPO=github.com/acme/widgets"}, ExitOK, "result: ready", ""},
		{"GH_REPO with GITHUB_SERVER_URL's host", []string{"explain", n}, []string{"GH_REPO=ghe.example.test/acme/widgets", "GITHUB_SERVER_URL=https://ghe.example.test"}, ExitOK, "result: ready", ""},
		{"GH_REPO with another host", []string{"explain", n}, []string{"GH_REPO=ghe.example.test/acme/widgets"}, ExitUsage, "",
			`roadmap explain: GH_REPO "ghe.example.test/acme/widgets" names the host ghe.example.test, but roadmap talks to github.com`},
		{"GH_REPO that is not a repository", []string{"explain", n}, []string{"GH_REPO=widgets"}, ExitUsage, "", `roadmap explain: GH_REPO "widgets" is not [HOST/]OWNER/REPO`},
		{"-R comes before GH_REPO", []string{"explain", n, "-R", "acme/widgets"}, []string{"GH_REPO=someone/else"}, ExitOK, "result: ready", ""},
		{"-R makes a bad GH_REPO moot", []string{"explain", n, "-R", "acme/widgets"}, []string{"GH_REPO=widgets"}, ExitOK, "result: ready", ""},
		{"GITHUB_REPOSITORY comes before GH_REPO", []string{"explain", n}, []string{"GITHUB_REPOSITORY=acme/widgets", "GH_REPO=someone/else"}, ExitOK, "result: ready", ""},
		{"GH_REPO names it for metrics too", []string{"metrics", "--json"}, []string{"GH_REPO=acme/widgets"}, ExitOK, `"requests"`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := roadmapCLI(t, append(append([]string(nil), base...), tt.environ...), tt.args...)
			if code != tt.code || !strings.Contains(out, tt.stdout) || !strings.Contains(errOut, tt.stderr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q on stdout, %q on stderr", code, out, errOut, tt.code, tt.stdout, tt.stderr)
			}
		})
	}
}
