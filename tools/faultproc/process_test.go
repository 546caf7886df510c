package faultproc

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// roadmapBinary builds the binary the process histories run, once per test.
func roadmapBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "roadmap")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/roadmap-dev/roadmap/cmd/roadmap").CombinedOutput()
	if err != nil {
		t.Fatalf("build roadmap: %v\n%s", err, out)
	}
	return bin
}

// TestProcessSample: a small sample of the process sweep (real roadmap
// processes, SIGKILLed and faulted from outside) keeps every promise, and
// every pending kind is skipped with its reason.
func TestProcessSample(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real roadmap processes")
	}
	bin := roadmapBinary(t)
	s, err := RunProcess(context.Background(), ProcessOptions{Binary: bin, Sample: 4, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	s.Print(&b)
	t.Log("\n" + b.String())
	if len(s.Violations) != 0 {
		t.Errorf("%d violations, want 0", len(s.Violations))
	}
	if s.Histories != 4 || s.KillPoints == 0 || s.Faults == 0 || s.Recovered != s.Histories {
		t.Errorf("histories %d, kill points %d, faults %d, recovered %d; want 4 histories, kills and faults, all recovered",
			s.Histories, s.KillPoints, s.Faults, s.Recovered)
	}
	if s.WorkRepeated != 0 || s.SpendLost != 0 || s.Duplicates != 0 || s.Stuck != 0 {
		t.Errorf("work repeated %d, spend lost %d, duplicates %d, stuck %d; want 0 of each", s.WorkRepeated, s.SpendLost, s.Duplicates, s.Stuck)
	}
	if len(s.Skipped) != len(pending) {
		t.Errorf("skipped %v, want every pending kind (%d)", s.Skipped, len(pending))
	}
}

// TestProcessFindsPending: the checks from outside are not blind. A pending
// kind, played, shows its violation and names the promise: a person's
// record line written in the Job's read→write window is lost.
func TestProcessFindsPending(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real roadmap processes")
	}
	bin := roadmapBinary(t)
	s, err := RunProcess(context.Background(), ProcessOptions{Binary: bin, Pending: true, Only: "proc_person_window", Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if s.Histories != 1 || len(s.PendingFound) != 1 || !strings.Contains(s.PendingFound[0], "promise: others' keys survive") {
		t.Errorf("histories %d, pending found %v; want the lost line named by its promise", s.Histories, s.PendingFound)
	}
	if len(s.Violations) != 0 {
		t.Errorf("violations %v: a pending kind's findings are listed, not counted", s.Violations)
	}
}
