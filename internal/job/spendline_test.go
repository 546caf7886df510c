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
	"github.com/roadmap-dev/roadmap/internal/job/kernel"
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
		if diff := cmp.Diff([]string{"internal/job/kernel/log.go:spendLine"}, writers); diff != "" {
			t.Errorf("the callers of trace's SpendLine outside internal/trace (-want +got):\n%s", diff)
		}
		readers := calls(t, "ParseSpendLines")
		if diff := cmp.Diff([]string{"internal/report/killed.go:scanLog"}, readers); diff != "" {
			t.Errorf("the readers of spend lines outside internal/trace (-want +got):\n%s", diff)
		}
	})
	events := []agent.ModelCallEvent{
		{Model: "m-small", TokensIn: 812, TokensOut: 95, USD: 0.00021},
		{Model: "m-large", TokensIn: 4000, TokensOut: 1200, USD: 0.0123},
	}
	for _, phase := range []kernel.Phase{kernel.Stage, kernel.Implement} {
		t.Run(string(phase), func(t *testing.T) {
			var log bytes.Buffer
			tr, err := trace.NewRecorder(&bytes.Buffer{}, redact.New(redact.Config{}), time.Now, 0)
			if err != nil {
				t.Fatal(err)
			}
			j := &kernel.Job{O: kernel.Options{Log: &log, Trace: tr, Mask: func(s string) string { return s }}, Phase: phase, Number: 3, Group: 2}
			// A person's log line between the calls is not a spend line.
			for i, c := range events {
				j.Observer().ModelCall(c)
				if i == 0 {
					log.WriteString("roadmap: something else\n")
				}
			}
			got, err := trace.ParseSpendLines(&log)
			if err != nil {
				t.Fatal(err)
			}
			want := trace.SpendLog{Entries: []trace.SpendEntry{
				{Job: 3, Group: 2, Call: 1, Model: "m-small", TokensIn: 812, TokensOut: 95, USD: 0.00021},
				{Job: 3, Group: 2, Call: 2, Model: "m-large", TokensIn: 4000, TokensOut: 1200, USD: 0.0123},
			}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("the %s Job's spend lines as report reads them (-want +got):\n%s", phase, diff)
			}
			if wantSpend := (record.Spend{TokensIn: 4812, TokensOut: 1295, USD: 0.00021 + 0.0123, ModelCalls: 2}); j.Spend != wantSpend {
				t.Errorf("the Job's spend = %+v, want %+v (the lines' sum)", j.Spend, wantSpend)
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
