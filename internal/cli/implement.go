package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/event"
	"github.com/roadmap-dev/roadmap/internal/implement"
	"github.com/roadmap-dev/roadmap/internal/job"
	"github.com/roadmap-dev/roadmap/internal/prfix"
	"github.com/roadmap-dev/roadmap/internal/record"
	txt "github.com/roadmap-dev/roadmap/internal/text"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// implementOptions are `roadmap implement`'s flags, parsed.
type implementOptions struct {
	Job     jobOptions
	Plan    string
	Attempt int
	Model   string
}

// runImplement is `roadmap implement`: one implement Job for an issue.
func runImplement(ctx context.Context, env *Env, args []string) int {
	return implementCmd(ctx, env.factory(), args, implementRun)
}

// implementCmd parses implement's flags into its options, then calls runF.
func implementCmd(ctx context.Context, f *Factory, args []string, runF func(context.Context, *Factory, *implementOptions) int) int {
	env, o := f.env, &implementOptions{}
	fs := newFlags(env, "implement")
	addJobFlags(fs, &o.Job, "implement", "the issue to implement", "the branch PRs target")
	fs.StringVar(&o.Plan, "plan", "", "the OpenSpec change directory, relative to the workspace (default: the record's stage.plan)")
	fs.IntVar(&o.Attempt, "attempt", 0, "this Job's number for the item (default: the dispatch input, else the record's + 1)")
	fs.StringVar(&o.Model, "model", "", "override the first model of the ladder")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if code := env.parsedJob("implement", &o.Job); code != ExitOK {
		return code
	}
	return runF(ctx, f, o)
}

// implementRun runs the implement Job and reports its result.
func implementRun(ctx context.Context, f *Factory, o *implementOptions) int {
	env := f.env
	s, code := env.startJob("implement", &o.Job)
	if s == nil {
		return code
	}
	if o.Attempt == 0 && s.ev.Inputs != nil {
		if n, err := strconv.Atoi(strings.TrimSpace(s.ev.Inputs["attempt"])); err == nil {
			o.Attempt = n
		}
	}
	if o.Model != "" {
		s.cfg.Models[0].Name = o.Model
	}
	k, code := env.openJob(ctx, implement.Phase(), s, &o.Job, o.Attempt, map[string]string{"attempt": strconv.Itoa(o.Attempt)})
	if k == nil {
		return code
	}
	defer k.Close()
	res, err := k.Implement(ctx, job.ImplementRun{PlanDir: o.Plan, TriggerLabel: triggerLabel(s.ev, s.cfg.Labels.Implement),
		Reopened: reopened(s.ev), Feedback: feedbackTrigger(s.ev)})
	if err != nil {
		env.Errorf("implement: %v", err)
		s.io.Error("", 0, k.Masker.Mask(err.Error()))
		if res.Result == "" {
			return ExitInternal
		}
	}
	_ = s.io.SetOutput("trace_file", o.Job.TraceFile)
	if err := s.io.AddSummary(implementSummary(s.issue, res, k.Trace.Events(), k.IsolationNote())); err != nil {
		env.Errorf("step summary: %v", err)
	}
	if o.Job.JSON {
		if code := env.JSON(res); code != ExitOK {
			return code
		}
	}
	if res.Result == record.ResultStopped {
		return ExitFindings
	}
	return ExitOK
}

// triggerLabel is the implement label when the run's event is that label
// being added to the issue; "" for any other start (a dispatch, a
// continuation), which has no label to check.
func triggerLabel(ev *event.Event, implementLabel string) string {
	if ev != nil && ev.Name == "issues" && ev.Action == "labeled" && implementLabel != "" && ev.Label == implementLabel {
		return implementLabel
	}
	return ""
}

// reopened reports whether the run's event is a person's reopening of the
// issue or of a pull request (the caller routes only the item's own PR):
// the Job resumes an item a closing held, and nothing else (next.NotHeld).
func reopened(ev *event.Event) bool {
	return ev != nil && ev.Action == "reopened" && (ev.Name == "issues" || ev.Name == "pull_request")
}

// feedbackTrigger reports whether the run's event is a person's feedback on
// the PR that starts a repair Job (docs/review.md): a review submitted
// that is not an approval (an approval of a plan PR starts the groups), a
// review comment on a line, or a comment whose first line is /roadmap fix.
// Whose feedback counts is the Job's decision (internal/prfix), not the
// event's.
func feedbackTrigger(ev *event.Event) bool {
	if ev == nil {
		return false
	}
	switch ev.Name {
	case "pull_request_review":
		return ev.Action == "submitted" && ev.ReviewState != "approved"
	case "pull_request_review_comment":
		return ev.Action == "created"
	case "issue_comment":
		return ev.Action == "created" && ev.Comment != nil && prfix.AsksFix(ev.Comment.Body)
	}
	return false
}

// implementSummary is the step summary: the outcome, the table of steps and
// the timeline of the run.
func implementSummary(issue int, res implement.Result, events []trace.Event, note string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## roadmap · implement #%d · Job %d: %s\n\n", issue, res.Attempt, res.Result)
	if note != "" {
		fmt.Fprintf(&b, "> [!WARNING]\n> %s\n\n", note)
	}
	if res.Failure != "" || res.Reason != "" {
		fmt.Fprintf(&b, "`%s` %s\n\n", res.Failure, res.Reason)
	}
	switch res.CI {
	case "passed":
		b.WriteString("PR checks: reported on the head and passed.\n\n")
	case "none":
		b.WriteString("PR checks: **no check was reported on the head**; ready because `implement.ready_without_ci` is true.\n\n")
	}
	fmt.Fprintf(&b, "Item spend: %d tokens in, %d out, %s over %d model calls (this Job: %d calls).\n\n",
		res.Spend.TokensIn, res.Spend.TokensOut, txt.USD(res.Spend.USD), res.Spend.ModelCalls, res.JobSpend.ModelCalls)
	b.WriteString(trace.SummaryTable(events))
	b.WriteString("\n")
	b.WriteString(trace.Timeline(events))
	b.WriteString("\n")
	return b.String()
}

func parseTime(s string) (time.Time, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(n, 0), nil
	}
	return time.Parse(time.RFC3339, s)
}
