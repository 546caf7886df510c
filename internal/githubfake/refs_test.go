package githubfake

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadBranchAsGit: readBranch answers what git rev-parse does for the
// branches of a bare repository, loose and packed, present and not, or says
// it cannot tell.
func TestReadBranchAsGit(t *testing.T) {
	dir := t.TempDir()
	bare := filepath.Join(dir, "remote.git")
	env := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
	git := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git(dir, "init", "-q", "--bare", "-b", "main", bare)
	work := filepath.Join(dir, "work")
	git(dir, "init", "-q", "-b", "main", work)
	git(work, "commit", "-q", "--allow-empty", "-m", "one")
	git(work, "push", "-q", bare, "main", "main:roadmap/1-add-greetings", "main:packed/a", "main:gone")
	git(bare, "pack-refs", "--all") // main, the work branch, packed/a and gone are packed now
	git(work, "commit", "-q", "--allow-empty", "-m", "two")
	git(work, "push", "-q", bare, "main", "main:loose/b") // main loose again, over its packed line
	git(work, "push", "-q", bare, ":gone")                // deleted: out of packed-refs
	git(bare, "symbolic-ref", "refs/heads/alias", "refs/heads/main")

	revParse := func(branch string) string {
		cmd := exec.Command("git", "--git-dir", bare, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch)
		cmd.Env = env
		out, _ := cmd.Output()
		return strings.TrimSpace(string(out))
	}
	for _, tc := range []struct {
		branch string
		known  bool // the files answer
	}{
		{"main", true},
		{"roadmap/1-add-greetings", true},
		{"packed/a", true},
		{"loose/b", true},
		{"gone", true},
		{"never", true},
		{"packed", true}, // a directory of refs, no ref
		{"main/x", true}, // under a ref
		{"alias", false}, // symbolic
		{"../config", false},
		{"a..b", false},
		{".hidden", false},
		{"x.lock", false},
		{"HEAD", false},
		{"sp ace", false},
		{"", false},
	} {
		sha, ok := readBranch(bare, tc.branch)
		if ok != tc.known {
			t.Errorf("readBranch(%q) ok = %v, want %v", tc.branch, ok, tc.known)
			continue
		}
		if ok && sha != revParse(tc.branch) {
			t.Errorf("readBranch(%q) = %q, git rev-parse says %q", tc.branch, sha, revParse(tc.branch))
		}
	}
	if sha, _ := readBranch(bare, "main"); sha == "" || sha == revParse("packed/a") {
		t.Errorf("main = %q: want its loose ref, the second commit, not its packed line", sha)
	}
}
