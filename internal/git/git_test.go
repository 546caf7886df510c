package git

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/roadmap-dev/roadmap/internal/failure"
)

// testEnv is the whole environment of every git the tests run: no host
// configuration (global or system) leaks in, and commits have a fixed author.
func testEnv(t *testing.T) []string {
	t.Helper()
	home := t.TempDir()
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=roadmap test",
		"GIT_AUTHOR_EMAIL=test@example.invalid",
		"GIT_COMMITTER_NAME=roadmap test",
		"GIT_COMMITTER_EMAIL=test@example.invalid",
	}
}

// sh runs git for a test's own setup, outside the package under test.
func sh(t *testing.T, env []string, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func write(t *testing.T, dir, name, body string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// world is a bare remote with one commit on main, and helpers to clone it.
type world struct {
	t      *testing.T
	env    []string
	remote string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{t: t, env: testEnv(t), remote: filepath.Join(t.TempDir(), "remote.git")}
	sh(t, w.env, "", "init", "--quiet", "--bare", "-b", "main", w.remote)
	seed := w.clone("seed")
	write(t, seed, "a.txt", "one\ntwo\nthree\n")
	sh(t, w.env, seed, "add", ".")
	sh(t, w.env, seed, "commit", "--quiet", "-m", "initial")
	sh(t, w.env, seed, "push", "--quiet", "origin", "main")
	return w
}

// clone makes a new clone of the remote and returns its directory.
func (w *world) clone(name string) string {
	w.t.Helper()
	dir := filepath.Join(w.t.TempDir(), name)
	sh(w.t, w.env, "", "clone", "--quiet", w.remote, dir)
	return dir
}

func (w *world) open(name string) *Repo {
	w.t.Helper()
	r, err := Open(context.Background(), w.clone(name), w.env)
	if err != nil {
		w.t.Fatal(err)
	}
	return r
}

func mustHead(t *testing.T, r *Repo) string {
	t.Helper()
	h, err := r.Head(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestWorkBranch(t *testing.T) {
	tests := []struct {
		issue int
		title string
		want  string
	}{
		{5, "Implement: the group runner with phase marks, spend that survives a kill", "roadmap/5-implement-the-group-runner-with-phase-ma"},
		{12, "Fix: Ünïcode & symbols!!", "roadmap/12-fix-n-code-symbols"},
		{3, "  --Leading and trailing--  ", "roadmap/3-leading-and-trailing"},
		{7, "", "roadmap/7"},
		{7, "日本語 !!!", "roadmap/7"},
		{8, strings.Repeat("a", 39) + " b", "roadmap/8-" + strings.Repeat("a", 39)},
		{9, "feat(roadmap): v1.2 .lock ~^:?*[\\", "roadmap/9-feat-roadmap-v1-2-lock"},
	}
	env := testEnv(t)
	for _, tt := range tests {
		t.Run(tt.title, func(t *testing.T) {
			got := WorkBranch(tt.issue, tt.title)
			if got != tt.want {
				t.Errorf("WorkBranch(%d, %q) = %q, want %q", tt.issue, tt.title, got, tt.want)
			}
			sh(t, env, "", "check-ref-format", "refs/heads/"+got)
		})
	}
}

var branchRe = regexp.MustCompile(`^roadmap/[0-9]+(-[a-z0-9]+)*$`)

func FuzzWorkBranch(f *testing.F) {
	f.Add(5, "Implement: the group runner")
	f.Add(0, "")
	f.Add(1, "a--b..c//d")
	f.Fuzz(func(t *testing.T, issue int, title string) {
		if issue < 0 {
			issue = -issue
		}
		if issue < 0 {
			return
		}
		got := WorkBranch(issue, title)
		if !branchRe.MatchString(got) {
			t.Fatalf("WorkBranch(%d, %q) = %q, not a roadmap/<n>-<slug> name", issue, title, got)
		}
		if _, slug, ok := strings.Cut(strings.TrimPrefix(got, "roadmap/"), "-"); ok && len(slug) > 40 {
			t.Fatalf("slug %q is longer than 40", slug)
		}
	})
}

func TestOpen(t *testing.T) {
	w := newWorld(t)
	dir := w.clone("a")
	write(t, dir, "sub/x.txt", "x")
	r, err := Open(context.Background(), filepath.Join(dir, "sub"), w.env)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := filepath.EvalSymlinks(dir)
	got, _ := filepath.EvalSymlinks(r.Dir)
	if got != want {
		t.Errorf("Dir = %q, want the top level %q", got, want)
	}
	_, err = Open(context.Background(), t.TempDir(), w.env)
	var ge *Error
	if !errors.As(err, &ge) || ge.ExitCode != 128 || !strings.Contains(ge.Stderr, "not a git repository") {
		t.Errorf("Open(non-repo) = %v, want an *Error with exit 128 and git's stderr", err)
	}
}

func TestErrorCarriesStderr(t *testing.T) {
	r := newWorld(t).open("a")
	_, err := r.RevParse(context.Background(), "no-such-rev")
	var ge *Error
	if !errors.As(err, &ge) {
		t.Fatalf("RevParse(no-such-rev) = %v, want an *Error", err)
	}
	if ge.ExitCode != 128 || ge.Stderr == "" || !strings.Contains(err.Error(), "resolve no-such-rev") {
		t.Errorf("error = %q (exit %d, stderr %q), want exit 128, stderr kept, the action named", err, ge.ExitCode, ge.Stderr)
	}
}

func TestContextCancel(t *testing.T) {
	r := newWorld(t).open("a")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Head(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Head with a cancelled context = %v, want context.Canceled", err)
	}
}

func TestCurrentBranch(t *testing.T) {
	r := newWorld(t).open("a")
	ctx := context.Background()
	if got, err := r.CurrentBranch(ctx); err != nil || got != "main" {
		t.Errorf("CurrentBranch = %q, %v; want main", got, err)
	}
	sh(t, r.Env, r.Dir, "checkout", "--quiet", "--detach")
	if got, err := r.CurrentBranch(ctx); err != nil || got != "" {
		t.Errorf("CurrentBranch detached = %q, %v; want empty", got, err)
	}
}

func TestStatus(t *testing.T) {
	r := newWorld(t).open("a")
	ctx := context.Background()
	if dirty, err := r.HasChanges(ctx); err != nil || dirty {
		t.Fatalf("HasChanges on a fresh clone = %v, %v", dirty, err)
	}
	write(t, r.Dir, "a.txt", "changed\n")
	write(t, r.Dir, "new dir/b.txt", "b\n")
	write(t, r.Dir, ".gitignore", "ignored.txt\n")
	write(t, r.Dir, "ignored.txt", "x\n")
	got, err := r.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []Change{{" M", "a.txt"}, {"??", ".gitignore"}, {"??", "new dir/b.txt"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Status (-want +got):\n%s", diff)
	}
	sh(t, r.Env, r.Dir, "mv", "a.txt", "renamed.txt")
	got, err = r.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want = []Change{{"RM", "renamed.txt"}, {"??", ".gitignore"}, {"??", "new dir/b.txt"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Status after a rename (-want +got):\n%s", diff)
	}
}

func trailers(t *testing.T, r *Repo, rev string) string {
	t.Helper()
	return sh(t, r.Env, r.Dir, "log", "-1", "--format=%(trailers)", rev)
}

func TestCommitGroupAndGroupCommits(t *testing.T) {
	r := newWorld(t).open("a")
	ctx := context.Background()
	if err := r.CheckoutBranch(ctx, "", "roadmap/5-x", "main"); err != nil {
		t.Fatal(err)
	}

	write(t, r.Dir, "one.go", "package one\n")
	g1, err := r.CommitGroup(ctx, 1, Message{Subject: "roadmap: group 1: Backoff", Body: "Tasks 1.1 and 1.2.", Issue: 5})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := trailers(t, r, g1), "Roadmap-Group: 1\nRoadmap-Issue: 5"; got != want {
		t.Errorf("group commit trailers = %q, want %q", got, want)
	}
	if msg := sh(t, r.Env, r.Dir, "log", "-1", "--format=%s%n%b", g1); !strings.HasPrefix(msg, "roadmap: group 1: Backoff\nTasks 1.1 and 1.2.") {
		t.Errorf("commit message = %q, want the subject and body", msg)
	}

	if sha, err := r.CommitWIP(ctx, Message{Subject: "wip"}); err != nil || sha != "" {
		t.Errorf("CommitWIP with nothing to commit = %q, %v; want no commit", sha, err)
	}
	write(t, r.Dir, "two.go", "package two // half done\n")
	wip, err := r.CommitWIP(ctx, Message{Subject: "roadmap: work in progress on group 2", Issue: 5})
	if err != nil || wip == "" {
		t.Fatalf("CommitWIP = %q, %v", wip, err)
	}
	if got, want := trailers(t, r, wip), "Roadmap-WIP: true\nRoadmap-Issue: 5"; got != want {
		t.Errorf("WIP trailers = %q, want %q", got, want)
	}
	if dirty, _ := r.HasChanges(ctx); dirty {
		t.Error("work tree still dirty after CommitWIP")
	}

	// A group whose change is already committed (in the WIP) still gets its
	// commit: the trailer is the mark.
	g2, err := r.CommitGroup(ctx, 2, Message{Subject: "roadmap: group 2"})
	if err != nil {
		t.Fatal(err)
	}
	if g2 == wip {
		t.Error("CommitGroup with no change made no commit")
	}

	// Someone else's commit with a malformed trailer is ignored.
	write(t, r.Dir, "three.go", "package three\n")
	sh(t, r.Env, r.Dir, "add", ".")
	sh(t, r.Env, r.Dir, "commit", "--quiet", "-m", "by hand\n\nRoadmap-Group: three")

	got, err := r.GroupCommits(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[int]string{1: g1, 2: g2}, got); diff != "" {
		t.Errorf("GroupCommits (-want +got):\n%s", diff)
	}

	// A group committed again (a repair after a reset) is found at its newest commit.
	write(t, r.Dir, "one.go", "package one // fixed\n")
	g1b, err := r.CommitGroup(ctx, 1, Message{Subject: "roadmap: group 1 again"})
	if err != nil {
		t.Fatal(err)
	}
	got, _ = r.GroupCommits(ctx, "main")
	if got[1] != g1b {
		t.Errorf("GroupCommits[1] = %s, want the newest commit %s", got[1], g1b)
	}

	if _, err := r.CommitGroup(ctx, 0, Message{Subject: "x"}); err == nil {
		t.Error("CommitGroup(0) succeeded, want an error")
	}
	if _, err := r.CommitGroup(ctx, 3, Message{}); err == nil {
		t.Error("CommitGroup with an empty subject succeeded, want an error")
	}
}

func TestCheckoutBranch(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	main := mustHead(t, w.open("probe"))

	t.Run("new branch at the start point", func(t *testing.T) {
		r := w.open("a")
		if err := r.CheckoutBranch(ctx, "origin", "roadmap/1-new", "main"); err != nil {
			t.Fatal(err)
		}
		if b, _ := r.CurrentBranch(ctx); b != "roadmap/1-new" {
			t.Errorf("branch = %q", b)
		}
		if h := mustHead(t, r); h != main {
			t.Errorf("head = %s, want main %s", h, main)
		}
	})

	t.Run("the remote's branch is the start", func(t *testing.T) {
		earlier := w.open("earlier-job")
		if err := earlier.CheckoutBranch(ctx, "origin", "roadmap/2-cont", "main"); err != nil {
			t.Fatal(err)
		}
		write(t, earlier.Dir, "g1.txt", "group 1\n")
		pushed, err := earlier.CommitGroup(ctx, 1, Message{Subject: "group 1"})
		if err != nil {
			t.Fatal(err)
		}
		if err := earlier.Push(ctx, "origin", "roadmap/2-cont"); err != nil {
			t.Fatal(err)
		}

		r := w.open("continuation")
		if err := r.CheckoutBranch(ctx, "origin", "roadmap/2-cont", "main"); err != nil {
			t.Fatal(err)
		}
		if h := mustHead(t, r); h != pushed {
			t.Errorf("head = %s, want the pushed group commit %s", h, pushed)
		}
		groups, _ := r.GroupCommits(ctx, "origin/main")
		if groups[1] != pushed {
			t.Errorf("GroupCommits = %v, want group 1 at %s", groups, pushed)
		}
	})

	t.Run("a local branch is reused", func(t *testing.T) {
		r := w.open("b")
		sh(t, r.Env, r.Dir, "checkout", "--quiet", "-b", "roadmap/3-local")
		write(t, r.Dir, "local.txt", "x\n")
		sh(t, r.Env, r.Dir, "add", ".")
		sh(t, r.Env, r.Dir, "commit", "--quiet", "-m", "local work")
		local := mustHead(t, r)
		sh(t, r.Env, r.Dir, "checkout", "--quiet", "main")
		if err := r.CheckoutBranch(ctx, "origin", "roadmap/3-local", "main"); err != nil {
			t.Fatal(err)
		}
		if h := mustHead(t, r); h != local {
			t.Errorf("head = %s, want the local branch's %s", h, local)
		}
	})

	t.Run("uncommitted work is carried", func(t *testing.T) {
		r := w.open("c")
		write(t, r.Dir, "draft.txt", "draft\n")
		if err := r.CheckoutBranch(ctx, "", "roadmap/4-carry", ""); err != nil {
			t.Fatal(err)
		}
		if dirty, _ := r.HasChanges(ctx); !dirty {
			t.Error("the untracked draft was lost")
		}
	})
}

func TestPushAndLsRemote(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	r := w.open("a")
	const branch = "roadmap/5-push"
	if sha, found, err := r.LsRemote(ctx, "origin", branch); err != nil || found || sha != "" {
		t.Fatalf("LsRemote before push = %q, %v, %v; want not found", sha, found, err)
	}
	// A branch whose name ends like ours must not be taken for it.
	other := w.open("other")
	if err := other.CheckoutBranch(ctx, "", "x/"+branch, ""); err != nil {
		t.Fatal(err)
	}
	if err := other.Push(ctx, "origin", "x/"+branch); err != nil {
		t.Fatal(err)
	}
	if _, found, _ := r.LsRemote(ctx, "origin", branch); found {
		t.Error("LsRemote matched x/" + branch)
	}

	if err := r.CheckoutBranch(ctx, "origin", branch, "main"); err != nil {
		t.Fatal(err)
	}
	write(t, r.Dir, "f.txt", "f\n")
	head, err := r.CommitGroup(ctx, 1, Message{Subject: "group 1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Push(ctx, "origin", branch); err != nil {
		t.Fatal(err)
	}
	sha, found, err := r.LsRemote(ctx, "origin", branch)
	if err != nil || !found || sha != head {
		t.Errorf("LsRemote after push = %q, %v, %v; want %s", sha, found, err, head)
	}
	// Pushing again is a no-op, not an error: a Job killed between push and
	// mark may push once more.
	if err := r.Push(ctx, "origin", branch); err != nil {
		t.Errorf("second push of the same head = %v", err)
	}
	if _, _, err := r.LsRemote(ctx, "no-such-remote", branch); err == nil {
		t.Error("LsRemote of an unknown remote succeeded")
	}
}

func TestPushNonFastForward(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	const branch = "roadmap/6-nff"
	a, b := w.open("a"), w.open("b")
	for _, r := range []*Repo{a, b} {
		if err := r.CheckoutBranch(ctx, "origin", branch, "main"); err != nil {
			t.Fatal(err)
		}
	}
	write(t, b.Dir, "b.txt", "from b\n")
	if _, err := b.CommitGroup(ctx, 1, Message{Subject: "b"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Push(ctx, "origin", branch); err != nil {
		t.Fatal(err)
	}

	write(t, a.Dir, "a2.txt", "from a\n")
	if _, err := a.CommitGroup(ctx, 2, Message{Subject: "a"}); err != nil {
		t.Fatal(err)
	}
	err := a.Push(ctx, "origin", branch)
	var rej *PushRejected
	if !errors.As(err, &rej) {
		t.Fatalf("push behind the remote = %v, want *PushRejected", err)
	}
	if !rej.NonFastForward || rej.Branch != branch || !strings.Contains(rej.Output, "rejected") {
		t.Errorf("PushRejected = %+v, want non-fast-forward with git's output", rej)
	}
	if c := failure.ClassifyError(fmt.Errorf("group 2: %w", err)); c != failure.Conflict || !rej.Moved() {
		t.Errorf("a push behind the remote is class %s (moved %v), want conflict: fetch, rebase, push again", c, rej.Moved())
	}

	// The way out: fetch, rebase, push.
	if _, err := a.Fetch(ctx, "origin", branch); err != nil {
		t.Fatal(err)
	}
	if err := a.Rebase(ctx, "origin/"+branch); err != nil {
		t.Fatal(err)
	}
	if err := a.Push(ctx, "origin", branch); err != nil {
		t.Fatalf("push after rebase = %v", err)
	}
	sha, _, _ := a.LsRemote(ctx, "origin", branch)
	if sha != mustHead(t, a) {
		t.Errorf("remote = %s, want a's head", sha)
	}
}

func TestPushHookRejected(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	hook := filepath.Join(w.remote, "hooks", "pre-receive")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\necho 'policy: pushes to roadmap/* are frozen' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := w.open("a")
	const branch = "roadmap/7-hook"
	if err := r.CheckoutBranch(ctx, "origin", branch, "main"); err != nil {
		t.Fatal(err)
	}
	write(t, r.Dir, "f.txt", "f\n")
	if _, err := r.CommitGroup(ctx, 1, Message{Subject: "g"}); err != nil {
		t.Fatal(err)
	}
	err := r.Push(ctx, "origin", branch)
	var rej *PushRejected
	if !errors.As(err, &rej) {
		t.Fatalf("push into a declining hook = %v, want *PushRejected", err)
	}
	if rej.NonFastForward || rej.Reason != "pre-receive hook declined" || !strings.Contains(rej.Output, "pushes to roadmap/* are frozen") {
		t.Errorf("PushRejected = %+v, want a hook rejection carrying the hook's message", rej)
	}
	if c := failure.ClassifyError(err); rej.Moved() || c == failure.Conflict {
		t.Errorf("a hook's refusal is class %s (moved %v): a rebase cannot lift a policy", c, rej.Moved())
	}
	if _, found, _ := r.LsRemote(ctx, "origin", branch); found {
		t.Error("the rejected branch exists on the remote")
	}
}

// TestPushRaced: the remote takes a push and then cannot move the branch,
// because another push moved it after git read it (two pushes at once; a
// pre-receive hook lets the other land while ours waits). git says "[remote
// rejected] (failed to update ref)": the branch moved, as for a
// non-fast-forward, and a fetch and rebase is the way out.
func TestPushRaced(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	const branch = "roadmap/8-race"
	other := w.open("other")
	if err := other.CheckoutBranch(ctx, "origin", branch, "main"); err != nil {
		t.Fatal(err)
	}
	write(t, other.Dir, "other.txt", "theirs\n")
	if _, err := other.CommitGroup(ctx, 1, Message{Subject: "theirs"}); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "raced")
	hook := fmt.Sprintf("#!/bin/sh\nif [ ! -e '%[1]s' ]; then touch '%[1]s'; env -i PATH=\"$PATH\" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null git -C '%[2]s' push -q origin HEAD:refs/heads/%[3]s >&2 || exit 1; fi\nexit 0\n",
		marker, other.Dir, branch)
	if err := os.WriteFile(filepath.Join(w.remote, "hooks", "pre-receive"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	r := w.open("a")
	if err := r.CheckoutBranch(ctx, "origin", branch, "main"); err != nil {
		t.Fatal(err)
	}
	write(t, r.Dir, "mine.txt", "mine\n")
	if _, err := r.CommitGroup(ctx, 1, Message{Subject: "mine"}); err != nil {
		t.Fatal(err)
	}
	err := r.Push(ctx, "origin", branch)
	var rej *PushRejected
	if !errors.As(err, &rej) {
		t.Fatalf("a push whose ref moved under it = %v, want *PushRejected", err)
	}
	if !rej.Raced || rej.NonFastForward || !strings.Contains(rej.Reason, "failed to update ref") {
		t.Errorf("PushRejected = %+v, want raced (failed to update ref)", rej)
	}
	if c := failure.ClassifyError(err); c != failure.Conflict {
		t.Errorf("a push the remote could not apply because the branch moved is class %s, want conflict", c)
	}
	if _, err := r.Fetch(ctx, "origin", branch); err != nil {
		t.Fatal(err)
	}
	if err := r.Rebase(ctx, "origin/"+branch); err != nil {
		t.Fatal(err)
	}
	if err := r.Push(ctx, "origin", branch); err != nil {
		t.Fatalf("push after the rebase = %v", err)
	}
}

// conflicting returns a clone on branch whose a.txt line two differs from the
// remote's branch, after a fetch.
func conflicting(t *testing.T, w *world, branch string) *Repo {
	ctx := context.Background()
	theirs := w.open("theirs")
	if err := theirs.CheckoutBranch(ctx, "", branch, "main"); err != nil {
		t.Fatal(err)
	}
	write(t, theirs.Dir, "a.txt", "one\nTHEIRS\nthree\n")
	write(t, theirs.Dir, "only-theirs.txt", "t\n")
	if _, err := theirs.CommitGroup(ctx, 1, Message{Subject: "theirs"}); err != nil {
		t.Fatal(err)
	}
	if err := theirs.Push(ctx, "origin", branch); err != nil {
		t.Fatal(err)
	}
	ours := w.open("ours")
	if err := ours.CheckoutBranch(ctx, "", branch, "main"); err != nil {
		t.Fatal(err)
	}
	write(t, ours.Dir, "a.txt", "one\nOURS\nthree\n")
	if _, err := ours.CommitGroup(ctx, 1, Message{Subject: "ours"}); err != nil {
		t.Fatal(err)
	}
	if _, err := ours.Fetch(ctx, "origin", branch); err != nil {
		t.Fatal(err)
	}
	return ours
}

func TestConflict(t *testing.T) {
	ctx := context.Background()
	const branch = "roadmap/8-conflict"
	ops := []struct {
		name   string
		run    func(r *Repo) error
		abort  func(r *Repo) error
		resume func(r *Repo) error
	}{
		{"rebase",
			func(r *Repo) error { return r.Rebase(ctx, "origin/"+branch) },
			func(r *Repo) error { return r.AbortRebase(ctx) },
			func(r *Repo) error { return r.ContinueRebase(ctx) }},
		{"merge",
			func(r *Repo) error { return r.Merge(ctx, "origin/"+branch) },
			func(r *Repo) error { return r.AbortMerge(ctx) },
			func(r *Repo) error { return r.ContinueMerge(ctx) }},
	}
	for _, op := range ops {
		t.Run(op.name+" abort", func(t *testing.T) {
			r := conflicting(t, newWorld(t), branch)
			before := mustHead(t, r)
			err := op.run(r)
			var c *Conflict
			if !errors.As(err, &c) {
				t.Fatalf("%s = %v, want *Conflict", op.name, err)
			}
			if diff := cmp.Diff([]string{"a.txt"}, c.Files); diff != "" {
				t.Errorf("Conflict.Files (-want +got):\n%s", diff)
			}
			files, err := r.ConflictFiles(ctx)
			if err != nil || !cmp.Equal(files, []string{"a.txt"}) {
				t.Errorf("ConflictFiles = %v, %v; want [a.txt]", files, err)
			}
			if err := op.abort(r); err != nil {
				t.Fatal(err)
			}
			if h := mustHead(t, r); h != before {
				t.Errorf("head after abort = %s, want %s", h, before)
			}
			if dirty, _ := r.HasChanges(ctx); dirty {
				t.Error("work tree dirty after abort")
			}
			if files, _ := r.ConflictFiles(ctx); len(files) != 0 {
				t.Errorf("ConflictFiles after abort = %v", files)
			}
		})
		t.Run(op.name+" resolve", func(t *testing.T) {
			r := conflicting(t, newWorld(t), branch)
			if err := op.run(r); err == nil {
				t.Fatal("no conflict")
			}
			write(t, r.Dir, "a.txt", "one\nBOTH\nthree\n")
			if err := op.resume(r); err != nil {
				t.Fatalf("continue %s: %v", op.name, err)
			}
			if ok, err := r.IsAncestor(ctx, "origin/"+branch, "HEAD"); err != nil || !ok {
				t.Errorf("the remote branch is not in HEAD after the %s: %v, %v", op.name, ok, err)
			}
			if err := r.Push(ctx, "origin", branch); err != nil {
				t.Errorf("push after resolving: %v", err)
			}
		})
	}
}

func TestChangedFilesAndDiff(t *testing.T) {
	ctx := context.Background()
	r := newWorld(t).open("a")
	if err := r.CheckoutBranch(ctx, "", "roadmap/9-diff", "main"); err != nil {
		t.Fatal(err)
	}
	write(t, r.Dir, "committed.txt", "c\n")
	if _, err := r.CommitGroup(ctx, 1, Message{Subject: "g1"}); err != nil {
		t.Fatal(err)
	}
	write(t, r.Dir, "a.txt", "one\ntwo changed\nthree\n")
	write(t, r.Dir, "z-untracked.txt", "u\n")
	got, err := r.ChangedFiles(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a.txt", "committed.txt", "z-untracked.txt"}, got); diff != "" {
		t.Errorf("ChangedFiles (-want +got):\n%s", diff)
	}
	patch, err := r.Diff(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"+two changed", "-two", "+++ b/committed.txt"} {
		if !strings.Contains(patch, want) {
			t.Errorf("Diff lacks %q:\n%s", want, patch)
		}
	}
	mainSHA, err := r.RevParse(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	if base, err := r.MergeBase(ctx, "main", "HEAD"); err != nil || base != mainSHA {
		t.Errorf("MergeBase = %q, %v; want main %s", base, err, mainSHA)
	}
}

// TestNoTerminalPrompt: a remote that asks for credentials makes git fail at
// once instead of waiting on a terminal.
func TestNoTerminalPrompt(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer srv.Close()
	r := newWorld(t).open("a")
	_, _, err := r.LsRemote(context.Background(), srv.URL+"/repo.git", "main")
	var ge *Error
	if !errors.As(err, &ge) {
		t.Fatalf("LsRemote against a 401 = %v, want an *Error", err)
	}
	if strings.Contains(ge.Stderr, "remote helper") {
		t.Skipf("git has no http transport here: %s", ge.Stderr)
	}
	if !strings.Contains(ge.Stderr, "terminal prompts disabled") {
		t.Errorf("stderr = %q, want git to refuse to prompt", ge.Stderr)
	}
}

func TestEnsureIdentity(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	bare := []string{"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	init := exec.Command("git", "init", "-q", "-b", "main", dir)
	init.Env = bare
	if out, err := init.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	r, err := Open(ctx, dir, bare)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.EnsureIdentity(ctx); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644)
	if _, err := r.CommitGroup(ctx, 1, Message{Subject: "group 1"}); err != nil {
		t.Fatalf("commit with no configured identity: %v", err)
	}
	author, _ := r.output(ctx, "log", "-1", "--format=%an <%ae>")
	if want := DefaultName + " <" + DefaultEmail + ">"; author != want {
		t.Errorf("author = %q, want %q", author, want)
	}

	// A configured identity is kept.
	cfg := exec.Command("git", "config", "user.email", "bot@example.invalid")
	cfg.Dir, cfg.Env = dir, bare
	if out, err := cfg.CombinedOutput(); err != nil {
		t.Fatalf("git config: %v\n%s", err, out)
	}
	r2, _ := Open(ctx, dir, bare)
	if err := r2.EnsureIdentity(ctx); err != nil {
		t.Fatal(err)
	}
	for _, kv := range r2.Env {
		if strings.HasPrefix(kv, "GIT_AUTHOR_EMAIL=") {
			t.Errorf("EnsureIdentity overrode the configured email with %s", kv)
		}
	}
}

// TestReadAtBounded: ReadAt reads what a commit holds, says found false for
// a path it does not hold, and refuses a blob over its bound.
func TestReadAtBounded(t *testing.T) {
	w := newWorld(t)
	seed := w.clone("big")
	write(t, seed, "big.txt", strings.Repeat("x", maxConfigBlob+1))
	sh(t, w.env, seed, "add", ".")
	sh(t, w.env, seed, "commit", "--quiet", "-m", "big")
	calls := observeGit(t)
	r, err := Open(context.Background(), seed, w.env)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if data, found, err := r.ReadAt(ctx, "HEAD", "a.txt"); err != nil || !found || string(data) != "one\ntwo\nthree\n" {
		t.Errorf("ReadAt(a.txt) = %q, %v, %v", data, found, err)
	}
	if _, found, err := r.ReadAt(ctx, "HEAD", "missing.txt"); err != nil || found {
		t.Errorf("ReadAt(missing.txt) found=%v err=%v, want not found", found, err)
	}
	if _, _, err := r.ReadAt(ctx, "HEAD", "big.txt"); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("ReadAt(big.txt) err = %v, want the bound named", err)
	}
	for _, c := range calls() {
		if slices.Contains(c.args, "blob") && slices.Contains(c.args, "HEAD:big.txt") {
			t.Errorf("the blob over the bound was read: git %q", c.args)
		}
	}
}
