package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/nofollow"
)

// The file tools run in roadmap's process, as root on a runner, on a tree
// the model's processes write, and one of them may outlive its command and
// swap a path for a symlink between a check and a use. So the tools never
// open a path by name: every read, list, edit and write goes through one
// os.Root on the workspace, opened at the first file tool call of the step,
// and through nofollow, which refuses a symlink met on the way. Symlinks
// inside the workspace are followed by resolving them first (nofollow.Resolve,
// inside the root); one that leads out of the workspace or into .git is
// refused, and a swap after that is refused when the file is opened.

// workspace returns the step's root on the workspace, opening it once.
func (s *session) workspace() (*os.Root, string, error) {
	if s.root == nil && s.rootErr == nil {
		ws, err := s.cfg.Sandbox.Workspace()
		if err == nil {
			s.root, err = os.OpenRoot(ws)
		}
		s.ws, s.rootErr = ws, err
	}
	return s.root, s.ws, s.rootErr
}

// close releases the step's root.
func (s *session) close() {
	if s.root != nil {
		s.root.Close()
		s.root = nil
	}
}

// pathRefusal is a path the file tools do not open; the model sees it as
// refused, like the policy's refusals.
type pathRefusal struct{ reason string }

func (r *pathRefusal) Error() string { return r.reason }
func (r *pathRefusal) Refused() bool { return true }

// place checks the model's path and returns the workspace root and the path
// inside it the tools open: the sandbox's check first (its refusals: outside
// the workspace, .git), then symlinks resolved inside the root, and .git
// refused again on the result, so a symlink swapped in after the sandbox's
// check cannot lead there either.
func (s *session) place(p string) (*os.Root, string, error) {
	if _, err := s.cfg.Sandbox.Resolve(p); err != nil {
		return nil, "", err
	}
	root, ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	rel := p
	if filepath.IsAbs(p) {
		r, err := filepath.Rel(ws, filepath.Clean(p))
		if err != nil || !filepath.IsLocal(r) {
			return nil, "", &pathRefusal{fmt.Sprintf("%q is outside the workspace; use a path relative to the workspace root", p)}
		}
		rel = r
	}
	resolved, err := nofollow.Resolve(root, rel)
	if err != nil {
		return nil, "", toolPathErr(p, err)
	}
	if first, _, _ := strings.Cut(resolved, "/"); first == ".git" {
		return nil, "", &pathRefusal{fmt.Sprintf("%q is inside .git, which tools do not touch; use git status, git diff or git log", p)}
	}
	return root, resolved, nil
}

// toolPathErr words nofollow's refusals for the model, naming its path.
func toolPathErr(p string, err error) error {
	var out *nofollow.OutsideError
	var link *nofollow.SymlinkError
	switch {
	case errors.As(err, &out):
		return &pathRefusal{fmt.Sprintf("%q goes through a symlink that points outside the workspace or by an absolute path; only relative symlinks inside it are followed", p)}
	case errors.As(err, &link):
		return &pathRefusal{fmt.Sprintf("%q changed while it was opened (a symlink was put in its way), so it was not followed", p)}
	}
	return err
}
