package agent

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// DefaultSystem is the system prompt unless Config.System replaces it.
const DefaultSystem = `You are a careful software engineer working in a git repository, the workspace, through tools only.

- Paths are relative to the workspace root. Nothing outside it can be read or written, and .git is off limits.
- run executes one program with its arguments under a policy. There is no shell: no pipes, redirections, globs, variables or chained commands. Network tools, git push, git commit and package downloads are refused.
- Read before you change. Change files with edit_file (copy the old text exactly from read_file) or write_file.
- Run the commands that verify the task before you finish.
- Call finish(summary) when the task is done and verified; ask(question) only for a decision a person must make; plan_wrong(reason) when the task as planned cannot work.
- Every reply must call at least one tool.`

// EstimateTokens is the default estimate of a request's input tokens: a
// third of its bytes, plus a little per message. Tokenizers average about four
// bytes a token on English and code, so a third overestimates and a request
// is not rejected for size; llm's estimator is finer and can replace it.
func EstimateTokens(req ModelRequest) int64 {
	n := 0
	for _, m := range req.Messages {
		n += len(m.Role) + len(m.Content) + len(m.ToolCallID) + 16
		for _, c := range m.ToolCalls {
			n += len(c.ID) + len(c.Name) + len(c.Arguments) + 16
		}
	}
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Parameters) + 16
	}
	return int64(n/3 + 1)
}

// section is one "## Name" block of the first user message.
type section struct {
	name, text string
	priority   int
	required   bool // never dropped to fit the window
}

// taskSections assembles the first user message's sections: the task, the
// hand-off from an earlier stop, a person's answer, the latest failing
// check log of this step, then context by priority.
func taskSections(step Step, checkLogCap int, latestLog string) []section {
	secs := []section{{name: "Task", text: step.Task, required: true}}
	if step.CheckLog != "" || len(step.Conflict) > 0 {
		var b strings.Builder
		if step.CheckLog != "" {
			fmt.Fprintf(&b, "Its checks failed. The end of the check log:\n\n```\n%s\n```\n", tail(step.CheckLog, checkLogCap))
		}
		if len(step.Conflict) > 0 {
			b.WriteString("\nThese files were left in conflict; resolve them as part of the task:\n")
			for _, f := range step.Conflict {
				fmt.Fprintf(&b, "- %s\n", f)
			}
		}
		secs = append(secs, section{name: "The previous Job stopped", text: strings.TrimSpace(b.String()), required: true})
	}
	if step.Answer != "" {
		text := step.Answer
		if step.Question != "" {
			text = fmt.Sprintf("You asked: %s\n\nThe answer: %s", step.Question, step.Answer)
		}
		secs = append(secs, section{name: "Answer to your earlier question", text: text, required: true})
	}
	if latestLog != "" {
		secs = append(secs, section{name: "The checks failed",
			text:     fmt.Sprintf("An earlier attempt at this task finished, but the checks failed. Start afresh from the workspace as it is now. The end of the check log:\n\n```\n%s\n```", latestLog),
			required: true})
	}
	parts := append([]ContextPart(nil), step.Context...)
	sort.SliceStable(parts, func(i, j int) bool { return parts[i].Priority > parts[j].Priority })
	for _, p := range parts {
		secs = append(secs, section{name: p.Name, text: p.Text, priority: p.Priority})
	}
	return secs
}

func render(secs []section, dropped []string) string {
	var b strings.Builder
	for _, s := range secs {
		fmt.Fprintf(&b, "## %s\n\n%s\n\n", s.name, strings.TrimSpace(s.text))
	}
	if len(dropped) > 0 {
		fmt.Fprintf(&b, "(Context left out to fit the input window: %s.)\n", strings.Join(dropped, ", "))
	}
	return strings.TrimSpace(b.String())
}

// firstMessages builds a fresh conversation. With a window, optional context
// is dropped, lowest priority first (the later of equals first), until the
// request takes at most half the window: the other half is for the work (tool
// output, the model's replies). What was dropped is named in the prompt.
func (s *session) firstMessages(step Step, latestLog string, tier int) []Message {
	secs := taskSections(step, s.cfg.CheckLogCap, latestLog)
	system := s.cfg.System
	if system == "" {
		system = DefaultSystem
	}
	build := func(secs []section, dropped []string) []Message {
		return []Message{
			{Role: RoleSystem, Content: system},
			{Role: RoleUser, Content: render(secs, dropped)},
		}
	}
	var dropped []string
	msgs := build(secs, nil)
	for w := s.window(tier); w > 0 && s.cfg.Estimator(s.request(msgs, tier)) > w/2; {
		victim := -1
		for i := len(secs) - 1; i >= 0; i-- {
			if !secs[i].required && (victim < 0 || secs[i].priority < secs[victim].priority) {
				victim = i
			}
		}
		if victim < 0 {
			break // only required sections left; the budget check says the rest
		}
		dropped = append(dropped, secs[victim].name)
		secs = append(secs[:victim:victim], secs[victim+1:]...)
		msgs = build(secs, dropped)
	}
	return msgs
}

// repairMessage hands a failing check log back in the same conversation.
func repairMessage(log string, round int) Message {
	return Message{Role: RoleUser, Content: fmt.Sprintf(
		"## The checks failed (round %d)\n\nYou finished, but the checks failed. The end of the check log:\n\n```\n%s\n```\n\nFind the cause, fix it, run the checks yourself, then call finish again.",
		round, log)}
}

// elided replaces old tool output so a growing conversation fits the window.
const elided = "[output elided to fit the input window; run the tool again if you need it]"

// fit elides the oldest tool results until the request fits the window. It
// reports false when nothing is left to elide and it still does not fit.
func (s *session) fit(msgs []Message, tier int) bool {
	w := s.window(tier)
	if w <= 0 {
		return true
	}
	for i := range msgs {
		if s.cfg.Estimator(s.request(msgs, tier)) <= w {
			return true
		}
		// Keep the last exchange whole: it is what the model acts on next.
		if i >= len(msgs)-2 {
			break
		}
		if msgs[i].Role == RoleTool && len(msgs[i].Content) > len(elided) {
			msgs[i].Content = elided
		}
	}
	return s.cfg.Estimator(s.request(msgs, tier)) <= w
}

// tail keeps the last max bytes of a log, starting at a line when it can.
func tail(log string, max int) string {
	log = strings.TrimRight(log, "\n")
	if len(log) <= max {
		return log
	}
	cut := log[len(log)-max:]
	if i := strings.IndexByte(cut, '\n'); i >= 0 && i < len(cut)-1 {
		cut = cut[i+1:]
	}
	return "[... earlier lines cut ...]\n" + cut
}

var (
	durationRE = regexp.MustCompile(`\b\d+(\.\d+)?(ns|µs|us|ms|s|m|h)\b`)
	hexRE      = regexp.MustCompile(`0x[0-9a-fA-F]+`)
	spaceRE    = regexp.MustCompile(`\s+`)
)

// sameFailure compares two check logs without the parts that change between
// identical failures: timings and addresses.
func sameFailure(a, b string) bool {
	norm := func(s string) string {
		s = durationRE.ReplaceAllString(s, "D")
		s = hexRE.ReplaceAllString(s, "0x")
		return strings.TrimSpace(spaceRE.ReplaceAllString(s, " "))
	}
	return norm(a) == norm(b)
}
