package plan

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Tasks is the parsed tasks.md of a change: its numbered groups in file order.
type Tasks struct {
	Groups []Group
}

// Group is one `## N. Title` section and the tasks under it. Implement runs,
// checks, commits and marks a plan one group at a time.
type Group struct {
	Number int
	Title  string
	Tasks  []Task
	Line   int // 1-based line of the heading
}

// Task is one `- [ ] N.M text` line.
type Task struct {
	ID     string // "1.2", "1.2.1", "2.3a"
	Group  int
	Text   string // everything after the ID, verify clause included, trimmed
	Done   bool   // `[x]` or `[X]`
	Verify string // the command of the trailing verify clause, "" when none
	Fails  bool   // the verify clause ends with `fails`: the command must fail before the group's change
	Line   int    // 1-based
}

// DefaultMaxGroups is the task groups a plan may hold when the configuration
// does not say (implement.max_groups; config.DefaultMaxGroups is the same).
const DefaultMaxGroups = 50

// CheckGroupCount refuses a plan with more than limit task groups (limit < 1
// is DefaultMaxGroups): a plan is model output, and each group costs a
// session, checks and a mark. The error is a *ParseError at the first group
// past the limit, naming the limit and its configuration key.
func (t *Tasks) CheckGroupCount(limit int) error {
	if limit < 1 {
		limit = DefaultMaxGroups
	}
	if t == nil || len(t.Groups) <= limit {
		return nil
	}
	return &ParseError{File: "tasks.md", Line: t.Groups[limit].Line,
		Msg: fmt.Sprintf("the plan has %d task groups; a plan holds at most %d (implement.max_groups)", len(t.Groups), limit)}
}

// Group returns the group numbered n.
func (t *Tasks) Group(n int) (Group, bool) {
	for _, g := range t.Groups {
		if g.Number == n {
			return g, true
		}
	}
	return Group{}, false
}

// Pending returns the groups with at least one task not ticked, in order.
func (t *Tasks) Pending() []Group {
	var out []Group
	for _, g := range t.Groups {
		if !g.Done() {
			out = append(out, g)
		}
	}
	return out
}

// VerifyCommands returns the verify commands of the group's tasks in task
// order, each once. At the group's end every one of them must pass, the `fails`
// ones included.
func (g Group) VerifyCommands() []string {
	return g.commands(func(Task) bool { return true })
}

// FailToPass returns the commands marked `fails`, in order, each once: they
// must fail before the group's change and pass after it.
func (g Group) FailToPass() []string {
	return g.commands(func(t Task) bool { return t.Fails })
}

func (g Group) commands(keep func(Task) bool) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range g.Tasks {
		if t.Verify == "" || !keep(t) || seen[t.Verify] {
			continue
		}
		seen[t.Verify] = true
		out = append(out, t.Verify)
	}
	return out
}

// Done reports whether every task of the group is ticked.
func (g Group) Done() bool {
	for _, t := range g.Tasks {
		if !t.Done {
			return false
		}
	}
	return len(g.Tasks) > 0
}

// ParseError is one fault in a tasks.md, at a line (0 when it concerns the
// whole file).
type ParseError struct {
	File string // set by LoadChange; empty for Parse
	Line int
	Msg  string
}

func (e *ParseError) Error() string {
	switch {
	case e.File != "" && e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	case e.File != "":
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	case e.Line > 0:
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

// ErrorList is every fault Parse found, in line order. errors.As finds the
// first *ParseError through it.
type ErrorList []*ParseError

func (l ErrorList) Error() string {
	msgs := make([]string, len(l))
	for i, e := range l {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "\n")
}

func (l ErrorList) Unwrap() []error {
	out := make([]error, len(l))
	for i, e := range l {
		out[i] = e
	}
	return out
}

var (
	// A heading: up to three spaces, one to six #, then a space or the end.
	headingRe = regexp.MustCompile(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$`)
	// A numbered group title: "N." then the title. "## 1.5 x" is not one.
	groupRe = regexp.MustCompile(`^(\d+)\.(?:[ \t]+(.*))?$`)
	// A closing sequence of #s ends an ATX heading.
	closingRe = regexp.MustCompile(`(?:^|[ \t]+)#+$`)
	// A checkbox item, as OpenSpec's task-progress counts it (plus `+`).
	taskRe = regexp.MustCompile(`^[ \t]*[-*+][ \t]*\[([ \txX])\][ \t]*(.*)$`)
	// A task id as OpenSpec's task-numbering reads it: 1.1, 1.1.2, 2.3a; an
	// optional trailing dot.
	idRe    = regexp.MustCompile(`^(\d+(?:\.\d+)+[A-Za-z]*)\.?(?:[ \t]+|$)`)
	fenceRe = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})(.*)$")
)

// taskPos is where a task's box character sits in the source, for Tick.
type taskPos struct {
	group int
	box   int
}

// Parse reads a tasks.md. Any fault — a task outside a numbered group, a task
// number that does not start with its group's, a duplicate or non-increasing
// group number, a duplicate task, a verify clause that is not closed or is
// followed by anything but `fails`, an empty group, no group at all — makes it
// return an ErrorList naming every faulty line. Lines inside fenced code blocks
// are not read.
func Parse(src []byte) (*Tasks, error) {
	t, _, err := parse(src)
	return t, err
}

func parse(src []byte) (*Tasks, []taskPos, error) {
	var (
		t        Tasks
		pos      []taskPos
		errs     ErrorList
		cur      = -1 // index into t.Groups of the open group, -1 outside one
		groupAt  = map[int]int{}
		taskAt   = map[string]int{}
		lastNum  = -1
		fence    byte // the fence character while inside a fenced block
		fenceLen int
		hasLines []bool // per group: a task line was seen, even a faulty one
	)
	fail := func(line int, format string, args ...any) {
		errs = append(errs, &ParseError{Line: line, Msg: fmt.Sprintf(format, args...)})
	}
	start := 0
	for n := 1; start <= len(src); n++ {
		end := bytes.IndexByte(src[start:], '\n')
		if end < 0 {
			end = len(src)
		} else {
			end += start
		}
		line := string(src[start:end])
		lineStart := start
		start = end + 1
		line = strings.TrimSuffix(line, "\r")

		if fence != 0 {
			if closesFence(line, fence, fenceLen) {
				fence = 0
			}
			continue
		}
		if m := fenceRe.FindStringSubmatch(line); m != nil && (m[1][0] == '~' || !strings.Contains(m[2], "`")) {
			fence, fenceLen = m[1][0], len(m[1])
			continue
		}

		if m := headingRe.FindStringSubmatch(line); m != nil {
			level := len(m[1])
			if level > 2 {
				continue // a sub-heading stays inside its group
			}
			title := closingRe.ReplaceAllString(m[2], "")
			g := groupRe.FindStringSubmatch(title)
			if level == 1 || g == nil {
				cur = -1 // an unnumbered heading ends the group, as in OpenSpec
				continue
			}
			num, err := strconv.Atoi(g[1])
			if err != nil {
				fail(n, "group number %s is out of range", g[1])
				cur = -1
				continue
			}
			if first, ok := groupAt[num]; ok {
				fail(n, "duplicate group %d (first at line %d)", num, first)
			} else if num <= lastNum {
				fail(n, "group %d comes after group %d; group numbers must increase", num, lastNum)
			}
			if _, ok := groupAt[num]; !ok {
				groupAt[num] = n
			}
			if num > lastNum {
				lastNum = num
			}
			t.Groups = append(t.Groups, Group{Number: num, Title: strings.TrimSpace(g[2]), Line: n})
			hasLines = append(hasLines, false)
			cur = len(t.Groups) - 1
			continue
		}

		m := taskRe.FindStringSubmatchIndex(line)
		if m == nil {
			continue
		}
		rest := line[m[4]:m[5]]
		if cur < 0 {
			fail(n, "task outside a numbered group; put it under a `## N. Title` heading")
			continue
		}
		g := &t.Groups[cur]
		hasLines[cur] = true
		idm := idRe.FindStringSubmatch(rest)
		if idm == nil {
			fail(n, "task has no number; want `- [ ] %d.M text`", g.Number)
			continue
		}
		id := idm[1]
		major, err := strconv.Atoi(id[:strings.IndexByte(id, '.')])
		if err != nil || major != g.Number {
			fail(n, "task %s is under group %d; its number must start with %d.", id, g.Number, g.Number)
			continue
		}
		if first, ok := taskAt[id]; ok {
			fail(n, "duplicate task %s (first at line %d)", id, first)
			continue
		}
		taskAt[id] = n
		text := strings.TrimSpace(rest[len(idm[0]):])
		verify, fails, msg := parseVerify(text)
		if msg != "" {
			fail(n, "task %s: %s", id, msg)
			continue
		}
		box := line[m[2]]
		g.Tasks = append(g.Tasks, Task{
			ID: id, Group: g.Number, Text: text, Done: box == 'x' || box == 'X',
			Verify: verify, Fails: fails, Line: n,
		})
		pos = append(pos, taskPos{group: g.Number, box: lineStart + m[2]})
	}
	for i, g := range t.Groups {
		if !hasLines[i] {
			fail(g.Line, "group %d has no tasks", g.Number)
		}
	}
	if len(t.Groups) == 0 && len(errs) == 0 {
		fail(0, "no numbered task group; want `## 1. Title` followed by `- [ ] 1.1 text`")
	}
	if len(errs) > 0 {
		sortErrors(errs)
		return nil, nil, errs
	}
	return &t, pos, nil
}

func sortErrors(errs ErrorList) {
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Line < errs[j].Line })
}

func closesFence(line string, ch byte, n int) bool {
	s := strings.TrimLeft(line, " ")
	if len(line)-len(s) > 3 {
		return false
	}
	k := 0
	for k < len(s) && s[k] == ch {
		k++
	}
	return k >= n && strings.TrimRight(s[k:], " \t") == ""
}

// parseVerify finds the task's verify clause (verify: then a code span): the last
// `verify:` outside a code span that is followed by a backtick. It returns a
// message when the clause is malformed.
func parseVerify(text string) (cmd string, fails bool, msg string) {
	var cands []int
	for i := 0; i < len(text); {
		if text[i] == '`' {
			n := runLen(text, i)
			if end := closingRun(text, i+n, n); end >= 0 {
				i = end + n // skip the whole code span
			} else {
				i += n
			}
			continue
		}
		if hasFoldPrefix(text[i:], "verify:") && (i == 0 || !isWordByte(text[i-1])) {
			j := skipBlanks(text, i+len("verify:"))
			if j < len(text) && text[j] == '`' {
				cands = append(cands, i)
			}
		}
		i++
	}
	if len(cands) == 0 {
		return "", false, ""
	}
	if len(cands) > 1 {
		return "", false, "more than one verify: clause; a task has one verify command"
	}
	j := skipBlanks(text, cands[0]+len("verify:"))
	n := runLen(text, j)
	end := closingRun(text, j+n, n)
	if end < 0 {
		return "", false, "the backtick opening the verify command is not closed"
	}
	cmd = strings.TrimSpace(text[j+n : end])
	if cmd == "" {
		return "", false, "empty verify command"
	}
	tail := strings.TrimSuffix(strings.TrimSpace(text[end+n:]), ".")
	switch {
	case tail == "":
	case strings.EqualFold(tail, "fails"):
		fails = true
	default:
		return "", false, fmt.Sprintf("text %q after the verify command; only `fails` may follow it", tail)
	}
	return cmd, fails, ""
}

func runLen(s string, i int) int {
	n := 0
	for i+n < len(s) && s[i+n] == '`' {
		n++
	}
	return n
}

// closingRun returns the index of the next run of exactly n backticks at or
// after i, or -1.
func closingRun(s string, i, n int) int {
	for i < len(s) {
		if s[i] != '`' {
			i++
			continue
		}
		k := runLen(s, i)
		if k == n {
			return i
		}
		i += k
	}
	return -1
}

func skipBlanks(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

func hasFoldPrefix(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

func isWordByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// Tick marks every task of the group done (`- [ ]` becomes `- [x]`) and
// returns the new text. Only the box characters change: every other byte,
// line endings included, is kept. Ticking a done group changes nothing.
func Tick(src []byte, group int) ([]byte, error) {
	t, pos, err := parse(src)
	if err != nil {
		return nil, fmt.Errorf("tick group %d: %w", group, err)
	}
	if _, ok := t.Group(group); !ok {
		return nil, fmt.Errorf("tick group %d: no such group", group)
	}
	out := bytes.Clone(src)
	for _, p := range pos {
		if p.group == group && out[p.box] != 'X' {
			out[p.box] = 'x'
		}
	}
	return out, nil
}
