package demo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/cli"
	"github.com/roadmap-dev/roadmap/internal/demo"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/sandbox/sandboxtest"
	"github.com/roadmap-dev/roadmap/internal/text"
)

// The test binary doubles as the roadmap binary the demo starts for each
// Job, so the Jobs run as real processes that can be SIGKILLed.
func TestMain(m *testing.M) {
	if os.Getenv("ROADMAP_DEMO_BINARY") == "1" {
		os.Exit(cli.Main(context.Background(), os.Args[1:], os.Environ(), os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// The demo's life is played once for the package's tests that read it.
var played struct {
	once     sync.Once
	sum      *demo.Summary
	progress bytes.Buffer // the steps: what `roadmap demo` prints by default
	log      bytes.Buffer // the Jobs' and report's own lines (--verbose)
	err      error
}

func playDemo(t *testing.T) (*demo.Summary, *bytes.Buffer) {
	t.Helper()
	if testing.Short() {
		t.Skip("plays the demo's whole item with the real binary (make test runs it; make check passes -short)")
	}
	played.once.Do(func() {
		self, err := os.Executable()
		if err != nil {
			played.err = err
			return
		}
		dir, err := os.MkdirTemp("", "roadmap-demo-test-")
		if err != nil {
			played.err = err
			return
		}
		played.sum, played.err = demo.Run(context.Background(), demo.Options{
			Dir:      dir,
			Progress: &played.progress,
			Log:      &played.log,
			// The runner's Go build cache is a hosted runner's (sandboxtest.RunnerGoCache);
			// the Jobs' step summaries are kept as `roadmap demo --keep` keeps them.
			ExtraEnv: []string{"ROADMAP_DEMO_BINARY=1", "GOCACHE=" + sandboxtest.RunnerGoCache(t),
				"GITHUB_STEP_SUMMARY=" + filepath.Join(dir, demo.StepSummaryFile)},
			Command: func(ctx context.Context, args []string) *exec.Cmd {
				return exec.CommandContext(ctx, self, args...)
			},
		})
	})
	if played.err != nil {
		t.Fatalf("demo: %v\n%s\n%s", played.err, played.progress.String(), played.log.String())
	}
	return played.sum, &played.progress
}

func TestDemo(t *testing.T) {
	sum, progress := playDemo(t)
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

// TestDashboardRequestBudget: the demo's item, with the dashboard kept by
// its reports, stays within 30 counted GitHub requests (DESIGN §9); each
// report's keeping of the dashboard costs at most one read and one write;
// and the dashboard a maintainer reads shows the item, its spend and its
// requests.
func TestDashboardRequestBudget(t *testing.T) {
	sum, _ := playDemo(t)
	if sum.Requests.Total > 30 {
		t.Errorf("the item cost %d counted GitHub requests (%v) with the dashboard kept, want at most 30", sum.Requests.Total, sum.Requests.ByPhase)
	}
	wrote := 0
	for i, k := range sum.Dashboard.Reports {
		if k == nil {
			continue
		}
		if k.Requests > 2 {
			t.Errorf("report %d kept the dashboard with %d requests, want at most one read and one write", i, k.Requests)
		}
		if k.Wrote {
			wrote++
		}
	}
	if wrote == 0 {
		t.Fatalf("no report kept the dashboard: %+v", sum.Dashboard.Reports)
	}
	body := sum.Dashboard.Body
	spend := text.USD(sum.Spend.USD)
	row := fmt.Sprintf("| ready | #%d ", sum.Issue)
	i := strings.Index(body, row)
	if i < 0 {
		t.Fatalf("the dashboard does not show #%d ready:\n%s", sum.Issue, body)
	}
	line, _, _ := strings.Cut(body[i:], "\n")
	// The Jobs' requests as the record's lines say, stage's and implement's.
	requests := 0
	for _, l := range strings.Split(sum.Record, "\n") {
		k, v, _ := strings.Cut(l, ": ")
		if k != string(record.KeyImplementJobs) && k != string(record.KeyStageJobs) {
			continue
		}
		var jobs []record.JobOutcome
		if err := json.Unmarshal([]byte(v), &jobs); err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		for _, j := range jobs {
			requests += j.Requests
		}
	}
	if requests == 0 || requests > sum.Requests.Total {
		t.Fatalf("the Jobs' lines count %d requests, want some and no more than the item's %d", requests, sum.Requests.Total)
	}
	if !strings.Contains(line, spend) || !strings.HasSuffix(line, fmt.Sprintf("| %d |", requests)) {
		t.Errorf("the item's row %q does not show its spend %s and its Jobs' requests", line, spend)
	}
	if kept, err := os.ReadFile(filepath.Join(sum.Dir, demo.DashboardFile)); err != nil || string(kept) != body {
		t.Errorf("demo --keep left no dashboard body (%v)", err)
	}
}
