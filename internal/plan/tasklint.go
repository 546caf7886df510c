package plan

import (
	"fmt"
	"regexp"
	"strings"
)

// OpenSpec's own task-file checks (src/core/validation/task-numbering.ts,
// task-checkboxes.ts, src/utils/task-progress.ts). They are looser than
// Parse, which is roadmap's reading of the plan contract; these run so that
// validation reports what `openspec validate` reports, word for word.

var (
	osTaskLineRe    = jsRegexp(`^\s*(?:[-*+]|\d{1,9}[.)])\s*\[\s*([^\]\s]?)\s*\](.*)$`)
	osTaskInsideRe  = jsRegexp(`^\s*(?:[-*+]|\d{1,9}[.)])\s*\[(\s*)\]`)
	levelTwoRe      = regexp.MustCompile(`^ {0,3}##(?:[ \t]+|[ \t]*\r?$)`)
	numberedGroupRe = regexp.MustCompile(`^ {0,3}##[ \t]+(\d+)\.(?:[ \t]|\r?$)`)
	osTaskIDRe      = jsRegexp(`^(\d+(?:\.\d+)+(?:[A-Za-z]+)?)(?:\s|$)`)
	listItemRe      = jsRegexp(`^\s*(?:[-*+]|\d{1,9}[.)])\s+\S`)
	lintFenceRe     = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})(.*)")
	frontMatterRe   = jsRegexp(`^-{3}\s*$`)
)

// osTaskLine reads one line as OpenSpec's parseTaskLines does: ok when it is a
// checkbox item, with its description (trimmed).
func osTaskLine(line string) (desc string, ok bool) {
	m := osTaskLineRe.FindStringSubmatch(line)
	if m != nil && !strings.HasPrefix(m[2], "(") && !strings.HasPrefix(m[2], "[") {
		return jsTrim(jsTrimStart(m[2])), true
	}
	// The second alternative: a box of nothing but spaces, whatever follows.
	if m := osTaskInsideRe.FindStringSubmatchIndex(line); m != nil && m[3] > m[2] {
		return jsTrim(line[m[1]:]), true
	}
	return "", false
}

type taskIssue struct {
	line int
	msg  string
}

// taskNumberingIssues is findTaskNumberingIssues for one file (tasks.md).
func taskNumberingIssues(content string) []taskIssue {
	lines := strings.Split(content, "\n")
	numbered := false
	for _, l := range lines {
		if numberedGroupRe.MatchString(l) {
			numbered = true
			break
		}
	}
	if !numbered {
		return nil
	}
	var out []taskIssue
	first := map[string]int{}
	group, inGroup := "", false
	for i, l := range lines {
		if levelTwoRe.MatchString(l) {
			if m := numberedGroupRe.FindStringSubmatch(l); m != nil {
				group, inGroup = m[1], true
			} else {
				inGroup = false
			}
		}
		if !inGroup {
			continue
		}
		desc, ok := osTaskLine(l)
		if !ok {
			continue
		}
		m := osTaskIDRe.FindStringSubmatch(desc)
		if m == nil {
			continue
		}
		id := m[1]
		taskGroup := id[:strings.IndexByte(id, '.')]
		if trimZeros(taskGroup) != trimZeros(group) {
			out = append(out, taskIssue{i + 1, fmt.Sprintf("Task \"%s\" is under group %s, but its leading number points to group %s. Move it to group %s or renumber it.", id, group, taskGroup, taskGroup)})
		}
		if at, ok := first[id]; ok {
			out = append(out, taskIssue{i + 1, fmt.Sprintf("Task ID \"%s\" is duplicated; it was first declared on line %d.", id, at)})
		} else {
			first[id] = i + 1
		}
	}
	return out
}

func trimZeros(s string) string {
	t := strings.TrimLeft(s, "0")
	if t == "" {
		return "0"
	}
	return t
}

// hasTaskLine reports whether any line of content is a checkbox item.
func hasTaskLine(content string) bool {
	for _, l := range strings.Split(content, "\n") {
		if _, ok := osTaskLine(l); ok {
			return true
		}
	}
	return false
}

const noCheckboxMsg = `This change counts as 0 tasks: no line in its tracked task files is a checkbox, so "openspec list" and "openspec status" report no work and "openspec archive" has nothing to flag as incomplete. Write each task as "- [ ] 1.1 Description".`

// firstListItemLine is the 1-based line of the first list item outside fences,
// HTML comments and front matter; 0 when there is none.
func firstListItemLine(content string) int {
	lines := strings.Split(content, "\n")
	i := 0
	if len(lines) > 0 && frontMatterRe.MatchString(jsTrimEnd(strings.TrimPrefix(lines[0], bom))) {
		for j := 1; j < len(lines); j++ {
			if frontMatterRe.MatchString(jsTrimEnd(lines[j])) {
				i = j + 1
				break
			}
		}
	}
	var fence byte
	fenceLen := 0
	inComment := false
	for ; i < len(lines); i++ {
		l := lines[i]
		if inComment {
			if strings.Contains(l, "-->") {
				inComment = false
			}
			continue
		}
		if m := lintFenceRe.FindStringSubmatch(l); m != nil {
			if fence == 0 {
				fence, fenceLen = m[1][0], len(m[1])
			} else if m[1][0] == fence && len(m[1]) >= fenceLen && jsTrim(m[2]) == "" {
				fence = 0
			}
			continue
		}
		if fence != 0 {
			continue
		}
		if t := jsTrimStart(l); strings.HasPrefix(t, "<!--") {
			at := strings.Index(l, "<!--")
			if !strings.Contains(l[at+4:], "-->") {
				inComment = true
			}
			continue
		}
		if listItemRe.MatchString(l) && indentColumns(l) < 4 {
			return i + 1
		}
	}
	return 0
}

func indentColumns(l string) int {
	col := 0
	for _, c := range l {
		switch c {
		case ' ':
			col++
		case '\t':
			col += 4 - col%4
		default:
			return col
		}
	}
	return col
}
