package implement

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/roadmap-dev/roadmap/internal/nofollow"
	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// confinedPlan returns the directory of the plan p names in the work tree,
// when p is a plan path (record.CheckPlanPath: a clean path under
// openspec/changes/), the work tree holds no symlink under openspec/ and p
// is a directory there: a plan path in the record, or a symlink committed in
// the tree, never leads the runner elsewhere. A symlink is refused here, at
// the start, because the archive would refuse it at the end (an error, not
// the plan's fault), after the groups' work and spend.
func confinedPlan(workdir, p string) (string, error) {
	if err := record.CheckPlanPath(p); err != nil {
		return "", err
	}
	if err := plan.RefuseSymlinks(workdir); err != nil {
		return "", err
	}
	root, err := os.OpenRoot(workdir)
	if err != nil {
		return "", fmt.Errorf("the work tree: %w", err)
	}
	defer root.Close()
	if fi, err := nofollow.Lstat(root, p); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", p)
	}
	return filepath.Join(workdir, filepath.FromSlash(p)), nil
}
