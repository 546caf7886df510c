package prbody

import (
	"fmt"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/text"

	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/redact"
)

// Body is what the PR body says.
type Body struct {
	// Issue is the item's issue: the body closes it when the PR merges.
	Issue int
	// State is what the PR is now, in one line (it may quote the agent's
	// reason: it is neutralised).
	State string
	// Plan is the OpenSpec change directory ("" when unknown).
	Plan string
	// Tasks is the plan's tasks.md as the branch holds it; nil leaves the
	// task list out.
	Tasks []byte
	// Acceptance is the acceptance map stage's verifier judged, one line
	// per criterion ("AC1 → group 2 (verifier: …)"); nil leaves it out.
	// Its lines are model text: they are neutralised.
	Acceptance []string
	// Server is the GitHub host and Repo the repository ("owner/name"),
	// for redact.NeutraliseIn.
	Server, Repo string
}

// maxTasks bounds the task list's share of the body; GitHub's limit is
// 65,536 characters and the plan is model text.
const maxTasks = 40000

// maxAcceptance bounds the acceptance map's lines in the body.
const maxAcceptance = 30

// Render renders the body. Text from the plan (group titles, task text) is
// model text: it is neutralised, so it mentions no one and links nothing.
// The caller masks the whole body (the GitHub client does on every write).
func Render(b Body) string {
	var s strings.Builder
	fmt.Fprintf(&s, "Closes #%d.\n\n", b.Issue)
	fmt.Fprintf(&s, "**State:** %s\n", redact.NeutraliseIn(text.OneLine(b.State), b.Server, b.Repo))
	if b.Plan != "" {
		fmt.Fprintf(&s, "\n**Plan:** `%s` (OpenSpec change; `tasks.md` is the list below, ticked in the commit that passes each task).\n",
			strings.ReplaceAll(b.Plan, "`", "'"))
	}
	if len(b.Acceptance) > 0 {
		s.WriteString("\n**Acceptance map** (each criterion of the issue and the group that meets it):\n\n")
		for i, l := range b.Acceptance {
			if i == maxAcceptance {
				fmt.Fprintf(&s, "- and %d more (the stage Job's log)\n", len(b.Acceptance)-i)
				break
			}
			fmt.Fprintf(&s, "- %s\n", redact.NeutraliseIn(text.OneLine(l), b.Server, b.Repo))
		}
	}
	if b.Tasks != nil {
		s.WriteString("\n")
		s.WriteString(TaskList(b.Tasks, b.Server, b.Repo))
	}
	return s.String()
}

// TaskList renders tasks.md's groups and tasks with their ticks, neutralised
// for repo on server; a tasks.md that does not parse is said, not shown.
func TaskList(src []byte, server, repo string) string {
	t, err := plan.Parse(src)
	if err != nil {
		return "_The plan's tasks.md does not parse; see the branch._\n"
	}
	var s strings.Builder
	for _, g := range t.Groups {
		done := 0
		for _, k := range g.Tasks {
			if k.Done {
				done++
			}
		}
		fmt.Fprintf(&s, "**%d. %s** (%d of %d done)\n\n", g.Number, redact.NeutraliseIn(text.OneLine(g.Title), server, repo), done, len(g.Tasks))
		for _, k := range g.Tasks {
			box := " "
			if k.Done {
				box = "x"
			}
			fmt.Fprintf(&s, "- [%s] %s %s\n", box, k.ID, redact.NeutraliseIn(text.OneLine(k.Text), server, repo))
		}
		s.WriteString("\n")
		if s.Len() > maxTasks {
			s.WriteString("_The rest of the task list is in tasks.md on the branch._\n")
			break
		}
	}
	return s.String()
}
