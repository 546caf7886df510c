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

// TestNestedRepositoryInert: a repository nested in the work tree, with a
// clean filter, an fsmonitor, a pager and hooks in its own config, and
// already in history as a gitlink (a submodule someone committed), is never
// consulted by the calls a Job makes, even when .gitmodules says
// `ignore = none`.
func TestNestedRepositoryInert(t *testing.T) {
	ctx := context.Background()

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
