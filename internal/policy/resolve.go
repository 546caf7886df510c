package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Resolve returns the real path of path inside workspace, or a *Refusal when
// it lies outside: an absolute path elsewhere, a ".." escape, or a symlink
// (anywhere along the path, the last element included) whose target is
// outside. Components that do not exist yet are kept as written, so a file
// about to be created resolves too. A dangling symlink is refused: writing
// through it would create its target, wherever that is.
//
// The check and the later use are not atomic: a process that swaps a
// directory for a symlink in between wins. Tool processes run under the same
// policy, so this is a limit of the policy, not a hole a model reaches by
// asking (docs/policy.md).
func Resolve(workspace, path string) (string, error) {
	ws, err := realDir(workspace)
	if err != nil {
		return "", err
	}
	abs, _ := filepath.Abs(workspace)
	return resolveIn(ws, abs, path)
}

func realDir(workspace string) (string, error) {
	abs, err := filepath.Abs(workspace)
	if err != nil {
		return "", fmt.Errorf("resolve workspace %s: %w", workspace, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("resolve workspace %s: %w", workspace, err)
	}
	return real, nil
}

// resolveIn resolves path against the real workspace ws; wsAbs is the
// workspace as the caller named it, so an absolute path written with it (for
// example under a symlinked /tmp) is recognised as inside.
func resolveIn(ws, wsAbs, path string) (string, error) {
	outside := func() error {
		return &Refusal{Rule: "path", Reason: fmt.Sprintf("%q is outside the workspace; use a path relative to the workspace root", path)}
	}
	if strings.IndexByte(path, 0) >= 0 {
		return "", &Refusal{Rule: "path", Reason: "a path cannot hold a NUL byte"}
	}
	if path == "" {
		path = "."
	}
	var rel string
	if filepath.IsAbs(path) {
		target := filepath.Clean(path)
		var ok bool
		if rel, ok = within(ws, target); !ok {
			if rel, ok = within(wsAbs, target); !ok {
				return "", outside()
			}
		}
	} else {
		var ok bool
		if rel, ok = within(ws, filepath.Join(ws, path)); !ok {
			return "", outside()
		}
	}
	cur := ws
	if rel == "." {
		return cur, nil
	}
	parts := strings.Split(rel, string(filepath.Separator))
	for i, part := range parts {
		next := filepath.Join(cur, part)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			return filepath.Join(append([]string{next}, parts[i+1:]...)...), nil
		}
		if err != nil {
			return "", fmt.Errorf("resolve %s: %w", path, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			real, err := filepath.EvalSymlinks(next)
			if err != nil {
				return "", &Refusal{Rule: "path", Reason: fmt.Sprintf("%q goes through a symlink whose target does not exist or cannot be read", path)}
			}
			if _, ok := within(ws, real); !ok {
				return "", &Refusal{Rule: "path", Reason: fmt.Sprintf("%q goes through a symlink that points outside the workspace", path)}
			}
			next = real
		}
		cur = next
	}
	return cur, nil
}

// within returns target relative to base when target is base or below it.
func within(base, target string) (string, bool) {
	rel, err := filepath.Rel(base, target)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}

// inGitDir reports whether a resolved path is the workspace's .git or below.
// The repository's own files are off limits to tools: .git/config can hold the
// checkout's token, and hooks written there would run in the runner's process.
func inGitDir(ws, resolved string) bool {
	rel, ok := within(ws, resolved)
	if !ok {
		return false
	}
	first, _, _ := strings.Cut(rel, string(filepath.Separator))
	return first == ".git"
}
