package git

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/failure"
)

// nested is a repository the model made inside the work tree, whose own
// config and hooks leave a mark when anything runs them.
type nested struct {
	t     *testing.T
	dir   string   // its work tree
	marks []string // one per planted program
	n     int
}

// nest makes the repository name under dir as the model would (`git init`,
// then a commit through its own git), with a clean filter set by its
// .gitattributes and its config, an fsmonitor, a pager, an sshCommand and
// hooks, each a script that touches its mark. The marks its own commit left
// are removed.
func nest(t *testing.T, env []string, dir, name string) *nested {
	t.Helper()
	n := &nested{t: t, dir: filepath.Join(dir, name)}
	scripts := t.TempDir()
	sh(t, env, dir, "init", "--quiet", name)
	for _, kv := range [][2]string{
		{"filter.x.clean", "clean"},
		{"filter.x.smudge", "smudge"},
		{"core.fsmonitor", "fsmonitor"},
		{"core.pager", "pager"},
		{"core.sshCommand", "ssh"},
	} {
		n.marks = append(n.marks, plant(t, filepath.Join(scripts, kv[1])))
		sh(t, env, n.dir, "config", kv[0], filepath.Join(scripts, kv[1]))
	}
	sh(t, env, n.dir, "config", "remote.origin.url", "ssh://example.invalid/x.git")
	for _, hook := range []string{"pre-commit", "post-commit", "pre-push", "post-checkout", "post-merge", "reference-transaction", "post-index-change"} {
		n.marks = append(n.marks, plant(t, filepath.Join(n.dir, ".git", "hooks", hook)))
	}
	write(t, n.dir, ".gitattributes", "* filter=x\n")
	write(t, n.dir, "f.txt", "nested\n")
	sh(t, env, n.dir, "add", ".")
	sh(t, env, n.dir, "commit", "--quiet", "-m", "nested")
	if !n.ran() {
		t.Fatal("the nested repository's own commit ran none of its programs: the test plants nothing")
	}
	n.clear()
	return n
}

// stir gives the nested repository's file a new time and the same content:
// git then hashes it again, through the clean filter, on any status there.
func (n *nested) stir() {
	n.t.Helper()
	n.n++
	at := time.Unix(1_600_000_000+int64(n.n)*1000, 0)
	if err := os.Chtimes(filepath.Join(n.dir, "f.txt"), at, at); err != nil {
		n.t.Fatal(err)
	}
}

func (n *nested) ran() bool {
	for _, m := range n.marks {
		if _, err := os.Stat(m); err == nil {
			return true
		}
	}
	return false
}

func (n *nested) which() string {
	var ran []string
	for _, m := range n.marks {
		if _, err := os.Stat(m); err == nil {
			ran = append(ran, strings.TrimSuffix(filepath.Base(m), ".ran"))
		}
	}
	return strings.Join(ran, ", ")
}

func (n *nested) clear() {
	for _, m := range n.marks {
		os.Remove(m)
	}
}

type op struct {
	name string
	do   func() error
}

// each runs every op after stirring the nested repository, and fails the
// test naming the op after which one of its programs ran.
func (n *nested) each(ops []op) {
	n.t.Helper()
	for _, o := range ops {
		n.stir()
		err := o.do()
		if n.ran() {
			n.t.Errorf("%s ran the nested repository's %s as roadmap", o.name, n.which())
			n.clear()
		}
		if err != nil {
			n.t.Errorf("%s: %v", o.name, err)
		}
	}
}

// refused checks err is the refusal of the nested repository at path, and
// that it left HEAD at head and nothing staged.
func refused(t *testing.T, r *Repo, head, path string, gitlink bool, err error) error {
	t.Helper()
	var nr *NestedRepository
	if !errors.As(err, &nr) || nr.Path != path || nr.Gitlink != gitlink {
		return fmt.Errorf("err = %v, want a *NestedRepository naming %q (gitlink %v)", err, path, gitlink)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("%q", path)) {
		return fmt.Errorf("the refusal %q does not name %q", err, path)
	}
	if got := mustHead(t, r); got != head {
		return fmt.Errorf("HEAD moved to %s", got)
	}
	if staged := sh(t, r.Env, r.Dir, "diff", "--cached", "--name-only", "--ignore-submodules=none"); staged != "" && !gitlink {
		return fmt.Errorf("the refused commit staged %q", staged)
	}
	return nil
}

// TestNestedRepositoryInert: the model makes sub/.git with a clean filter,
// an fsmonitor, a pager and hooks in that repository's own config and
// commits a file through it. roadmap's git runs none of them on any of the
// calls a Job makes, and refuses to commit the repository, so it never
// becomes a gitlink that every later status would consult. A gitlink that is
// already in history (a submodule someone committed) is never consulted
// either, even when its .gitmodules says `ignore = none`.
func TestNestedRepositoryInert(t *testing.T) {
	ctx := context.Background()

	t.Run("planted by the model", func(t *testing.T) {
		w := newWorld(t)
		r := w.open("work")
		base := mustHead(t, r)
		sub := nest(t, w.env, r.Dir, "sub")
		write(t, r.Dir, "a.txt", "changed\n")
		m := Message{Subject: "roadmap: 1. x", Issue: 1}
		sub.each([]op{
			{"HasChanges", func() error {
				dirty, err := r.HasChanges(ctx)
				if err == nil && !dirty {
					err = errors.New("HasChanges = false with a.txt changed")
				}
				return err
			}},
			{"Status", func() error { _, err := r.Status(ctx); return err }},
			{"Diff", func() error { _, err := r.Diff(ctx, base); return err }},
			{"ChangedFiles", func() error { _, err := r.ChangedFiles(ctx, base); return err }},
			{"WorkTreeTree", func() error { _, err := r.WorkTreeTree(ctx); return err }},
			{"CommitGroup", func() error { _, err := r.CommitGroup(ctx, 1, m); return refused(t, r, base, "sub/.git", false, err) }},
			{"CommitWIP", func() error { _, err := r.CommitWIP(ctx, m); return refused(t, r, base, "sub/.git", false, err) }},
			{"CommitArchive", func() error {
				_, err := r.CommitArchive(ctx, "c", m)
				return refused(t, r, base, "sub/.git", false, err)
			}},
			{"CommitPlanRound", func() error {
				_, err := r.CommitPlanRound(ctx, 1, m)
				return refused(t, r, base, "sub/.git", false, err)
			}},
			{"Push", func() error { return r.Push(ctx, "origin", "main") }},
			{"GroupCommits", func() error { _, err := r.GroupCommits(ctx, base); return err }},
			{"Status again", func() error { _, err := r.Status(ctx); return err }},
		})
		if got := sh(t, w.env, "", "--git-dir", w.remote, "rev-parse", "main"); got != base {
			t.Errorf("the remote's main moved to %s", got)
		}
	})

	t.Run("a gitlink already in history", func(t *testing.T) {
		w := newWorld(t)
		r := w.open("work")
		sub := nest(t, w.env, r.Dir, "sub")
		// Someone else committed it as a submodule, and said its changes
		// matter, which wins over config (not over the command line).
		write(t, r.Dir, ".gitmodules", "[submodule \"sub\"]\n\tpath = sub\n\turl = ./sub\n\tignore = none\n")
		sh(t, w.env, r.Dir, "add", ".gitmodules", "sub")
		sh(t, w.env, r.Dir, "commit", "--quiet", "-m", "add a submodule")
		sh(t, w.env, r.Dir, "push", "--quiet", "origin", "main")
		sub.clear()
		base := mustHead(t, r)
		link := sh(t, w.env, r.Dir, "rev-parse", "HEAD:sub")
		write(t, r.Dir, "a.txt", "changed\n")
		m := Message{Subject: "roadmap: 1. x", Issue: 1}
		sub.each([]op{
			{"HasChanges", func() error {
				dirty, err := r.HasChanges(ctx)
				if err == nil && !dirty {
					err = errors.New("HasChanges = false with a.txt changed")
				}
				return err
			}},
			{"Status", func() error {
				changes, err := r.Status(ctx)
				for _, c := range changes {
					if strings.HasPrefix(c.Path, "sub") {
						return fmt.Errorf("Status shows %q %s", c.Path, c.XY)
					}
				}
				return err
			}},
			{"Diff", func() error {
				patch, err := r.Diff(ctx, base)
				if strings.Contains(patch, "Subproject") {
					return fmt.Errorf("Diff shows the submodule:\n%s", patch)
				}
				return err
			}},
			{"ChangedFiles", func() error { _, err := r.ChangedFiles(ctx, base); return err }},
			{"WorkTreeTree", func() error { _, err := r.WorkTreeTree(ctx); return err }},
			{"CommitGroup", func() error { _, err := r.CommitGroup(ctx, 1, m); return err }},
			{"Push", func() error { return r.Push(ctx, "origin", "main") }},
			{"GroupCommits", func() error {
				groups, err := r.GroupCommits(ctx, base)
				if err == nil && len(groups) != 1 {
					err = fmt.Errorf("GroupCommits = %v, want group 1", groups)
				}
				return err
			}},
			{"CommitWIP", func() error {
				write(t, r.Dir, "b.txt", "wip\n")
				_, err := r.CommitWIP(ctx, m)
				return err
			}},
			{"CheckoutBranch", func() error { return r.CheckoutBranch(ctx, "origin", "roadmap/1-x", "HEAD") }},
			{"Fetch", func() error { _, err := r.Fetch(ctx, "origin", "main"); return err }},
			{"Rebase", func() error { return r.Rebase(ctx, "origin/main") }},
			{"Status again", func() error { _, err := r.Status(ctx); return err }},
		})
		// The model moves the submodule on: roadmap leaves the gitlink as
		// HEAD has it rather than ask the repository about it.
		sh(t, w.env, sub.dir, "commit", "--quiet", "--allow-empty", "-m", "moved")
		sub.clear()
		sub.each([]op{{"CommitGroup after the submodule moved", func() error {
			write(t, r.Dir, "c.txt", "c\n")
			_, err := r.CommitGroup(ctx, 2, m)
			return err
		}}})
		if got := sh(t, w.env, r.Dir, "rev-parse", "HEAD:sub"); got != link {
			t.Errorf("HEAD's gitlink sub = %s, want %s as it was: roadmap never commits a gitlink it was not asked to", got, link)
		}
	})
}

// TestNestedRepositoryRefused: where a nested repository can hide, and what
// only looks like one. The walk follows no symlink and skips ignored
// directories; a gitlink staged without any .git (as the model could under
// `isolation: none`) is refused even when .gitmodules says to ignore it.
func TestNestedRepositoryRefused(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		plant   func(t *testing.T, env []string, dir string)
		want    string // the refusal's path; "" when the commit goes through
		gitlink bool
	}{
		{name: "deep", want: "a/b/c/.git", plant: func(t *testing.T, env []string, dir string) {
			write(t, dir, "a/b/c/x.txt", "x\n")
			sh(t, env, dir, "init", "--quiet", "a/b/c")
		}},
		{name: "in a tracked directory", want: "pkg/.git", plant: func(t *testing.T, env []string, dir string) {
			write(t, dir, "pkg/x.txt", "x\n")
			sh(t, env, dir, "add", "pkg")
			sh(t, env, dir, "commit", "--quiet", "-m", "pkg")
			sh(t, env, dir, "init", "--quiet", "pkg")
		}},
		{name: "a .git file", want: "x/.git", plant: func(t *testing.T, env []string, dir string) {
			other := t.TempDir()
			sh(t, env, other, "init", "--quiet", ".")
			write(t, dir, "x/.git", "gitdir: "+filepath.Join(other, ".git")+"\n")
		}},
		{name: "a symlink named .git", want: "s/.git", plant: func(t *testing.T, env []string, dir string) {
			other := t.TempDir()
			sh(t, env, other, "init", "--quiet", ".")
			os.MkdirAll(filepath.Join(dir, "s"), 0o755)
			if err := os.Symlink(filepath.Join(other, ".git"), filepath.Join(dir, "s", ".git")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "an empty .git directory", want: "e/.git", plant: func(t *testing.T, env []string, dir string) {
			os.MkdirAll(filepath.Join(dir, "e", ".git"), 0o755)
			write(t, dir, "e/x.txt", "x\n")
		}},
		{name: "upper case", want: "u/.GIT", plant: func(t *testing.T, env []string, dir string) {
			write(t, dir, "u/.GIT/HEAD", "ref: refs/heads/main\n")
		}},
		{name: "a gitlink staged without .git", want: "lib", gitlink: true, plant: func(t *testing.T, env []string, dir string) {
			head := sh(t, env, dir, "rev-parse", "HEAD")
			write(t, dir, ".gitmodules", "[submodule \"lib\"]\n\tpath = lib\n\turl = ./lib\n\tignore = all\n")
			sh(t, env, dir, "update-index", "--add", "--cacheinfo", "160000,"+head+",lib")
		}},
		{name: "a symlink to a repository outside", plant: func(t *testing.T, env []string, dir string) {
			other := t.TempDir()
			sh(t, env, other, "init", "--quiet", ".")
			if err := os.Symlink(other, filepath.Join(dir, "ext")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "in an ignored directory", plant: func(t *testing.T, env []string, dir string) {
			write(t, dir, ".gitignore", ".terraform/\n")
			write(t, dir, ".terraform/modules/m/main.tf", "x\n")
			sh(t, env, dir, "init", "--quiet", ".terraform/modules/m")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			r := w.open("work")
			tc.plant(t, w.env, r.Dir)
			head := mustHead(t, r)
			write(t, r.Dir, "a.txt", "changed\n")
			_, err := r.CommitGroup(ctx, 1, Message{Subject: "roadmap: 1. x"})
			if tc.want != "" {
				if err := refused(t, r, head, tc.want, tc.gitlink, err); err != nil {
					t.Error(err)
				}
				return
			}
			if err != nil {
				t.Fatalf("CommitGroup: %v", err)
			}
			if links := sh(t, w.env, r.Dir, "ls-tree", "-r", "HEAD"); strings.Contains(links, "160000") {
				t.Errorf("the commit holds a gitlink:\n%s", links)
			}
		})
	}
}

// TestAddSubmodule: a group the plan says adds a submodule commits the
// nested repository as a gitlink, without running anything of it; the next
// commits leave it as it is.
func TestAddSubmodule(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	r := w.open("work")
	sub := nest(t, w.env, r.Dir, "sub")
	want := sh(t, w.env, sub.dir, "rev-parse", "HEAD")
	sub.each([]op{
		{"CommitGroup with AddSubmodule", func() error {
			_, err := r.CommitGroup(ctx, 1, Message{Subject: "roadmap: 1. add sub", AddSubmodule: true})
			return err
		}},
		{"CommitWIP", func() error {
			write(t, r.Dir, "a.txt", "changed\n")
			_, err := r.CommitWIP(ctx, Message{Subject: "wip"})
			return err
		}},
		{"Status", func() error { _, err := r.Status(ctx); return err }},
	})
	if got := sh(t, w.env, r.Dir, "ls-tree", "HEAD", "sub"); got != "160000 commit "+want+"\tsub" {
		t.Errorf("HEAD holds %q, want the gitlink sub at %s", got, want)
	}
}

// TestNestedRepositoryAppearsWhileStaging: a repository that appears after
// the walk and before `git add` (a process the model left behind) is caught
// once staged: the commit is refused and the index given back as HEAD has
// it.
func TestNestedRepositoryAppearsWhileStaging(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	r := w.open("work")
	head := mustHead(t, r)
	write(t, r.Dir, "a.txt", "changed\n")
	var sub *nested
	r.Hook = func(args []string, done bool, err error) {
		if !done && args[0] == "add" && sub == nil {
			sub = nest(t, w.env, r.Dir, "late")
		}
	}
	_, err := r.CommitGroup(ctx, 1, Message{Subject: "roadmap: 1. x"})
	r.Hook = nil
	if sub == nil {
		t.Fatal("the commit ran no git add")
	}
	if err := refused(t, r, head, "late", true, err); err != nil {
		t.Error(err)
	}
	if staged := sh(t, w.env, r.Dir, "diff", "--cached", "--name-only", "--ignore-submodules=none"); staged != "" {
		t.Errorf("the refused commit left %q staged", staged)
	}
	if sub.ran() {
		t.Errorf("staging ran the nested repository's %s", sub.which())
	}
}

// TestDiscardOutsideRemovesNestedRepository: stage keeps only the plan's
// files, so a repository the planner nested elsewhere is removed like any
// other file there (one `git clean -f` skips it, and the round's commit would
// then refuse it); one inside the plan is refused by the commit.
func TestDiscardOutsideRemovesNestedRepository(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	r := w.open("work")
	sub := nest(t, w.env, r.Dir, "elsewhere")
	write(t, r.Dir, "plan/tasks.md", "## 1. x\n")
	var discarded []string
	sub.each([]op{{"DiscardOutside", func() error {
		var err error
		discarded, err = r.DiscardOutside(ctx, "plan")
		return err
	}}})
	if len(discarded) != 1 || discarded[0] != "elsewhere/" {
		t.Errorf("discarded %q, want [elsewhere/]", discarded)
	}
	if _, err := os.Lstat(sub.dir); !os.IsNotExist(err) {
		t.Errorf("the nested repository is still there (%v)", err)
	}
	if _, err := r.CommitPlanRound(ctx, 1, Message{Subject: "stage: plan"}); err != nil {
		t.Fatalf("CommitPlanRound: %v", err)
	}
	inside := nest(t, w.env, r.Dir, "plan/inside")
	if _, err := r.DiscardOutside(ctx, "plan"); err != nil {
		t.Fatal(err)
	}
	head := mustHead(t, r)
	_, err := r.CommitPlanRound(ctx, 2, Message{Subject: "stage: plan"})
	if err := refused(t, r, head, "plan/inside/.git", false, err); err != nil {
		t.Error(err)
	}
	if inside.ran() {
		t.Errorf("stage's git ran the nested repository's %s", inside.which())
	}
}

// TestNestedRepositoryClass: the refusal stops the item (unknown, all state
// kept) whatever the model named its repository: the class is the error's,
// not read from the path's text.
func TestNestedRepositoryClass(t *testing.T) {
	for _, path := range []string{"sub/.git", "HTTP 503 Service Unavailable/.git", "fatal: Authentication failed/.git", "x\n::error::y/.git"} {
		err := fmt.Errorf("commit group 1: %w", &NestedRepository{Path: path})
		if got := failure.ClassifyError(err); got != failure.Unknown {
			t.Errorf("ClassifyError(%q) = %s, want %s", err, got, failure.Unknown)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("the refusal %q is more than one line", err)
		}
	}
}

// TestNestedRepositoryInResolution: a conflict's resolution is committed by
// git's rebase or merge, and refused like any commit when the work tree
// holds a nested repository.
func TestNestedRepositoryInResolution(t *testing.T) {
	ctx := context.Background()
	const branch = "roadmap/8-conflict"
	for _, tc := range []struct {
		name   string
		run    func(r *Repo) error
		resume func(r *Repo) error
	}{
		{"rebase", func(r *Repo) error { return r.Rebase(ctx, "origin/"+branch) }, func(r *Repo) error { return r.ContinueRebase(ctx) }},
		{"merge", func(r *Repo) error { return r.Merge(ctx, "origin/"+branch) }, func(r *Repo) error { return r.ContinueMerge(ctx) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			r := conflicting(t, w, branch)
			var c *Conflict
			if err := tc.run(r); !errors.As(err, &c) {
				t.Fatalf("%s = %v, want a *Conflict", tc.name, err)
			}
			write(t, r.Dir, "a.txt", "one\nBOTH\nthree\n")
			sub := nest(t, w.env, r.Dir, "sub")
			sub.each([]op{
				{"ConflictFiles", func() error { _, err := r.ConflictFiles(ctx); return err }},
				{"continue", func() error {
					var nr *NestedRepository
					if err := tc.resume(r); !errors.As(err, &nr) || nr.Path != "sub/.git" {
						return fmt.Errorf("continue %s = %v, want a *NestedRepository naming sub/.git", tc.name, err)
					}
					return nil
				}},
			})
		})
	}
}
