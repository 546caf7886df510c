package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/job"
	"github.com/roadmap-dev/roadmap/internal/kernel"
	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/stage"
)

// stageOptions are `roadmap stage`'s flags, parsed.
type stageOptions struct {
	Job    jobOptions
	Rounds int
}

// runStage is `roadmap stage`: one stage Job for an issue, from the issue to
// a checked plan in a draft PR (or the item returned with the findings).
func runStage(ctx context.Context, env *Env, args []string) int {
	return stageCmd(ctx, env.factory(), args, stageRun)
}

// stageCmd parses stage's flags into its options, then calls runF.
func stageCmd(ctx context.Context, f *Factory, args []string, runF func(context.Context, *Factory, *stageOptions) int) int {
	env, o := f.env, &stageOptions{}
	fs := newFlags(env, "stage")
	addJobFlags(fs, &o.Job, "stage", "the issue to plan", "the branch the draft PR targets")
	fs.IntVar(&o.Rounds, "rounds", 0, "the planner's revision rounds (default: configuration stage.rounds)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if o.Rounds < 0 {
		env.Errorf("stage: --rounds must not be negative")
		return ExitUsage
	}
	if code := env.parsedJob("stage", &o.Job); code != ExitOK {
		return code
	}
	return runF(ctx, f, o)
}

// stageRun runs the stage Job and reports its findings and result.
func stageRun(ctx context.Context, f *Factory, o *stageOptions) int {
	env := f.env
	s, code := env.startJob("stage", &o.Job)
	if s == nil {
		return code
	}
	k, code := env.openJob(ctx, stage.Phase(), s, &o.Job, 0, nil)
	if k == nil {
		return code
	}
	defer k.Close()
	res, err := k.Stage(ctx, job.StageRun{Rounds: o.Rounds})
	if err != nil {
		env.Errorf("stage: %v", err)
		s.io.Error("", 0, k.Masker.Mask(err.Error()))
		return ExitInternal
	}
	for _, fd := range res.Findings {
		switch fd.Level {
		case plan.LevelError:
			s.io.Error(fd.File, fd.Line, k.Masker.Mask(fd.Rule+": "+fd.Message))
		case plan.LevelWarning:
			s.io.Warning(fd.File, fd.Line, k.Masker.Mask(fd.Rule+": "+fd.Message))
		}
	}
	_ = s.io.SetOutput("trace_file", o.Job.TraceFile)
	if err := s.io.AddSummary(k.Masker.Mask(stageSummary(s.issue, res, k.IsolationNote()))); err != nil {
		env.Errorf("step summary: %v", err)
	}
	if o.Job.JSON {
		if code := env.JSON(res); code != ExitOK {
			return code
		}
	}
	if res.Result == stage.ResultStopped {
		return ExitFindings
	}
	return ExitOK
}

// stageSummary is the step summary of a stage Job.
func stageSummary(issue int, res stage.Result, note string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### roadmap stage · issue #%d: %s\n\n", issue, res.Result)
	if note != "" {
		b.WriteString("> [!WARNING]\n> " + note + "\n\n")
	}
	if res.PR > 0 {
		fmt.Fprintf(&b, "The plan `%s` is in draft PR #%d after %d round(s).\n\n", res.Plan, res.PR, res.Rounds)
	}
	if res.Reason != "" {
		fmt.Fprintf(&b, "%s: %s\n\n", res.Failure, res.Reason)
	}
	if len(res.Findings) > 0 {
		b.WriteString("| level | where | rule | finding |\n|---|---|---|---|\n")
		for _, f := range res.Findings {
			fmt.Fprintf(&b, "| %s | `%s:%d` | %s | %s |\n", f.Level, summaryCell(f.File), f.Line, summaryCell(f.Rule), summaryCell(f.Message))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "Spend: this Job %s; the item %s.\n", kernel.SpendText(res.JobSpend), kernel.SpendText(res.Spend))
	return b.String()
}

// summaryCell is text made safe for one cell of a Markdown table.
func summaryCell(s string) string {
	return strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "|", "\\|")
}
