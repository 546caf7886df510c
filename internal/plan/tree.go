package plan

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"

	"github.com/roadmap-dev/roadmap/internal/nofollow"
)

// The work tree a plan is read from is hostile input: the model writes it,
// with tool commands that may plant a symlink, and roadmap reads and writes
// it as root. So the package opens every file of it through nofollow, inside
// one os.Root on the work tree, and follows no symlink under openspec/:
// Validate and Archive refuse a tree with one anywhere there
// (RefuseSymlinks), and a read, write or move that meets one on its path
// (one swapped in since, say) is refused too.

// SymlinkError is a symlink under openspec/, which roadmap does not follow:
// not a fault of the plan's text but of the tree, so it is an error, never a
// finding.
type SymlinkError struct {
	// Path is the symlink, slash-separated, relative to the work tree.
	Path string
}

func (e *SymlinkError) Error() string {
	return fmt.Sprintf("%s is a symlink: roadmap follows no symlink under openspec/, where one leads out of the work tree or to another file of it; replace it with the file or directory itself", e.Path)
}

// tree is a work tree opened once, for the plan's files.
type tree struct{ root *os.Root }

func openTree(dir string) (*tree, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &tree{root: r}, nil
}

func (t *tree) close() { t.root.Close() }

// linkErr turns nofollow's refusal into the package's.
func linkErr(err error) error {
	var se *nofollow.SymlinkError
	if errors.As(err, &se) {
		return &SymlinkError{Path: se.Path}
	}
	return err
}

func (t *tree) readFile(rel string) ([]byte, error) {
	data, err := nofollow.ReadFile(t.root, rel)
	return data, linkErr(err)
}

func (t *tree) writeFile(rel string, data []byte) error {
	return linkErr(nofollow.WriteFile(t.root, rel, data, 0o644))
}

func (t *tree) mkdirAll(rel string) error {
	return linkErr(nofollow.MkdirAll(t.root, rel, 0o755))
}

func (t *tree) rename(oldRel, newRel string) error {
	return linkErr(nofollow.Rename(t.root, oldRel, newRel))
}

// remove deletes the file or empty directory rel, reached through no
// symlink; a symlink at rel itself is removed, never followed.
func (t *tree) remove(rel string) error {
	d, err := nofollow.OpenDir(t.root, path.Dir(rel))
	if err != nil {
		return linkErr(err)
	}
	defer d.Close()
	return d.Remove(path.Base(rel))
}

// stat describes rel, which may not be a symlink either.
func (t *tree) stat(rel string) (fs.FileInfo, error) {
	fi, err := nofollow.Lstat(t.root, rel)
	if err != nil {
		return nil, linkErr(err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, &SymlinkError{Path: rel}
	}
	return fi, nil
}

// readDir lists rel, sorted; a directory holding a symlink is refused, so
// no walk of the plan passes one by.
func (t *tree) readDir(rel string) ([]fs.DirEntry, error) {
	entries, err := nofollow.ReadDir(t.root, rel)
	if err != nil {
		return nil, linkErr(err)
	}
	for _, e := range entries {
		if e.Type()&fs.ModeSymlink != 0 {
			return nil, &SymlinkError{Path: path.Join(rel, e.Name())}
		}
	}
	return entries, nil
}

// refuseSymlinks walks rel and returns the first symlink there (rel itself
// included) as a *SymlinkError; nil when there is none or rel does not
// exist.
func (t *tree) refuseSymlinks(rel string) error {
	fi, err := t.stat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil || !fi.IsDir() {
		return err
	}
	entries, err := t.readDir(rel)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			if err := t.refuseSymlinks(path.Join(rel, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// RefuseSymlinks returns a *SymlinkError naming a symlink under openspec/
// of the work tree workTree (openspec itself included), or nil when there
// is none. Validate and Archive make this check first; implement makes it
// before a plan's first group, so a tree the archive would refuse stops
// before any work.
func RefuseSymlinks(workTree string) error {
	t, err := openTree(workTree)
	if err != nil {
		return err
	}
	defer t.close()
	return t.refuseSymlinks("openspec")
}
