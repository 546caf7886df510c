package implement

import (
	"context"
	"fmt"

	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/prbody"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// prBody is the PR's body with state: it closes the issue, says where the
// item stands and lists the plan's tasks with the ticks the work tree holds
// (the commit that passed a group ticked its tasks).
func (r *runner) prBody(state string) string {
	dir := r.planDir
	if dir == "" {
		dir, _ = r.j.Rec.StagePlan()
	}
	var tasks []byte
	shown := dir
	if dir != "" {
		if a, ok := plan.Archived(r.workdir, dir); ok {
			dir = a
		}
		if c, err := plan.LoadChangeIn(r.workdir, dir); err == nil {
			tasks, _ = c.ReadFile("tasks.md")
		}
	}
	return r.o.Mask(prbody.Render(prbody.Body{Issue: r.o.Issue, State: state, Plan: shown, Tasks: tasks, Server: r.o.GitHub.ServerHost(), Repo: r.o.GitHub.FullName()}))
}

// readyState is the body's state once the PR is ready for review.
func readyState(pr int, note string) string {
	s := fmt.Sprintf("Ready for review: every group of the plan passed and PR #%d is out of draft.", pr)
	if note != "" {
		s += " " + note
	}
	return s
}

// bodyState is the body's state for an ending other than ready. It leaves
// out the reason (the PR comment has it), so a continuation that ends as the
// Job before it did finds the body true and writes nothing.
func bodyState(end ending) string {
	switch end.result {
	case record.ResultStopped:
		return fmt.Sprintf("Draft: stopped (`%s`) in %s; the issue's stop comment says what it needs.", end.class, end.step)
	case record.ResultReturned:
		if end.class == failure.NeedsInput {
			return "Draft: waiting for a person's answer to the question on the issue."
		}
		return fmt.Sprintf("Draft: returned (`%s`) in %s; the plan goes back to stage.", end.class, end.step)
	}
	return fmt.Sprintf("Draft: yielded in %s; a continuation resumes from the last mark.", end.step)
}

// keepBody keeps the PR body true at a Job's end that hands the item to a
// person: a stop or a return. A ready Job's body rode in its mark-ready
// request. A yield leaves the body as it is: a continuation follows at
// once, and a write there would cost every yielding Job a request the
// item's budget does not have (none is made per group either). Nothing is
// written when GitHub already has the body.
func (r *runner) keepBody(ctx context.Context, end ending) {
	if end.result != record.ResultStopped && end.result != record.ResultReturned || r.pr.Number == 0 {
		return
	}
	body := r.prBody(bodyState(end))
	if body == r.pr.Body {
		return
	}
	pr, err := r.o.GitHub.UpdatePR(ctx, r.pr.Number, "", body)
	if err != nil {
		r.j.Logf("roadmap: update the PR body: %v", err)
		return
	}
	r.pr.Body = pr.Body
}
