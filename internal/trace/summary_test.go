package trace

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestSummaryTableGolden(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			golden(t, sc.name+".table.golden", SummaryTable(sc.run(t)))
		})
	}
}

// The numbers here are the ones runStopped feeds its Recorder.
func TestSummaryStepsOfStoppedJob(t *testing.T) {
	steps := Steps(runStopped(t))
	type row struct {
		Label       string
		Result      string
		Attempts    int
		In, Out     int64
		FailCommand string
		FailExit    int
	}
	var got []row
	for _, s := range steps {
		r := row{Label: s.Label, Result: s.Result, Attempts: s.Attempts, In: s.TokensIn, Out: s.TokensOut}
		if s.LastFailure != nil {
			r.FailCommand, r.FailExit = s.LastFailure.Command, s.LastFailure.ExitCode
		}
		got = append(got, r)
	}
	want := []row{
		{Label: "1. Add a failing test for the backoff schedule", Result: "passed", Attempts: 1,
			In: 1200 + 1800, Out: 310 + 420},
		{Label: "2. Compute the delay, capped at one hour", Result: "failed", Attempts: 3,
			In: 2400 + 3100 + 3500, Out: 600 + 700 + 650,
			FailCommand: "go test ./internal/webhook", FailExit: 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
}

func TestSummaryTableStopComment(t *testing.T) {
	table := SummaryTable(runStopped(t))
	for _, want := range []string{
		"| Step | Result | Attempts | Tokens in | Tokens out | Cost | Last failing command |",
		"| 2. Compute the delay, capped at one hour | failed | 3 | 9,000 | 1,950 |",
		"`go test ./internal/webhook` (exit 1) |",
		"| **Total** | stopped (checks\\_failed) | 4 | 12,000 | 2,680 |",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}

func TestSummaryAttempts(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(*testing.T) []Event
		want []int
	}{
		{"stopped", runStopped, []int{1, 3}},
		// The watch row counts its one span.
		{"ready", runReady, []int{1, 1, 1}},
		// Killed inside its first agent step: the step still counts.
		{"killed", runKilled, []int{1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []int
			for _, s := range Steps(tc.run(t)) {
				got = append(got, s.Attempts)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("attempts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSummaryTableEscapes(t *testing.T) {
	table := SummaryTable(runHostile(t))
	lines := strings.Split(strings.TrimSuffix(table, "\n"), "\n")
	if got, want := len(lines), 4; got != want {
		t.Fatalf("table has %d lines, want %d (header, rule, row, total):\n%s", got, want, table)
	}
	for _, line := range lines {
		// Every row keeps its 8 unescaped pipes (7 cells).
		if got := strings.Count(line, "|") - strings.Count(line, `\|`); got != 8 {
			t.Errorf("row %q has %d cell separators, want 8", line, got)
		}
	}
	for _, bad := range []string{"@octocat", "<b>", "\n\n"} {
		if strings.Contains(table, bad) {
			t.Errorf("table holds %q:\n%s", bad, table)
		}
	}
	// The command keeps its backticks inside a longer fence.
	if !strings.Contains(table, "````echo `x` \\| grep") {
		t.Errorf("command not fenced as code:\n%s", table)
	}
}

func TestSumTotals(t *testing.T) {
	got := Sum(runStopped(t))
	want := Totals{
		TokensIn: 12000, TokensOut: 2680, USD: 0.0004 + 0.0006 + 0.0009 + 0.0011 + 0.0012,
		ModelCalls: 5, ToolCalls: 4, Retries: 1, Checks: 5, FailedChecks: 3,
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("totals (-want +got):\n%s", diff)
	}
}

func TestSummaryTableEmpty(t *testing.T) {
	if got := SummaryTable(nil); !strings.Contains(got, "No trace events") {
		t.Errorf("SummaryTable(nil) = %q", got)
	}
	if got := Timeline(nil); got != "" {
		t.Errorf("Timeline(nil) = %q, want empty", got)
	}
}

func TestThousands(t *testing.T) {
	for in, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 18230: "18,230", 1234567: "1,234,567", -4500: "-4,500"} {
		if got := Thousands(in); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", in, got, want)
		}
	}
}
