package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/roadmap-dev/roadmap/internal/demo"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// demoOptions are `roadmap demo`'s flags, parsed.
type demoOptions struct {
	Keep string
	JSON bool
}

// runDemo is `roadmap demo`: the whole life of an item, locally, this
// binary's own verbs run against the fakes (internal/demo).
func runDemo(ctx context.Context, env *Env, args []string) int {
	return demoCmd(ctx, env.factory(), args, demoVerbRun)
}

// demoCmd parses demo's flags into its options, then calls runF.
func demoCmd(ctx context.Context, f *Factory, args []string, runF func(context.Context, *Factory, *demoOptions) int) int {
	env, o := f.env, &demoOptions{}
	fs := newFlags(env, "demo")
	fs.StringVar(&o.Keep, "keep", "", "leave the demo's state (fake GitHub, repositories, traces, the step summary and a timeline) in this `DIR`")
	fs.BoolVar(&o.JSON, "json", false, "print the final state as one JSON object")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	return runF(ctx, f, o)
}

// demoVerbRun runs the demo and prints its final state.
func demoVerbRun(ctx context.Context, f *Factory, o *demoOptions) int {
	env := f.env
	self, err := os.Executable()
	if err != nil {
		env.Errorf("demo: find the roadmap binary: %v", err)
		return ExitInternal
	}
	progress := env.Stdout
	if o.JSON {
		progress = env.Stderr
	}
	fmt.Fprintln(progress, "roadmap demo: the life of an item, locally, against the fakes")
	start := time.Now()
	do := demo.Options{
		Dir:      o.Keep,
		Progress: progress,
		Command: func(ctx context.Context, args []string) *exec.Cmd {
			return exec.CommandContext(ctx, self, args...)
		},
	}
	if !o.JSON {
		do.Render = env.termRenderer()
	}
	kept, err := keepSummary(o.Keep, &do)
	if err != nil {
		env.Errorf("demo: %v", err)
		return ExitInternal
	}
	sum, err := demoRun(ctx, do)
	if err != nil {
		env.Errorf("demo: %v", err)
		return ExitInternal
	}
	if o.Keep == "" {
		sum.Dir = ""
	} else if code := keepTimeline(env, o.Keep, sum.Issue, &kept); code != ExitOK {
		return code
	}
	return demoOutput(env, sum, kept, o.Keep, o.JSON, start)
}

// demoOutput prints the final state, and says whether the item ended ready
// with its spend matching the Jobs'.
func demoOutput(env *Env, sum *demo.Summary, kept keptFiles, keep string, asJSON bool, start time.Time) int {
	if asJSON {
		if code := env.JSON(struct {
			*demo.Summary
			keptFiles
		}{sum, kept}); code != ExitOK {
			return code
		}
	} else {
		sum.Print(env.Stdout)
		fmt.Fprintf(env.Stdout, "\ndone in %.1fs\n", time.Since(start).Seconds())
		explore(env.Stdout, keep, sum.Issue)
		if keep != "" {
			fmt.Fprintf(env.Stdout, "\nthe step summary (what GITHUB_STEP_SUMMARY got): %s\nthe timeline of the Jobs (Mermaid):             %s\n", kept.StepSummary, kept.Timeline)
		}
	}
	if sum.Result != record.ResultReady || !sum.SpendMatches() {
		env.Errorf("demo: the item ended %s (spend matches: %v)", sum.Result, sum.SpendMatches())
		return ExitFindings
	}
	return ExitOK
}

// keepSummary, with --keep DIR, makes the step summary file every Job
// appends to there, as the runner's GITHUB_STEP_SUMMARY file would get it.
func keepSummary(keep string, o *demo.Options) (keptFiles, error) {
	var kept keptFiles
	if keep == "" {
		return kept, nil
	}
	kept.StepSummary = filepath.Join(keep, demoStepSummary)
	if err := os.MkdirAll(keep, 0o755); err != nil {
		return kept, err
	}
	if err := os.WriteFile(kept.StepSummary, nil, 0o644); err != nil {
		return kept, err
	}
	o.ExtraEnv = append(o.ExtraEnv, "GITHUB_STEP_SUMMARY="+kept.StepSummary)
	return kept, nil
}

// keepTimeline writes the Jobs' timeline (Mermaid) from their traces in keep.
func keepTimeline(env *Env, keep string, issue int, kept *keptFiles) int {
	traces, err := readTraces(keep)
	if err == nil && len(traces) == 0 {
		err = errors.New("the Jobs left no trace")
	}
	if err != nil {
		env.Errorf("demo: the timeline: %v", err)
		return ExitInternal
	}
	kept.Timeline = filepath.Join(keep, demoTimeline)
	md := timelineMarkdown(fmt.Sprintf("roadmap demo, the Jobs of issue #%d", issue), traces)
	if err := os.WriteFile(kept.Timeline, []byte(md), 0o644); err != nil {
		env.Errorf("demo: %v", err)
		return ExitInternal
	}
	return ExitOK
}

// demoRun plays the demo: demo.Run, or a stand-in of a test's that sees
// the options runDemo passes without playing a whole item.
var demoRun = demo.Run

// The files a kept demo adds beside the state, named at its end.
const (
	demoStepSummary = "step-summary.md"
	demoTimeline    = "timeline.md"
)

// keptFiles are the paths of those files, in --json too.
type keptFiles struct {
	StepSummary string `json:"step_summary,omitempty"`
	Timeline    string `json:"timeline,omitempty"`
}

// explore says how to look at what the demo left with roadmap's own tools.
func explore(w io.Writer, keep string, issue int) {
	if keep == "" {
		fmt.Fprintln(w, "\nto explore what it leaves, run it again with --keep DIR")
		return
	}
	fmt.Fprintf(w, "\nexplore what it left (no token needed):\n")
	fmt.Fprintf(w, "  roadmap explain %d --state %s                         what ran, what it cost, what waits\n", issue, keep)
	fmt.Fprintf(w, "  roadmap explain %d --trace-file %s  the events of the continuation Job\n", issue, filepath.Join(keep, "trace-job-2.jsonl"))
	fmt.Fprintf(w, "  roadmap explain %d --trace-file %s  the Job that was killed\n", issue, filepath.Join(keep, "trace-job-1.jsonl"))
	fmt.Fprintf(w, "  git -C %s log --oneline --all                the branches and commits\n", filepath.Join(keep, "remote.git"))
}
