package trace

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/text"
)

// maxTimelineBars bounds the bars of a timeline; past it the oldest go, so a
// long run still renders and the end, where a stop happened, is kept.
const maxTimelineBars = 100

// mermaidLayout matches the dateFormat the timeline declares. Whole seconds:
// Mermaid parses task dates with that format, strictly.
const mermaidLayout = "2006-01-02 15:04:05"

type bar struct {
	section int
	label   string
	tag     string // done, crit or active
	start   time.Time
	end     time.Time
}

// Timeline draws the events (oldest first) as a Mermaid gantt chart in a
// fenced block, for the step summary: one section per task group (and one
// for the Job), a bar per group from group_started to group_passed or
// group_failed, a bar per span phase (agent rounds, checks, commit, push,
// watch), a bar per check_run when its group recorded no checks span, and a
// bar per retry wait of a second or more. Failed spans and checks are "crit";
// a group still open at the end of the trace (a killed Job) is "active" and
// runs to the last event. Times are UTC, rounded to the second. At most 100 bars are
// drawn, the newest. It returns "" when there is nothing to draw.
func Timeline(events []Event) string {
	hasChecksSpan := map[int]bool{}
	var last time.Time
	for _, e := range events {
		if e.Type == TypePhase && e.Phase == PhaseChecks {
			hasChecksSpan[e.Group] = true
		}
		if e.Time.After(last) {
			last = e.Time
		}
	}

	var sections []string
	sectionIndex := map[int]int{}
	sectionOf := func(group int) int {
		if i, ok := sectionIndex[group]; ok {
			return i
		}
		sectionIndex[group] = len(sections)
		if group == 0 {
			sections = append(sections, "Job")
		} else {
			sections = append(sections, groupLabel(group, ""))
		}
		return len(sections) - 1
	}

	var bars []bar
	open := map[int]int{} // group -> index of its open bar
	agentRounds := map[int]int{}
	closeGroup := func(group int, at time.Time, tag string) {
		if i, ok := open[group]; ok {
			bars[i].end, bars[i].tag = at, tag
			delete(open, group)
		}
	}
	for _, e := range events {
		if e.Time.IsZero() {
			continue
		}
		switch e.Type {
		case TypePhase:
			switch {
			case e.Phase == PhaseGroupStarted:
				closeGroup(e.Group, e.Time, "active")
				s := sectionOf(e.Group)
				if e.Step != "" && e.Group > 0 {
					sections[s] = groupLabel(e.Group, e.Step)
				}
				open[e.Group] = len(bars)
				bars = append(bars, bar{section: s, label: "group " + strconv.Itoa(e.Group), start: e.Time})
			case e.Phase == PhaseGroupPassed:
				closeGroup(e.Group, e.Time, "done")
			case e.Phase == PhaseGroupFailed:
				closeGroup(e.Group, e.Time, "crit")
			case e.Phase.Span():
				label := string(e.Phase)
				if e.Phase == PhaseAgent {
					agentRounds[e.Group]++
					label += " " + strconv.Itoa(agentRounds[e.Group])
				}
				bars = append(bars, bar{section: sectionOf(e.Group), label: label,
					tag: outcomeTag(e.Outcome), start: e.Time.Add(-e.Duration), end: e.Time})
			}
		case TypeCheckRun:
			if hasChecksSpan[e.Group] {
				continue
			}
			tag := "done"
			if e.ExitCode != 0 {
				tag = "crit"
			}
			bars = append(bars, bar{section: sectionOf(e.Group), label: "check " + e.Command,
				tag: tag, start: e.Time.Add(-e.Duration), end: e.Time})
		case TypeRetry:
			if e.Wait < time.Second {
				continue
			}
			bars = append(bars, bar{section: sectionOf(e.Group), label: "wait " + e.Reason,
				start: e.Time, end: e.Time.Add(e.Wait)})
		}
	}
	for _, i := range open {
		bars[i].end, bars[i].tag = last, "active"
	}
	if len(bars) == 0 {
		return ""
	}
	total := len(bars)
	if total > maxTimelineBars {
		bars = bars[total-maxTimelineBars:]
	}

	var b strings.Builder
	b.WriteString("```mermaid\ngantt\n")
	title := "Job " + strconv.Itoa(events[len(events)-1].Job)
	if r := JobResult(events); r != "" {
		title += ", " + r
	}
	title += ", times in UTC"
	if total > maxTimelineBars {
		title += fmt.Sprintf(", last %d of %d bars", maxTimelineBars, total)
	}
	fmt.Fprintf(&b, "    title %s\n", MermaidText(title, 120))
	b.WriteString("    dateFormat YYYY-MM-DD HH:mm:ss\n")
	b.WriteString("    axisFormat %H:%M:%S\n")
	b.WriteString("    todayMarker off\n")
	id := 0
	for s, name := range sections {
		wrote := false
		for _, br := range bars {
			if br.section != s {
				continue
			}
			if !wrote {
				fmt.Fprintf(&b, "    section %s\n", MermaidText(name, 60))
				wrote = true
			}
			id++
			start := br.start.UTC().Round(time.Second)
			end := br.end.UTC().Round(time.Second)
			if !end.After(start) {
				end = start.Add(time.Second)
			}
			tags := ""
			if br.tag != "" {
				tags = br.tag + ", "
			}
			fmt.Fprintf(&b, "    %s :%st%d, %s, %s\n", MermaidText(br.label, 60), tags, id,
				start.Format(mermaidLayout), end.Format(mermaidLayout))
		}
	}
	b.WriteString("```\n")
	return b.String()
}

func outcomeTag(outcome string) string {
	switch strings.ToLower(outcome) {
	case "failed", "failure", "error", "refused", "timeout", "conflict":
		return "crit"
	}
	return "done"
}

// MermaidText makes s safe as a gantt title, section or task name: Mermaid's
// lexer ends a name at ':' and starts a comment at '#' or '%', and ';' and a
// line break end a statement; '<' and '>' could read as HTML. Those become
// spaces, runs of spaces one, and the result is cut to n characters.
func MermaidText(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		switch r {
		case ':', '#', ';', '%', '<', '>', '{', '}', '`', '"':
			return ' '
		}
		return r
	}, s)
	s = cutRunes(text.OneLine(s), n)
	if s == "" {
		return "step"
	}
	return s
}
