package faults

import (
	"fmt"
	"slices"
	"testing"
)

// coverFixture is a seed's histories built from a made-up crash-free run
// (no play): effects, writes and a record write, enough for every kind and
// branch of the tables to appear.
func coverFixture() []scenario {
	effects := []string{"commit#1", "push#1", "pr#1", "commit#2", "push#2", "ready#1"}
	writes := []Request{{Method: "POST", Path: "/c", Call: 1}, {Method: "PATCH", Path: "/rec", Call: 1}, {Method: "PUT", Path: "/l", Call: 1}}
	record := func(r Request) bool { return r.Path == "/rec" }
	all := scenarios(1, effects, writes, record)
	all = append(all, readScenarios(1, []Request{{Method: "GET", Path: "/g", Call: 1}})...)
	return append(all, stageScenarios(1, []string{EffPush + "#1", "pr#1"}, writes, record)...)
}

// TestCoverPicksEveryKindAndBranch: the per-change cover plays at least one
// history of every fault kind and every recovery branch of a seed, the
// extra ones twice, the same for the same key and not always the same
// histories for other keys, in at most half the plays of the seed.
func TestCoverPicksEveryKindAndBranch(t *testing.T) {
	all := coverFixture()
	var kinds, branches []string
	for _, sc := range all {
		if !slices.Contains(kinds, sc.Kind) {
			kinds = append(kinds, sc.Kind)
		}
		if sc.Branch != "" && !slices.Contains(branches, sc.Branch) {
			branches = append(branches, sc.Branch)
		}
	}
	names := func(ps []coverPick) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.sc.Name)
		}
		return out
	}
	first := coverScenarios(all, "91b326c", 2)
	turned := false
	for i := range 20 {
		key := fmt.Sprintf("commit-%d", i)
		ps := coverScenarios(all, key, 2)
		var twice int
		gotK, gotB := map[string]bool{}, map[string]bool{}
		for _, p := range ps {
			gotK[p.sc.Kind], gotB[p.sc.Branch] = true, true
			if p.twice {
				twice++
			}
		}
		for _, k := range kinds {
			if !gotK[k] {
				t.Errorf("key %s: kind %s not in the cover", key, k)
			}
		}
		for _, b := range branches {
			if !gotB[b] {
				t.Errorf("key %s: branch %s not in the cover", key, b)
			}
		}
		if twice != 2 {
			t.Errorf("key %s: %d histories played twice, want the 2 extra", key, twice)
		}
		// A seed plays each history twice; the cover at most half as many plays.
		if plays := len(ps) + twice; len(ps) > len(kinds)+len(branches)+2 || plays > len(all) {
			t.Errorf("key %s: %d histories in %d plays (the seed: %d histories, %d plays), want at most one per kind and branch and 2 more, in half the plays",
				key, len(ps), plays, len(all), 2*len(all))
		}
		if !slices.Equal(names(ps), names(coverScenarios(all, key, 2))) {
			t.Errorf("key %s: two covers differ", key)
		}
		if !slices.Equal(names(ps), names(first)) {
			turned = true
		}
	}
	if !turned {
		t.Error("twenty keys all chose the same histories: the cover does not turn")
	}
	for _, k := range append(slices.Clone(kindsTable()), stageKinds...) {
		if !slices.Contains(kinds, k) {
			t.Errorf("the fixture has no history of kind %s: the test proves nothing for it", k)
		}
	}
}

func kindsTable() []string { return kinds }

// TestCoverLeavesKnownToTheSweep: a history with a known defect never
// stands for its kind in the cover while another history does, and is never
// an extra: the cover shows every kind recovering (TestFaultsRun wants no
// known defect), the sweep plays the known ones.
func TestCoverLeavesKnownToTheSweep(t *testing.T) {
	all := coverFixture()
	// The suite has no known defect today: the fixture gives one history
	// of a kind with others, and the only one of another kind, a defect.
	var kindWithOthers string
	seen := map[string]int{}
	for _, sc := range all {
		seen[sc.Kind]++
	}
	for i := range all {
		if seen[all[i].Kind] > 1 && kindWithOthers == "" {
			kindWithOthers = all[i].Kind
			all[i].Known = "a defect the fixture plants"
		}
	}
	if kindWithOthers == "" {
		t.Fatal("the fixture has no kind with two histories: the test proves nothing")
	}
	for i := range 20 {
		key := fmt.Sprintf("commit-%d", i)
		for _, p := range coverScenarios(all, key, len(all)) {
			if p.sc.Known != "" {
				t.Errorf("key %s: the cover plays %q, a known defect (%s)", key, p.sc.Name, p.sc.Known)
			}
		}
	}
}
