package cli

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateItemLife = flag.Bool("update-item-life", false, "rewrite docs/images/item-life.svg from testdata/demo-traces")

// The README's picture of an item's life: the demo's timeline drawn as SVG
// from the traces of a real `roadmap demo --keep DIR` (testdata/demo-traces,
// copied from DIR/trace-*.jsonl).
const itemLifeSVG = "../../docs/images/item-life.svg"

// TestItemLifePictureCurrent: docs/images/item-life.svg is what timelineSVG
// draws from the kept traces, so the picture changes with the timeline.
// Regenerate it with -update-item-life; to redraw it from a new play, copy
// a kept demo's trace-*.jsonl into testdata/demo-traces first.
func TestItemLifePictureCurrent(t *testing.T) {
	traces, err := readTraces(filepath.Join("testdata", "demo-traces"))
	if err != nil || len(traces) != 3 {
		t.Fatalf("the demo's traces: %d, %v; want stage's and both implement Jobs'", len(traces), err)
	}
	got := timelineSVG("the life of an item: roadmap demo's issue #1", traces)
	for _, want := range []string{"stage Job 1", "implement Job 1", "implement Job 2", "killed: no result", "(no end)", "ready", "staged"} {
		if !strings.Contains(got, ">"+want) && !strings.Contains(got, want+"<") {
			t.Errorf("the picture lacks %q", want)
		}
	}
	if *updateItemLife {
		if err := os.WriteFile(itemLifeSVG, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(itemLifeSVG)
	if err != nil {
		t.Fatalf("%v (go test ./internal/cli -run TestItemLifePictureCurrent -update-item-life writes it)", err)
	}
	if string(b) != got {
		t.Errorf("%s is not what timelineSVG draws from testdata/demo-traces: regenerate it with -update-item-life", itemLifeSVG)
	}
}
