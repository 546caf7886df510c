package demo_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/cli"
	"github.com/roadmap-dev/roadmap/internal/demo"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// The test binary doubles as the roadmap binary the demo starts for each
// Job, so the Jobs run as real processes that can be SIGKILLed.
func TestMain(m *testing.M) {
	if os.Getenv("ROADMAP_DEMO_BINARY") == "1" {
		os.Exit(cli.Main(context.Background(), os.Args[1:], os.Environ(), os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func TestDemo(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var progress bytes.Buffer
	sum, err := demo.Run(context.Background(), demo.Options{
		Dir:      t.TempDir(),
		Progress: &progress,
		ExtraEnv: []string{"ROADMAP_DEMO_BINARY=1"},
		Command: func(ctx context.Context, args []string) *exec.Cmd {
			return exec.CommandContext(ctx, self, args...)
		},
	})
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, progress.String())
	}
	if sum.Result != record.ResultReady {
		t.Errorf("the item ended %s, want ready\n%s", sum.Result, progress.String())
	}
	if sum.Kill.Class != "killed" || sum.Kill.Dispatched == 0 {
		t.Errorf("report on the killed Job: %+v, want class killed and a dispatched continuation", sum.Kill)
	}
	if !sum.SpendMatches() {
		t.Errorf("record spend %+v != recorded exchanges %+v and the bookings of calls killed in flight %+v", sum.Spend, sum.Recorded, sum.Estimated)
	}
	// Job 1 is killed while a call is on the wire: booked, never answered,
	// it is in the record at its estimate.
	if sum.Estimated.ModelCalls != 1 || sum.Estimated.TokensOut == 0 {
		t.Errorf("calls at their booking = %+v, want Job 1's call in flight", sum.Estimated)
	}
	if len(sum.Jobs) != 2 || sum.Jobs[0].Result != "" || sum.Jobs[1].Result != record.ResultReady {
		t.Errorf("jobs = %+v, want the killed Job 1 (no result) and Job 2 ready", sum.Jobs)
	}
	if !strings.Contains(sum.Comment, "| **total** |") || strings.Count(sum.Comment, "\n| ") < 3 {
		t.Errorf("the PR comment lacks the table of both Jobs:\n%s", sum.Comment)
	}
	// DESIGN §9: a whole item (stage, a three-group implement with a kill and a continuation, report) within 30 counted requests.
	if sum.Requests.Total > 30 {
		t.Errorf("the item cost %d counted GitHub requests (%v), want at most 30", sum.Requests.Total, sum.Requests.ByPhase)
	}
	t.Logf("requests: %v; spend %+v", sum.Requests.ByPhase, sum.Spend)
}
