package gates

import (
	"context"
	"errors"
	"sort"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/plan"
)

// createRe is the wording of a task that creates a file.
var createRe = lazyRegexp(`(?i)\b(?:create[sd]?|creating|add(?:s|ed)?|adding|new|write[s]?|writing|generate[sd]?|scaffold)\b`)

// mention is a path a task names.
type mention struct {
	path   string
	group  int
	task   string
	line   int
	create bool // the task's wording creates it
	verify bool // named only in the verify command
}

// groupOrder checks that no group reads or modifies a path that a later
// group creates (#3017): implement runs groups in order, so such a group
// finds nothing there and stops. A path absent at the staging commit is
// created by the first group whose task names it with create wording
// (create, add, new, write, generate), or else by the first group that
// names it; a path that exists is never created. A group that names a
// directory a later group creates a file in reads that file's path too.
func groupOrder(_ context.Context, s *state) error {
	ms, creator := s.groupMentions()
	created := make([]string, 0, len(creator))
	for p := range creator {
		created = append(created, p)
	}
	sort.Strings(created)
	reported := map[string]bool{}
	for _, m := range ms {
		for _, p := range created {
			c := creator[p]
			if c.group <= m.group || (p != m.path && !strings.HasPrefix(p, m.path+"/")) {
				continue
			}
			key := m.task + "\x00" + m.path
			if reported[key] {
				continue
			}
			reported[key] = true
			what := "names"
			if m.verify {
				what = "verifies with"
			}
			s.add(plan.LevelError, GroupOrder, s.tasksFile(), m.line, "group %d (task %s) %s %s, which does not exist until group %d creates %s (task %s): move the creating task into group %d or earlier", m.group, m.task, what, m.path, c.group, p, c.task, m.group)
		}
	}
	s.groupOrderBySymbols()
	return nil
}

// groupMentions reads the paths the tasks name that do not exist at the
// staging commit, and the group that creates each (the mention whose task
// creates it, else the first that names it outside a verify command).
func (s *state) groupMentions() ([]mention, map[string]mention) {
	var ms []mention
	for _, g := range s.tasks.Groups {
		for _, t := range g.Tasks {
			body := taskBody(t.Text, t.Verify)
			create := createRe().MatchString(stripSpans(body))
			for _, sp := range codeSpans(body) {
				if p := asPath(sp); p != "" && !s.present(p) {
					ms = append(ms, mention{path: p, group: g.Number, task: t.ID, line: t.Line, create: create})
				}
			}
			for _, p := range commandPaths(t.Verify) {
				if !s.present(p) {
					ms = append(ms, mention{path: p, group: g.Number, task: t.ID, line: t.Line, verify: true})
				}
			}
		}
	}
	creator := map[string]mention{}
	for _, m := range ms {
		if c, ok := creator[m.path]; m.create && (!ok || !c.create) {
			creator[m.path] = m
		}
	}
	for _, m := range ms {
		if _, ok := creator[m.path]; !ok && !m.verify {
			creator[m.path] = m
		}
	}
	return ms, creator
}

// GroupDependencies is the group-order gate's reading of which groups need
// an earlier one: group m depends on group c < m when a task of m names a
// path (or a directory above one) that does not exist in the work tree
// in.Root and that c creates, or a symbol nothing declares there that c
// declares. The answer maps each group that depends on
// an earlier one to those groups, ascending. Implement reads it before it
// runs groups beside each other (implement.parallel_groups): the work tree
// is then the branch's head, so a path an already passed group created
// exists and makes no dependency.
func GroupDependencies(in Input) (map[int][]int, error) {
	s, err := newState(in)
	if err != nil {
		return nil, err
	}
	defer s.root.Close()
	if s.tasks == nil {
		return nil, errors.New("gates: the change's tasks.md does not parse")
	}
	ms, creator := s.groupMentions()
	seen := map[[2]int]bool{}
	deps := map[int][]int{}
	for _, m := range ms {
		for p, c := range creator {
			if c.group >= m.group || (p != m.path && !strings.HasPrefix(p, m.path+"/")) || seen[[2]int{m.group, c.group}] {
				continue
			}
			seen[[2]int{m.group, c.group}] = true
			deps[m.group] = append(deps[m.group], c.group)
		}
	}
	// A group that uses a symbol an earlier group declares needs it too,
	// though it names none of that group's files.
	syms, declarer := s.symbolMentions()
	for _, m := range syms {
		d, ok := declarer[m.name]
		if !ok || d.group >= m.group || seen[[2]int{m.group, d.group}] {
			continue
		}
		seen[[2]int{m.group, d.group}] = true
		deps[m.group] = append(deps[m.group], d.group)
	}
	for g := range deps {
		sort.Ints(deps[g])
	}
	return deps, nil
}
