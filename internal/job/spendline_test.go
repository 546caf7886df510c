package job_test

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/job"
	"github.com/roadmap-dev/roadmap/internal/kernel"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/redact"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// TestSpendLineOneWriter: stage's and implement's Jobs write their spend
// lines through one function, the kernel's, and report reads both back the
// same way (trace.ParseSpendLines, one call in report). A second writer
// could drift from the line report reads and lose a killed Job's spend
// silently.
func TestSpendLineOneWriter(t *testing.T) {
	t.Run("one writer in the source", func(t *testing.T) {
		writers := calls(t, "SpendLine")
		if diff := cmp.Diff([]string{"internal/kernel/log.go:spendLine"}, writers); diff != "" {
			t.Errorf("the callers of trace's SpendLine outside internal/trace (-want +got):\n%s", diff)
		}
		// The console reads a finished Job's calls for a person with the
		// same parser; it books nothing.
		readers := calls(t, "ParseSpendLines")
		if diff := cmp.Diff([]string{"internal/console/parse.go:LogCalls", "internal/report/killed.go:scanLog"}, readers); diff != "" {
			t.Errorf("the readers of spend lines outside internal/trace (-want +got):\n%s", diff)
		}
	})
	// Each call is booked before its request goes out, then settled; the
	// third ended with no answer (the Job was stopped while it was out), so
	// its booking stands as its spend.
	bookings := []agent.ModelBookedEvent{
		{Model: "m-small", TokensIn: 3000, TokensOut: 4096, USD: 0.0009},
		{Model: "m-large", TokensIn: 5000, TokensOut: 4096, USD: 0.03},
		{Model: "m-large", TokensIn: 5200, TokensOut: 4096, USD: 0.031},
	}
	events := []agent.ModelCallEvent{
		{Model: "m-small", TokensIn: 812, TokensOut: 95, USD: 0.00021, Outcome: "ok"},
		{Model: "m-large", TokensIn: 4000, TokensOut: 1200, USD: 0.0123, Outcome: "ok"},
		{Model: "m-large", Outcome: "cancelled", Unanswered: true},
	}
	for _, phase := range job.Phases() {
		t.Run(phase.Name, func(t *testing.T) {
			var log bytes.Buffer
			tr, err := trace.NewRecorder(&bytes.Buffer{}, redact.New(redact.Config{}), time.Now, 0)
			if err != nil {
				t.Fatal(err)
			}
			j := &kernel.Job{O: kernel.Options{Phase: phase, Log: &log, Trace: tr, Mask: func(s string) string { return s }}, Number: 3, Group: 2}
			// A person's log line between the calls is not a spend line.
			for i, c := range events {
				j.Observer().ModelBooked(bookings[i])
				j.Observer().ModelCall(c)
				if i == 0 {
					log.WriteString("roadmap: something else\n")
				}
			}
			got, err := trace.ParseSpendLines(&log)
			if err != nil {
				t.Fatal(err)
			}
			want := trace.SpendLog{
				Entries: []trace.SpendEntry{
					{Job: 3, Group: 2, Call: 1, Model: "m-small", TokensIn: 812, TokensOut: 95, USD: 0.00021},
					{Job: 3, Group: 2, Call: 2, Model: "m-large", TokensIn: 4000, TokensOut: 1200, USD: 0.0123},
					{Job: 3, Group: 2, Call: 3, Model: "m-large", Estimated: true, TokensIn: 5200, TokensOut: 4096, USD: 0.031},
				},
				Booked: []trace.SpendEntry{
					{Job: 3, Group: 2, Call: 1, Model: "m-small", Booked: true, TokensIn: 3000, TokensOut: 4096, USD: 0.0009},
					{Job: 3, Group: 2, Call: 2, Model: "m-large", Booked: true, TokensIn: 5000, TokensOut: 4096, USD: 0.03},
					{Job: 3, Group: 2, Call: 3, Model: "m-large", Booked: true, TokensIn: 5200, TokensOut: 4096, USD: 0.031},
				},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("the %s Job's spend lines as report reads them (-want +got):\n%s", phase, diff)
			}
			wantSpend := record.Spend{}.Add(record.Spend{TokensIn: 812, TokensOut: 95, USD: 0.00021, ModelCalls: 1}).
				Add(record.Spend{TokensIn: 4000, TokensOut: 1200, USD: 0.0123, ModelCalls: 1}).
				Add(record.Spend{TokensIn: 5200, TokensOut: 4096, USD: 0.031, ModelCalls: 1})
			if j.Spend != wantSpend || j.Estimated != 1 {
				t.Errorf("the Job's spend = %+v (%d estimated), want %+v (1 estimated: the settling lines' sum)", j.Spend, j.Estimated, wantSpend)
			}
		})
	}
}

// calls lists the non-test functions outside internal/trace that call a
// method or function named name, as "file:function".
func calls(t *testing.T, name string) []string {
	t.Helper()
	root, _ := filepath.Abs("../..")
	var out []string
	fset := token.NewFileSet()
	for _, dir := range []string{"internal", "cmd", "e2e", "tools"} {
		_ = filepath.WalkDir(filepath.Join(root, dir), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			rel = filepath.ToSlash(rel)
			if strings.HasPrefix(rel, "internal/trace/") {
				return nil
			}
			f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, decl := range f.Decls {
				fn, ok := decl.(*ast.FuncDecl)
				if !ok || fn.Body == nil {
					continue
				}
				ast.Inspect(fn.Body, func(n ast.Node) bool {
					if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == name {
						out = append(out, rel+":"+fn.Name.Name)
					}
					return true
				})
			}
			return nil
		})
	}
	return out
}
