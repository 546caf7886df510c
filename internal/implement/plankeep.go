package implement

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/plan"
)

// keepPlan undoes whatever an agent step changed in the approved plan before
// the step's work is committed: the plan is not the agent's to change. The
// runner alone ticks tasks.md (in the commit that passes the group), and a
// plan that cannot work goes back to stage as plan_wrong, where it is
// amended and checked again. Without this, a model could rewrite a later
// group's verify or `fails` command (to `true`) and the runner would commit
// and push it, and the next Job would run the weakened plan.
func (r *runner) keepPlan(ctx context.Context, change *plan.Change, step string) error {
	rel, err := filepath.Rel(r.workdir, change.Dir)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return fmt.Errorf("the plan %s is not inside the work tree", change.Dir)
	}
	discarded, err := r.o.Repo.DiscardInside(ctx, filepath.ToSlash(rel))
	if err != nil {
		return fmt.Errorf("undo the agent's changes to the plan: %w", err)
	}
	if len(discarded) == 0 {
		return nil
	}
	// The note in the record comment names no path: paths are the model's
	// text. The log, made plain and masked, lists them.
	r.note(fmt.Sprintf("%s: the agent changed %d file(s) of the approved plan; the changes were refused and undone (only the runner ticks tasks.md; a plan that cannot work is returned to stage)", step, len(discarded)))
	r.j.Logf("roadmap: %s: the agent changed the approved plan (%s); refused and undone: the plan is not the agent's to change",
		step, strings.Join(capList(discarded, 10), ", "))
	return nil
}

func capList(l []string, n int) []string {
	if len(l) <= n {
		return l
	}
	return append(l[:n:n], fmt.Sprintf("and %d more", len(l)-n))
}

// note adds a line to the record comment's notes; a group beside others
// keeps its own until the wave is over (parallel.go).
func (r *runner) note(s string) {
	if r.side != nil {
		r.side.notes = append(r.side.notes, s)
		return
	}
	r.j.Notes = append(r.j.Notes, s)
}
