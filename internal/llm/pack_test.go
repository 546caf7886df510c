package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/roadmap-dev/roadmap/internal/agent"
)

// bpePieces splits text the way cl100k's pre-tokenizer does (without its
// whitespace lookahead, which only moves a space between pieces). A BPE
// tokenizer never merges across pieces, so the count is a lower bound of the
// real token count: an estimate below it is certainly too low.
var bpePieces = regexp.MustCompile(`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\pL\pN]?\pL+|\pN{1,3}| ?[^\s\pL\pN]+[\r\n]*|\s*[\r\n]+|\s+`)

func lowerBound(text string) int { return len(bpePieces.FindAllStringIndex(text, -1)) }

// goFile is generated Go code that looks like a repository's: identifiers,
// comments, literals, indentation.
func goFile(pkg string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "// Package %s handles part %d of the delivery pipeline.\npackage %s\n\nimport (\n\t\"context\"\n\t\"fmt\"\n\t\"time\"\n)\n\n", pkg, n, pkg)
	for f := 0; f < 12; f++ {
		fmt.Fprintf(&b, `// Step%[1]dOf%[2]d retries the webhook delivery with a capped backoff (max %[3]d attempts).
func (w *Worker) Step%[1]dOf%[2]d(ctx context.Context, id int64, payload []byte) error {
	deadline := time.Now().Add(%[3]d * time.Second)
	for attempt := 0; attempt < %[3]d; attempt++ {
		if err := w.client.Post(ctx, fmt.Sprintf("/hooks/%%d/deliveries", id), payload); err != nil {
			w.log.Printf("delivery %%d attempt %%d failed: %%v", id, attempt, err)
			continue
		}
		return nil
	}
	return fmt.Errorf("deliver %%d before %%s: gave up", id, deadline)
}

`, f, n, 3+f%5)
	}
	return b.String()
}

func TestEstimateConservative(t *testing.T) {
	samples := map[string]string{
		"prose":    strings.Repeat("The worker retries each delivery with a capped exponential backoff, and gives up after an hour. ", 20),
		"go code":  goFile("webhook", 1),
		"json":     `{"tokens_in":18230,"tokens_out":4410,"usd":0.21,"model_calls":14,"ids":[1,2,3,4,5,6,7,8,9,10,11,12]}`,
		"csv":      strings.Repeat("1,2,3,4,5,6,7,8,9,0\n", 30),
		"hex":      "3f2a9b1c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a 1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c",
		"base64":   "h1:Z3kQ9aB7xLmN2pR4sT6vW8yA0cE2gI4kM6oQ8sU0wY2=",
		"cjk":      "重试每次投递，并在一小时后放弃。日志记录每次失败。",
		"emoji":    "deploy 🚀 done ✅ failed ❌ retry 🔁",
		"spaces":   "a \t 1 \n\n   x  ",
		"trailing": "end ",
	}
	for name, text := range samples {
		t.Run(name, func(t *testing.T) {
			got := Estimate(text)
			if lb := lowerBound(text); got < lb {
				t.Errorf("Estimate = %d, below the %d pre-tokenizer pieces the text certainly costs", got, lb)
			}
			if min := (len(text) + 2) / 3; got < min {
				t.Errorf("Estimate = %d, below ceil(bytes/3) = %d", got, min)
			}
		})
	}
}

func TestPackLargeRepository(t *testing.T) {
	const (
		window    = 8000
		maxOutput = 2000
	)
	// A repository of 240 Go files, about a megabyte: far more than a window.
	system := Part{Name: "system", Required: true, Priority: 100,
		Text: "You are implementing one task group of an OpenSpec plan. Use the tools to read and edit files; run the verify command; call finish when it passes."}
	task := Part{Name: "task", Required: true, Priority: 100,
		Text: "## 1. Backoff in the delivery worker\n\n- [ ] 1.1 Add a failing test for the backoff schedule; verify: `go test ./internal/webhook -run TestBackoffSchedule` fails\n- [ ] 1.2 Compute the delay, capped at one hour; verify: `go test ./internal/webhook -run TestBackoffSchedule`"}
	var paths []string
	parts := []Part{system, task}
	for i := 0; i < 240; i++ {
		pkg := []string{"webhook", "store", "api", "queue"}[i%4]
		path := fmt.Sprintf("internal/%s/file%03d.go", pkg, i)
		paths = append(paths, path)
		prio := 10
		if pkg == "webhook" {
			prio = 20
		}
		if i == 0 {
			prio = 50 // the file the task names
		}
		parts = append(parts, Part{Name: "file " + path, Priority: prio, Text: "=== " + path + "\n" + goFile(pkg, i)})
	}
	parts = append(parts, Part{Name: "repository map", Priority: 40, Text: strings.Join(paths, "\n")})

	tools := []agent.ToolSpec{}
	for _, name := range []string{"read_file", "list_dir", "search", "edit_file", "write_file", "run", "ask", "finish"} {
		tools = append(tools, agent.ToolSpec{Name: name, Description: "The " + name + " tool.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"a path in the workspace"},"text":{"type":"string"}},"required":["path"]}`)})
	}
	skeleton := agent.ModelRequest{Messages: []agent.Message{{Role: agent.RoleSystem}, {Role: agent.RoleUser}}, Tools: tools}
	budget := window - maxOutput - EstimateRequest(skeleton, Estimate)

	packed, dropped, err := Pack(parts, budget, Estimate)
	if err != nil {
		t.Fatalf("Pack: %v", err)
	}

	// Assemble the request the way a stage does: the system part alone, the
	// rest joined into the user message.
	var user []string
	for _, p := range packed[1:] {
		user = append(user, p.Text)
	}
	req := agent.ModelRequest{Tools: tools, MaxTokens: maxOutput, Messages: []agent.Message{
		{Role: agent.RoleSystem, Content: packed[0].Text},
		{Role: agent.RoleUser, Content: strings.Join(user, "\n\n")},
	}}
	t.Logf("kept %d of %d parts (%d dropped or cut); prompt estimate %d tokens; user message %d bytes",
		len(packed)-1, len(parts), len(dropped), EstimateRequest(req, Estimate), len(req.Messages[1].Content))
	if got := EstimateRequest(req, Estimate); got+maxOutput > window {
		t.Errorf("prompt estimate %d + output %d = %d, over the %d-token window", got, maxOutput, got+maxOutput, window)
	}
	if got := lowerBound(req.Messages[1].Content); got+maxOutput > window {
		t.Errorf("even the lower bound of the user message, %d tokens, leaves no room for output", got)
	}

	if packed[0].Text != system.Text || packed[1].Text != task.Text {
		t.Errorf("the system prompt and the task must come through whole and first")
	}
	if len(dropped) == 0 {
		t.Fatal("nothing was dropped from a megabyte of context")
	}
	keptNames := map[string]bool{}
	for _, p := range packed {
		keptNames[p.Name] = true
	}
	for _, want := range []string{"file internal/webhook/file000.go", "repository map"} {
		if !keptNames[want] {
			t.Errorf("%q (high priority) was dropped", want)
		}
	}
	// Lowest priority goes first: no priority-10 file is kept whole while a
	// priority-20 one was dropped whole.
	droppedWhole := map[string]bool{}
	for _, d := range dropped {
		if d.Kept == 0 {
			droppedWhole[d.Name] = true
		}
	}
	for _, p := range parts {
		if p.Priority == 10 && keptNames[p.Name] && !droppedWholeLast(dropped, p.Name) {
			for _, q := range parts {
				if q.Priority == 20 && droppedWhole[q.Name] {
					t.Fatalf("%s (priority 10) kept while %s (priority 20) dropped", p.Name, q.Name)
				}
			}
		}
	}
	note := packed[len(packed)-1]
	if note.Name != NoteName || !strings.Contains(note.Text, fmt.Sprintf("Dropped %d:", len(droppedWhole))) {
		t.Errorf("last part %q = %q, want the note saying %d parts were dropped", note.Name, note.Text, len(droppedWhole))
	}
}

// droppedWholeLast reports whether name was truncated (kept in part).
func droppedWholeLast(dropped []Dropped, name string) bool {
	for _, d := range dropped {
		if d.Name == name && d.Kept > 0 {
			return true
		}
	}
	return false
}

func TestPack(t *testing.T) {
	words := func(n int) string { return strings.TrimSpace(strings.Repeat("word ", n)) }
	est := func(s string) int { return len(strings.Fields(s)) } // one token a word keeps the arithmetic readable
	parts := []Part{
		{Name: "system", Text: words(10), Required: true},
		{Name: "a", Text: words(400), Priority: 1},
		{Name: "b", Text: words(400), Priority: 2},
		{Name: "c", Text: words(400), Priority: 1},
	}
	// Each part costs its words plus partOverhead.
	noteCost := func(d ...Dropped) int { return est(note(d)) + partOverhead }
	names := func(ps []Part) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.Name)
		}
		return out
	}
	total := func(ps []Part) int {
		n := 0
		for _, p := range ps {
			n += est(p.Text) + partOverhead
		}
		return n
	}
	for _, tt := range []struct {
		name      string
		budget    int
		wantKept  []string
		wantWhole []string // dropped whole, in order
		wantCut   string   // truncated, "" for none
	}{
		{"everything fits", 2000, []string{"system", "a", "b", "c"}, nil, ""},
		{"lowest priority, latest first, dropped whole", 12 + 402 + 402 + noteCost(Dropped{Name: "c", Tokens: 400}) + 10,
			[]string{"system", "a", "b", NoteName}, []string{"c"}, ""},
		{"then the last dropped comes back truncated", 12 + 402 + 402 + 200,
			[]string{"system", "a", "b", "c", NoteName}, nil, "c"},
		{"down to the highest priority", 12 + 402 + 120,
			[]string{"system", "a", "b", NoteName}, []string{"c"}, "a"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, dropped, err := Pack(parts, tt.budget, est)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantKept, names(got)); diff != "" {
				t.Errorf("kept parts (-want +got):\n%s", diff)
			}
			var whole []string
			cut := ""
			for _, d := range dropped {
				if d.Kept > 0 {
					cut = d.Name
				} else {
					whole = append(whole, d.Name)
				}
			}
			if diff := cmp.Diff(tt.wantWhole, whole); diff != "" {
				t.Errorf("dropped whole (-want +got):\n%s", diff)
			}
			if cut != tt.wantCut {
				t.Errorf("truncated %q, want %q", cut, tt.wantCut)
			}
			for _, p := range got {
				if p.Name == cut && !strings.Contains(p.Text, "truncated: kept") {
					t.Errorf("truncated part %s has no marker", p.Name)
				}
			}
			if n := total(got); n > tt.budget {
				t.Errorf("packed total %d over the budget %d", n, tt.budget)
			}
		})
	}
	t.Run("required parts too large", func(t *testing.T) {
		_, _, err := Pack(parts, 5, est)
		var we *WindowError
		if !errors.As(err, &we) || we.Need != 12 {
			t.Errorf("got %v, want a *WindowError needing 12", err)
		}
	})
}

func TestFitMessages(t *testing.T) {
	big := strings.Repeat("FAIL: TestBackoffSchedule expected 2s got 1s\n", 200)
	msgs := []agent.Message{
		{Role: agent.RoleSystem, Content: "system prompt"},
		{Role: agent.RoleUser, Content: "the task"},
		{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "1", Name: "run", Arguments: `{}`}}},
		{Role: agent.RoleTool, ToolCallID: "1", Content: big},
		{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "2", Name: "run", Arguments: `{}`}}},
		{Role: agent.RoleTool, ToolCallID: "2", Content: big},
	}
	window := EstimateRequest(agent.ModelRequest{Messages: msgs}, Estimate) - Estimate(big)/2

	got, dropped, err := FitMessages(msgs, nil, window, Estimate)
	if err != nil {
		t.Fatal(err)
	}
	if n := EstimateRequest(agent.ModelRequest{Messages: got}, Estimate); n > window {
		t.Errorf("fitted request is %d tokens, over the window %d", n, window)
	}
	if len(got) != len(msgs) {
		t.Fatalf("got %d messages, want %d: fitting must not remove messages", len(got), len(msgs))
	}
	if len(dropped) != 1 || dropped[0].Name != "message 3 (run result)" {
		t.Errorf("dropped %+v, want only the oldest tool result", dropped)
	}
	if got[5].Content != big || msgs[3].Content != big {
		t.Errorf("the newest result must stay whole and the caller's slice must not change")
	}

	t.Run("newest cut in the middle as a last resort", func(t *testing.T) {
		got, _, err := FitMessages(msgs, nil, 600, Estimate)
		if err != nil {
			t.Fatal(err)
		}
		if n := EstimateRequest(agent.ModelRequest{Messages: got}, Estimate); n > 600 {
			t.Errorf("fitted request is %d tokens, over the window 600", n)
		}
		last := got[5].Content
		if !strings.Contains(last, "bytes dropped to fit the input window") || !strings.HasPrefix(last, "FAIL: ") || !strings.HasSuffix(last, "got 1s\n") {
			t.Errorf("newest message %q: want a head, a marker and the tail", oneLine(last, 300))
		}
	})
	t.Run("nothing left to cut", func(t *testing.T) {
		_, _, err := FitMessages(msgs[:2], nil, 5, Estimate)
		var we *WindowError
		if !errors.As(err, &we) {
			t.Errorf("got %v, want *WindowError", err)
		}
	})
}
