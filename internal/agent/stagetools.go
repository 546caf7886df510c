package agent

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
)

// Stage's toolboxes. The planner investigates the repository read-only and
// writes only the plan's files; the verifier only reads. Commands still run
// inside the sandbox (the isolation boundary and the shell policy): reading
// is what the tools are for, not what keeps the runner safe.

// PlannerTools is the stage planner's toolbox: read, list, search, git log,
// git blame, go doc, run a test to see it fail, write a plan file, ask,
// finish.
func PlannerTools() []string {
	return []string{"read_file", "list_dir", "search", "git_log", "git_blame", "go_doc", "run_test", "write_plan_file", "ask", "finish"}
}

// VerifierTools is the stage verifier's toolbox: read-only tools and verdict.
func VerifierTools() []string {
	return []string{"read_file", "list_dir", "search", "git_log", "git_blame", "go_doc", "verdict"}
}

// testPrograms are the commands run_test runs: test runners, nothing else.
var testPrograms = [][]string{
	{"go", "test"}, {"go", "vet"}, {"make", "test"}, {"npm", "test"}, {"npx", "jest"}, {"pytest"},
	{"python", "-m", "pytest"}, {"python3", "-m", "pytest"}, {"cargo", "test"}, {"mvn", "test"}, {"gradle", "test"},
}

const maxLogEntries = 50

var stageTools = []tool{
	{
		name:  "git_log",
		desc:  "Show the commit history (short hash, date, author, subject), newest first, of the repository or of one path.",
		stage: true,
		params: []param{
			{name: "path", typ: "string", desc: "limit the history to this file or directory"},
			{name: "max", typ: "integer", desc: "how many commits (default 20, at most 50)"},
		},
		run: gitLog,
	},
	{
		name:  "git_blame",
		desc:  "Show who last changed each line of a file, and in which commit.",
		stage: true,
		params: []param{
			{name: "path", typ: "string", desc: "path relative to the workspace root", required: true},
			{name: "start_line", typ: "integer", desc: "first line (default 1)"},
			{name: "end_line", typ: "integer", desc: "last line (default: start_line + 80)"},
		},
		run: gitBlame,
	},
	{
		name:   "go_doc",
		desc:   "Show the documentation of a Go package or symbol of the workspace's module (go doc), e.g. `./internal/foo` or `./internal/foo.Bar`.",
		stage:  true,
		params: []param{{name: "target", typ: "string", desc: "a package path or package.Symbol", required: true}},
		run:    goDoc,
	},
	{
		name:   "run_test",
		desc:   "Run a test command to see whether it passes or fails today, e.g. `go test ./internal/foo -run TestBar`. Only test runners are accepted (go test, go vet, make test, npm test, pytest, cargo test, …); the workspace is restored afterwards.",
		stage:  true,
		params: []param{{name: "command", typ: "string", desc: "the test command line", required: true}},
		run:    runTest,
	},
	{
		name:  "write_plan_file",
		desc:  "Write one file of the plan (an OpenSpec change): proposal.md, tasks.md, design.md or specs/<capability>/spec.md. Paths are relative to the change directory; nothing else can be written.",
		stage: true,
		params: []param{
			{name: "path", typ: "string", desc: "e.g. tasks.md or specs/greetings/spec.md", required: true},
			{name: "content", typ: "string", desc: "the complete content", required: true},
		},
		run: writePlanFile,
	},
	{
		name: "verdict",
		desc: "End the review with your verdict. objections: one objection per line as `FILE:LINE: what is wrong, with evidence` (FILE relative to the repository root, e.g. the plan's tasks.md), or `none` when the plan holds. " +
			"acceptance: your acceptance map, a JSON array with one object per acceptance criterion of the issue, " +
			`{"criterion": its number, "group": the number of the task group that meets it, or 0 when no group does, "reason": why, one sentence of evidence from the plan}.`,
		stage: true,
		params: []param{
			{name: "objections", typ: "string", desc: "one objection per line, or none", required: true},
			{name: "acceptance", typ: "string", desc: "the JSON array of {criterion, group, reason}, one per acceptance criterion; [] when the issue has none"},
		},
		run: verdict,
	},
}

func gitLog(ctx context.Context, s *session, a args) toolResult {
	n := int64(20)
	if v, ok := a.num("max"); ok {
		n = v
	}
	if n < 1 || n > maxLogEntries {
		return errorResult(fmt.Errorf("max must be between 1 and %d", maxLogEntries))
	}
	argv := []string{"git", "log", "--no-color", "--date=short", "--format=%h %ad %an: %s", "-n", strconv.FormatInt(n, 10)}
	if p := a.str("path"); p != "" {
		if _, err := s.cfg.Sandbox.Resolve(p); err != nil {
			return errorResult(err)
		}
		argv = append(argv, "--", p)
	}
	return commandResult(ctx, s, argv, "git log")
}

func gitBlame(ctx context.Context, s *session, a args) toolResult {
	p := a.str("path")
	if _, err := s.cfg.Sandbox.Resolve(p); err != nil {
		return errorResult(err)
	}
	start := int64(1)
	if v, ok := a.num("start_line"); ok {
		start = v
	}
	end := start + 80
	if v, ok := a.num("end_line"); ok {
		end = v
	}
	if start < 1 || end < start {
		return errorResult(fmt.Errorf("lines %d-%d are not a range", start, end))
	}
	argv := []string{"git", "blame", "-s", "--date=short", "-L", fmt.Sprintf("%d,%d", start, end), "--", p}
	return commandResult(ctx, s, argv, "git blame")
}

func goDoc(ctx context.Context, s *session, a args) toolResult {
	target := strings.TrimSpace(a.str("target"))
	// One argument that cannot be read as a flag or leave the module.
	if target == "" || strings.HasPrefix(target, "-") || strings.ContainsAny(target, " \t\n") {
		return errorResult(errors.New("target must be one package path or package.Symbol, without spaces or flags"))
	}
	return commandResult(ctx, s, []string{"go", "doc", target}, "go doc")
}

func runTest(ctx context.Context, s *session, a args) toolResult {
	cmd := a.str("command")
	argv, err := s.cfg.Sandbox.Split(cmd)
	if err != nil {
		return errorResult(err)
	}
	if !isTestCommand(argv) {
		return toolResult{class: ResultRefused, content: "Refused: run_test runs test commands only (go test, go vet, make test, npm test, pytest, cargo test, mvn test, gradle test)."}
	}
	res, err := s.cfg.Sandbox.Run(ctx, argv)
	if err != nil {
		return errorResult(err)
	}
	head := fmt.Sprintf("$ %s\nexit code %d", cmd, res.ExitCode)
	if res.TimedOut {
		head += " (timed out)"
	}
	return toolResult{class: ResultOK, content: capText(head+"\n"+res.Output, s.cfg.ToolOutputCap)}
}

func isTestCommand(argv []string) bool {
	for _, p := range testPrograms {
		if len(argv) >= len(p) && equalPrefix(argv, p) {
			return true
		}
	}
	return false
}

func equalPrefix(argv, prefix []string) bool {
	for i := range prefix {
		if argv[i] != prefix[i] {
			return false
		}
	}
	return true
}

// commandResult runs argv and returns its output, or its failure.
func commandResult(ctx context.Context, s *session, argv []string, what string) toolResult {
	res, err := s.cfg.Sandbox.Run(ctx, argv)
	if err != nil {
		return errorResult(err)
	}
	if res.ExitCode != 0 {
		return toolResult{class: ResultError, content: capText(fmt.Sprintf("Error: %s exited %d:\n%s", what, res.ExitCode, res.Output), s.cfg.ToolOutputCap)}
	}
	if strings.TrimSpace(res.Output) == "" {
		return toolResult{class: ResultOK, content: what + " printed nothing."}
	}
	return toolResult{class: ResultOK, content: capText(res.Output, s.cfg.ToolOutputCap)}
}

// PlanPath checks a path the planner gives write_plan_file: relative to the
// change directory, clean, and one of the plan's files. It returns the
// cleaned path.
func PlanPath(p string) (string, error) {
	if p == "" || strings.ContainsAny(p, "\\\x00") || path.IsAbs(p) {
		return "", fmt.Errorf("%q is not a plan file path", p)
	}
	c := path.Clean(p)
	if c != p || strings.HasPrefix(c, "../") || c == ".." {
		return "", fmt.Errorf("%q is not a clean path inside the change directory", p)
	}
	switch c {
	case "proposal.md", "tasks.md", "design.md":
		return c, nil
	}
	parts := strings.Split(c, "/")
	if len(parts) >= 3 && parts[0] == "specs" && parts[len(parts)-1] == "spec.md" {
		for _, seg := range parts[1 : len(parts)-1] {
			if !validCapability(seg) {
				return "", fmt.Errorf("capability %q: use lower-case letters, digits and hyphens", seg)
			}
		}
		return c, nil
	}
	return "", fmt.Errorf("%q: the plan's files are proposal.md, tasks.md, design.md and specs/<capability>/spec.md", p)
}

func validCapability(s string) bool {
	if s == "" || len(s) > 64 || s[0] == '-' {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

func writePlanFile(ctx context.Context, s *session, a args) toolResult {
	if s.cfg.PlanDir == "" {
		return errorResult(errors.New("this step has no plan directory"))
	}
	rel, err := PlanPath(a.str("path"))
	if err != nil {
		return errorResult(err)
	}
	a["path"] = path.Join(s.cfg.PlanDir, rel)
	res := writeFile(ctx, s, a)
	if res.class == ResultOK {
		res.content = fmt.Sprintf("Wrote the plan's %s (%d bytes).", rel, len(a.str("content")))
	}
	return res
}

func verdict(_ context.Context, _ *session, a args) toolResult {
	v := strings.TrimSpace(a.str("objections"))
	if v == "" {
		return errorResult(errors.New("objections must not be empty: write none when the plan holds"))
	}
	// The acceptance map is parsed by the caller (internal/stage), which
	// knows the criteria and the groups; here it must only be an array, so
	// a malformed one goes back to the model to correct.
	ac := strings.TrimSpace(a.str("acceptance"))
	if ac != "" {
		if err := checkJSONArray(ac); err != nil {
			return errorResult(fmt.Errorf("acceptance: %w", err))
		}
	}
	return toolResult{class: ResultOK, content: "Verdict recorded.", end: &ending{status: StatusFinished, summary: v, acceptance: ac}}
}
