package trace

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/roadmap-dev/roadmap/internal/text"
)

// Totals is what a run cost and how busy it was.
type Totals struct {
	TokensIn     int64   `json:"tokens_in"`
	TokensOut    int64   `json:"tokens_out"`
	USD          float64 `json:"usd"`
	ModelCalls   int     `json:"model_calls"`
	ToolCalls    int     `json:"tool_calls"`
	Retries      int     `json:"retries"`
	Checks       int     `json:"checks"`
	FailedChecks int     `json:"failed_checks"`
}

// Sum totals the events.
func Sum(events []Event) Totals {
	var t Totals
	for _, e := range events {
		switch e.Type {
		case TypeModelCall:
			t.TokensIn += e.TokensIn
			t.TokensOut += e.TokensOut
			t.USD += finite(e.USD)
			t.ModelCalls++
		case TypeToolCall:
			t.ToolCalls++
		case TypeRetry:
			t.Retries++
		case TypeCheckRun:
			t.Checks++
			if e.ExitCode != 0 {
				t.FailedChecks++
			}
		}
	}
	return t
}

// Step is one row of the summary table: a task group, or a Job-level step
// (a stage step named by Step, or a phase such as watch).
type Step struct {
	// Key tells rows apart: "group 2", "step plan", "phase watch".
	Key   string `json:"key"`
	Label string `json:"label"`
	Group int    `json:"group,omitempty"`
	// Result: passed, failed or unfinished for a group; else the Outcome of
	// the step's last span, or "".
	Result string `json:"result,omitempty"`
	// Attempts counts agent rounds (finished ones, plus one still running
	// when calls follow the last); a step without agent rounds counts its
	// spans, and at least 1.
	Attempts  int     `json:"attempts"`
	TokensIn  int64   `json:"tokens_in"`
	TokensOut int64   `json:"tokens_out"`
	USD       float64 `json:"usd"`
	// LastFailure is the step's last check_run with a non-zero exit code.
	LastFailure *Event `json:"last_failure,omitempty"`
}

// Steps groups the events (oldest first) into the rows of the summary table,
// in the order the steps first appear. Job start and end markers belong to no
// step.
func Steps(events []Event) []Step {
	var rows []*stepAcc
	index := map[string]*stepAcc{}
	for i := range events {
		e := events[i]
		key, label, ok := stepKey(e)
		if !ok {
			continue
		}
		acc := index[key]
		if acc == nil {
			acc = &stepAcc{Step: Step{Key: key, Label: label, Group: e.Group}}
			index[key] = acc
			rows = append(rows, acc)
		}
		acc.add(e)
	}
	out := make([]Step, 0, len(rows))
	for _, acc := range rows {
		out = append(out, acc.step())
	}
	return out
}

type stepAcc struct {
	Step
	agentSpans int
	spans      int
	active     bool // model or tool calls since the last agent span
	lastSpan   string
}

func (a *stepAcc) add(e Event) {
	switch e.Type {
	case TypeModelCall:
		a.TokensIn += e.TokensIn
		a.TokensOut += e.TokensOut
		a.USD += finite(e.USD)
		a.active = true
	case TypeToolCall:
		a.active = true
	case TypeCheckRun:
		if e.ExitCode != 0 {
			a.LastFailure = &e
		}
	case TypePhase:
		switch {
		case e.Phase == PhaseGroupStarted:
			a.Result = "unfinished"
			if e.Step != "" {
				a.Label = groupLabel(e.Group, e.Step)
			}
		case e.Phase == PhaseGroupPassed:
			a.Result = "passed"
		case e.Phase == PhaseGroupFailed:
			a.Result = "failed"
		case e.Phase == PhaseAgent:
			a.agentSpans += max(e.Attempt, 1)
			a.active = false
			a.lastSpan = e.Outcome
		case e.Phase.Span():
			a.spans++
			a.lastSpan = e.Outcome
		}
	}
}

func (a *stepAcc) step() Step {
	s := a.Step
	switch {
	case a.agentSpans > 0 || a.active:
		s.Attempts = a.agentSpans
		if a.active {
			s.Attempts++
		}
	case a.spans > 0:
		s.Attempts = a.spans
	default:
		s.Attempts = 1
	}
	if s.Group == 0 && s.Result == "" {
		s.Result = a.lastSpan
	}
	return s
}

func stepKey(e Event) (key, label string, ok bool) {
	if e.Type == TypePhase && (e.Phase == PhaseJobStarted || e.Phase.End()) {
		return "", "", false
	}
	switch {
	case e.Group > 0:
		return "group " + strconv.Itoa(e.Group), groupLabel(e.Group, ""), true
	case e.Step != "":
		return "step " + e.Step, e.Step, true
	case e.Type == TypePhase:
		return "phase " + string(e.Phase), string(e.Phase), true
	case e.Type == TypeCheckRun:
		return "phase " + string(PhaseChecks), string(PhaseChecks), true
	}
	return "job", "job", true
}

// groupLabel is "N. Title", as tasks.md heads the group; a title that already
// starts with its number is kept as it is.
func groupLabel(group int, title string) string {
	n := strconv.Itoa(group)
	if title == "" {
		return "group " + n
	}
	if strings.HasPrefix(title, n+".") || strings.HasPrefix(title, n+" ") {
		return title
	}
	return n + ". " + title
}

// JobResult is the end the events record for the Job — ready, yielded,
// stopped or returned, with the Outcome of that marker in parentheses when it
// has one (a failure class) — or "" when the Job has not ended (or was
// killed).
func JobResult(events []Event) string {
	for i := len(events) - 1; i >= 0; i-- {
		e := events[i]
		if e.Type == TypePhase && e.Phase.End() {
			if e.Outcome != "" {
				return string(e.Phase) + " (" + e.Outcome + ")"
			}
			return string(e.Phase)
		}
	}
	return ""
}

// SummaryTable renders the steps of the events as a Markdown table for the
// stop comment and the step summary: per step its result, attempts, tokens
// in and out, cost and last failing command with its exit code, then a total
// row. Text from events is escaped so it cannot break the table, start a
// mention or inject markup.
func SummaryTable(events []Event) string {
	if len(events) == 0 {
		return "_No trace events were recorded._\n"
	}
	var b strings.Builder
	b.WriteString("| Step | Result | Attempts | Tokens in | Tokens out | Cost | Last failing command |\n")
	b.WriteString("|---|---|--:|--:|--:|--:|---|\n")
	steps := Steps(events)
	attempts := 0
	for _, s := range steps {
		attempts += s.Attempts
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s | %s |\n",
			mdText(s.Label), mdText(dash(s.Result)), s.Attempts,
			Thousands(s.TokensIn), Thousands(s.TokensOut), formatUSD(s.USD), failingCommand(s.LastFailure))
	}
	var last *Event
	for i := range events {
		if events[i].Type == TypeCheckRun && events[i].ExitCode != 0 {
			last = &events[i]
		}
	}
	t := Sum(events)
	fmt.Fprintf(&b, "| **Total** | %s | %d | %s | %s | %s | %s |\n",
		mdText(dash(JobResult(events))), attempts,
		Thousands(t.TokensIn), Thousands(t.TokensOut), formatUSD(t.USD), failingCommand(last))
	return b.String()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// maxCellCommand bounds a command in a table cell; the artifact has it whole.
const maxCellCommand = 120

func failingCommand(e *Event) string {
	if e == nil {
		return "-"
	}
	return mdCode(e.Command, maxCellCommand) + " (exit " + strconv.Itoa(e.ExitCode) + ")"
}

// mdText escapes s for a Markdown table cell: one line, Markdown punctuation
// backslash-escaped, and '@' followed by a zero-width space so a name in a
// step label never mentions anyone.
func mdText(s string) string {
	s = text.OneLine(s)
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\\', '|', '*', '_', '`', '<', '>', '[', ']', '~', '&', '#':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '@':
			b.WriteString("@\u200b")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mdCode puts s in a code span that survives a table: a fence longer than any
// backtick run in s, and '|' escaped (GitHub's table parser reads "\|" as a
// pipe even inside code).
func mdCode(s string, n int) string {
	s = cutRunes(text.OneLine(s), n)
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	s = strings.ReplaceAll(s, "|", `\|`)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// cutRunes cuts s to n characters, the last one an ellipsis when cut.
func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n-1 {
			return s[:j] + "…"
		}
		i++
	}
	return s
}

// Thousands writes n with commas, as the tables show counts: 18,230.
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
