package tracker

import (
	"regexp"
	"strconv"
	"strings"
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

var (
	// taskRE is a task-list item: a bullet (-, *, +) or a number, then a
	// box. Indented items (nested lists) and quoted ones count too.
	taskRE = regexp.MustCompile(`^(?:>\s*)*\s{0,12}(?:[-*+]|\d{1,9}[.)])\s+\[([ xX])\]`)
	// refRE is #12, owner/repo#12 or an issue URL on any host's
	// github-like path. The name rules are GitHub's.
	refRE   = regexp.MustCompile(`(?:https?://[A-Za-z0-9.-]+/([A-Za-z0-9][A-Za-z0-9-]{0,38})/([A-Za-z0-9_.-]{1,100})/issues/(\d{1,9})|(?:([A-Za-z0-9][A-Za-z0-9-]{0,38})/([A-Za-z0-9_.-]{1,100}))?#(\d{1,9}))`)
	fenceRE = regexp.MustCompile("^\\s{0,3}(```|~~~)")
	codeRE  = regexp.MustCompile("`[^`]*`")
)

// ParseTaskList returns the issue references in body's task-list items, in
// order, each once. The body is anyone's text: lines inside fenced code and
// inline code spans are not read, a reference must stand alone (not
// "abc#12" or "&#39;"), numbers are at most nine digits, and at most 1,000
// references are returned.
func ParseTaskList(body string) []Ref {
	var out []Ref
	seen := map[Ref]bool{}
	fence := ""
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimRight(line, "\r")
		if m := fenceRE.FindStringSubmatch(line); m != nil {
			switch fence {
			case "":
				fence = m[1]
			case m[1]:
				fence = ""
			}
			continue
		}
		if fence != "" {
			continue
		}
		m := taskRE.FindStringSubmatchIndex(line)
		if m == nil {
			continue
		}
		checked := line[m[2]:m[3]] != " "
		rest := codeRE.ReplaceAllString(line[m[1]:], " ")
		for _, sm := range refRE.FindAllStringSubmatchIndex(rest, -1) {
			if sm[0] > 0 && !boundary(rest[sm[0]-1]) {
				continue
			}
			if sm[1] < len(rest) && isWord(rest[sm[1]]) {
				continue
			}
			var r Ref
			switch {
			case sm[2] >= 0: // a URL
				r.Repo = rest[sm[2]:sm[3]] + "/" + rest[sm[4]:sm[5]]
				r.Number, _ = strconv.Atoi(rest[sm[6]:sm[7]])
			default:
				if sm[8] >= 0 {
					r.Repo = rest[sm[8]:sm[9]] + "/" + rest[sm[10]:sm[11]]
				}
				r.Number, _ = strconv.Atoi(rest[sm[12]:sm[13]])
			}
			if r.Number <= 0 || strings.Contains(r.Repo, "..") {
				continue
			}
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

// boundary: what may come before a reference. Not a word character, and not
// '&' (an HTML entity such as &#39;) or '/' (a path).
func boundary(b byte) bool { return !isWord(b) && b != '&' && b != '/' && b != '#' }

func isWord(b byte) bool {
	return b == '_' || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9')
}
