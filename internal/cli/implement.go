package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/implement"
	"github.com/roadmap-dev/roadmap/internal/job"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

func runImplement(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "implement")
	f := addJobFlags(fs, "implement", "the issue to implement", "the branch PRs target")
	planDir := fs.String("plan", "", "the OpenSpec change directory, relative to the workspace (default: the record's stage.plan)")
	attempt := fs.Int("attempt", 0, "this Job's number for the item (default: the dispatch input, else the record's + 1)")
	model := fs.String("model", "", "override the first model of the ladder")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	s, code := env.startJob("implement", f)
	if s == nil {
		return code
	}
	if *attempt == 0 && s.ev.Inputs != nil {
		if n, err := strconv.Atoi(strings.TrimSpace(s.ev.Inputs["attempt"])); err == nil {
			*attempt = n
		}
	}
	cfg := s.cfg
	if *model != "" {
		cfg.Models[0].Name = *model
	}
	k, code := env.openJob(ctx, implement.Phase(), s, f, *attempt, map[string]string{"attempt": strconv.Itoa(*attempt)})
	if k == nil {
		return code
	}
	defer k.Close()
	res, err := k.Implement(ctx, job.ImplementRun{PlanDir: *planDir})
	if err != nil {
		env.Errorf("implement: %v", err)
		s.io.Error("", 0, k.Masker.Mask(err.Error()))
		if res.Result == "" {
			return ExitInternal
		}
	}
	_ = s.io.SetOutput("trace_file", *f.traceFile)
	if err := s.io.AddSummary(implementSummary(s.issue, res, k.Trace.Events(), k.IsolationNote())); err != nil {
		env.Errorf("step summary: %v", err)
	}
	if *f.json {
		if code := env.JSON(res); code != ExitOK {
			return code
		}
	}
	if res.Result == record.ResultStopped {
		return ExitFindings
	}
	return ExitOK
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
	fmt.Fprintf(&b, "Item spend: %d tokens in, %d out, $%.4f over %d model calls (this Job: %d calls).\n\n",
		res.Spend.TokensIn, res.Spend.TokensOut, res.Spend.USD, res.Spend.ModelCalls, res.JobSpend.ModelCalls)
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
