package gates

import (
	"testing"

	"github.com/roadmap-dev/roadmap/internal/plan"
)

// TestMatchCriteriaIsOnlyAFirstPass: the word match maps "emailed as a PDF
// receipt" to a group that only computes the receipt (they share "receipt"
// and "customer"): it cannot tell, which is why the stage verifier judges
// the map (#3019). An explicit (AC2) maps whatever the words.
func TestMatchCriteriaIsOnlyAFirstPass(t *testing.T) {
	body := "## Acceptance\n\n- The receipt total for the customer includes tax.\n- Receipts are emailed to the customer as a PDF.\n- Refunds are logged.\n"
	tasks, err := plan.Parse([]byte("## 1. Receipt total for the customer (AC1)\n\n- [ ] 1.1 Compute the receipt total with tax; verify: `go test ./...`\n\n" +
		"## 2. Audit (AC2)\n\n- [ ] 2.1 Log it; verify: `go test ./...`\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := MatchCriteria(body, tasks)
	if len(got) != 3 {
		t.Fatalf("%d criteria, want 3: %+v", len(got), got)
	}
	want := [][]int{{1}, {1, 2}, nil}
	for i, m := range got {
		if m.N != i+1 || len(m.Groups) != len(want[i]) {
			t.Errorf("criterion %d: %+v, want groups %v", i+1, m, want[i])
			continue
		}
		for k := range m.Groups {
			if m.Groups[k] != want[i][k] {
				t.Errorf("criterion %d: groups %v, want %v", i+1, m.Groups, want[i])
			}
		}
	}
	if none := MatchCriteria(body, nil); len(none) != 3 || none[0].Groups != nil {
		t.Errorf("no tasks: %+v, want three criteria mapped to nothing", none)
	}
}
