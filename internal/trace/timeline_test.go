package trace

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestTimelineGolden(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			golden(t, sc.name+".timeline.golden", Timeline(sc.run(t)))
		})
	}
}

// The rules of Mermaid's gantt lexer a chart must keep (mermaid-js
// packages/mermaid/src/diagrams/gantt/parser/gantt.jison): a task is a name
// without '#', ':', ';' or a line break, then ':' and data without '#' or
// ';'; a section name has none of '#', ':', ';'; '%' after any character
// starts a comment; the lexer is case-insensitive and tries keywords before
// task names, so a name must not start with one.
var (
	mermaidTask     = regexp.MustCompile(`^    ([^#:;%\n]+) :(?:(done|crit|active), )?(t\d+), (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d), (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)$`)
	mermaidSection  = regexp.MustCompile(`^    section [^#:;%\n]+$`)
	mermaidKeywords = regexp.MustCompile(`(?i)^(gantt|dateformat|inclusiveenddates|topaxis|axisformat|tickinterval|includes|excludes|todaymarker|weekday|title|accdescription|acctitle|accdescr|section|click|href|call|\d{4}-\d\d-\d\d)`)
)

// checkMermaid checks a timeline against those rules and returns its bars.
func checkMermaid(t *testing.T, chart string) (bars int) {
	t.Helper()
	lines := strings.Split(chart, "\n")
	head := []string{"```mermaid", "gantt"}
	for i, want := range head {
		if lines[i] != want {
			t.Fatalf("line %d = %q, want %q", i+1, lines[i], want)
		}
	}
	if got := lines[len(lines)-2]; got != "```" || lines[len(lines)-1] != "" {
		t.Fatalf("chart does not end with a closing fence and newline: %q", chart)
	}
	ids := map[string]bool{}
	for i, line := range lines[2 : len(lines)-2] {
		n := i + 3
		switch {
		case strings.HasPrefix(line, "    title "):
			if strings.ContainsAny(line, "#;%") {
				t.Errorf("line %d: title holds a comment or statement break: %q", n, line)
			}
		case line == "    dateFormat YYYY-MM-DD HH:mm:ss", line == "    axisFormat %H:%M:%S", line == "    todayMarker off":
		case strings.HasPrefix(line, "    section "):
			if !mermaidSection.MatchString(line) {
				t.Errorf("line %d: bad section %q", n, line)
			}
		default:
			m := mermaidTask.FindStringSubmatch(line)
			if m == nil {
				t.Errorf("line %d: not a task Mermaid reads: %q", n, line)
				continue
			}
			if mermaidKeywords.MatchString(strings.TrimSpace(m[1])) {
				t.Errorf("line %d: task name starts with a keyword: %q", n, m[1])
			}
			if ids[m[3]] {
				t.Errorf("line %d: task id %s used twice", n, m[3])
			}
			ids[m[3]] = true
			start, err1 := time.Parse(mermaidLayout, m[4])
			end, err2 := time.Parse(mermaidLayout, m[5])
			if err1 != nil || err2 != nil || !end.After(start) {
				t.Errorf("line %d: bar from %s to %s is not a forward span", n, m[4], m[5])
			}
			bars++
		}
	}
	return bars
}

func TestTimelineIsValidMermaid(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			if bars := checkMermaid(t, Timeline(sc.run(t))); bars == 0 {
				t.Error("timeline has no bars")
			}
		})
	}
}

func TestTimelineBars(t *testing.T) {
	chart := Timeline(runStopped(t))
	for _, want := range []string{
		"    title Job 2, stopped (checks_failed), times in UTC\n",
		"    section 2. Compute the delay, capped at one hour\n",
		// The retry waited 30 s from the moment it was recorded.
		"    wait rate_limited :",
		"    agent 3 :done, ",
		"    checks :crit, ",
		"    group 2 :crit, ",
		"    group 1 :done, ",
	} {
		if !strings.Contains(chart, want) {
			t.Errorf("timeline lacks %q:\n%s", want, chart)
		}
	}
	// Checks spans were recorded, so single check runs are not drawn.
	if strings.Contains(chart, "check go test") {
		t.Errorf("timeline draws check runs next to their checks span:\n%s", chart)
	}
}

func TestTimelineKilledGroupRunsToLastEvent(t *testing.T) {
	events := runKilled(t)
	chart := Timeline(events)
	last := events[len(events)-1].Time.UTC().Round(time.Second).Format(mermaidLayout)
	if !strings.Contains(chart, "    group 3 :active, t1, ") || !strings.Contains(chart, last+"\n") {
		t.Errorf("open group is not drawn active up to %s:\n%s", last, chart)
	}
}

func TestTimelineKeepsNewestBars(t *testing.T) {
	r := newRunner(t, 1)
	for i := 1; i <= 150; i++ {
		r.check(1, fmt.Sprintf("go test -run Test%d", i), 0, time.Second)
	}
	chart := Timeline(r.rec.Events())
	if got := checkMermaid(t, chart); got != maxTimelineBars {
		t.Errorf("bars = %d, want %d", got, maxTimelineBars)
	}
	if !strings.Contains(chart, "last 100 of 150 bars") || !strings.Contains(chart, "Test150 ") || strings.Contains(chart, "Test50 ") {
		t.Errorf("timeline does not keep the newest 100 bars:\n%s", chart)
	}
}

func TestMermaidText(t *testing.T) {
	for in, want := range map[string]string{
		"a: b # c; d % e": "a b c d e",
		"line\nbreak":     "line break",
		"<b>x</b>":        "b x /b",
		":#;":             "step",
	} {
		if got := MermaidText(in, 60); got != want {
			t.Errorf("MermaidText(%q) = %q, want %q", in, got, want)
		}
	}
}
