package nofollow

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// SymlinkError refuses a path because an element of it is a symlink, or was
// replaced while it was being opened.
type SymlinkError struct {
	// Path is the path up to that element, slash-separated, relative to the
	// root.
	Path string
}

func (e *SymlinkError) Error() string {
	return e.Path + " is a symlink (or was replaced while being opened), which is not followed"
}

// OutsideError refuses a path Resolve would take out of the tree.
type OutsideError struct {
	// Path is the symlink's path, slash-separated, relative to the root.
	Path string
}

func (e *OutsideError) Error() string {
	return e.Path + " is a symlink that leads out of the tree, which is not followed"
}

// elements splits a path relative to the root into its elements, after
// cleaning it lexically ("a/../b" is "b"); "" and "." are the root itself,
// nil. A path that leaves the root lexically (.., absolute) is an error.
func elements(name string) ([]string, error) {
	if strings.IndexByte(name, 0) >= 0 {
		return nil, fmt.Errorf("%q: a path cannot hold a NUL byte", name)
	}
	c := filepath.Clean(filepath.FromSlash(name))
	if c == "." || name == "" {
		return nil, nil
	}
	if !filepath.IsLocal(c) {
		return nil, fmt.Errorf("%q is not a path inside the tree", name)
	}
	return strings.Split(filepath.ToSlash(c), "/"), nil
}

// openDir opens the directory elem of dir, which must be a directory entry
// and not a symlink: after the open, the entry is checked to be the
// directory opened, so a swap during the open is refused too. shown is the
// path up to elem, for errors.
func openDir(dir *os.Root, elem, shown string) (*os.Root, error) {
	sub, err := dir.OpenRoot(elem)
	if err != nil {
		if fi, lerr := dir.Lstat(elem); lerr == nil {
			switch {
			case fi.Mode()&fs.ModeSymlink != 0:
				return nil, &SymlinkError{Path: shown}
			case !fi.IsDir():
				return nil, &fs.PathError{Op: "open", Path: shown, Err: syscall.ENOTDIR}
			}
		}
		return nil, err
	}
	if err := same(dir, elem, shown, func() (fs.FileInfo, error) { return sub.Stat(".") }); err != nil {
		sub.Close()
		return nil, err
	}
	return sub, nil
}

// same checks that the entry elem of dir is, now, not a symlink and the
// very file stat describes (one opened through it a moment ago).
func same(dir *os.Root, elem, shown string, stat func() (fs.FileInfo, error)) error {
	opened, err := stat()
	if err != nil {
		return err
	}
	entry, err := dir.Lstat(elem)
	if err != nil {
		return err
	}
	if entry.Mode()&fs.ModeSymlink != 0 || !os.SameFile(opened, entry) {
		return &SymlinkError{Path: shown}
	}
	return nil
}

// walk opens the directory of elems (the root for none), through no
// symlink. The caller closes it.
func walk(root *os.Root, elems []string) (*os.Root, error) {
	cur, err := root.OpenRoot(".")
	if err != nil {
		return nil, err
	}
	for i, e := range elems {
		next, err := openDir(cur, e, strings.Join(elems[:i+1], "/"))
		cur.Close()
		if err != nil {
			return nil, err
		}
		cur = next
	}
	return cur, nil
}

// OpenDir opens the directory name inside root through no symlink. The
// caller closes it.
func OpenDir(root *os.Root, name string) (*os.Root, error) {
	elems, err := elements(name)
	if err != nil {
		return nil, err
	}
	return walk(root, elems)
}

// OpenFile opens name inside root as os.OpenFile would, through no symlink:
// neither a directory on the way nor the file itself may be one. With
// O_CREATE a missing file is created (never at a symlink's target); O_TRUNC
// truncates only once the file opened is checked to be the one named. The
// open never blocks on a FIFO (O_NONBLOCK is added): a reader gets the FIFO
// and can refuse it, a writer gets an error.
func OpenFile(root *os.Root, name string, flag int, perm fs.FileMode) (*os.File, error) {
	elems, err := elements(name)
	if err != nil {
		return nil, err
	}
	if len(elems) == 0 {
		return root.OpenFile(".", flag&^(os.O_CREATE|os.O_TRUNC), 0)
	}
	dir, err := walk(root, elems[:len(elems)-1])
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	base, shown := elems[len(elems)-1], strings.Join(elems, "/")
	trunc := flag&os.O_TRUNC != 0
	flag = flag&^os.O_TRUNC | syscall.O_NONBLOCK
	if flag&os.O_CREATE != 0 {
		// os.Root never follows a symlink with O_CREATE|O_EXCL: a new file
		// is made here or nowhere.
		f, err := dir.OpenFile(base, flag|os.O_EXCL, perm)
		if err == nil || !errors.Is(err, fs.ErrExist) || flag&os.O_EXCL != 0 {
			return f, err
		}
		flag &^= os.O_CREATE
	}
	f, err := dir.OpenFile(base, flag, 0)
	if err != nil {
		if fi, lerr := dir.Lstat(base); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, &SymlinkError{Path: shown}
		}
		return nil, err
	}
	if err := same(dir, base, shown, f.Stat); err != nil {
		f.Close()
		return nil, err
	}
	if trunc {
		if err := f.Truncate(0); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

// ReadFile reads the regular file name inside root, through no symlink.
func ReadFile(root *os.Root, name string) ([]byte, error) {
	f, err := OpenFile(root, name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := regular(f, name); err != nil {
		return nil, err
	}
	return io.ReadAll(f)
}

// regular refuses what is not a regular file (a FIFO, a directory, a
// device).
func regular(f *os.File, name string) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return &fs.PathError{Op: "read", Path: name, Err: syscall.EISDIR}
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", name)
	}
	return nil
}

// WriteFile replaces the content of the regular file name inside root, or
// creates it with perm, through no symlink. Its directory must exist
// (MkdirAll).
func WriteFile(root *os.Root, name string, data []byte, perm fs.FileMode) error {
	f, err := OpenFile(root, name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if err := regular(f, name); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// MkdirAll makes the directory name and the missing ones above it inside
// root, through no symlink.
func MkdirAll(root *os.Root, name string, perm fs.FileMode) error {
	elems, err := elements(name)
	if err != nil {
		return err
	}
	cur, err := root.OpenRoot(".")
	if err != nil {
		return err
	}
	for i, e := range elems {
		// Mkdir never follows a symlink: one there is "exists", and
		// openDir refuses it.
		if err := cur.Mkdir(e, perm); err != nil && !errors.Is(err, fs.ErrExist) {
			cur.Close()
			return err
		}
		next, err := openDir(cur, e, strings.Join(elems[:i+1], "/"))
		cur.Close()
		if err != nil {
			return err
		}
		cur = next
	}
	return cur.Close()
}

// Lstat describes the entry name inside root, reached through no symlink;
// the entry itself may be one (its mode says so).
func Lstat(root *os.Root, name string) (fs.FileInfo, error) {
	elems, err := elements(name)
	if err != nil {
		return nil, err
	}
	if len(elems) == 0 {
		return root.Stat(".")
	}
	dir, err := walk(root, elems[:len(elems)-1])
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	return dir.Lstat(elems[len(elems)-1])
}

// ReadDir lists the directory name inside root, reached through no symlink,
// sorted by name. Entries are not followed: a symlink is listed as one.
func ReadDir(root *os.Root, name string) ([]fs.DirEntry, error) {
	dir, err := OpenDir(root, name)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	f, err := dir.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	return entries, err
}

// Rename moves oldname to newname inside root. The directories of both are
// reached through no symlink, and so is the directory they share, in which
// the rename is made: a swap during it can redirect it only inside that
// directory.
func Rename(root *os.Root, oldname, newname string) error {
	oldElems, err := elements(oldname)
	if err != nil {
		return err
	}
	newElems, err := elements(newname)
	if err != nil {
		return err
	}
	if len(oldElems) == 0 || len(newElems) == 0 {
		return fmt.Errorf("rename %s to %s: the root cannot move", oldname, newname)
	}
	n := 0
	for n < len(oldElems)-1 && n < len(newElems)-1 && oldElems[n] == newElems[n] {
		n++
	}
	shared, err := walk(root, oldElems[:n])
	if err != nil {
		return err
	}
	defer shared.Close()
	for _, elems := range [][]string{oldElems[n : len(oldElems)-1], newElems[n : len(newElems)-1]} {
		d, err := walk(shared, elems)
		if err != nil {
			var se *SymlinkError
			if errors.As(err, &se) {
				se.Path = path.Join(append(oldElems[:n:n], se.Path)...)
			}
			return err
		}
		d.Close()
	}
	return shared.Rename(path.Join(oldElems[n:]...), path.Join(newElems[n:]...))
}

// maxLinks bounds the symlinks Resolve follows, as the kernel's ELOOP does.
const maxLinks = 40

// Resolve returns name, slash-separated and clean, with every symlink on its
// way replaced by what it points to, for a caller that follows symlinks
// inside the tree: open the result with this package, which refuses it if it
// changed since. A symlink that leads out of the tree, an absolute one
// (os.Root's rule) and a loop are errors. Elements past the first missing
// one are kept as they are.
func Resolve(root *os.Root, name string) (string, error) {
	todo, err := elements(name)
	if err != nil {
		return "", err
	}
	var done []string
	links := 0
	for len(todo) > 0 {
		p := path.Join(append(done, todo[0])...)
		fi, err := root.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return path.Join(append(done, todo...)...), nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			done, todo = append(done, todo[0]), todo[1:]
			continue
		}
		if links++; links > maxLinks {
			return "", fmt.Errorf("%s: too many levels of symlinks", name)
		}
		target, err := root.Readlink(p)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			return "", &OutsideError{Path: p}
		}
		next, err := elements(path.Join(path.Join(done...), filepath.ToSlash(target)))
		if err != nil {
			return "", &OutsideError{Path: p}
		}
		done, todo = nil, append(next, todo[1:]...)
	}
	return path.Join(done...), nil
}
