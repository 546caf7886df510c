package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/demo"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/report"
)

// TestImplementDayBudget: `roadmap implement` with a day budget bounded in
// tokens does not start a Job once the dashboard's ledger for today has
// reached the token bound, though its USD is far below the USD bound.
func TestImplementDayBudget(t *testing.T) {
	ctx := context.Background()
	w, err := demo.NewWorld(ctx, t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var calls atomic.Int32
	w.OnModelCall(func(string, int) { calls.Add(1) })
	base, _ := w.Config()
	data, _ := os.ReadFile(base)
	cfg := filepath.Join(t.TempDir(), "roadmap.yml")
	os.WriteFile(cfg, append(data, []byte("budgets:\n  day: {usd: 100, tokens_in: 5000}\n")...), 0o644)
	dash := w.Fake.CreateIssue(githubfake.Issue{Title: "roadmap dashboard"})
	line := report.LedgerLine(report.LedgerEntry{Day: report.Day(time.Now()), Issue: 99, Job: 1, USD: 0.01, TokensIn: 6000, TokensOut: 100, ModelCalls: 3})
	if _, err := w.Fake.AddComment(dash, github.DefaultIdentity, "<!-- roadmap:ledger issue=99 job=1 -->\n"+line); err != nil {
		t.Fatal(err)
	}
	ws, err := w.Workspace("day")
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := Main(ctx, []string{"implement", "--issue", fmt.Sprint(w.Issue), "--attempt", "1", "--config", cfg, "--workdir", ws,
		"--dashboard", fmt.Sprint(dash)}, w.Env(8100, t.TempDir()), strings.NewReader(""), &stdout, &stderr)
	if code != ExitOK {
		t.Fatalf("implement exited %d\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), string(failure.DayBudgetExhausted)) || !strings.Contains(stderr.String(), "5000 tokens in") {
		t.Errorf("the Job's log does not say the day's token budget is spent:\n%s", stderr.String())
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("%d model calls past the day's token budget, want 0: the Job started", n)
	}
}
