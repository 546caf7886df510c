package agent

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	pathpkg "path"
	"sort"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/roadmap-dev/roadmap/internal/nofollow"
)

// param is one argument of a tool.
type param struct {
	name, typ, desc string // typ is "string" or "integer"
	required        bool
}

// args are a tool call's validated arguments: strings and int64s.
type args map[string]any

func (a args) str(name string) string {
	s, _ := a[name].(string)
	return s
}

func (a args) num(name string) (int64, bool) {
	n, ok := a[name].(int64)
	return n, ok
}

// ending is how a terminal tool ends the step.
type ending struct {
	status                    Status
	summary, question, reason string
	// acceptance is the verifier's acceptance map (verdict), as sent.
	acceptance string
}

type toolResult struct {
	content string
	class   string
	end     *ending
	// machine is an error of the machine, not of the model's call (a full
	// disk): it ends the step, and the model is not told.
	machine error
}

type tool struct {
	name, desc string
	params     []param
	run        func(ctx context.Context, s *session, a args) toolResult
	// stage marks the tools of stage's toolboxes (stagetools.go): they are
	// offered only when Config.Tools names them.
	stage bool
}

// implementTools is implement's toolbox, in the order the model sees it.
var implementTools = []tool{
	{
		name: "read_file",
		desc: "Read a text file of the workspace. Give start_line and end_line (1-based, inclusive) to read part of a long file.",
		params: []param{
			{name: "path", typ: "string", desc: "path relative to the workspace root", required: true},
			{name: "start_line", typ: "integer", desc: "first line to read (default 1)"},
			{name: "end_line", typ: "integer", desc: "last line to read (default: the end)"},
		},
		run: readFile,
	},
	{
		name:   "list_dir",
		desc:   "List a directory of the workspace: directories end with /.",
		params: []param{{name: "path", typ: "string", desc: "directory relative to the workspace root (default: the root)"}},
		run:    listDir,
	},
	{
		name: "search",
		desc: "Search the workspace files with git grep (ignored files left out): prints file:line:text for each match of a regular expression.",
		params: []param{
			{name: "pattern", typ: "string", desc: "a regular expression (git grep syntax)", required: true},
			{name: "path", typ: "string", desc: "limit the search to this file or directory"},
		},
		run: search,
	},
	{
		name: "edit_file",
		desc: "Replace one exact occurrence of old with new in a file. old must match exactly once, whitespace included: copy it from read_file and add surrounding lines until it is unique.",
		params: []param{
			{name: "path", typ: "string", desc: "path relative to the workspace root", required: true},
			{name: "old", typ: "string", desc: "the exact text to replace", required: true},
			{name: "new", typ: "string", desc: "the text to put in its place", required: true},
		},
		run: editFile,
	},
	{
		name: "write_file",
		desc: "Create a file or replace its whole content. Parent directories are created.",
		params: []param{
			{name: "path", typ: "string", desc: "path relative to the workspace root", required: true},
			{name: "content", typ: "string", desc: "the complete new content", required: true},
		},
		run: writeFile,
	},
	{
		name:   "run",
		desc:   "Run one program with arguments in the workspace root, e.g. `go test ./...`. There is no shell: no pipes, redirections, globs, variables or chained commands. Programs and arguments are checked against a policy; network tools, git push and downloads are refused.",
		params: []param{{name: "command", typ: "string", desc: "the command line", required: true}},
		run:    runCommand,
	},
	{
		name:   "ask",
		desc:   "Ask a person a question that only a person can decide. This ends the step; work resumes with the answer.",
		params: []param{{name: "question", typ: "string", desc: "the question, with the options you see", required: true}},
		run:    ask,
	},
	{
		name:   "finish",
		desc:   "End the step: the task is done and verified.",
		params: []param{{name: "summary", typ: "string", desc: "what you changed and how you verified it", required: true}},
		run:    finish,
	},
	{
		name:   "plan_wrong",
		desc:   "End the step because the task as planned cannot work (e.g. it relies on code that does not exist); the plan goes back to be amended.",
		params: []param{{name: "reason", typ: "string", desc: "what is wrong with the plan, with evidence", required: true}},
		run:    planWrong,
	},
}

// tools is every tool: implement's toolbox, then stage's, then the review's.
var tools = append(append(implementTools, stageTools...), reviewTools...)

var toolIndex = func() map[string]int {
	m := map[string]int{}
	for i, t := range tools {
		m[t.name] = i
	}
	return m
}()

// ToolNames returns the names of implement's toolbox, the default, in the
// order the model sees them.
func ToolNames() []string {
	var names []string
	for _, t := range tools {
		if !t.stage {
			names = append(names, t.name)
		}
	}
	return names
}

// spec is the tool as the model sees it: a JSON Schema object.
func (t tool) spec() ToolSpec {
	type prop struct {
		Type        string `json:"type"`
		Description string `json:"description"`
	}
	props := map[string]prop{}
	required := []string{}
	for _, p := range t.params {
		props[p.name] = prop{Type: p.typ, Description: p.desc}
		if p.required {
			required = append(required, p.name)
		}
	}
	schema, _ := json.Marshal(struct {
		Type                 string          `json:"type"`
		Properties           map[string]prop `json:"properties"`
		Required             []string        `json:"required"`
		AdditionalProperties bool            `json:"additionalProperties"`
	}{"object", props, required, false})
	return ToolSpec{Name: t.name, Description: t.desc, Parameters: schema}
}

// signature describes the expected arguments in a line, for error messages.
func (t tool) signature() string {
	var parts []string
	for _, p := range t.params {
		s := fmt.Sprintf("%q: %s", p.name, p.typ)
		if p.required {
			s += " (required)"
		}
		parts = append(parts, s)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// parseArgs validates raw arguments against the tool's parameters. The error
// text is written for the model: what is wrong and what is expected.
func (t tool) parseArgs(raw string) (args, error) {
	expect := fmt.Sprintf("%s takes one JSON object: %s", t.name, t.signature())
	if strings.TrimSpace(raw) == "" {
		raw = "{}"
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, fmt.Errorf("the arguments are not a JSON object (%v). %s", err, expect)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("the arguments have text after the JSON object. %s", expect)
	}
	if obj == nil {
		return nil, fmt.Errorf("the arguments are null. %s", expect)
	}
	known := map[string]param{}
	for _, p := range t.params {
		known[p.name] = p
	}
	var unknown []string
	for k := range obj {
		if _, ok := known[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, fmt.Errorf("unknown argument %q. %s", unknown[0], expect)
	}
	out := args{}
	for _, p := range t.params {
		v, ok := obj[p.name]
		if !ok || v == nil {
			if p.required {
				return nil, fmt.Errorf("missing required argument %q. %s", p.name, expect)
			}
			continue
		}
		switch p.typ {
		case "string":
			s, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("argument %q must be a string, not %s. %s", p.name, jsonKind(v), expect)
			}
			out[p.name] = s
		case "integer":
			n, ok := v.(json.Number)
			if !ok {
				return nil, fmt.Errorf("argument %q must be an integer, not %s. %s", p.name, jsonKind(v), expect)
			}
			i, err := n.Int64()
			if err != nil {
				return nil, fmt.Errorf("argument %q must be an integer, not %s. %s", p.name, n, expect)
			}
			out[p.name] = i
		}
	}
	return out, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "null"
}

// digest is the trace's view of arguments: a hash prefix, never the text.
func digest(raw string) string {
	sum := sha256.Sum256([]byte(raw))
	return hex.EncodeToString(sum[:])[:16]
}

// dispatch runs one tool call and says how it went. It never panics on what
// the model sent; a cancelled context is returned as the error.
func (s *session) dispatch(ctx context.Context, call ToolCall) (toolResult, error) {
	i, ok := toolIndex[call.Name]
	if !ok || !s.offered[call.Name] {
		name := call.Name
		if len(name) > 64 {
			name = strings.ToValidUTF8(name[:64], "") + "…"
		}
		return toolResult{class: ResultMalformed,
			content: fmt.Sprintf("Error: unknown tool %q. The tools are: %s.", name, strings.Join(s.offeredNames, ", "))}, nil
	}
	t := tools[i]
	a, err := t.parseArgs(call.Arguments)
	if err != nil {
		return toolResult{class: ResultMalformed, content: capText("Error: malformed call to "+t.name+": "+err.Error(), s.replyCap())}, nil
	}
	res := t.run(ctx, s, a)
	// Tools cap their own output; this bounds everything else a reply can
	// echo (a path, a pattern) with room for a header.
	res.content = capText(res.content, s.replyCap())
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if res.machine != nil {
		return res, fmt.Errorf("%s: the machine's disk is full: %w", t.name, res.machine)
	}
	return res, nil
}

// replyCap bounds a whole tool reply: the output cap plus room for a header.
func (s *session) replyCap() int { return s.cfg.ToolOutputCap + 512 }

func errorResult(err error) toolResult {
	if isRefusal(err) {
		return toolResult{class: ResultRefused, content: "Refused: " + err.Error()}
	}
	res := toolResult{class: ResultError, content: "Error: " + err.Error()}
	if errors.Is(err, syscall.ENOSPC) {
		// A full disk is the machine's, not the change's: no answer of the
		// model's mends it, a fresh runner does (failure's disk_full).
		res.machine = err
	}
	return res
}

// isRefusal recognises a policy refusal without importing the policy.
func isRefusal(err error) bool {
	var r interface{ Refused() bool }
	return errors.As(err, &r) && r.Refused()
}

// shown is the model's spelling of a path, "." for the root.
func shown(p string) string {
	if p == "" {
		return "."
	}
	return p
}

const maxFileBytes = 4 << 20

func readFile(_ context.Context, s *session, a args) toolResult {
	path := a.str("path")
	root, rel, err := s.place(path)
	if err != nil {
		return errorResult(err)
	}
	f, err := nofollow.OpenFile(root, rel, os.O_RDONLY, 0)
	if err != nil {
		return errorResult(fmt.Errorf("read %s: %w", path, fileErr(path, err)))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return errorResult(fmt.Errorf("read %s: %w", path, trimPathErr(err)))
	}
	if fi.IsDir() {
		return errorResult(fmt.Errorf("%s is a directory; use list_dir", path))
	}
	if !fi.Mode().IsRegular() {
		return errorResult(fmt.Errorf("%s is not a regular file", path))
	}
	if fi.Size() > maxFileBytes {
		return errorResult(fmt.Errorf("%s is %d bytes, more than read_file reads (%d); use search", path, fi.Size(), maxFileBytes))
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return errorResult(fmt.Errorf("read %s: %w", path, trimPathErr(err)))
	}
	if len(data) > maxFileBytes {
		return errorResult(fmt.Errorf("%s is more than %d bytes, more than read_file reads; use search", path, maxFileBytes))
	}
	if bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
		return errorResult(fmt.Errorf("%s is a binary file (%d bytes)", path, len(data)))
	}
	lines := strings.SplitAfter(string(data), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	total := len(lines)
	start, end := int64(1), int64(total)
	if v, ok := a.num("start_line"); ok {
		start = v
	}
	if v, ok := a.num("end_line"); ok {
		end = min(v, int64(total))
	}
	if total == 0 {
		return toolResult{class: ResultOK, content: fmt.Sprintf("%s is empty.", path)}
	}
	if start < 1 || start > int64(total) || end < start {
		return errorResult(fmt.Errorf("%s has %d lines; lines %d-%d are not a range in it", path, total, start, end))
	}
	var b strings.Builder
	shownEnd := start - 1
	for i := start; i <= end; i++ {
		if b.Len()+len(lines[i-1]) > s.cfg.ToolOutputCap && i > start {
			break
		}
		b.WriteString(lines[i-1])
		shownEnd = i
	}
	body := b.String()
	if len(body) > s.cfg.ToolOutputCap { // one line longer than the cap
		body = body[:s.cfg.ToolOutputCap] + "\n[... line cut ...]"
	}
	header := fmt.Sprintf("%s (lines %d-%d of %d)", path, start, shownEnd, total)
	if shownEnd < end {
		header += fmt.Sprintf("; output cap reached, read on with start_line %d", shownEnd+1)
	}
	return toolResult{class: ResultOK, content: header + "\n" + body}
}

// trimPathErr keeps the error's reason, not the absolute path the model never
// gave.
func trimPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// fileErr is trimPathErr for the errors of opening a file of the workspace:
// a symlink swapped in on the way is a refusal.
func fileErr(path string, err error) error {
	if e := toolPathErr(path, err); e != err {
		return e
	}
	return trimPathErr(err)
}

const maxListEntries = 500

func listDir(_ context.Context, s *session, a args) toolResult {
	path := a.str("path")
	root, rel, err := s.place(path)
	if err != nil {
		return errorResult(err)
	}
	entries, err := nofollow.ReadDir(root, rel)
	if err != nil {
		return errorResult(fmt.Errorf("list %s: %w", shown(path), fileErr(path, err)))
	}
	var b strings.Builder
	n := 0
	for _, e := range entries {
		if e.Name() == ".git" {
			continue
		}
		if n == maxListEntries {
			fmt.Fprintf(&b, "[... %d more entries]\n", len(entries)-n)
			break
		}
		name := e.Name()
		switch {
		case e.IsDir():
			name += "/"
		case e.Type()&fs.ModeSymlink != 0:
			name += "@"
		}
		b.WriteString(name + "\n")
		n++
	}
	if n == 0 {
		return toolResult{class: ResultOK, content: shown(path) + " is empty."}
	}
	return toolResult{class: ResultOK, content: capText(b.String(), s.cfg.ToolOutputCap)}
}

func search(ctx context.Context, s *session, a args) toolResult {
	pattern, path := a.str("pattern"), a.str("path")
	if pattern == "" {
		return errorResult(errors.New("pattern must not be empty"))
	}
	// --untracked: files the model just wrote are not committed yet.
	argv := []string{"git", "grep", "-n", "-I", "--untracked", "--no-color", "-e", pattern}
	if path != "" {
		// Resolve first so a path outside is refused with the path's reason.
		if _, err := s.cfg.Sandbox.Resolve(path); err != nil {
			return errorResult(err)
		}
		argv = append(argv, "--", path)
	}
	res, err := s.cfg.Sandbox.Run(ctx, argv)
	if err != nil {
		return errorResult(err)
	}
	switch res.ExitCode {
	case 0:
		return toolResult{class: ResultOK, content: capText(res.Output, s.cfg.ToolOutputCap)}
	case 1:
		return toolResult{class: ResultOK, content: fmt.Sprintf("No matches for %q.", pattern)}
	}
	return toolResult{class: ResultError, content: capText(fmt.Sprintf("Error: git grep exited %d:\n%s", res.ExitCode, res.Output), s.cfg.ToolOutputCap)}
}

func editFile(_ context.Context, s *session, a args) toolResult {
	path, old, repl := a.str("path"), a.str("old"), a.str("new")
	if old == "" {
		return errorResult(errors.New("old must not be empty; use write_file to create or replace a whole file"))
	}
	root, rel, err := s.place(path)
	if err != nil {
		return errorResult(err)
	}
	// One descriptor from the read to the write: the file edited is the one
	// read, whatever happens to its path meanwhile.
	f, err := nofollow.OpenFile(root, rel, os.O_RDWR, 0)
	if err != nil {
		if errors.Is(err, syscall.EISDIR) {
			return errorResult(fmt.Errorf("%s is a directory", path))
		}
		return errorResult(fmt.Errorf("edit %s: %w", path, fileErr(path, err)))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return errorResult(fmt.Errorf("edit %s: %w", path, trimPathErr(err)))
	}
	if !fi.Mode().IsRegular() {
		return errorResult(fmt.Errorf("%s is not a regular file", path))
	}
	if fi.Size() > maxFileBytes {
		return errorResult(fmt.Errorf("%s is %d bytes, more than edit_file edits (%d)", path, fi.Size(), maxFileBytes))
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return errorResult(fmt.Errorf("edit %s: %w", path, trimPathErr(err)))
	}
	text := string(data)
	switch n := strings.Count(text, old); n {
	case 0:
		return errorResult(fmt.Errorf("old text matches 0 times in %s; read the file again and copy the text exactly, whitespace included", path))
	case 1:
	default:
		return errorResult(fmt.Errorf("old text matches %d times in %s; include more surrounding lines so it matches exactly once", n, path))
	}
	at := strings.Index(text, old)
	text = text[:at] + repl + text[at+len(old):]
	if err := rewrite(f, text); err != nil {
		return errorResult(fmt.Errorf("edit %s: %w", path, trimPathErr(err)))
	}
	line := strings.Count(text[:at], "\n") + 1
	return toolResult{class: ResultOK, content: fmt.Sprintf("Edited %s: replaced 1 occurrence at line %d (%d lines now %d).",
		path, line, strings.Count(old, "\n")+1, strings.Count(repl, "\n")+1)}
}

func writeFile(_ context.Context, s *session, a args) toolResult {
	path, content := a.str("path"), a.str("content")
	if len(content) > maxFileBytes {
		return errorResult(fmt.Errorf("content is %d bytes, more than write_file writes (%d)", len(content), maxFileBytes))
	}
	root, rel, err := s.place(path)
	if err != nil {
		return errorResult(err)
	}
	if dir := pathpkg.Dir(rel); dir != "." {
		if err := nofollow.MkdirAll(root, dir, 0o755); err != nil {
			return errorResult(fmt.Errorf("write %s: %w", path, fileErr(path, err)))
		}
	}
	// An existing file keeps its mode: the open does not truncate, rewrite
	// does, on the descriptor the open checked.
	f, err := nofollow.OpenFile(root, rel, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		if errors.Is(err, syscall.EISDIR) {
			return errorResult(fmt.Errorf("%s is a directory", path))
		}
		return errorResult(fmt.Errorf("write %s: %w", path, fileErr(path, err)))
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return errorResult(fmt.Errorf("%s is not a regular file", path))
	}
	if err := rewrite(f, content); err != nil {
		return errorResult(fmt.Errorf("write %s: %w", path, trimPathErr(err)))
	}
	return toolResult{class: ResultOK, content: fmt.Sprintf("Wrote %s (%d bytes, %d lines).", path, len(content), strings.Count(content, "\n"))}
}

// rewrite replaces the whole content of the open file f with text.
func rewrite(f *os.File, text string) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.WriteAt([]byte(text), 0); err != nil {
		return err
	}
	return f.Close()
}

func runCommand(ctx context.Context, s *session, a args) toolResult {
	cmd := a.str("command")
	argv, err := s.cfg.Sandbox.Split(cmd)
	if err != nil {
		return errorResult(err)
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

func ask(_ context.Context, _ *session, a args) toolResult {
	q := strings.TrimSpace(a.str("question"))
	if q == "" {
		return errorResult(errors.New("question must not be empty"))
	}
	return toolResult{class: ResultOK, content: "Question recorded; the step ends here.", end: &ending{status: StatusNeedsInput, question: q}}
}

func finish(_ context.Context, _ *session, a args) toolResult {
	sum := strings.TrimSpace(a.str("summary"))
	if sum == "" {
		return errorResult(errors.New("summary must not be empty"))
	}
	return toolResult{class: ResultOK, content: "Finished; the checks run next.", end: &ending{status: StatusFinished, summary: sum}}
}

func planWrong(_ context.Context, _ *session, a args) toolResult {
	r := strings.TrimSpace(a.str("reason"))
	if r == "" {
		return errorResult(errors.New("reason must not be empty"))
	}
	return toolResult{class: ResultOK, content: "Recorded; the plan goes back to be amended.", end: &ending{status: StatusPlanWrong, reason: r}}
}

// capText keeps the head and the tail of s within max bytes, noting the cut.
// The tail gets more room: a failing command says why at its end.
func capText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	const noteRoom = 64
	keep := max - noteRoom
	if keep < 2 {
		keep = 2
	}
	head := keep / 4
	tail := keep - head
	h, t := s[:head], s[len(s)-tail:]
	// Cut on rune boundaries (a split rune would be invalid UTF-8 in JSON).
	for i := 0; i < utf8.UTFMax-1 && len(h) > 0; i++ {
		if r, size := utf8.DecodeLastRuneInString(h); r != utf8.RuneError || size > 1 {
			break
		}
		h = h[:len(h)-1]
	}
	for i := 0; i < utf8.UTFMax-1 && len(t) > 0 && !utf8.RuneStart(t[0]); i++ {
		t = t[1:]
	}
	return fmt.Sprintf("%s\n[... %d bytes cut ...]\n%s", h, len(s)-len(h)-len(t), t)
}
