package f2p

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/nofollow"
)

// File is a file laid over both trees, the base's and the head's, once each
// is checked out and before the test command runs there: test files held
// back from the change, as SWE-bench applies its test patch to both sides.
type File struct {
	// Path is the file's place in the repository: slash-separated, clean,
	// relative to its top, outside .git.
	Path string
	Data []byte
}

// Bounds on an overlay: the files come from a directory anyone can pass
// (an eval case's hidden/).
const (
	MaxOverlayFiles = 200
	MaxOverlayBytes = 16 << 20 // all files together
)

// CheckOverlay refuses an overlay that could write outside a tree, into its
// .git, or twice to one path, or is larger than the bounds: an InputError
// naming the path.
func CheckOverlay(files []File) error {
	if len(files) > MaxOverlayFiles {
		return inputErr("%d files to lay over the trees, more than %d", len(files), MaxOverlayFiles)
	}
	seen := map[string]bool{}
	total := 0
	for _, f := range files {
		if err := checkOverlayPath(f.Path); err != nil {
			return err
		}
		if seen[f.Path] {
			return inputErr("%q is laid over the trees twice", f.Path)
		}
		seen[f.Path] = true
		if total += len(f.Data); total > MaxOverlayBytes {
			return inputErr("the files to lay over the trees hold more than %d bytes", MaxOverlayBytes)
		}
	}
	return nil
}

// checkOverlayPath refuses a path that is not a clean slash path inside the
// tree, or that names .git or a path under it.
func checkOverlayPath(p string) error {
	switch {
	case p == "" || len(p) > 1024:
		return inputErr("%q is not a path to lay over the trees", p)
	case strings.ContainsAny(p, "\\\x00") || strings.HasPrefix(p, "/") || path.Clean(p) != p || p == "." || p == ".." || strings.HasPrefix(p, "../"):
		return inputErr("%q is not a clean slash path inside the repository", p)
	}
	for _, el := range strings.Split(p, "/") {
		if strings.EqualFold(el, ".git") {
			return inputErr("%q names a path in .git, which is not laid over", p)
		}
	}
	return nil
}

// lay writes files into the tree dir, every path reached through no
// symlink: a directory on the way that is a symlink is refused (the tree is
// the head of a change anyone could have written), a missing one is made,
// and whatever is at the file's path is replaced, a symlink there included
// (never what it points to).
func lay(dir string, files []File) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, f := range files {
		d, base := path.Split(f.Path)
		if d != "" {
			if err := nofollow.MkdirAll(root, d, 0o755); err != nil {
				return fmt.Errorf("lay %s over the tree: %w", f.Path, err)
			}
		}
		if fi, err := nofollow.Lstat(root, f.Path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			parent, err := nofollow.OpenDir(root, d)
			if err != nil {
				return fmt.Errorf("lay %s over the tree: %w", f.Path, err)
			}
			err = parent.Remove(base)
			parent.Close()
			if err != nil {
				return fmt.Errorf("lay %s over the tree: replace the symlink there: %w", f.Path, err)
			}
		}
		if err := nofollow.WriteFile(root, f.Path, f.Data, 0o644); err != nil {
			return fmt.Errorf("lay %s over the tree: %w", f.Path, err)
		}
	}
	return nil
}
