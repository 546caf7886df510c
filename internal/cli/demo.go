package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/roadmap-dev/roadmap/internal/demo"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// demoOptions are `roadmap demo`'s flags, parsed.
type demoOptions struct {
	Keep    string
	JSON    bool
	Verbose bool
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
	fs.StringVar(&o.Keep, "keep", "", "leave the demo's state (fake GitHub, repositories, traces, the step summary and a timeline, Mermaid and SVG) in this `DIR`")
	fs.BoolVar(&o.JSON, "json", false, "print the final state as one JSON object")
	fs.BoolVar(&o.Verbose, "verbose", false, "print the Jobs' and report's own log lines under the steps, and the PR comment, the record and the dashboard at the end")
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
	fmt.Fprintln(progress, demo.Header)
	start := time.Now()
	do := demo.Options{
		Dir:      o.Keep,
		Progress: progress,
		Command: func(ctx context.Context, args []string) *exec.Cmd {
			return exec.CommandContext(ctx, self, args...)
		},
	}
	if o.Verbose {
		do.Log = progress
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
	return demoOutput(env, sum, kept, o, start)
}

// demoOutput prints the final state, and says whether the item ended ready
// with its spend matching the Jobs'.
func demoOutput(env *Env, sum *demo.Summary, kept keptFiles, o *demoOptions, start time.Time) int {
	if o.JSON {
		if code := env.JSON(struct {
			*demo.Summary
			keptFiles
		}{sum, kept}); code != ExitOK {
			return code
		}
	} else {
		sum.Print(env.Stdout, o.Verbose)
		fmt.Fprintf(env.Stdout, "done in %.1fs\n", time.Since(start).Seconds())
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

// keepTimeline writes the Jobs' timeline (Mermaid, and a picture in SVG)
// from their traces in keep.
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
	kept.TimelineSVG = filepath.Join(keep, demoTimelineSVG)
	title := fmt.Sprintf("roadmap demo, the Jobs of issue #%d", issue)
	for path, body := range map[string]string{kept.Timeline: timelineMarkdown(title, traces), kept.TimelineSVG: timelineSVG(title, traces)} {
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			env.Errorf("demo: %v", err)
			return ExitInternal
		}
	}
	return ExitOK
}

// demoRun plays the demo: demo.Run, or a stand-in of a test's that sees
// the options runDemo passes without playing a whole item.
var demoRun = demo.Run

// The files a kept demo adds beside the state, named at its end.
const (
	demoStepSummary = demo.StepSummaryFile
	demoTimeline    = demo.TimelineFile
	demoTimelineSVG = "timeline.svg"
)

// keptFiles are the paths of those files, in --json too.
type keptFiles struct {
	StepSummary string `json:"step_summary,omitempty"`
	Timeline    string `json:"timeline,omitempty"`
	TimelineSVG string `json:"timeline_svg,omitempty"`
}
