package llm

import (
	"fmt"

	shape "github.com/roadmap-dev/roadmap/internal/text"

	"github.com/roadmap-dev/roadmap/internal/agent"
)

// Dropped says what FitMessages cut from a request.
type Dropped struct {
	Name string `json:"name"`
	// Tokens is the estimate of the whole message content.
	Tokens int `json:"tokens"`
	// Kept is the estimate of what stayed when the content was cut in the
	// middle rather than replaced by a stub; 0 means replaced whole.
	Kept int `json:"kept,omitempty"`
}

// truncateMiddle keeps a head and a longer tail (logs end with what matters)
// within limit tokens.
func truncateMiddle(text string, limit int, est Estimator) (string, bool) {
	build := func(n int) string {
		head := shape.Cut(text, n/3)
		tailStart := len(text) - (n - len(head))
		for tailStart < len(text) && tailStart > 0 && text[tailStart]&0xC0 == 0x80 {
			tailStart++
		}
		return head + fmt.Sprintf("\n[… %d bytes dropped to fit the input window …]\n", tailStart-len(head)) + text[tailStart:]
	}
	fits := func(n int) bool { return est(build(n)) <= limit }
	if !fits(0) {
		return "", false
	}
	lo, hi := 0, len(text)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return build(lo), true
}

// FitMessages holds a request under window tokens without changing its shape:
// no message is removed (tool calls keep their answers, and replay counts
// turns by assistant messages), only contents are cut. Oldest tool results go
// first, then older assistant text, then later user messages; the system
// prompt, the first user message (the task) and the newest message are kept,
// the newest being cut in the middle only as a last resort. window <= 0 means
// no limit.
func FitMessages(msgs []agent.Message, tools []agent.ToolSpec, window int, est Estimator) ([]agent.Message, []Dropped, error) {
	if est == nil {
		est = Estimate
	}
	total := EstimateRequest(agent.ModelRequest{Messages: msgs, Tools: tools}, est)
	if window <= 0 || total <= window {
		return msgs, nil, nil
	}
	out := append([]agent.Message(nil), msgs...)
	firstUser := -1
	for i, m := range out {
		if m.Role == agent.RoleUser {
			firstUser = i
			break
		}
	}
	toolNames := map[string]string{}
	for _, m := range out {
		for _, tc := range m.ToolCalls {
			toolNames[tc.ID] = tc.Name
		}
	}
	name := func(i int) string {
		m := out[i]
		if m.Role == agent.RoleTool {
			return fmt.Sprintf("message %d (%s result)", i, toolNames[m.ToolCallID])
		}
		return fmt.Sprintf("message %d (%s)", i, m.Role)
	}
	newest := len(out) - 1
	var candidates []int
	for _, class := range []agent.Role{agent.RoleTool, agent.RoleAssistant, agent.RoleUser} {
		for i, m := range out {
			if i != newest && i != firstUser && m.Role == class && m.Content != "" {
				candidates = append(candidates, i)
			}
		}
	}
	var dropped []Dropped
	for _, i := range candidates {
		if total <= window {
			break
		}
		before := est(out[i].Content)
		stub := fmt.Sprintf("[dropped to fit the input window: about %d tokens]", before)
		if est(stub) >= before {
			continue
		}
		out[i].Content = stub
		total -= before - est(stub)
		dropped = append(dropped, Dropped{Name: name(i), Tokens: before})
	}
	if total > window && newest >= 0 && newest != firstUser && out[newest].Role != agent.RoleSystem {
		before := est(out[newest].Content)
		if text, ok := truncateMiddle(out[newest].Content, before-(total-window), est); ok {
			out[newest].Content = text
			total -= before - est(text)
			dropped = append(dropped, Dropped{Name: name(newest), Tokens: before, Kept: est(text)})
		}
	}
	if total > window {
		return nil, dropped, &WindowError{Window: window, Need: total}
	}
	return out, dropped, nil
}
