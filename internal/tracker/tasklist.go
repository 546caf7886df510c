package tracker

import (
	"regexp"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/issueref"
)

// Ref is an issue reference found in a task list. Repo is "owner/name", ""
// for the tracker's own repository.
type Ref struct {
	Repo    string
	Number  int
	Checked bool // the box was ticked; reported, never trusted as a state
}

// maxRefs bounds what one body can make the check read; a body holds at most
// 65,536 characters, so a real task list stays well under it.
const maxRefs = 1000

// taskRE is a task-list item: a bullet (-, *, +) or a number, then a box.
// Indented items (nested lists) and quoted ones count too. The references
// on it are read by internal/issueref, the one grammar of references.
var taskRE = regexp.MustCompile(`^(?:>\s*)*\s{0,12}(?:[-*+]|\d{1,9}[.)])\s+\[([ xX])\]`)

// ParseTaskList returns the issue references in body's task-list items, in
// order, each once. The body is anyone's text: lines inside fenced code and
// inline code spans are not read, a reference must stand alone (not
// "abc#12" or "&#39;"), numbers are at most nine digits, and at most 1,000
// references are returned.
func ParseTaskList(body string) []Ref {
	var out []Ref
	seen := map[Ref]bool{}
	var fence issueref.Fence
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimRight(line, "\r")
		if fence.Skip(line) {
			continue
		}
		m := taskRE.FindStringSubmatchIndex(line)
		if m == nil {
			continue
		}
		checked := line[m[2]:m[3]] != " "
		for _, found := range issueref.Find(issueref.StripCode(line[m[1]:])) {
			r := Ref{Repo: found.Repo, Number: found.Number}
			key := Ref{Repo: strings.ToLower(r.Repo), Number: r.Number}
			if seen[key] {
				continue
			}
			seen[key] = true
			r.Checked = checked
			out = append(out, r)
			if len(out) == maxRefs {
				return out
			}
		}
	}
	return out
}
