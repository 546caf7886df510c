package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"syscall"
)

// RunDir is the folder of the workspace that holds roadmap's own files in the
// reusable workflows: the checkout of roadmap at the commit the caller pinned
// (RunDir/roadmap, whose actions and scripts the job's later steps run) and
// the copy of the project's setup action (RunDir/setup, whose post steps run
// after roadmap). It is never handed to the boundary's user: it stays the
// runner's, with no write bit for others, and the top folder's sticky bit
// keeps the boundary from renaming or replacing it (docs/isolation.md, "After
// roadmap exits").
const RunDir = ".roadmap-run"

// maxScan bounds the walks that look for repositories below the work tree's
// top. A tree with more entries than this is not searched to the end: the
// workflows' after-agent step, which empties the work tree, is the guarantee
// then, and Close says the search was cut short.
const maxScan = 2_000_000

// gitEntry identifies one `.git` found below the work tree's top: the same
// path with another file behind it is another entry.
type gitEntry struct{ dev, ino uint64 }

// nestedGits lists every entry named .git below root's top (the top's own
// .git is not below it), by slash path, without following a symlink. The walk
// is relative to an os.Root: a folder swapped for a symlink mid-walk cannot
// lead it out of root.
func nestedGits(root string) (map[string]gitEntry, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	found := map[string]gitEntry{}
	seen := 0
	err = fs.WalkDir(r.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == "." {
				return err
			}
			return nil // an entry removed or unreadable mid-walk: nothing to find in it
		}
		if seen++; seen > maxScan {
			return fmt.Errorf("more than %d entries below %s: the search for planted repositories stopped there", maxScan, root)
		}
		if p == ".git" {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil // a linked worktree's .git file: SkipDir would skip the rest of the top
		}
		if d.Name() != ".git" {
			return nil
		}
		var e gitEntry
		if fi, err := r.Lstat(p); err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				e = gitEntry{dev: uint64(st.Dev), ino: st.Ino}
			}
		}
		found[p] = e
		if d.IsDir() {
			return fs.SkipDir // what is inside a repository is the repository's
		}
		return nil
	})
	return found, err
}

// removePlanted removes every .git below root's top that is not one of
// before (the same path and the same file as when the boundary opened): a
// repository the boundary's commands made, in an uninitialised submodule's
// folder, in RunDir or anywhere, whose configuration (core.fsmonitor, hooks)
// a later step's git would obey as the runner, with the job's token. It
// returns the paths it removed, slash-separated and relative to root.
func removePlanted(root string, before map[string]gitEntry) ([]string, error) {
	now, scanErr := nestedGits(root)
	var planted []string
	for p, e := range now {
		if b, ok := before[p]; ok && b == e {
			continue
		}
		planted = append(planted, p)
	}
	if len(planted) == 0 {
		return nil, scanErr
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, errors.Join(scanErr, err)
	}
	defer r.Close()
	var errs []error
	removed := planted[:0]
	for _, p := range planted {
		if err := r.RemoveAll(p); err != nil {
			errs = append(errs, fmt.Errorf("remove the planted repository %s: %w", path.Clean(p), err))
			continue
		}
		removed = append(removed, p)
	}
	sort.Strings(removed)
	return removed, errors.Join(append([]error{scanErr}, errs...)...)
}
