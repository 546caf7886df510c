package agent_test

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/roadmap-dev/roadmap/internal/agent"
)

var update = flag.Bool("update", false, "rewrite golden files")

// runCalls runs one call per turn against a real policy sandbox on dir, then
// finishes, and returns the reply and result class of each call.
func runCalls(t *testing.T, dir string, calls ...scriptCall) (replies, classes []string) {
	t.Helper()
	var turns []turn
	for _, c := range calls {
		turns = append(turns, turn{ToolCalls: []scriptCall{c}})
	}
	turns = append(turns, turn{ToolCalls: []scriptCall{call("finish", map[string]string{"summary": "done"})}})
	model := &scriptedModel{name: "m", turns: turns}
	obs := &recorder{}
	out, err := agent.Run(context.Background(), agent.Config{
		Models:        []agent.Tier{{Name: "m", Model: model}},
		Sandbox:       newSandbox(t, dir, os.Environ()),
		Observer:      obs,
		ToolOutputCap: 400,
	}, agent.Step{Task: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != agent.StatusFinished {
		t.Fatalf("status = %s (%s)", out.Status, out.Reason)
	}
	return toolReplies(model), obs.classes()[:len(calls)]
}

func TestTools(t *testing.T) {
	var long strings.Builder
	for i := 1; i <= 100; i++ {
		long.WriteString(strings.Repeat("x", 20) + "\n")
	}
	dir := gitRepo(t, map[string]string{
		"twice.txt":   "same\nsame\n",
		"long.txt":    long.String(),
		"dir/a.go":    "package dir\n",
		"script.sh":   "#!/bin/sh\necho hi\n",
		"binary.bin":  "a\x00b",
		"lines.txt":   "one\ntwo\nthree\nfour\n",
		"nochange.md": "text\n",
	})
	if err := os.Chmod(filepath.Join(dir, "script.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		call      scriptCall
		wantClass string
		want      string // the reply contains it
	}{
		{"edit zero matches", call("edit_file", map[string]string{"path": "nochange.md", "old": "absent", "new": "x"}), "error", "old text matches 0 times in nochange.md"},
		{"edit two matches", call("edit_file", map[string]string{"path": "twice.txt", "old": "same", "new": "x"}), "error", "old text matches 2 times in twice.txt"},
		{"edit empty old", call("edit_file", map[string]string{"path": "twice.txt", "old": "", "new": "x"}), "error", "old must not be empty"},
		{"edit missing file", call("edit_file", map[string]string{"path": "nope.txt", "old": "a", "new": "b"}), "error", "edit nope.txt: no such file"},
		{"edit keeps mode", call("edit_file", map[string]string{"path": "script.sh", "old": "echo hi", "new": "echo bye"}), "ok", "replaced 1 occurrence at line 2"},
		{"read range", call("read_file", map[string]any{"path": "lines.txt", "start_line": 2, "end_line": 3}), "ok", "lines.txt (lines 2-3 of 4)\ntwo\nthree\n"},
		{"read bad range", call("read_file", map[string]any{"path": "lines.txt", "start_line": 9}), "error", "lines.txt has 4 lines"},
		{"read capped at whole lines", call("read_file", map[string]any{"path": "long.txt"}), "ok", "output cap reached, read on with start_line 20"},
		{"read binary", call("read_file", map[string]any{"path": "binary.bin"}), "error", "binary file"},
		{"read directory", call("read_file", map[string]any{"path": "dir"}), "error", "is a directory; use list_dir"},
		{"list hides .git", call("list_dir", map[string]any{}), "ok", "binary.bin\ndir/\nlines.txt"},
		{"write creates parents", call("write_file", map[string]string{"path": "new/deep/f.txt", "content": "hello\n"}), "ok", "Wrote new/deep/f.txt (6 bytes, 1 lines)"},
		{"run refused syntax", call("run", map[string]string{"command": "go test ./... | tail"}), "refused", "pipes (|) are not supported"},
		{"run unclosed quote", call("run", map[string]string{"command": "echo 'x"}), "error", "unclosed single quote"},
		{"run output", call("run", map[string]string{"command": "echo hello world"}), "ok", "$ echo hello world\nexit code 0\nhello world"},
		{"search no path escape", call("search", map[string]string{"pattern": "x", "path": "../"}), "refused", "outside the workspace"},
	}
	var calls []scriptCall
	for _, tt := range tests {
		calls = append(calls, tt.call)
	}
	replies, classes := runCalls(t, dir, calls...)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if classes[i] != tt.wantClass {
				t.Errorf("class = %s, want %s (reply %q)", classes[i], tt.wantClass, replies[i])
			}
			if !strings.Contains(replies[i], tt.want) {
				t.Errorf("reply = %q, want it to contain %q", replies[i], tt.want)
			}
		})
	}
	fi, err := os.Stat(filepath.Join(dir, "script.sh"))
	if err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("edit_file changed script.sh's mode: %v %v", fi.Mode(), err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "twice.txt")); string(got) != "same\nsame\n" {
		t.Errorf("an ambiguous edit changed twice.txt: %q", got)
	}
}

// TestToolSpecs keeps the schemas the model sees in a golden file, so a change
// to what models are told shows up in review. Regenerate with -update.
func TestToolSpecs(t *testing.T) {
	model := &scriptedModel{name: "m", turns: []turn{{ToolCalls: []scriptCall{call("finish", map[string]string{"summary": "s"})}}}}
	if _, err := agent.Run(context.Background(), agent.Config{Models: []agent.Tier{{Name: "m", Model: model}}, Sandbox: fakeSandbox{}}, agent.Step{Task: "t"}); err != nil {
		t.Fatal(err)
	}
	var specs []any
	for _, s := range model.requests[0].Tools {
		var params any
		if err := json.Unmarshal(s.Parameters, &params); err != nil {
			t.Fatalf("%s: parameters are not JSON: %v", s.Name, err)
		}
		specs = append(specs, map[string]any{"name": s.Name, "description": s.Description, "parameters": params})
	}
	got, err := json.MarshalIndent(specs, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	golden := filepath.Join("testdata", "tools.golden.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("tool specs differ from %s (-want +got):\n%s", golden, diff)
	}
}

func TestToolsSubset(t *testing.T) {
	model := &scriptedModel{name: "m", turns: []turn{
		{ToolCalls: []scriptCall{call("write_file", map[string]string{"path": "x", "content": "y"})}},
		{ToolCalls: []scriptCall{call("finish", map[string]string{"summary": "s"})}},
	}}
	obs := &recorder{}
	_, err := agent.Run(context.Background(), agent.Config{
		Models: []agent.Tier{{Name: "m", Model: model}}, Sandbox: fakeSandbox{}, Observer: obs,
		Tools: []string{"read_file", "list_dir", "search", "finish"},
	}, agent.Step{Task: "t"})
	if err != nil {
		t.Fatal(err)
	}
	var offered []string
	for _, s := range model.requests[0].Tools {
		offered = append(offered, s.Name)
	}
	if diff := cmp.Diff([]string{"read_file", "list_dir", "search", "finish"}, offered); diff != "" {
		t.Errorf("offered tools (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"malformed", "ok"}, obs.classes()); diff != "" {
		t.Errorf("a tool not offered must be answered as unknown (-want +got):\n%s", diff)
	}
}

// TestWindow: a step over a large repository's worth of context stays within
// an 8,000-token window: the first prompt drops the lowest-priority context
// and says so, and old tool output is elided as the conversation grows.
func TestWindow(t *testing.T) {
	const window = 8000
	var ctxParts []agent.ContextPart
	for i, name := range []string{"repo map", "callers of Add", "tests of Add", "README"} {
		ctxParts = append(ctxParts, agent.ContextPart{Name: name, Text: strings.Repeat(name+" ", 300), Priority: 10 - i})
	}
	big := strings.Repeat("0123456789abcdef\n", 1000) // 17 KB a read
	dir := gitRepo(t, map[string]string{"big.txt": big})
	var turns []turn
	for i := 0; i < 12; i++ {
		turns = append(turns, turn{ToolCalls: []scriptCall{call("read_file", map[string]any{"path": "big.txt", "start_line": i*80 + 1})}})
	}
	turns = append(turns, turn{ToolCalls: []scriptCall{call("finish", map[string]string{"summary": "read"})}})
	model := &scriptedModel{name: "m", turns: turns}
	out, err := agent.Run(context.Background(), agent.Config{
		Models:  []agent.Tier{{Name: "m", Model: model}},
		Sandbox: newSandbox(t, dir, os.Environ()),
		Window:  window,
	}, agent.Step{Task: "Read big.txt in parts.", Context: ctxParts})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != agent.StatusFinished {
		t.Fatalf("status = %s (%s)", out.Status, out.Reason)
	}
	for i, req := range model.requests {
		if est := agent.EstimateTokens(req); est > window {
			t.Errorf("request %d is estimated at %d tokens, over the %d window", i+1, est, window)
		}
	}
	if est := agent.EstimateTokens(model.requests[0]); est > window/2 {
		t.Errorf("the first request is estimated at %d tokens, more than half the window", est)
	}
	first := model.requests[0].Messages[1].Content
	if !strings.Contains(first, "## repo map") {
		t.Error("the highest-priority context was dropped")
	}
	if strings.Contains(first, "## README") || !strings.Contains(first, "Context left out to fit the input window: README") {
		t.Errorf("the lowest-priority context was not dropped and named; prompt starts %q", first[:200])
	}
	last := model.requests[len(model.requests)-1].Messages
	elided := 0
	for _, m := range last {
		if strings.HasPrefix(m.Content, "[output elided") {
			elided++
		}
	}
	if elided == 0 {
		t.Error("no old tool output was elided although the reads exceed the window")
	}
}
