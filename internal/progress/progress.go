// Package progress renders what an implement Job shows a person between its
// marks, in the PR comment: the plan's groups as a checklist ticked as they
// pass and a "now: …" line. It also decides when that comment is written
// again (Throttle), so the progress a person can watch costs a bounded
// number of counted requests per Job whatever the plan's size. It is pure:
// it reads no clock, file or network; the caller passes the time.
package progress

import (
	"fmt"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/redact"
	"github.com/roadmap-dev/roadmap/internal/text"
)

// Group is one group of the plan as the checklist shows it.
type Group struct {
	Number int
	Title  string
}

// Bounds of text roadmap did not write: a group's title comes from the
// model's plan, the now line holds one.
const (
	titleMax = 120
	nowMax   = 300
)

// View is what the checklist is rendered from: the plan's groups in plan
// order, the ones that passed (a mark, or a group commit on the branch) and
// what the Job is doing now ("" for no now line). Server and Repo are where
// the comment is posted, for the neutraliser (links to the repository's own
// issues stay links).
type View struct {
	Groups []Group
	Passed map[int]bool
	Now    string
	Server string
	Repo   string
}

// Checklist renders v as Markdown: one task-list line per group
// (`- [x] group 1: title`, `- [ ] group 2: title`), then `now: …`. A title
// and the now line are untrusted: each is made one line (no forged list
// item), bounded, and the whole is neutralised as every comment of
// roadmap's is (no mention, HTML, image or outside link). A plan with no
// group and no now line renders "".
func Checklist(v View) string {
	var b strings.Builder
	for _, g := range v.Groups {
		box := " "
		if v.Passed[g.Number] {
			box = "x"
		}
		fmt.Fprintf(&b, "- [%s] group %d: %s\n", box, g.Number, text.Safe(g.Title, titleMax))
	}
	if now := text.Safe(v.Now, nowMax); now != "" {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "now: %s\n", now)
	}
	return redact.NeutraliseIn(b.String(), v.Server, v.Repo)
}

// Interval is the least time between two writes of the PR comment, and
// between the Job's start and its first. GitHub's secondary rate limits
// bound content-creating requests (a comment's edit is one: 80 a minute,
// 500 an hour, and a second between writes is its advice), and every write
// is a counted request of the item's budget (docs/record.md). A group of an
// agent's work takes minutes, so each is ticked as it passes; groups that
// pass within a minute of each other are ticked together, and a Job that
// ends within a minute spends nothing before its end's write.
const Interval = time.Minute

// MaxWrites bounds the progress writes of the PR comment in one Job, besides
// the write at the Job's end it always made: 3, so each group of a 3-group
// plan is ticked as it passes, and a plan of any size costs at most 3
// counted requests more per Job (a larger plan's later ticks wait for the
// end's write).
const MaxWrites = 3

// Throttle decides when the PR comment is written between marks: when what
// it shows changed (a group passed, or the now line) and Interval has
// passed since the last write or the Job's start; never more than Max
// writes a Job. A nil Throttle allows none.
type Throttle struct {
	Interval time.Duration
	Max      int

	last   time.Time
	passed int
	now    string
	writes int
}

// NewThrottle returns the Job's throttle with the package's bounds, started
// at start with passed groups already ticked by earlier Jobs and the now
// line the comment says.
func NewThrottle(start time.Time, passed int, now string) *Throttle {
	return &Throttle{Interval: Interval, Max: MaxWrites, last: start, passed: passed, now: now}
}

// Due reports whether a write of the comment is due at t, with passed
// groups ticked and now the now line.
func (th *Throttle) Due(t time.Time, passed int, now string) bool {
	if th == nil || th.writes >= th.Max {
		return false
	}
	if passed == th.passed && now == th.now {
		return false
	}
	return t.Sub(th.last) >= th.Interval
}

// Wrote records a write at t of the comment with passed groups ticked and
// now the now line.
func (th *Throttle) Wrote(t time.Time, passed int, now string) {
	th.last, th.passed, th.now = t, passed, now
	th.writes++
}

// Writes is how many progress writes the Job made.
func (th *Throttle) Writes() int {
	if th == nil {
		return 0
	}
	return th.writes
}
