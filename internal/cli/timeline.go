package cli

import (
	"fmt"
	"math"
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

// bar is one row of the timeline: a span, a group or a milestone of a Job.
type bar struct {
	section    string // the Job: "stage Job 1"
	name       string
	tags       string // Mermaid's: "milestone", "done", "crit", "crit, milestone"
	start, end time.Time
}

// timelineBars is what the timeline draws, in the order the Jobs ran: each
// Job's start and end, its task groups and spans, a group it never ended
// and, when it wrote no end, its being killed.
func timelineBars(traces []jobTrace) []bar {
	var bars []bar
	for _, t := range traces {
		section := jobLabel(t)
		task := func(name, tags string, start, end time.Time) {
			if !end.After(start) {
				end = start.Add(time.Millisecond)
			}
			bars = append(bars, bar{section: section, name: name, tags: tags, start: start, end: end})
		}
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
	return bars
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
	section := ""
	for id, r := range timelineBars(traces) {
		if r.section != section {
			section = r.section
			fmt.Fprintf(&b, "    section %s\n", trace.MermaidText(section, 60))
		}
		tags := r.tags
		if tags != "" {
			tags += ", "
		}
		fmt.Fprintf(&b, "    %s :%st%d, %d, %d\n", trace.MermaidText(r.name, 60), tags, id+1, r.start.UnixMilli(), r.end.UnixMilli())
	}
	b.WriteString("```\n")
	return b.String()
}

// timelineSVG draws the same bars as an SVG picture a README can show: a
// row a bar, its name on the left, its length to scale in seconds from the
// first Job's start, a band a Job. Times are relative, so two plays of the
// same item draw nearly the same picture.
func timelineSVG(title string, traces []jobTrace) string {
	bars := timelineBars(traces)
	const (
		left, width, row, top = 250, 560, 18, 44
	)
	var t0, t1 time.Time
	for i, r := range bars {
		if i == 0 || r.start.Before(t0) {
			t0 = r.start
		}
		if r.end.After(t1) {
			t1 = r.end
		}
	}
	total := t1.Sub(t0).Seconds()
	if total <= 0 {
		total = 1
	}
	x := func(t time.Time) float64 { return left + width*t.Sub(t0).Seconds()/total }
	rows := len(bars) // a row a bar, and one a Job for its name
	for i, r := range bars {
		if i == 0 || r.section != bars[i-1].section {
			rows++
		}
	}
	height := top + row*rows + 30
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		left+width+20, height, left+width+20, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="#ffffff"/>`+"\n")
	fmt.Fprintf(&b, `<text x="10" y="20" font-size="14" font-weight="bold">%s</text>`+"\n", svgText(title))
	section, n := "", 0
	for _, r := range bars {
		if r.section != section {
			section = r.section
			// The Job's band: a line, its name on a row of its own.
			y := top + row*n
			fmt.Fprintf(&b, `<line x1="10" y1="%d" x2="%d" y2="%d" stroke="#cccccc"/>`+"\n", y, left+width, y)
			fmt.Fprintf(&b, `<text x="10" y="%d" font-weight="bold">%s</text>`+"\n", y+14, svgText(section))
			n++
		}
		y := top + row*n
		n++
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", left-6, y+12, svgText(r.name))
		fill := "#4c78a8"
		switch {
		case strings.Contains(r.tags, "crit"):
			fill = "#d62728"
		case strings.Contains(r.tags, "done"):
			fill = "#59a14f"
		}
		if strings.Contains(r.tags, "milestone") {
			cx, cy := x(r.start), float64(y+8)
			fmt.Fprintf(&b, `<path d="M%.1f %.1f l6 6 l-6 6 l-6 -6 z" fill="%s"/>`+"\n", cx, cy-6, fill)
			continue
		}
		w := x(r.end) - x(r.start)
		if w < 1 {
			w = 1
		}
		fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"/>`+"\n", x(r.start), y+2, w, row-4, fill)
	}
	// The axis: seconds from the first Job's start.
	y := top + row*rows + 4
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333333"/>`+"\n", left, y, left+width, y)
	step := math.Max(1, math.Ceil(total/8/5)*5)
	for s := 0.0; s <= total; s += step {
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#333333">%.0fs</text>`+"\n", left+width*s/total, y+16, s)
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// svgText escapes text for an SVG element.
func svgText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
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
