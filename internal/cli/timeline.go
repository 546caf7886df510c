package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/trace"
)

// The demo's timeline: a Mermaid gantt chart of the item's Jobs, drawn from
// the JSONL traces the Jobs wrote (trace-*.jsonl in the kept directory), so
// it shows what this run did and when: each Job a section, each task group
// and span (agent, checks, commit, push, watch, gates, verifier) a bar, the
// Job's start and end milestones, and a Job that wrote no end as killed.

// jobTrace is the events of one trace file.
type jobTrace struct {
	name   string // the file's base name
	events []trace.Event
}

// readTraces reads every trace-*.jsonl in dir, in the order the Jobs ran.
func readTraces(dir string) ([]jobTrace, error) {
	files, err := filepath.Glob(filepath.Join(dir, "trace-*.jsonl"))
	if err != nil {
		return nil, err
	}
	var out []jobTrace
	for _, f := range files {
		r, err := os.Open(f)
		if err != nil {
			return nil, err
		}
		evs, err := trace.ReadJSONL(r)
		r.Close()
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", f, err)
		}
		if len(evs) > 0 {
			out = append(out, jobTrace{name: filepath.Base(f), events: evs})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].events[0].Time.Before(out[j].events[0].Time) })
	return out, nil
}

// timelineMarkdown renders the traces as a Markdown page holding one
// ```mermaid gantt block; title heads it.
func timelineMarkdown(title string, traces []jobTrace) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", title)
	b.WriteString("Drawn from the Jobs' traces (")
	for i, t := range traces {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "`%s`", t.name)
	}
	b.WriteString("): a section per Job, a bar per task group and span, times in UTC.\n\n")
	b.WriteString("```mermaid\ngantt\n")
	fmt.Fprintf(&b, "    title %s\n", trace.MermaidText(title, 120))
	b.WriteString("    dateFormat x\n    axisFormat %H:%M:%S\n")
	id := 0
	task := func(name, tags string, start, end time.Time) {
		id++
		if !end.After(start) {
			end = start.Add(time.Millisecond)
		}
		if tags != "" {
			tags += ", "
		}
		fmt.Fprintf(&b, "    %s :%st%d, %d, %d\n", trace.MermaidText(name, 60), tags, id, start.UnixMilli(), end.UnixMilli())
	}
	for _, t := range traces {
		fmt.Fprintf(&b, "    section %s\n", trace.MermaidText(jobLabel(t), 60))
		evs := t.events
		last := evs[len(evs)-1]
		ended := false
		open := map[int]trace.Event{} // group → its group_started
		for _, e := range evs {
			if e.Type != trace.TypePhase {
				continue
			}
			switch {
			case e.Phase == trace.PhaseJobStarted:
				task("started", "milestone", e.Time, e.Time)
			case e.Phase == trace.PhaseGroupStarted:
				open[e.Group] = e
			case e.Phase == trace.PhaseGroupPassed || e.Phase == trace.PhaseGroupFailed:
				start := e.Time.Add(-e.Duration)
				if s, ok := open[e.Group]; ok {
					start = s.Time
				}
				word := "passed"
				if e.Phase == trace.PhaseGroupFailed {
					word = "failed"
				}
				task(groupLabel(e.Group, open[e.Group].Step)+" "+word, "done", start, e.Time)
				delete(open, e.Group)
			case e.Phase.Span():
				name := string(e.Phase)
				if e.Group > 0 {
					name = fmt.Sprintf("group %d %s", e.Group, e.Phase)
				} else if e.Step != "" && e.Step != string(e.Phase) {
					name = e.Step + " " + string(e.Phase)
				}
				task(name, "", e.Time.Add(-e.Duration), e.Time)
			case e.Phase.End() || e.Phase == trace.PhaseStaged:
				task(string(e.Phase), "milestone", e.Time, e.Time)
				ended = true
			}
		}
		// A group still open when the trace stops: the Job died inside it.
		groups := make([]int, 0, len(open))
		for g := range open {
			groups = append(groups, g)
		}
		sort.Ints(groups)
		for _, g := range groups {
			task(groupLabel(g, open[g].Step)+" (no end)", "crit", open[g].Time, last.Time)
		}
		if !ended {
			task("killed: no result", "crit, milestone", last.Time, last.Time)
		}
	}
	b.WriteString("```\n")
	return b.String()
}

// jobLabel names a trace's section: "stage Job 1", "implement Job 2".
func jobLabel(t jobTrace) string {
	kind := "implement"
	if strings.Contains(t.name, "stage") {
		kind = "stage"
	}
	return fmt.Sprintf("%s Job %d", kind, t.events[0].Job)
}

func groupLabel(n int, title string) string {
	if title == "" || title == fmt.Sprintf("group %d", n) {
		return fmt.Sprintf("group %d", n)
	}
	return fmt.Sprintf("group %d %s", n, title)
}
