package llm

import (
	"fmt"
	"sort"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/agent"
)

// Part is one piece of context offered to a prompt: the system prompt, the
// task, a file, a search result, an earlier check log.
type Part struct {
	// Name says what the part is in reports ("file internal/x.go").
	Name string `json:"name"`
	Text string `json:"text"`
	// Priority orders trimming: lower goes first. Among equal priorities the
	// later part goes first, so callers list the most relevant first.
	Priority int `json:"priority"`
	// Required parts (system prompt, task) are never trimmed.
	Required bool `json:"required,omitempty"`
}

// Dropped says what Pack or FitMessages left out.
type Dropped struct {
	Name string `json:"name"`
	// Tokens is the estimate of the whole part.
	Tokens int `json:"tokens"`
	// Kept is the estimate of what stayed when the part was truncated rather
	// than dropped whole; 0 means dropped whole.
	Kept int `json:"kept,omitempty"`
}

// NoteName is the name of the part Pack appends to say what it left out.
const NoteName = "context-note"

// partOverhead covers the separator a caller puts between parts.
const partOverhead = 2

// minTruncated is the smallest truncated part worth keeping: below it the
// marker is most of what is left.
const minTruncated = 48

// Pack fits parts into budget tokens. Lowest-priority parts are dropped whole
// first; then the last part dropped is put back truncated (with a marker) if
// the room left is worth using. When anything was left out a Required part
// named NoteName is appended saying what, so the model knows the context is
// partial. The order of the parts that stay is kept. A *WindowError means the
// required parts alone do not fit.
func Pack(parts []Part, budget int, est Estimator) ([]Part, []Dropped, error) {
	if est == nil {
		est = Estimate
	}
	cost := make([]int, len(parts))
	total, required := 0, 0
	var order []int
	for i, p := range parts {
		cost[i] = est(p.Text) + partOverhead
		total += cost[i]
		if p.Required {
			required += cost[i]
		} else {
			order = append(order, i)
		}
	}
	if total <= budget {
		return append([]Part(nil), parts...), nil, nil
	}
	if required > budget {
		return nil, nil, &WindowError{Window: budget, Need: required}
	}
	sort.SliceStable(order, func(a, b int) bool {
		pa, pb := parts[order[a]], parts[order[b]]
		if pa.Priority != pb.Priority {
			return pa.Priority < pb.Priority
		}
		return order[a] > order[b]
	})

	kept := make([]bool, len(parts))
	for i := range kept {
		kept[i] = true
	}
	var dropped []Dropped
	noteCost := func(d []Dropped) int { return est(note(d)) + partOverhead }
	last := -1
	for _, i := range order {
		if total+noteCost(dropped) <= budget {
			break
		}
		kept[i] = false
		total -= cost[i]
		dropped = append(dropped, Dropped{Name: parts[i].Name, Tokens: cost[i] - partOverhead})
		last = i
	}
	if total+noteCost(dropped) > budget {
		return nil, nil, &WindowError{Window: budget, Need: total + noteCost(dropped)}
	}

	out := make([]Part, 0, len(parts)+1)
	truncatedText, truncated := "", false
	if last >= 0 {
		// Price the note as if the last part were truncated, with its full
		// size standing in for the kept count (the widest number).
		d := dropped[len(dropped)-1]
		trial := append(append([]Dropped(nil), dropped[:len(dropped)-1]...), Dropped{Name: d.Name, Tokens: d.Tokens, Kept: d.Tokens})
		room := budget - total - noteCost(trial) - partOverhead
		if room >= minTruncated {
			if text, ok := truncateHead(parts[last].Text, room, est); ok {
				truncatedText, truncated = text, true
				dropped[len(dropped)-1].Kept = est(text)
			}
		}
	}
	for i, p := range parts {
		switch {
		case kept[i]:
			out = append(out, p)
		case i == last && truncated:
			p.Text = truncatedText
			out = append(out, p)
		}
	}
	out = append(out, Part{Name: NoteName, Text: note(dropped), Priority: 0, Required: true})
	return out, dropped, nil
}

// note says, in a line the model reads, what context is missing.
func note(dropped []Dropped) string {
	var whole, cut []string
	for _, d := range dropped {
		name := oneLine(d.Name, 80)
		if d.Kept > 0 {
			cut = append(cut, fmt.Sprintf("%s (kept about %d of %d tokens)", name, d.Kept, d.Tokens))
		} else {
			whole = append(whole, name)
		}
	}
	var b strings.Builder
	b.WriteString("[Context left out to fit the model's input window.")
	if len(whole) > 0 {
		const shown = 10
		fmt.Fprintf(&b, " Dropped %d: %s", len(whole), strings.Join(whole[:min(shown, len(whole))], ", "))
		if len(whole) > shown {
			fmt.Fprintf(&b, ", and %d more", len(whole)-shown)
		}
		b.WriteString(".")
	}
	if len(cut) > 0 {
		fmt.Fprintf(&b, " Truncated: %s.", strings.Join(cut, ", "))
	}
	b.WriteString(" Read a file with a tool if you need it.]")
	return b.String()
}

// truncateHead keeps the longest head of text (cut at a line end when one is
// near) that fits in limit tokens with the marker.
func truncateHead(text string, limit int, est Estimator) (string, bool) {
	marker := func(kept int) string {
		return fmt.Sprintf("\n[… truncated: kept %d of %d bytes to fit the input window …]", kept, len(text))
	}
	fits := func(n int) bool { return est(cutUTF8(text, n)+marker(n)) <= limit }
	lo, hi := 0, len(text)
	if !fits(0) {
		return "", false
	}
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	head := cutUTF8(text, lo)
	if nl := strings.LastIndexByte(head, '\n'); nl > len(head)/2 {
		head = head[:nl+1]
	}
	if head == "" {
		return "", false
	}
	return head + marker(len(head)), true
}

// truncateMiddle keeps a head and a longer tail (logs end with what matters)
// within limit tokens.
func truncateMiddle(text string, limit int, est Estimator) (string, bool) {
	build := func(n int) string {
		head := cutUTF8(text, n/3)
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
