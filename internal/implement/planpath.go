package implement

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/record"
)

// confinedPlan returns the directory of the plan p names in the work tree,
// when p is a plan path (record.CheckPlanPath) and the directory it names is
// a directory under openspec/changes/ of the work tree once symlinks are
// resolved: a plan path in the record, or a symlink committed in the tree,
// never leads the runner outside the repository.
func confinedPlan(workdir, p string) (string, error) {
	if err := record.CheckPlanPath(p); err != nil {
		return "", err
	}
	wd, err := filepath.EvalSymlinks(workdir)
	if err != nil {
		return "", fmt.Errorf("the work tree: %w", err)
	}
	root, err := filepath.EvalSymlinks(filepath.Join(workdir, "openspec", "changes"))
	if err != nil {
		return "", fmt.Errorf("the work tree has no openspec/changes directory: %w", err)
	}
	if !below(wd, root) {
		return "", fmt.Errorf("openspec/changes leads outside the repository (to %s)", root)
	}
	dir, err := filepath.EvalSymlinks(filepath.Join(workdir, filepath.FromSlash(p)))
	if err != nil {
		return "", fmt.Errorf("%s is not in the work tree: %w", p, err)
	}
	if !below(root, dir) || dir == root {
		return "", fmt.Errorf("%s leads outside openspec/changes/ of the repository (to %s)", p, dir)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", p)
	}
	return dir, nil
}

// below reports whether path is root or inside it (both resolved).
func below(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && !filepath.IsAbs(rel) && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
