package faults

import (
	"hash/fnv"
	"slices"
)

// A cover is the per-change sample of a suite (docs/testing.md): one
// history of every fault kind, and in process one of every recovery branch
// too, then a few more. Which history stands for a kind turns with the key
// (CI passes the commit), so successive changes play different histories
// of the same kinds, and one key always plays the same ones: a red sample is
// played again by passing its key. The whole seeds and the whole process
// sweep play every history on a schedule (faults-sweep.yml).

// Keyed is the position of label among n for key: the same key and label,
// the same position.
func Keyed(key, label string, n int) int {
	h := fnv.New64a()
	h.Write([]byte(key))
	h.Write([]byte{0})
	h.Write([]byte(label))
	return int(h.Sum64() % uint64(n))
}

// coverPick is one history of a cover; twice: it is played a second time
// to check that two plays agree.
type coverPick struct {
	sc    scenario
	twice bool
}

// coverScenarios picks from all (in their order): for each recovery branch
// the histories expect, then for each fault kind not yet picked, one
// history chosen by key; then extra more, chosen by key among the rest. A
// history with a known defect stands for a kind or branch only when no
// other does, and is never an extra: the cover shows each kind recovering,
// the sweep plays the known ones. The
// extra ones are played twice, so the check that two plays leave the same
// trace runs on every change too; the others once.
func coverScenarios(all []scenario, key string, extra int) []coverPick {
	picked := make([]bool, len(all))
	pickOne := func(label string, match func(scenario) bool) {
		var idx, known []int
		for i, sc := range all {
			if match(sc) {
				if picked[i] {
					return // already stood for by an earlier pick
				}
				if sc.Known != "" {
					known = append(known, i)
					continue
				}
				idx = append(idx, i)
			}
		}
		if len(idx) == 0 {
			idx = known // nothing else stands for it
		}
		if len(idx) > 0 {
			picked[idx[Keyed(key, label, len(idx))]] = true
		}
	}
	var branchOrder, kindOrder []string
	for _, sc := range all {
		if sc.Branch != "" && !slices.Contains(branchOrder, sc.Branch) {
			branchOrder = append(branchOrder, sc.Branch)
		}
		if !slices.Contains(kindOrder, sc.Kind) {
			kindOrder = append(kindOrder, sc.Kind)
		}
	}
	for _, b := range branchOrder {
		pickOne("branch "+b, func(sc scenario) bool { return sc.Branch == b })
	}
	for _, k := range kindOrder {
		pickOne("kind "+k, func(sc scenario) bool { return sc.Kind == k })
	}
	var rest []int
	for i := range all {
		if !picked[i] && all[i].Known == "" {
			rest = append(rest, i)
		}
	}
	// The rest in an order the key shuffles; the first extra are played.
	slices.SortStableFunc(rest, func(a, b int) int {
		return Keyed(key, "extra "+all[a].Name, 1<<30) - Keyed(key, "extra "+all[b].Name, 1<<30)
	})
	twice := make([]bool, len(all))
	for _, i := range rest[:min(extra, len(rest))] {
		picked[i], twice[i] = true, true
	}
	var out []coverPick
	for i, sc := range all {
		if picked[i] {
			out = append(out, coverPick{sc: sc, twice: twice[i]})
		}
	}
	return out
}
