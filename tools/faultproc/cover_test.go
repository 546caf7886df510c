package faultproc

import (
	"testing"

	"github.com/roadmap-dev/roadmap/internal/faults"
)

// TestCoverProcessPicksEveryKind: the process cover plays one history of
// every kind given, and the extra more.
func TestCoverProcessPicksEveryKind(t *testing.T) {
	writes := []faults.Request{{Method: "POST", Path: "/c", Call: 1}, {Method: "PATCH", Path: "/rec", Call: 1}}
	reads := []faults.Request{{Method: "GET", Path: "/g", Call: 1}, {Method: "GET", Path: "/h", Call: 1}}
	all := processScenarios(writes, reads, 3, "/rec")
	kinds := map[string]bool{}
	for _, sc := range all {
		kinds[sc.Kind] = true
	}
	for _, key := range []string{"", "a", "b"} {
		ps := coverProcess(all, key, 1)
		got := map[string]int{}
		for _, sc := range ps {
			got[sc.Kind]++
		}
		if len(got) != len(kinds) || len(ps) != len(kinds)+1 {
			t.Errorf("key %q: %d histories over %d kinds, want %d kinds and one more", key, len(ps), len(got), len(kinds))
		}
	}
}
