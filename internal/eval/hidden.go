package eval

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"

	"github.com/roadmap-dev/roadmap/internal/f2p"
	"github.com/roadmap-dev/roadmap/internal/nofollow"
)

// hiddenDir is a case's directory of hidden tests: test files by their path
// in the repository, which the judge lays over its trees at main and at the
// work branch's head (f2p.Options.Overlay). They are read only by the
// judge: the world the Jobs run in is made from repo/ alone.
const hiddenDir = "hidden"

// maxHiddenEntries bounds the files and directories of hidden/ the read
// visits.
const maxHiddenEntries = 1000

// readHidden reads a case's hidden tests, none when it has no hidden/. The
// set is a directory anyone can pass: hidden/ and everything in it is read
// inside the case through no symlink, regular files only, within
// f2p.MaxOverlayFiles and f2p.MaxOverlayBytes (each file within
// maxCaseFile), every path a clean slash path outside .git
// (f2p.CheckOverlay).
func readHidden(caseDir string) ([]f2p.File, error) {
	root, err := os.OpenRoot(caseDir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	fi, err := root.Lstat(hiddenDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, err
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, errors.New("hidden/ is a symlink: a case's hidden tests are plain files in it")
	case !fi.IsDir():
		return nil, errors.New("hidden is not a directory: hidden/ holds the hidden test files by their path in the repository")
	}
	var files []f2p.File
	entries, total := 0, 0
	var walk func(rel string) error
	walk = func(rel string) error {
		list, err := nofollow.ReadDir(root, path.Join(hiddenDir, rel))
		if err != nil {
			return err
		}
		for _, e := range list {
			p := path.Join(rel, e.Name())
			if entries++; entries > maxHiddenEntries {
				return fmt.Errorf("hidden/ holds more than %d files and directories", maxHiddenEntries)
			}
			switch t := e.Type(); {
			case t&fs.ModeSymlink != 0:
				return fmt.Errorf("hidden/%s is a symlink: hidden tests are plain files", p)
			case t.IsDir():
				if err := walk(p); err != nil {
					return err
				}
				continue
			case !t.IsRegular():
				return fmt.Errorf("hidden/%s is not a regular file", p)
			}
			if len(files) == f2p.MaxOverlayFiles {
				return fmt.Errorf("hidden/ holds more than %d files", f2p.MaxOverlayFiles)
			}
			data, err := readHiddenFile(root, path.Join(hiddenDir, p))
			if err != nil {
				return err
			}
			if total += len(data); total > f2p.MaxOverlayBytes {
				return fmt.Errorf("hidden/ holds more than %d bytes", f2p.MaxOverlayBytes)
			}
			files = append(files, f2p.File{Path: p, Data: data})
		}
		return nil
	}
	if err := walk(""); err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, errors.New("hidden/ holds no file: leave it out when the case has no hidden test")
	}
	if err := f2p.CheckOverlay(files); err != nil {
		return nil, fmt.Errorf("hidden/: %w", err)
	}
	return files, nil
}

// readHiddenFile reads the regular file name inside root through no
// symlink, at most maxCaseFile bytes.
func readHiddenFile(root *os.Root, name string) ([]byte, error) {
	f, err := nofollow.OpenFile(root, name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", name)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxCaseFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxCaseFile {
		return nil, fmt.Errorf("%s is larger than %d bytes", name, maxCaseFile)
	}
	return data, nil
}

// hiddenPaths are the hidden files' paths, for the case's result.
func hiddenPaths(files []f2p.File) []string {
	out := make([]string, 0, len(files))
	for _, f := range files {
		out = append(out, f.Path)
	}
	return out
}
