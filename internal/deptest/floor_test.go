package deptest

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// provingFloor are the packages that prove roadmap rather than run it: the
// process fault harness (it starts real roadmap processes, SIGKILLs them
// and proxies their traffic), the real-world set's fetcher (it downloads
// module zips and Debian tarballs) and the roadmap-dev command line that
// drives both. The roadmap binary users run holds none of them.
var provingFloor = []string{
	module + "/tools/faultproc",
	module + "/tools/realset",
	module + "/tools/devcli",
}

// testOnly are packages only tests import: the demo's test-only worlds
// (the return-to-stage, Python and trio worlds, the hostile agent's
// fixtures). No binary is built from them; the roadmap binary holds none.
var testOnly = []string{
	module + "/internal/demo/demotest",
}

// TestProvingFloorOutOfBinary: `go list -deps ./cmd/roadmap` holds no
// package of the proving floor, and each of them still exists (so a rename
// cannot make the check pass by itself), built by cmd/roadmap-dev; nor any
// test-only package (testOnly), each of which still exists.
func TestProvingFloorOutOfBinary(t *testing.T) {
	root := moduleRoot(t)
	goList := func(args ...string) []string {
		t.Helper()
		cmd := exec.Command("go", append([]string{"list"}, args...)...)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list %s: %v", strings.Join(args, " "), err)
		}
		return strings.Fields(string(out))
	}
	product := goList("-deps", "./cmd/roadmap")
	if !slices.Contains(product, module+"/internal/cli") {
		t.Fatalf("go list -deps ./cmd/roadmap does not hold %s/internal/cli: is the module path right?", module)
	}
	dev := goList("-deps", "./cmd/roadmap-dev")
	for _, p := range provingFloor {
		if slices.Contains(product, p) {
			t.Errorf("the roadmap binary holds %s: the proving floor belongs to roadmap-dev, not to the product", p)
		}
		if !slices.Contains(dev, p) {
			t.Errorf("%s is not a package roadmap-dev is built from: renamed or gone? (this list must name the proving floor's packages)", p)
		}
	}
	for _, p := range testOnly {
		if slices.Contains(product, p) {
			t.Errorf("the roadmap binary holds %s: a test-only package, for tests alone", p)
		}
		if got := goList(p); !slices.Equal(got, []string{p}) {
			t.Errorf("go list %s = %v: renamed or gone? (testOnly must name existing packages)", p, got)
		}
	}
}
