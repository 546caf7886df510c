package gates

import (
	"context"

	"github.com/roadmap-dev/roadmap/internal/plan"
)

// testWordRe is the wording of a task that writes tests, not code.
var testWordRe = lazyRegexp(`(?i)\btest(?:s|ing)?\b|_test\.|\bfixtures?\b`)

// failingTestFirst checks each group's verification against what it changes
// (#3005): a group that changes behaviour starts with a failing test (a
// task whose verify ends with `fails`) before any task that writes the
// code; a group that changes none has a repeatable verify command that
// passes, and no `fails` one, since nothing it does can turn a failure into
// a pass.
func failingTestFirst(_ context.Context, s *state) error {
	pk := s.planKind()
	for _, g := range s.tasks.Groups {
		kind, why := s.groupBehaviour(g, pk)
		first := -1
		for i, t := range g.Tasks {
			if t.Fails {
				first = i
				break
			}
		}
		if kind == changes {
			if first < 0 {
				s.add(plan.LevelError, FailingTestFirst, s.tasksFile(), g.Line, "group %d changes behaviour (%s) but plans no failing test: make its first task add a test whose verify ends with `fails`", g.Number, why)
				continue
			}
			for _, t := range g.Tasks[:first] {
				if !testWordRe().MatchString(taskBody(t.Text, t.Verify)) {
					s.add(plan.LevelError, FailingTestFirst, s.tasksFile(), t.Line, "group %d: task %s comes before the failing test (task %s); the failing test goes first, then the code that makes it pass", g.Number, t.ID, g.Tasks[first].ID)
				}
			}
			continue
		}
		if first >= 0 {
			t := g.Tasks[first]
			s.add(plan.LevelError, FailingTestFirst, s.tasksFile(), t.Line, "group %d changes no behaviour (%s), but task %s's verify is marked `fails`: give it a verify command that passes and can be run again", g.Number, why, t.ID)
			continue
		}
		if len(g.VerifyCommands()) == 0 {
			s.add(plan.LevelError, FailingTestFirst, s.tasksFile(), g.Line, "group %d changes no behaviour (%s) and has no verify command: end a task with a repeatable verify: `command`", g.Number, why)
		}
	}
	return nil
}
