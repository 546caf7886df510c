package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestRemoteRepository(t *testing.T) {
	tests := []struct{ url, want string }{
		{"https://github.com/acme/widgets", "acme/widgets"},
		{"https://github.com/acme/widgets.git", "acme/widgets"},
		{"https://github.com/acme/widgets/", "acme/widgets"},
		{"https://x-access-token:ghs_abc@github.com/acme/widgets.git", "acme/widgets"},
		{"http://ghe.example.test/acme/widgets.git", "acme/widgets"},
		{"ssh://git@github.com/acme/widgets.git", "acme/widgets"},
		{"ssh://git@github.com:22/acme/my.repo_v2.git", "acme/my.repo_v2"},
		{"git@github.com:acme/widgets.git", "acme/widgets"},
		{"github.com:acme/widgets", "acme/widgets"},
		{"  git@github.com:acme/widgets.git\n", "acme/widgets"},
		// Not a repository on a server, or not one GitHub would name.
		{"", ""},
		{"/srv/git/widgets.git", ""},
		{"../widgets", ""},
		{"file:///srv/acme/widgets.git", ""},
		{"C:/acme/widgets", ""},
		{"https://gitlab.test/group/sub/widgets.git", ""},
		{"https://github.com/acme", ""},
		{"https://github.com/-acme/widgets", ""},
		{"https://github.com/acme/..", ""},
		{"https://github.com/acme/wid gets", ""},
		{"git@github.com:acme/widgets.git; rm -rf /", ""},
		{"ext::sh -c touch% /tmp/x", ""},
		{"https://github.com/" + strings.Repeat("a", 40) + "/widgets", ""},
	}
	for _, tt := range tests {
		if got := remoteRepository(tt.url); got != tt.want {
			t.Errorf("remoteRepository(%q) = %q, want %q", tt.url, got, tt.want)
		}
	}
}

// TestRepoFromGitRemote: with no -R and no GITHUB_REPOSITORY, a verb that
// reads GitHub reads the repository the work tree's origin remote names,
// as the gh CLI does; GITHUB_REPOSITORY and -R still come first.
func TestRepoFromGitRemote(t *testing.T) {
	w := newExplainWorld(t) // the fake serves acme/widgets
	n := strconv.Itoa(w.item(blockComment("implement.result: ready")))
	clone := t.TempDir()
	for _, args := range [][]string{{"init", "--quiet", clone}, {"-C", clone, "remote", "add", "origin", "git@github.com:acme/widgets.git"}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %q: %v\n%s", args, err, out)
		}
	}
	base := []string{w.environ[0], w.environ[1], "PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()} // token, API; no GITHUB_REPOSITORY

	tests := []struct {
		name    string
		args    []string
		environ []string
		code    int
		stdout  string
		stderr  string
	}{
		{"explain from the origin remote", []string{"explain", n}, []string{"GITHUB_WORKSPACE=" + clone}, ExitOK, "result: ready", ""},
		{"wake from the origin remote", []string{"wake", "--dry-run", "--json"}, []string{"GITHUB_WORKSPACE=" + clone}, ExitOK, `"dispatched": 0`, ""},
		{"GITHUB_REPOSITORY comes first", []string{"explain", n}, []string{"GITHUB_WORKSPACE=" + clone, "GITHUB_REPOSITORY=someone/else"}, ExitUsage, "", "someone/else"},
		{"-R comes first", []string{"explain", n, "-R", "someone/else"}, []string{"GITHUB_WORKSPACE=" + clone}, ExitUsage, "", "someone/else"},
		{"no remote, no repository", []string{"explain", n}, []string{"GITHUB_WORKSPACE=" + t.TempDir()}, ExitUsage, "", "no repository: pass -R OWNER/REPO"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := roadmapCLI(t, append(append([]string(nil), base...), tt.environ...), tt.args...)
			if code != tt.code || !strings.Contains(out, tt.stdout) || !strings.Contains(errOut, tt.stderr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q on stdout, %q on stderr", code, out, errOut, tt.code, tt.stdout, tt.stderr)
			}
		})
	}

	// init reads the remote of its --workdir, not of the workspace.
	code, out, errOut := roadmapCLI(t, append(append([]string(nil), base...), "GITHUB_WORKSPACE="+t.TempDir()), "init", "--workdir", clone, "--dry-run", "--json")
	if code != ExitOK || !strings.Contains(out, `"repository": "acme/widgets"`) {
		t.Errorf("init --workdir CLONE: exit %d, stdout %q, stderr %q; want acme/widgets from the clone's origin", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(clone, ".github")); err == nil {
		t.Errorf("init --dry-run wrote into the clone")
	}
}
