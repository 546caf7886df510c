package failure

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the generated sections of docs/taxonomy.md")

// designClasses are the classes of DESIGN §4, by name.
var designClasses = []Class{
	"transient", "indeterminate", "rate_limited", "conflict", "checks_failed", "plan_wrong",
	"needs_input", "budget_exhausted", "oom", "killed", "auth", "unknown",
}

func TestTaxonomyTable(t *testing.T) {
	rows := Table()
	actions := map[Action]bool{
		ActionRetry: true, ActionReconcile: true, ActionWait: true, ActionRebase: true,
		ActionRepair: true, ActionReturnToStage: true, ActionAsk: true, ActionYield: true,
		ActionRetryLessParallel: true, ActionContinue: true, ActionStop: true, ActionLeave: true, ActionWaitWoken: true,
		ActionHold: true, ActionSkip: true, ActionEnd: true, ActionDrive: true,
	}
	results := map[Result]bool{ResultStopped: true, ResultYielded: true, ResultReturned: true}

	seen := map[Class]int{}
	for _, r := range rows {
		seen[r.Class]++
	}
	for c, n := range seen {
		if n != 1 {
			t.Errorf("class %s has %d rows, want exactly 1 (one class, one action)", c, n)
		}
	}
	for _, c := range append(designClasses, DayBudgetExhausted, NoProgress, Unisolated) {
		if seen[c] == 0 {
			t.Errorf("class %s is missing from the table", c)
		}
	}
	for _, r := range rows {
		t.Run(string(r.Class), func(t *testing.T) {
			if !actions[r.Action] {
				t.Errorf("action = %q, want one of the defined actions", r.Action)
			}
			if !results[r.Result] {
				t.Errorf("result = %q, want stopped, yielded or returned", r.Result)
			}
			if r.Automatic && r.Stop {
				t.Errorf("automatic action %s leads to a stop: no item stops on a class with an automatic action (seed 002)", r.Action)
			}
			if got, want := r.Stop, r.Result == ResultStopped; got != want {
				t.Errorf("stop = %v but result = %s", got, r.Result)
			}
			if got, want := r.Stop, r.Action == ActionStop; got != want {
				t.Errorf("stop = %v but action = %s", got, r.Action)
			}
			if r.Recognised == "" || r.Does == "" {
				t.Errorf("recognised and does must say something to a person")
			}
			got, ok := Lookup(r.Class)
			if !ok {
				t.Fatalf("Lookup(%s) found nothing", r.Class)
			}
			if diff := cmp.Diff(r, got); diff != "" {
				t.Errorf("Lookup(%s) differs from Table() (-table +lookup):\n%s", r.Class, diff)
			}
		})
	}

	// The stops are exactly the classes that need a person.
	var stops []Class
	for _, r := range rows {
		if r.Stop {
			stops = append(stops, r.Class)
		}
	}
	if diff := cmp.Diff([]Class{BudgetExhausted, Auth, NoProgress, Unisolated, ReviewBlocked, TestsWeak, Unknown}, stops); diff != "" {
		t.Errorf("stopping classes (-want +got):\n%s", diff)
	}

	if _, ok := Lookup("disk_full"); ok {
		t.Error("Lookup found a class that is not in the table")
	}
	rows[0].Action = ActionStop
	if r, _ := Lookup(rows[0].Class); r.Action == ActionStop {
		t.Error("changing the slice Table returned changed the taxonomy")
	}
}

// TestTaxonomyDoc keeps docs/taxonomy.md's tables equal to the code. Run with
// -update to regenerate them.
func TestTaxonomyDoc(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "taxonomy.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	doc := string(data)
	for _, sec := range []struct{ name, body string }{
		{"table", renderTable()},
		{"markers", renderMarkers()},
		{"corpus", renderCorpus(t)},
	} {
		begin := "<!-- BEGIN GENERATED " + sec.name + " -->\n"
		end := "<!-- END GENERATED " + sec.name + " -->"
		i := strings.Index(doc, begin)
		j := strings.Index(doc, end)
		if i < 0 || j < i {
			t.Fatalf("%s has no generated section %q", path, sec.name)
		}
		got := doc[i+len(begin) : j]
		if got == sec.body {
			continue
		}
		if *update {
			doc = doc[:i+len(begin)] + sec.body + doc[j:]
			continue
		}
		t.Errorf("%s section %q is out of date; run go test ./internal/failure -run TestTaxonomyDoc -update\n%s",
			path, sec.name, cmp.Diff(sec.body, got))
	}
	if *update && doc != string(data) {
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func renderTable() string {
	var b strings.Builder
	b.WriteString("| class | recognised by | action | what the action does | result | automatic | stop |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	yes := func(v bool) string {
		if v {
			return "yes"
		}
		return "no"
	}
	for _, r := range Table() {
		fmt.Fprintf(&b, "| `%s` | %s | `%s` | %s | `%s` | %s | %s |\n",
			r.Class, mdCell(r.Recognised), r.Action, mdCell(r.Does), r.Result, yes(r.Automatic), yes(r.Stop))
	}
	return b.String()
}

func renderMarkers() string {
	var b strings.Builder
	b.WriteString("| text (any case) | evidence of | comes from |\n")
	b.WriteString("|---|---|---|\n")
	for _, m := range markers {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", m.text, sigNames(m.sig), mdCell(m.source))
	}
	return b.String()
}

func sigNames(s signal) string {
	names := []struct {
		sig  signal
		name string
	}{
		{sigOOM, "OOM"}, {sigKilledProcess, "OOM (with total-vm)"}, {sigTotalVM, "OOM (with killed process)"},
		{sigTimeout, "killed: timeout"}, {sigCancel, "killed: cancelled"}, {sigRunnerLost, "killed: runner_lost"},
		{sigRatePrimary, "rate_limited: primary"}, {sigRateSecondary, "rate_limited: secondary"}, {sigRate, "rate_limited"},
		{sigAuth, "auth"}, {sigPermissionTo, "auth (with denied to)"}, {sigDeniedTo, "auth (with permission to)"},
		{sigConflict, "conflict"}, {sigIndeterminate, "indeterminate"}, {sigPreSend, "request never sent"},
		{sigTransient, "transient"}, {sigUnexpectedEOF, "transient (not after syntax error)"},
		{sigSyntaxError, "cancels unexpected EOF"}, {sigDiskFull, "killed: disk_full"},
	}
	var out []string
	for _, n := range names {
		if s&n.sig != 0 {
			out = append(out, n.name)
		}
	}
	return strings.Join(out, "; ")
}

func mdCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
