package blockers

import (
	"fmt"
	"maps"
	"slices"
)

// CycleError is a dependency cycle among the items Order was given: Path
// runs from an item through its blockers back to it.
type CycleError struct{ Path []int }

func (e *CycleError) Error() string { return "dependency cycle: " + Path(e.Path) }

// Cycle finds a dependency cycle through start in graph (an issue → its
// blockers), as the path to name on the issue ([4 7 4] for "#4 → #7 →
// #4"); nil when there is none. Blockers are followed lowest number first,
// so the path found is the same on every run. Each issue is explored once:
// linear in the graph's size.
func Cycle(graph map[int][]int, start int) []int {
	done := map[int]bool{} // explored without reaching start
	on := map[int]bool{}   // on the path now
	var path []int
	var walk func(n int) bool
	walk = func(n int) bool {
		path = append(path, n)
		on[n] = true
		for _, b := range sorted(graph[n]) {
			if b == start {
				path = append(path, b)
				return true
			}
			if done[b] || on[b] {
				continue
			}
			if walk(b) {
				return true
			}
		}
		done[n], on[n] = true, false
		path = path[:len(path)-1]
		return false
	}
	if walk(start) {
		return path
	}
	return nil
}

// Order is the order in which waiting items start once unblocked: every
// item after its own blockers among them, in waves of items that may start
// at once (no item of a wave blocks another of it), each wave by issue
// number. A blocker that is not among items is not waited for here (the
// caller gives only items whose other blockers are met), and an item named
// twice counts once. A cycle among the items is a *CycleError naming it.
func Order(items []int, graph map[int][]int) ([][]int, error) {
	left := map[int]bool{}
	for _, n := range items {
		left[n] = true
	}
	var waves [][]int
	for len(left) > 0 {
		var wave []int
		for n := range left {
			if !slices.ContainsFunc(graph[n], func(b int) bool { return left[b] }) {
				wave = append(wave, n)
			}
		}
		if wave == nil {
			return waves, cycleAmong(left, graph)
		}
		slices.Sort(wave)
		for _, n := range wave {
			delete(left, n)
		}
		waves = append(waves, wave)
	}
	return waves, nil
}

// cycleAmong names a cycle among the items left, each of which waits for
// another of them, so one exists: the lowest-numbered item's is named.
func cycleAmong(left map[int]bool, graph map[int][]int) error {
	sub := map[int][]int{}
	for n := range left {
		for _, b := range graph[n] {
			if left[b] {
				sub[n] = append(sub[n], b)
			}
		}
	}
	keys := slices.Sorted(maps.Keys(left))
	for _, n := range keys {
		if p := Cycle(sub, n); p != nil {
			return &CycleError{Path: p}
		}
	}
	return fmt.Errorf("dependency cycle among %v", keys) // unreachable: every item left waits for one left
}

func sorted(s []int) []int {
	s = slices.Clone(s)
	slices.Sort(s)
	return slices.Compact(s)
}
