package dashboard

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/items"
)

// The dashboard's checkboxes are commands. Each is a task-list line with a
// marker naming the command and the item:
//
//	- [ ] retry #12 <!-- roadmap:cmd retry 12 -->
//
// A person with write access ticks it (an edit of the body, which only
// people with write access and the issue's author can make); the run the
// edit starts (issues: edited on the dashboard) carries the command out for
// the person who made the edit, after GitHub says they have write access,
// and the next render shows the box clear again. A ticked box whose text
// and marker disagree is no command.

// Commands a box gives.
const (
	CmdRetry = "retry"
	CmdStop  = "stop"
	CmdWake  = "wake"
)

// Command is one ticked box.
type Command struct {
	Verb  string `json:"verb"`
	Issue int    `json:"issue"`
}

var boxRE = regexp.MustCompile(`^\s*[-*] \[([ xX])\] (retry|stop|wake now) #([0-9]{1,9})\b.*<!-- roadmap:cmd (retry|stop|wake) ([0-9]{1,9}) -->\s*$`)

// maxBoxes bounds the boxes read from one body.
const maxBoxes = 500

// Ticked reads the ticked command boxes of a dashboard body, each once, in
// the order they appear.
func Ticked(body string) []Command {
	var out []Command
	seen := map[Command]bool{}
	n := 0
	for line := range strings.SplitSeq(body, "\n") {
		if !strings.Contains(line, "<!-- roadmap:cmd ") {
			continue
		}
		if n++; n > maxBoxes {
			break
		}
		m := boxRE.FindStringSubmatch(strings.TrimRight(line, "\r"))
		if m == nil || m[1] == " " {
			continue
		}
		text := strings.TrimSuffix(m[2], " now")
		if text != m[4] || m[3] != m[5] {
			continue
		}
		issue, err := strconv.Atoi(m[3])
		if err != nil || issue < 1 {
			continue
		}
		c := Command{Verb: m[4], Issue: issue}
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out
}

// commandFor is the box an item's line offers, "" for none: a stopped item
// can be retried, an item waiting for the day's budget woken now, an item
// in flight or waiting on a person stopped.
func commandFor(l Line) string {
	switch l.State {
	case items.Stopped:
		return CmdRetry
	case items.WaitingBudget:
		return CmdWake
	case items.Ready, items.Unknown:
		return ""
	}
	return CmdStop
}

func box(verb string, issue int, ticked bool) string {
	mark := " "
	if ticked {
		mark = "x"
	}
	text := verb
	if verb == CmdWake {
		text = "wake now"
	}
	return "- [" + mark + "] " + text + " #" + strconv.Itoa(issue) + " <!-- roadmap:cmd " + verb + " " + strconv.Itoa(issue) + " -->"
}
