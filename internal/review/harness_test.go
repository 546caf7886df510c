package review

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/policy"
)

// treeSandbox gives the review's read-only tools a real work tree and runs
// nothing: the fixtures here do not call a command.
type treeSandbox struct{ dir string }

func (s treeSandbox) Workspace() (string, error)         { return s.dir, nil }
func (s treeSandbox) Resolve(p string) (string, error)   { return policy.Resolve(s.dir, p) }
func (s treeSandbox) Split(cmd string) ([]string, error) { return policy.Split(cmd) }
func (s treeSandbox) Run(context.Context, []string) (agent.RunResult, error) {
	return agent.RunResult{}, errors.New("the review tests run no command")
}

// world is a real repository with a base commit and a change on top, left
// uncommitted in the work tree: Dir is the head, Diff is `git diff HEAD`.
type world struct {
	t    *testing.T
	dir  string
	diff string
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

const baseGo = `package calc

// Div divides a by b.
func Div(a, b int) int {
	if b == 0 {
		return 0
	}
	return a / b
}
`

const headGo = `package calc

// Div divides a by b.
func Div(a, b int) int {
	return a / b
}

// Avg is the mean of xs.
func Avg(xs []int) int {
	sum := 0
	for _, x := range xs {
		sum += x
	}
	return sum / len(xs)
}
`

// newWorld builds the repository: calc.go changes from baseGo to headGo.
func newWorld(t *testing.T) *world {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	write(t, dir, "calc.go", baseGo)
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "base")
	write(t, dir, "calc.go", headGo)
	return &world{t: t, dir: dir, diff: git(t, dir, "diff", "HEAD")}
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// answerConv is a hand-written conversation: the model answers the first
// message that contains match by calling tool with {arg: answer}.
func answerConv(t *testing.T, name, match, tool, arg, answer string) *llm.Conversation {
	t.Helper()
	args, err := json.Marshal(map[string]string{arg: answer})
	if err != nil {
		t.Fatal(err)
	}
	c := llm.Conversation{
		Comment: "hand-written for internal/review: " + name, Source: llm.SourceHand, Match: match,
		Turns: []llm.Turn{{Response: llm.Response{
			ToolCalls: []llm.FixtureToolCall{{Name: tool, Arguments: llm.Arguments(args)}},
			Usage:     llm.FixtureUsage{TokensIn: 1000, TokensOut: 100},
		}}},
	}
	data, err := llm.MarshalConversation(&c)
	if err != nil {
		t.Fatal(err)
	}
	out, err := llm.ParseConversation(name, data)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// reviewer and refuter are the two calls' conversations.
func reviewer(t *testing.T, findings string) *llm.Conversation {
	return answerConv(t, "reviewer", "Review this change", "review_findings", "findings", findings)
}

func refuter(t *testing.T, verdicts string) *llm.Conversation {
	return answerConv(t, "refuter", "Refute these findings", "refute", "verdicts", verdicts)
}

// run reviews w's change with the replay model serving convs.
func (w *world) run(opts Options, in Input, convs ...*llm.Conversation) (Result, *llm.Replay) {
	w.t.Helper()
	rp := llm.NewReplay(convs)
	opts.Config.Models = []agent.Tier{{Name: "reviewer-model", Model: rp}}
	opts.Config.Sandbox = treeSandbox{w.dir}
	in.Dir, in.Diff = w.dir, w.diff
	res, err := Run(context.Background(), opts, in)
	if err != nil {
		w.t.Fatalf("Run: %v", err)
	}
	if res.Status != agent.StatusFinished {
		w.t.Fatalf("status %s: %s", res.Status, res.Reason)
	}
	return res, rp
}

// finding is one entry of a reviewer's answer.
type finding map[string]any

func answer(t *testing.T, fs ...finding) string {
	t.Helper()
	if len(fs) == 0 {
		return "[]"
	}
	data, err := json.Marshal(fs)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// divZero and avgEmpty are real problems of headGo.
func divZero() finding {
	return finding{"file": "calc.go", "start": 5, "end": 5, "severity": "blocking", "kind": "bug",
		"title": "Div panics when b is 0", "trigger": "Div(1, 0) now divides by zero: the guard was removed", "quote": "return a / b"}
}

func avgEmpty() finding {
	return finding{"file": "calc.go", "start": 14, "end": 14, "severity": "blocking", "kind": "bug",
		"title": "Avg panics on an empty slice", "trigger": "Avg(nil) divides by len(xs) == 0", "quote": "return sum / len(xs)"}
}

func served(rp *llm.Replay) []string {
	var names []string
	for _, s := range rp.Stats().Served {
		names = append(names, s.Conversation)
	}
	return names
}

func reasons(ds []Dropped) string {
	var rs []string
	for _, d := range ds {
		rs = append(rs, d.Finding.File+": "+d.Reason)
	}
	return strings.Join(rs, "\n")
}
