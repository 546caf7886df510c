package implement

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/citriage"
	"github.com/roadmap-dev/roadmap/internal/kernel"
	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/progress"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/redact"
	"github.com/roadmap-dev/roadmap/internal/text"
	"github.com/roadmap-dev/roadmap/internal/trace"
	"github.com/roadmap-dev/roadmap/internal/verdict"
)

// comment renders the PR comment: one table of every Job of the item, built
// from the record (implement.jobs), so a fresh Job shows the whole history
// and never an empty body. A stop adds the step summary of this Job's trace.
// The comment holds text roadmap did not write (the agent's reason, step
// labels from the plan, check output, the trace's commands): it is masked,
// then neutralised, so none of it mentions anyone, holds HTML, an image or
// an outside link, or reads as a workflow command.
func (r *runner) comment(end ending) string {
	jobs, _ := r.j.Rec.Jobs()
	var b strings.Builder
	fmt.Fprintf(&b, "### roadmap · implement #%d\n\n", r.o.Issue)
	if list := r.shown.checklist(r.j.Doing); list != "" {
		b.WriteString(list)
		b.WriteString("\n")
	}
	b.WriteString(JobsTable(jobs))
	total, _ := r.j.Rec.Spend()
	fmt.Fprintf(&b, "\nItem spend: %s.\n", kernel.SpendText(total))
	recorded, _ := r.j.Rec.Strength()
	b.WriteString(r.ready.CommentLines(recorded, r.head))
	if r.o.IsolationNote != "" {
		fmt.Fprintf(&b, "\n> [!WARNING]\n> %s\n", r.o.IsolationNote)
	}
	switch end.result {
	case record.ResultReady:
		if r.ci.CI == citriage.None {
			b.WriteString("\n**Ready for review**: every group passed. **No CI reported a check on the head**: nothing says the PR checks pass; " +
				"ready because `implement.ready_without_ci` is true.\n")
		} else {
			b.WriteString("\n**Ready for review**: every group passed and the PR checks are green.\n")
		}
	case record.ResultStopped:
		fmt.Fprintf(&b, "\n**Stopped** at %s: `%s`", end.step, end.class)
		if end.reason != "" {
			fmt.Fprintf(&b, " — %s", verdict.OneLine(end.reason))
		}
		b.WriteString("\n\n")
		b.WriteString(trace.SummaryTable(r.o.Trace.Events()))
	case record.ResultYielded:
		fmt.Fprintf(&b, "\n**Yielded** at %s", end.step)
		if end.reason != "" {
			fmt.Fprintf(&b, " — %s", verdict.OneLine(end.reason))
		}
		b.WriteString("; a continuation resumes from the last mark.\n")
	case record.ResultReturned:
		fmt.Fprintf(&b, "\n**Returned** (`%s`) at %s", end.class, end.step)
		if end.reason != "" {
			fmt.Fprintf(&b, " — %s", verdict.OneLine(end.reason))
		}
		b.WriteString("\n")
	}
	if len(r.ci.Notes) > 0 {
		b.WriteString("\nPR checks, this Job:\n")
		for _, n := range r.ci.Notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	return redact.NeutraliseIn(r.o.Mask(b.String()), r.o.GitHub.ServerHost(), r.o.GitHub.FullName())
}

// watchState is what the PR comment shows a person between marks
// (internal/progress): the plan's groups, the ones passed, and the throttle
// that bounds the comment's writes in this Job.
type watchState struct {
	groups []progress.Group
	passed map[int]bool
	th     *progress.Throttle
}

// start takes the plan's groups and the ones that passed before this Job
// (git's group commits); the throttle counts from now, so a short Job spends
// nothing on its now line.
func (w *watchState) start(change *plan.Change, passed map[int]string, at time.Time, doing string) {
	w.groups = w.groups[:0]
	w.passed = map[int]bool{}
	for _, g := range change.Tasks.Groups {
		w.groups = append(w.groups, progress.Group{Number: g.Number, Title: g.Title})
		if _, ok := passed[g.Number]; ok {
			w.passed[g.Number] = true
		}
	}
	w.th = progress.NewThrottle(at, len(w.passed), doing)
}

// pass ticks group n: it is pushed.
func (w *watchState) pass(n int) {
	if w.passed != nil {
		w.passed[n] = true
	}
}

func (w *watchState) checklist(doing string) string {
	return progress.Checklist(progress.View{Groups: w.groups, Passed: w.passed, Now: doing})
}

// showProgress writes the PR comment between marks when the throttle says
// it is due: a group ticked or a new now line, progress.Interval after the
// last write (or the Job's start). It is called where the Job already writes (a mark) or
// starts a step; at most progress.MaxWrites times a Job, so a plan of any
// size costs at most that many counted requests more per Job (the marker
// comment's id is remembered: each is one PATCH, or the POST the Job's end
// would have made, and the end's write then needs no list). A failed write
// is logged and counted: the end's write tries again.
func (r *runner) showProgress(ctx context.Context) {
	if r.pr.Number == 0 || r.side != nil {
		return
	}
	at := r.o.Clock.Now()
	if !r.shown.th.Due(at, len(r.shown.passed), r.j.Doing) {
		return
	}
	r.shown.th.Wrote(at, len(r.shown.passed), r.j.Doing)
	if _, err := r.o.GitHub.UpsertMarkerComment(ctx, r.pr.Number, r.o.Marker, r.comment(ending{})); err != nil {
		r.j.Logf("roadmap: update the PR comment's progress: %v", err)
	}
}

// JobsTable renders implement.jobs as a Markdown table with a totals row.
func JobsTable(jobs []record.JobOutcome) string {
	var b strings.Builder
	b.WriteString("| Job | run | result | failure | last group | tokens in | tokens out | USD | model calls |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	var sum record.Spend
	for _, j := range jobs {
		result := string(j.Result)
		if result == "" {
			result = "(no result: killed)"
		}
		fmt.Fprintf(&b, "| %d | %d | %s | %s | %d | %d | %d | %s | %d |\n", j.Job, j.RunID, result, dash(j.Failure), j.Group,
			j.Spend.TokensIn, j.Spend.TokensOut, text.USD(j.Spend.USD), j.Spend.ModelCalls)
		sum = sum.Add(j.Spend)
	}
	fmt.Fprintf(&b, "| **total** | | | | | %d | %d | %s | %d |\n", sum.TokensIn, sum.TokensOut, text.USD(sum.USD), sum.ModelCalls)
	return b.String()
}

func dash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}
