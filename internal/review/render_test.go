package review

import (
	"strings"
	"testing"
)

// TestRenderDiff: a real git diff is shown as pr-agent's new and old hunks,
// with head line numbers on the new lines only.
func TestRenderDiff(t *testing.T) {
	w := newWorld(t)
	got := RenderDiff(w.diff)
	for _, want := range []string{
		"## File: 'calc.go'",
		"__new hunk__",
		"4  func Div(a, b int) int {",
		"5  \treturn a / b",
		"9 +func Avg(xs []int) int {",
		"14 +\treturn sum / len(xs)",
		"__old hunk__",
		"-\tif b == 0 {",
		" func Div(a, b int) int {",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the rendered diff lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "diff --git") || strings.Contains(got, "index ") {
		t.Errorf("the rendered diff keeps git's headers:\n%s", got)
	}
	added := "diff --git a/n.go b/n.go\nnew file mode 100644\n--- /dev/null\n+++ b/n.go\n@@ -0,0 +1,2 @@\n+package n\n+var x = 1\n"
	if got := RenderDiff(added); strings.Contains(got, "__old hunk__") || !strings.Contains(got, "2 +var x = 1") {
		t.Errorf("a new file:\n%s", got)
	}
	huge := "diff --git a/b.go b/b.go\n--- a/b.go\n+++ b/b.go\n@@ -1,1 +1,100000 @@\n" + strings.Repeat("+"+strings.Repeat("x", 40)+"\n", 100000)
	if got := RenderDiff(huge); len(got) > maxRendered+1024 || !strings.Contains(got, "the rest of the diff is cut") {
		t.Errorf("a huge diff rendered to %d bytes", len(got))
	}
}

// TestReviewTable: a finding's text cannot break the PR comment's table.
func TestReviewTable(t *testing.T) {
	r := Result{Findings: []Finding{{ID: "0123456789ab", File: "a|b.go", Start: 3, End: 5, Severity: SeverityBlocking,
		Title: "breaks | the\ntable `code` <img src=x>" + strings.Repeat("y", 1000), Refuted: ""}}}
	got := r.Table()
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if len(lines) != 3 {
		t.Fatalf("the table has %d lines, want a header, a rule and one row:\n%s", len(lines), got)
	}
	row := lines[2]
	if n := strings.Count(strings.ReplaceAll(row, "\\|", ""), "|"); n != 5 {
		t.Errorf("the row has %d cell borders, want 5: %s", n, row)
	}
	for _, bad := range []string{"<img", "`code`"} {
		if strings.Contains(row, bad) {
			t.Errorf("the row holds %q: %s", bad, row)
		}
	}
	if !strings.Contains(row, "`a\\|b.go:3-5`") || len(row) > 600 {
		t.Errorf("the row: %s", row)
	}
	if got := (Result{}).Table(); !strings.Contains(got, "nothing") {
		t.Errorf("an empty review: %q", got)
	}
	var many Result
	for i := 0; i < maxTableRows+5; i++ {
		many.Findings = append(many.Findings, Finding{ID: "x", File: "f", Start: 1, End: 1, Severity: SeverityAdvisory, Title: "t"})
	}
	if got := many.Table(); strings.Count(got, "\n| `x`") != maxTableRows || !strings.Contains(got, "and 5 more") {
		t.Errorf("the table is not bounded:\n%s", got)
	}
}

// TestRepairTask: the repair instruction holds each blocking finding, its
// trigger and its quote, in a fence the quote cannot close.
func TestRepairTask(t *testing.T) {
	fs := []Finding{
		{ID: "0123456789ab", File: "calc.go", Start: 5, End: 5, Severity: SeverityBlocking, Kind: "bug", Title: "Div panics", Trigger: "Div(1, 0)", Quote: "return a / b // ``` end"},
		{ID: "ba9876543210", File: "calc.go", Start: 9, End: 9, Severity: SeverityAdvisory, Kind: "test", Title: "advisory only", Trigger: "x", Quote: "y"},
	}
	got := RepairTask(fs)
	for _, want := range []string{"Div panics", "Trigger: Div(1, 0)", "calc.go:5", "0123456789ab", "````\nreturn a / b // ``` end\n````"} {
		if !strings.Contains(got, want) {
			t.Errorf("the repair task lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "advisory only") {
		t.Errorf("the repair task holds an advisory finding:\n%s", got)
	}
	if RepairTask(fs[1:]) != "" {
		t.Error("a repair task without a blocking finding")
	}
}

// FuzzRenderDiff: a diff holds model-written text; rendering it never
// panics and stays bounded.
func FuzzRenderDiff(f *testing.F) {
	for _, s := range []string{"", "diff --git a/x b/x\n@@ -1 +1 @@\n-a\n+b\n", "@@ -1,2 +x @@\n+a", "@@ +99999999999999999999, @@\n \n", "Binary files a and b differ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if out := RenderDiff(s); len(out) > maxRendered+len(s)+1024 {
			t.Fatalf("rendered %d bytes from %d", len(out), len(s))
		}
	})
}

// FuzzParseVerdicts: the refuter's answer never panics the parser, and only
// the ids asked about come back, a refutation always with its reason.
func FuzzParseVerdicts(f *testing.F) {
	for _, s := range []string{`[]`, `[{"id": "0123456789ab", "verdict": "refuted", "reason": "r"}]`, `[{"id": 1}]`, `{"id": "x"}`, `[{"id": "0123456789ab", "verdict": "REFUTED", "reason": "\n"}]`} {
		f.Add(s)
	}
	ids := map[string]bool{"0123456789ab": true}
	f.Fuzz(func(t *testing.T, s string) {
		for id, v := range parseVerdicts(s, ids) {
			if !ids[id] || (v.refuted && strings.TrimSpace(v.reason) == "") || len(v.reason) > maxReason+4 {
				t.Fatalf("verdict %q: %+v", id, v)
			}
		}
	})
}

// BenchmarkLocate: checking a quote of three lines in a head file of 20,000
// lines, the quote near the end.
func BenchmarkLocate(b *testing.B) {
	var ls []string
	for i := 0; i < 20000; i++ {
		ls = append(ls, "\tx := compute(a, b) // line")
	}
	ls = append(ls, "for _, x := range xs {", "\tsum += x", "}")
	for i := range ls {
		ls[i] = normalise(ls[i])
	}
	quote := "for _, x := range xs {\n  sum += x\n}"
	for b.Loop() {
		if _, _, ok := locate(ls, quote, 1); !ok {
			b.Fatal("not found")
		}
	}
}

// BenchmarkRenderDiff: rendering a diff of 10,000 changed lines.
func BenchmarkRenderDiff(b *testing.B) {
	var d strings.Builder
	d.WriteString("diff --git a/a.go b/a.go\n@@ -1,10000 +1,10000 @@\n")
	for i := 0; i < 10000; i++ {
		d.WriteString("-old line\n+new line\n")
	}
	diff := d.String()
	for b.Loop() {
		_ = RenderDiff(diff)
	}
}

// TestRenderDiffRenameAndQuoted: a renamed file is shown under its head
// name, a quoted path unquoted.
func TestRenderDiffRenameAndQuoted(t *testing.T) {
	diff := "diff --git a/old.go b/new.go\nsimilarity index 80%\nrename from old.go\nrename to new.go\n--- a/old.go\n+++ b/new.go\n@@ -3,2 +3,2 @@\n x\n-y\n+z\n" +
		"diff --git \"a/t\\303\\251st b.go\" \"b/t\\303\\251st b.go\"\n--- \"a/t\\303\\251st b.go\"\n+++ \"b/t\\303\\251st b.go\"\n@@ -1 +1 @@\n-a\n+b\n"
	got := RenderDiff(diff)
	for _, want := range []string{"## File: 'new.go'", "4 +z", "## File: 'tést b.go'", "1 +b", "-a"} {
		if !strings.Contains(got, want) {
			t.Errorf("the rendered diff lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "old.go") || strings.Contains(got, `\303`) {
		t.Errorf("the rendered diff names the base or the quoted path:\n%s", got)
	}
}
