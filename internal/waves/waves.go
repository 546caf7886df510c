package waves

import (
	"fmt"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/claims"
	"github.com/roadmap-dev/roadmap/internal/gates"
	"github.com/roadmap-dev/roadmap/internal/plan"
)

// Wave is a run of consecutive groups, in plan order, that may run at once
// (implement.parallel_groups): each one's units are disjoint from those of
// the wave's earlier groups, and the group-order gate finds none of them
// depending on an earlier group of the wave. A wave of one is a group run
// as without the option. Why says, per group after the first, why it may
// run beside the ones before it; for the first group of a wave after
// another, why it could not join that one.
type Wave struct {
	Groups []plan.Group
	Why    []string
}

// Units are the units one group's tasks name (claims.UnitsOf over the
// paths the plan gates read in its tasks): a Go file's package, any other
// path itself. A group that names no path has no units: nothing it will
// change can be shown apart from another group's, and it runs alone.
func Units(g plan.Group) []string {
	return claims.UnitsOf(gates.TaskPaths(&plan.Tasks{Groups: []plan.Group{g}}))
}

// unitsOverlap reports whether two units can hold the same file: the same
// unit, or one a directory above the other (a task may name a directory). The
// root package "." is the files of the root only, not the whole tree.
func unitsOverlap(a, b string) bool {
	if a == b {
		return true
	}
	under := func(x, y string) bool { return x != "." && strings.HasPrefix(y, x+"/") }
	return under(a, b) || under(b, a)
}

// Plan splits groups (the plan's groups not yet passed, in plan order)
// into waves. units gives each group's units (Units), deps each group's
// earlier groups by the group-order gate (gates.GroupDependencies). A group
// joins the wave before it only when it names a unit, shares none with any
// group of the wave, and depends on none of them; otherwise it starts the
// next wave. Waves are consecutive, so applying them one after the other is
// applying the groups in plan order.
func Plan(groups []plan.Group, units map[int][]string, deps map[int][]int) []Wave {
	var out []Wave
	for _, g := range groups {
		if len(out) == 0 {
			out = append(out, Wave{Groups: []plan.Group{g}, Why: []string{"the first group this Job runs"}})
			continue
		}
		cur := &out[len(out)-1]
		if why, ok := besides(g, cur.Groups, units, deps); ok {
			cur.Groups = append(cur.Groups, g)
			cur.Why = append(cur.Why, why)
		} else {
			out = append(out, Wave{Groups: []plan.Group{g}, Why: []string{why}})
		}
	}
	return out
}

// besides says whether g may run beside the groups of a wave, and why (or
// why not), in words for the log.
func besides(g plan.Group, wave []plan.Group, units map[int][]string, deps map[int][]int) (string, bool) {
	mine := units[g.Number]
	if len(mine) == 0 {
		return fmt.Sprintf("group %d names no file or package, so it cannot be shown apart from group %d: it runs after it", g.Number, wave[len(wave)-1].Number), false
	}
	for _, w := range wave {
		theirs := units[w.Number]
		if len(theirs) == 0 {
			return fmt.Sprintf("group %d names no file or package, so group %d cannot be shown apart from it: it runs after it", w.Number, g.Number), false
		}
		for _, d := range deps[g.Number] {
			if d == w.Number {
				return fmt.Sprintf("the group-order gate finds group %d naming what group %d creates: it runs after it", g.Number, w.Number), false
			}
		}
		for _, a := range mine {
			for _, b := range theirs {
				if unitsOverlap(a, b) {
					return fmt.Sprintf("groups %d and %d both change %s: group %d runs after group %d", w.Number, g.Number, unitName(a, b), g.Number, w.Number), false
				}
			}
		}
	}
	var nums []string
	for _, w := range wave {
		nums = append(nums, fmt.Sprint(w.Number))
	}
	return fmt.Sprintf("group %d changes %s, apart from group %s, and needs nothing they create", g.Number, strings.Join(mine, ", "), strings.Join(nums, ", ")), true
}

// unitName names the overlap of two units: the shorter.
func unitName(a, b string) string {
	if len(b) < len(a) {
		a = b
	}
	if a == "." {
		return "the root package"
	}
	return a
}
