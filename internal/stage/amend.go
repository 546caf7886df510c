package stage

import (
	"context"
	"fmt"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/plan"
)

// Plan amendment: implement returned the item with plan_wrong at a group.
// Stage amends the plan on the same branch and PR: the groups that passed
// stay as they are, the gates and the verifier run again, and implement
// continues from the first group the amendment changed.

// startAmendment reads implement's evidence and the passed groups.
func (r *runner) startAmendment(ctx context.Context) (ending, bool) {
	rec := r.j.Rec
	last, _ := rec.Group()
	r.amendFrom = last + 1
	var b strings.Builder
	if stopped, ok := rec.Stopped(); ok {
		fmt.Fprintf(&b, "Step: %s\n", stopped)
	}
	if log, ok := rec.CheckLog(); ok {
		fmt.Fprintf(&b, "Implement's evidence:\n%s\n", log)
	}
	r.evidence = strings.TrimSpace(b.String())
	if r.evidence == "" {
		r.evidence = "implement gave no evidence beyond the return (plan_wrong)"
	}
	c, err := plan.LoadChangeIn(r.o.Repo.Dir, r.dir)
	if err != nil {
		return ending{result: ResultStopped, class: "unknown", reason: fmt.Sprintf("amend: the staged plan %s does not load: %v", r.dir, err)}, false
	}
	src, err := c.ReadFile("tasks.md")
	if err != nil {
		return ending{result: ResultStopped, class: "unknown", reason: fmt.Sprintf("amend: %s/tasks.md: %v", r.dir, err)}, false
	}
	r.kept = keptGroups(src, r.amendFrom)
	r.j.Logf("roadmap: amending %s from group %d with implement's evidence", r.dir, r.amendFrom)
	return ending{}, true
}

// keptGroups renders the groups before from, as the amendment must keep
// them: number, title, and each task's text and verify command.
func keptGroups(src []byte, from int) string {
	t, err := plan.Parse(src)
	if err != nil {
		return ""
	}
	var b strings.Builder
	for _, g := range t.Groups {
		if g.Number >= from {
			continue
		}
		fmt.Fprintf(&b, "%d. %s\n", g.Number, g.Title)
		for _, task := range g.Tasks {
			fmt.Fprintf(&b, "  %s %s\n", task.ID, task.Text)
		}
	}
	return b.String()
}

// keepPassedGroups ticks the passed groups again in the amended tasks.md:
// the planner may have rewritten their boxes; the commits say they passed.
func (r *runner) keepPassedGroups() error {
	c, err := plan.LoadChangeIn(r.o.Repo.Dir, r.dir)
	if err != nil {
		return nil // the gates report a plan that does not load
	}
	src, err := c.ReadFile("tasks.md")
	if err != nil {
		return nil
	}
	for g := 1; g < r.amendFrom; g++ {
		out, err := plan.Tick(src, g)
		if err != nil {
			return nil // a missing group is the kept-groups finding's
		}
		src = out
	}
	return c.WriteFile("tasks.md", src)
}

// keptFindings is the amendment's own gate: the groups that passed are
// unchanged.
func (r *runner) keptFindings() []plan.Finding {
	c, err := plan.LoadChangeIn(r.o.Repo.Dir, r.dir)
	if err != nil {
		return nil
	}
	src, err := c.ReadFile("tasks.md")
	if err != nil {
		return nil
	}
	if got := keptGroups(src, r.amendFrom); got != r.kept {
		return []plan.Finding{{Level: plan.LevelError, Rule: "roadmap/stage/amend-kept", File: r.dir + "/tasks.md", Line: 1, Ours: true,
			Message: fmt.Sprintf("the amendment changed groups 1-%d, which passed and are committed; keep them exactly as they were:\n%s", r.amendFrom-1, r.kept)}}
	}
	return nil
}

// ChangeID is the OpenSpec change id stage gives an issue's plan: the
// title's words in kebab case, at most 40 characters, else issue-N.
func ChangeID(issue int, title string) string {
	var words []string
	n := 0
	for _, w := range strings.FieldsFunc(strings.ToLower(title), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) {
		if n+len(w)+1 > 40 {
			break
		}
		words = append(words, w)
		n += len(w) + 1
	}
	id := strings.Join(words, "-")
	if id == "" || id[0] < 'a' || id[0] > 'z' {
		return fmt.Sprintf("issue-%d", issue)
	}
	return id
}
