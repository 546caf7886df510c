package eval

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/gates"
)

// TestEvalEachGateMatters leaves each plan gate out in turn: the gates
// suite must then score below this repository's floor (eval.gates.floor in
// .github/roadmap.yml), so no gate can break unseen; with every gate it is
// at or above it.
func TestEvalEachGateMatters(t *testing.T) {
	cfg, err := config.LoadExplicit(filepath.Join("..", "..", ".github", "roadmap.yml"))
	if err != nil {
		t.Fatal(err)
	}
	floor := cfg.Eval.Gates.Floor
	if floor <= 0 {
		t.Fatalf("eval.gates.floor is %v: no floor", floor)
	}
	o := Options{Dir: filepath.Join("..", "..", "testdata", "golden", "stage"), Floor: floor, TempDir: t.TempDir()}
	rep, err := Gates(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Passed {
		t.Fatalf("every gate on: score %v, below the floor %v", rep.Score, floor)
	}
	if len(gates.Names()) != 7 {
		t.Errorf("%d gates, want the seven docs/gates.md names", len(gates.Names()))
	}
	for _, g := range gates.Names() {
		o.SkipGates = []string{g}
		rep, err := Gates(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Passed || rep.Score >= floor {
			t.Errorf("without %s the gates suite scores %v, not below the floor %v: the golden set does not need it", g, rep.Score, floor)
		} else {
			t.Logf("without %s: %.4f", g, rep.Score)
		}
	}
	o.SkipGates = []string{"no-such-gate"}
	if _, err := Gates(context.Background(), o); err == nil {
		t.Error("an unknown gate to skip was accepted")
	}
}
